"""`--log-format json`: uvicorn's access and error logs and the app's own, one JSON object a
line; `text` keeps uvicorn's format. Both at `--log-level`."""

from __future__ import annotations

import json
import logging
import logging.config
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from store.api import schema as api_schema
from store.api.logging_config import JsonLineFormatter, log_config

CONFIGURED = ("uvicorn", "uvicorn.error", "uvicorn.access", "store", "strawberry")


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """dictConfig changes process-wide loggers: put them back for the other tests."""
    saved = {name: (logger.handlers[:], logger.level, logger.propagate, logger.disabled)
             for name in CONFIGURED for logger in [logging.getLogger(name)]}
    yield
    for name, (handlers, level, propagate, disabled) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate, logger.disabled = propagate, disabled


def record(name: str, message: str, *args: object, exc: BaseException | None = None
           ) -> logging.LogRecord:
    info = (type(exc), exc, exc.__traceback__) if exc is not None else None
    made = logging.LogRecord(name, logging.INFO, "f.py", 1, message, args, info)
    made.created = 1_700_000_000.25  # 2023-11-14T22:13:20.250Z
    return made


def test_an_access_record_is_one_line_with_its_fields() -> None:
    line = JsonLineFormatter().format(record(
        "uvicorn.access", '%s - "%s %s HTTP/%s" %d', "10.0.0.7:5123", "POST",
        "/audit/graphql", "1.1", 200))
    assert json.loads(line) == {
        "time": "2023-11-14T22:13:20.250+00:00", "level": "info", "logger": "uvicorn.access",
        "message": '10.0.0.7:5123 - "POST /audit/graphql HTTP/1.1" 200',
        "client": "10.0.0.7:5123", "method": "POST", "path": "/audit/graphql",
        "http_version": "1.1", "status": 200}


def test_a_traceback_stays_on_the_line() -> None:
    try:
        raise RuntimeError("boom\nsecond line")
    except RuntimeError as exc:
        line = JsonLineFormatter().format(record("strawberry.execution", "masked", exc=exc))
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["message"] == "masked"
    assert parsed["exception"].startswith("Traceback (most recent call last):")
    assert parsed["exception"].endswith("RuntimeError: boom\nsecond line")


def test_text_keeps_uvicorns_format_and_adds_the_apps_loggers() -> None:
    config = log_config("warning", "text")
    assert config["formatters"]["access"]["()"] == "uvicorn.logging.AccessFormatter"
    assert {name: config["loggers"][name]["level"] for name in CONFIGURED} == dict.fromkeys(
        CONFIGURED, "WARNING")
    assert config["loggers"]["store"]["handlers"] == ["default"]


def test_json_logs_of_the_app_are_json_lines(
    client: TestClient, restored_logging: None, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch
) -> None:
    logging.config.dictConfig(log_config("info", "json"))  # its handlers write to sys.stderr

    def broken(*_: object) -> None:
        raise RuntimeError("not for the client")

    monkeypatch.setattr(api_schema.queries, "ledger_status", broken)
    assert client.post("/graphql", json={"query": "{ ledger { treeSize } }"}).json()[
        "errors"][0]["message"] == "Internal error."
    logging.getLogger("store.api.health").debug("below the level: not written")
    logging.getLogger("store.api.health").warning("healthz: a reason")
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(line["logger"], line["level"]) for line in lines] == [
        ("strawberry.execution", "error"), ("store.api.health", "warning")]
    assert "RuntimeError: not for the client" in lines[0]["exception"]
    assert lines[1]["message"] == "healthz: a reason"
