"""``docverify schema``: the JSON Schema of an annotation or of docverify.toml."""

from __future__ import annotations

import click

from docverify.cli import CONTEXT_SETTINGS


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("name", type=click.Choice(["annotation", "config"]))
def schema(name: str) -> None:
    """Print the JSON Schema of the ``docverify:`` annotation or of docverify.toml.

    Generated from the models docverify validates with, so an editor that checks
    against it agrees with `docverify parse` (annotation) and `docverify config`.
    The repository ships both under schemas/.

    \b
    Examples:
      docverify schema annotation > annotation.schema.json
      docverify schema config | jq '.properties | keys'
    """
    from docverify.schemas import render

    click.echo(render(name), nl=False)
