"""``docverify config``: the effective configuration and where each value came from."""

from __future__ import annotations

import json

import click

from docverify.cli import CONTEXT_SETTINGS, get_app


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Show the effective configuration (defaults < docverify.toml < DOCVERIFY_* < options).

    A family without ``use`` shows the plugin it gets: the one registered as the
    family's default. Fails with the key and its file line, environment variable or
    option when a value is invalid, a key is unknown, or a plugin table names no
    installed plugin.

    \b
    Examples:
      docverify config
      DOCVERIFY_JOBS=4 docverify config --json
    """
    loaded = get_app(ctx).checked_config()
    values = loaded.values()
    if as_json:
        click.echo(json.dumps({"file": str(loaded.file) if loaded.file else None, "settings": values,
                               "origins": loaded.origins}, indent=2))
        return
    click.echo(f"# file: {loaded.file or '(none found; defaults)'}")
    for dotted, value in _flatten(values):
        click.echo(f"{dotted} = {json.dumps(value)}    # {loaded.origin(dotted)}")


def _flatten(values: dict, prefix: str = ""):
    for key, value in values.items():
        if isinstance(value, dict) and value:
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value
