"""`core-audit serve`: the read-only GraphQL API over a store, with uvicorn."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import click
import orjson

from store.cli.options import db_option, open_database
from store.cli.teaching import data_dir_options, load_registry_or_exit

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from store.model.corpora import TeachingRegistry

# How `--workers` hands the settings to each worker process (uvicorn imports the app there).
SETTINGS_VARIABLE = "CORE_AUDIT_SERVE_SETTINGS"


@click.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Server processes; each answers requests on one core.")
@click.option("--no-graphiql", is_flag=True, help="Do not serve the GraphiQL page.")
@click.option("--no-introspection", is_flag=True, help="Refuse introspection queries.")
@click.option("--cors-origin", "cors_origins", multiple=True, metavar="ORIGIN",
              help="Allow browser requests from ORIGIN (repeatable; default: no CORS headers).")
@data_dir_options
def serve(db: str | None, host: str, port: int, workers: int, no_graphiql: bool,
          no_introspection: bool, cors_origins: tuple[str, ...], packs: Path | None,
          teaching: Path | None, core: Path | None) -> None:
    """Serve the query-only GraphQL API at /graphql (the store is opened read-only).

    `teachingRegistry` shows the corpora and packs given by --core (or --packs and
    --teaching), to compare with what each stored surface was checked against.
    """
    run_server(db, host=host, port=port, workers=workers, graphiql=not no_graphiql,
               introspection=not no_introspection, cors_origins=cors_origins,
               data_dirs=DataDirs(packs, teaching, core))


class DataDirs(NamedTuple):
    packs: Path | None = None
    teaching: Path | None = None
    core: Path | None = None

    def registry(self) -> TeachingRegistry:
        return load_registry_or_exit(self.packs, self.teaching, self.core)

    def as_json(self) -> list[str | None]:
        return [None if d is None else str(d) for d in self]


def run_server(db: str | None, *, host: str, port: int, workers: int = 1,
               graphiql: bool = True, introspection: bool = True,
               cors_origins: tuple[str, ...] = (), banner: str | None = None,
               data_dirs: DataDirs | None = None) -> None:
    import uvicorn

    from store.api.app import create_app

    data_dirs = data_dirs or DataDirs()
    registry = data_dirs.registry()  # a bad checkout is a readable error before serving
    database = open_database(db)  # also the early, readable error for a bad store
    settings = {"db": db, "host": host, "graphiql": graphiql, "introspection": introspection,
                "cors_origins": list(cors_origins), "data_dirs": data_dirs.as_json()}
    click.echo(f"GraphQL at http://{_url_host(host)}:{port}/graphql (read-only)", err=True)
    if banner:
        click.echo(banner, err=True)
    if workers == 1:
        app = create_app(database, host=host, graphiql=graphiql, introspection=introspection,
                         cors_origins=cors_origins, registry=lambda: registry)
        uvicorn.run(app, host=host, port=port, log_level="info")
        return
    database.close()
    os.environ[SETTINGS_VARIABLE] = orjson.dumps(settings).decode()
    uvicorn.run("store.cli.serve:app_from_settings", factory=True, host=host, port=port,
                workers=workers, log_level="info")


def app_from_settings() -> Starlette:
    """The app of one worker process, from the settings `run_server` left in the environment."""
    from store.api.app import create_app

    settings = orjson.loads(os.environ[SETTINGS_VARIABLE])
    data_dirs = DataDirs(*(None if d is None else Path(d) for d in settings["data_dirs"]))
    registry = data_dirs.registry()
    return create_app(open_database(settings["db"]), host=settings["host"],
                      graphiql=settings["graphiql"], introspection=settings["introspection"],
                      cors_origins=tuple(settings["cors_origins"]), registry=lambda: registry)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
