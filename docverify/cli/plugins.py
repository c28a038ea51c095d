"""``docverify plugins``: every loaded plugin, its family, origin and options."""

from __future__ import annotations

import json
from typing import Any

import click

from docverify.cli import CONTEXT_SETTINGS, get_app
from docverify.config import FAMILY_TABLES
from docverify.plugins import PluginSet
from docverify.registry import FAMILIES, Plugin

TABLE_BY_FAMILY = {family: table for table, family in FAMILY_TABLES.items()}


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def plugins(ctx: click.Context, as_json: bool) -> None:
    """List every loaded plugin with its family, origin and options.

    Options go into docverify.toml under [<family>.<plugin>], e.g. [console.sandbox].
    "(default)" marks the plugin a family uses when docverify.toml does not choose
    one (<family>.use); a former name still selects its plugin, with a warning.

    \b
    Examples:
      docverify plugins
      docverify plugins --json | jq '.[] | select(.family == "policies")'
    """
    rows = describe_plugins(get_app(ctx).plugins)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table()
    for column in ("family", "name", "origin", "options", "description"):
        table.add_column(column, overflow="fold")
    for row in rows:
        options = "\n".join(
            f"{option['name']} = {option['default']!r}" if "default" in option else f"{option['name']} (required)"
            for option in row["options"]
        )
        name = row["name"] + (" (default)" if row["default"] else "")
        if row["aliases"]:
            name += f"\nformerly {', '.join(row['aliases'])}"
        table.add_row(row["family"], Text(name), row["origin"], Text(options), Text(row["description"]))
    Console().print(table)


def describe_plugins(plugin_set: PluginSet) -> list[dict[str, Any]]:
    rows = []
    for family in FAMILIES:
        for entry in plugin_set.registry(family.name):
            origin = plugin_set.origin(entry)
            obj = entry.obj
            if isinstance(obj, type) and issubclass(obj, Plugin):
                options = describe_options(obj)
                description = obj.summary()
            elif isinstance(obj, type):  # an engine: built by the plugins that use it, from their options
                options = []
                description = obj.summary() if hasattr(obj, "summary") else ""
            else:  # a click command
                options = []
                description = (getattr(obj, "help", None) or "").strip().splitlines()[0:1]
                description = description[0] if description else ""
            rows.append(
                {
                    "family": family.name,
                    "name": entry.name,
                    "default": entry.default,  #: the family's choice when <family>.use is not configured
                    "aliases": list(entry.aliases),  #: former names, still accepted with a warning
                    "plugin": entry.plugin,
                    "origin": origin.describe(),
                    "builtin": origin.builtin,
                    "config_table": f"{TABLE_BY_FAMILY[family.name]}.{entry.name}" if family.name in TABLE_BY_FAMILY else None,
                    "description": description,
                    "options": options,
                }
            )
    return rows


def describe_options(plugin: type[Plugin]) -> list[dict[str, Any]]:
    described = []
    for name, info in plugin.Options.model_fields.items():
        option: dict[str, Any] = {
            "name": name,
            "type": _type_name(info.annotation),
            "description": info.description or "",
        }
        if not info.is_required():
            default = info.get_default(call_default_factory=True)
            option["default"] = default if _jsonable(default) else repr(default)
        described.append(option)
    return described


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except TypeError:
        return False
    return True
