"""`core-audit schema`: print the GraphQL SDL (regenerate graphql/schema.graphql with it)."""

from __future__ import annotations

import click


@click.command("schema")
def schema() -> None:
    """Print the GraphQL schema as SDL: `core-audit schema > graphql/schema.graphql`."""
    from store.api.schema import schema_sdl

    click.echo(schema_sdl(), nl=False)
