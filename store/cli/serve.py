"""`core-audit serve`: the read-only GraphQL API over a store, with uvicorn."""

from __future__ import annotations

import click

from store.cli.options import db_option, open_database


@click.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--no-graphiql", is_flag=True, help="Do not serve the GraphiQL page.")
@click.option("--no-introspection", is_flag=True, help="Refuse introspection queries.")
@click.option("--cors-origin", "cors_origins", multiple=True, metavar="ORIGIN",
              help="Allow browser requests from ORIGIN (repeatable; default: no CORS headers).")
def serve(db: str | None, host: str, port: int, no_graphiql: bool, no_introspection: bool,
          cors_origins: tuple[str, ...]) -> None:
    """Serve the query-only GraphQL API at /graphql (the store is opened read-only)."""
    run_server(db, host=host, port=port, graphiql=not no_graphiql,
               introspection=not no_introspection, cors_origins=cors_origins)


def run_server(db: str | None, *, host: str, port: int, graphiql: bool = True,
               introspection: bool = True, cors_origins: tuple[str, ...] = (),
               banner: str | None = None) -> None:
    import uvicorn

    from store.api.app import create_app

    database = open_database(db)
    app = create_app(database, host=host, graphiql=graphiql, introspection=introspection,
                     cors_origins=cors_origins)
    click.echo(f"GraphQL at http://{_url_host(host)}:{port}/graphql (read-only)", err=True)
    if banner:
        click.echo(banner, err=True)
    uvicorn.run(app, host=host, port=port, log_level="info")


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
