"""``docverify aliyun ...``: the console map of the real Alibaba Cloud console."""

from __future__ import annotations

import json

import click

CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=CONTEXT)
def aliyun() -> None:
    """The real Alibaba Cloud console (console plugin `aliyun`).

    \b
    Examples:
      docverify aliyun consoles
      docverify aliyun consoles "ECS console" --site china --region cn-shanghai
      docverify aliyun consoles 云服务器ECS控制台 --json
    """


@aliyun.command(context_settings=CONTEXT)
@click.argument("name", required=False)
@click.option("--site", type=click.Choice(["international", "china"]), default="international", show_default=True,
              help="Which site's addresses. Config: console.aliyun.site.")
@click.option("--region", default="cn-hangzhou", show_default=True,
              help="The region a regional console opens in. Config: console.aliyun.region.")
@click.option("--map", "extra", type=click.Path(dir_okay=False, exists=True), default=None,
              help="A YAML file of further consoles. Config: console.aliyun.console_map.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: [{key, console, names, url}].")
def consoles(name: str | None, site: str, region: str, extra: str | None, as_json: bool) -> None:
    """List the consoles the map knows, or the address of the console NAME
    (as a doc names it: "ECS console", "Elastic Compute Service", "云服务器ECS控制台").
    An unknown NAME is an error that lists the known ones (exit code 2)."""
    from docverify_aliyun.console_map import REGION, ConsoleMap

    if not REGION.match(region):
        raise click.BadParameter(f"{region!r} is not a region id, e.g. cn-hangzhou", param_hint="--region")
    consoles_map = ConsoleMap.load(extra)
    where = consoles_map.site(site)
    products = [consoles_map.product(name)] if name else list(consoles_map.products.values())
    rows = [{"key": p.key, "console": p.console, "names": list(p.names), "url": p.url(where, region)}
            for p in products]
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    for row in rows:
        click.echo(f"{row['key']:<12} {row['console']:<30} {row['url']}")
