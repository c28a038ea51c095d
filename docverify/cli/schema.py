"""``docverify schema``: the JSON Schema of an annotation, docverify.toml or docverify.json."""

from __future__ import annotations

import click

from docverify.cli import CONTEXT_SETTINGS


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("name", type=click.Choice(["annotation", "config", "results"]))
def schema(name: str) -> None:
    """Print the JSON Schema of the ``docverify:`` annotation, of docverify.toml or of
    docverify.json (``results``: what the json reporter writes).

    Generated from the models docverify validates with, so an editor that checks
    against it agrees with `docverify parse` (annotation) and `docverify config`,
    and a tool reading docverify.json reads what docverify writes. The repository
    ships all three under schemas/.

    \b
    Examples:
      docverify schema annotation > annotation.schema.json
      docverify schema config | jq '.properties | keys'
      docverify schema results | jq '.["$defs"] | keys'
    """
    from docverify.schemas import render

    click.echo(render(name), nl=False)
