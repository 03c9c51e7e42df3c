"""The server's logging, as one stdlib dictConfig for uvicorn and the app: uvicorn's own text
format, or JSON lines (one object per record) for a log collector."""

from __future__ import annotations

import copy
import json
import logging
from datetime import UTC, datetime
from typing import Any, Literal

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
LogFormat = Literal["text", "json"]
# uvicorn's server and access logs, strawberry's log of masked errors, and the app's own.
_APP_LOGGERS = ("store", "strawberry")
_ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")


class JsonLineFormatter(logging.Formatter):
    """A record as one line of JSON: time (UTC), level, logger, message; an access record's
    client, method, path, http_version and status; a traceback as `exception`."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(
                record.args) == len(_ACCESS_FIELDS):
            line.update(zip(_ACCESS_FIELDS, record.args, strict=True))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)  # ASCII: one physical line whatever was logged


def log_config(level: str = "info", log_format: LogFormat = "text") -> dict[str, Any]:
    """The dictConfig uvicorn applies in the server and in every worker process."""
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    if log_format == "json":
        formatter = {"()": f"{__name__}.JsonLineFormatter"}
        config["formatters"] = {"default": formatter, "access": dict(formatter)}
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        config["loggers"][name]["level"] = level.upper()
    for name in _APP_LOGGERS:
        config["loggers"][name] = {"handlers": ["default"], "level": level.upper(),
                                   "propagate": False}
    return config
