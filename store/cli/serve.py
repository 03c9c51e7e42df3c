"""`core-audit serve`: the read-only GraphQL API over a store, with uvicorn."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import click
import orjson

from store.api.logging_config import LOG_LEVELS, LogFormat, log_config
from store.api.object_estimate import DEFAULT_MAX_OBJECTS
from store.cli.options import db_option, open_database
from store.cli.teaching import data_dir_options, load_registry_or_exit
from store.cli.trusted_documents import load_trusted_or_exit
from store.db.read_threads import DEFAULT_READ_THREADS
from store.db.time_limit import DEFAULT_TIME_LIMIT

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from store.api.trusted_documents import TrustedDocuments
    from store.model.corpora import TeachingRegistry

# How `--workers` hands the settings to each worker process (uvicorn imports the app there).
SETTINGS_VARIABLE = "CORE_AUDIT_SERVE_SETTINGS"
# A URL path prefix as a proxy forwards it: /segment/segment, RFC 3986 path characters.
_ROOT_PATH = re.compile(r"(/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*")
_HOST = re.compile(r"\*|(\*\.)?[A-Za-z0-9._-]+")


class DataDirs(NamedTuple):
    packs: Path | None = None
    teaching: Path | None = None
    core: Path | None = None

    def registry(self) -> TeachingRegistry:
        return load_registry_or_exit(self.packs, self.teaching, self.core)


@dataclasses.dataclass(frozen=True)
class AppSettings:
    """What every server process builds its app from (JSON in SETTINGS_VARIABLE)."""

    db: str | None = None
    host: str = "127.0.0.1"
    allowed_hosts: tuple[str, ...] = ()
    graphiql: bool = True
    console: bool = True
    introspection: bool = True
    cors_origins: tuple[str, ...] = ()
    time_limit: float = DEFAULT_TIME_LIMIT
    read_threads: int = DEFAULT_READ_THREADS
    max_objects: int = DEFAULT_MAX_OBJECTS
    trusted_documents: Path | None = None
    data_dirs: DataDirs = dataclasses.field(default_factory=DataDirs)

    def to_json(self) -> str:
        values = dataclasses.asdict(self)
        values["data_dirs"] = list(self.data_dirs)  # orjson writes a NamedTuple as a str
        return orjson.dumps(values, default=str).decode()  # Path as str

    @classmethod
    def from_json(cls, text: str) -> AppSettings:
        values: dict[str, Any] = orjson.loads(text)
        for name in ("allowed_hosts", "cors_origins"):
            values[name] = tuple(values[name])
        values["data_dirs"] = DataDirs(*(None if d is None else Path(d)
                                         for d in values["data_dirs"]))
        if values["trusted_documents"] is not None:
            values["trusted_documents"] = Path(values["trusted_documents"])
        return cls(**values)

    def check(self) -> None:
        """Read all `build_app` reads, once, so a mistake stops before any worker starts."""
        self._inputs()
        open_database(self.db, time_limit=self.time_limit,
                      read_threads=self.read_threads).close()

    def build_app(self) -> Starlette:
        """The app; a clean error (and exit) for a bad checkout, store or document first."""
        from store.api.app import create_app

        registry, trusted = self._inputs()
        return create_app(
            open_database(self.db, time_limit=self.time_limit,
                          read_threads=self.read_threads), host=self.host,
            allowed_hosts=self.allowed_hosts, graphiql=self.graphiql, console=self.console,
            introspection=self.introspection, cors_origins=self.cors_origins,
            registry=lambda: registry, max_objects=self.max_objects,
            trusted_documents=trusted)

    def _inputs(self) -> tuple[TeachingRegistry, TrustedDocuments | None]:
        registry = self.data_dirs.registry()
        if self.trusted_documents is None:
            return registry, None
        return registry, load_trusted_or_exit(self.trusted_documents)


def _allowed_host(_: click.Context, __: click.Parameter, values: tuple[str, ...]
                  ) -> tuple[str, ...]:
    for value in values:
        if not _HOST.fullmatch(value):
            raise click.BadParameter(f"{value!r}: a host name or IP address as clients send "
                                     "it in Host, without scheme or port; *.example.com for "
                                     "its subdomains, * for any host")
    return values


def _root_path(_: click.Context, __: click.Parameter, value: str) -> str:
    value = value.rstrip("/")
    if not _ROOT_PATH.fullmatch(value):
        raise click.BadParameter(f"{value!r}: a URL path such as /audit (ASCII, no ? or #)")
    return value


def _time_limit(_: click.Context, __: click.Parameter, value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise click.BadParameter(f"{value}: must be a number of seconds above 0")
    return value


@click.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Server processes; each answers requests on one core.")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="HOST",
              callback=_allowed_host,
              help="Also answer requests whose Host is HOST (repeatable; *.example.com for "
                   "subdomains, * for any). Always allowed: 127.0.0.1, localhost, --host.")
@click.option("--root-path", default="", metavar="PATH", callback=_root_path,
              help="The URL prefix a reverse proxy serves the API under and strips "
                   "(e.g. /audit: /audit/graphql reaches /graphql).")
@click.option("--time-limit", default=DEFAULT_TIME_LIMIT, show_default=True, type=float,
              metavar="SECONDS", callback=_time_limit,
              help="Time limit of one request's queries; SQL still running then is aborted.")
@click.option("--read-threads", default=DEFAULT_READ_THREADS, show_default=True,
              type=click.IntRange(1, 64), metavar="N",
              help="Queries each server process runs at once (the rest wait their turn "
                   "within the time limit; on SQLite a page or a record is first read at "
                   "once, for up to 4 ms); more lets quick ones pass slow ones, at a cost in "
                   "CPU per request.")
@click.option("--max-objects", default=DEFAULT_MAX_OBJECTS, show_default=True,
              type=click.IntRange(1), metavar="N",
              help="Refuse a query that may resolve more than N objects (nested pages "
                   "multiply: first x first), before it runs.")
@click.option("--trusted-documents", type=click.Path(path_type=Path), metavar="DIR",
              help="Run only the operations in DIR/*.graphql, sent as their exact text or "
                   "as {\"documentId\": \"sha256:...\"} (see `trusted-documents`).")
@click.option("--log-level", default="info", show_default=True, type=click.Choice(LOG_LEVELS),
              help="The least severe log line written.")
@click.option("--log-format", default="text", show_default=True,
              type=click.Choice(["text", "json"]),
              help="json: one JSON object per line (access, server and app logs).")
@click.option("--no-graphiql", is_flag=True, help="Do not serve the GraphiQL page.")
@click.option("--no-console", is_flag=True,
              help="Do not serve the auditor's console (the HTML pages at /).")
@click.option("--no-introspection", is_flag=True, help="Refuse introspection queries.")
@click.option("--cors-origin", "cors_origins", multiple=True, metavar="ORIGIN",
              help="Allow browser requests from ORIGIN (repeatable; default: no CORS headers).")
@data_dir_options
def serve(db: str | None, host: str, port: int, workers: int, allowed_hosts: tuple[str, ...],
          root_path: str, time_limit: float, read_threads: int, max_objects: int,
          trusted_documents: Path | None,
          log_level: str, log_format: LogFormat, no_graphiql: bool, no_console: bool,
          no_introspection: bool,
          cors_origins: tuple[str, ...], packs: Path | None, teaching: Path | None,
          core: Path | None) -> None:
    """Serve the query-only GraphQL API at /graphql and the auditor's console at / (the
    store is opened read-only).

    `teachingRegistry` shows the corpora and packs given by --core (or --packs and
    --teaching), to compare with what each stored surface was checked against.
    """
    settings = AppSettings(
        db=db, host=host, allowed_hosts=allowed_hosts, graphiql=not no_graphiql,
        console=not no_console,
        introspection=not no_introspection, cors_origins=cors_origins, time_limit=time_limit,
        read_threads=read_threads, max_objects=max_objects, trusted_documents=trusted_documents,
        data_dirs=DataDirs(packs, teaching, core))
    run_server(settings, port=port, workers=workers, root_path=root_path, log_level=log_level,
               log_format=log_format)


def run_server(settings: AppSettings, *, port: int, workers: int = 1, root_path: str = "",
               log_level: str = "info", log_format: LogFormat = "text",
               banner: str | None = None) -> None:
    import uvicorn

    app = settings.build_app() if workers == 1 else None
    if app is None:
        settings.check()  # a bad checkout, store or document: an error before serving
    _check_port(settings.host, port)
    listening = _any_free_port(settings.host) if port == 0 else None
    if listening is not None:  # --port 0: the URL printed names the port the system chose
        port = int(listening.getsockname()[1])
    origin = f"http://{_url_host(settings.host)}:{port}{root_path}"
    console = f"; the console at {origin}/" if settings.console else ""
    click.echo(f"GraphQL at {origin}/graphql (read-only){console}", err=True)
    if banner:
        click.echo(banner, err=True)
    server: dict[str, Any] = {"host": settings.host, "port": port, "root_path": root_path,
                              "log_level": log_level,
                              "log_config": log_config(log_level, log_format),
                              # A request ends within the time limit; an /events stream never
                              # does: on shutdown uvicorn waits that long, then closes them.
                              "timeout_graceful_shutdown": math.ceil(settings.time_limit) + 1}
    if listening is not None:
        server["fd"] = listening.fileno()  # uvicorn serves the socket bound above
    if app is not None:
        uvicorn.run(app, **server)
        return
    os.environ[SETTINGS_VARIABLE] = settings.to_json()
    uvicorn.run("store.cli.serve:app_from_settings", factory=True, workers=workers, **server)


def app_from_settings() -> Starlette:
    """The app of one worker process, from the settings `run_server` left in the environment."""
    return AppSettings.from_json(os.environ[SETTINGS_VARIABLE]).build_app()


def _check_port(host: str, port: int) -> None:
    """A port another process listens on fails here, with what to do, not after the URL was
    printed (uvicorn binds later, then exits with its own words)."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise click.ClickException(
                f"{_url_host(host)}:{port} cannot be served: {exc.strerror} (another server "
                f"on it?): choose another port with --port N, e.g. --port {port + 1}") from exc


def _any_free_port(host: str) -> socket.socket:
    """A listening socket on a port the system chooses (kept open for uvicorn to serve)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind((host, 0))
    listening.set_inheritable(True)  # `--workers N`: uvicorn's worker processes serve it too
    return listening


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
