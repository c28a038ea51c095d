"""``docverify sandbox ...``: serve, list products, print the release changelog, reset."""

from __future__ import annotations

import json

import click

CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=CONTEXT)
def sandbox() -> None:
    """The embedded sandbox console (Alibaba Cloud style).

    \b
    Examples:
      docverify sandbox serve --port 8123 --release 2021-06
      docverify sandbox changelog --from 2021-06 --to 2026-03 --json
    """


#: the port `serve` listens on when neither an option nor [console.sandbox] port names one
SERVE_PORT = 8123
_RESOURCES = click.option("--resources", type=click.Choice(["seeded", "empty"]), default=None,
                          help="What each account holds when it starts: seeded (default: a VPC, vSwitch, security "
                               "group, instance, users) or empty (a new account). Config: console.sandbox.resources.")


@sandbox.command(context_settings=CONTEXT)
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help=f"TCP port on 127.0.0.1 (0 = a free port; default {SERVE_PORT}). Config: console.sandbox.port.")
@click.option("--release", "release", default=None,
              help="Render the latest release on or before this date (YYYY-MM[-DD]). Config: console.sandbox.release.")
@click.option("--data", "data_dir", type=click.Path(file_okay=False), default=None,
              help="Keep state in DIR/sandbox.db (default: in memory). Config: console.sandbox.data_dir.")
@click.option("--latency-ms", type=click.IntRange(0, 60_000), default=None,
              help="How long asynchronous states (Pending -> Running) take (default 300). Config: console.sandbox.latency_ms.")
@click.option("--seed", type=int, default=None, help="Seed of generated ids (default 0). Config: console.sandbox.seed.")
@_RESOURCES
@click.pass_context
def serve(ctx: click.Context, port: int | None, release: str | None, data_dir: str | None, latency_ms: int | None,
          seed: int | None, resources: str | None) -> None:
    """Serve the console and its API until Ctrl-C.

    Options not given come from [console.sandbox] in docverify.toml or the
    DOCVERIFY_CONSOLE__SANDBOX__* variables, the same settings `docverify check`
    uses. Point checks at it with console.sandbox.url.
    """
    from docverify.cli import get_app
    from docverify_sandbox.console import SandboxConsole
    from docverify_sandbox.server import build_app, listening_socket, server_for
    from docverify_sandbox.state import DEFAULT_ACCOUNTS

    given = {"port": port, "release": release, "data_dir": data_dir, "latency_ms": latency_ms, "seed": seed,
             "resources": resources}
    names = {"port": "--port", "release": "--release", "data_dir": "--data", "latency_ms": "--latency-ms", "seed": "--seed",
             "resources": "--resources"}
    config = get_app(ctx).config({f"console.sandbox.{k}": v for k, v in given.items()},
                                 {f"console.sandbox.{k}": v for k, v in names.items()})
    opts = config.plugin_options("console", "sandbox", SandboxConsole)
    if opts.url:
        click.echo(f"note: console.sandbox.url is set ({opts.url}); checks use that sandbox, not this one", err=True)
    app = build_app(opts.release, opts.data_dir, opts.latency_ms, opts.seed, opts.resources)
    sock = listening_socket(opts.port if "console.sandbox.port" in config.origins else SERVE_PORT)
    port = sock.getsockname()[1]
    acct = DEFAULT_ACCOUNTS[0]
    url = f"http://127.0.0.1:{port}"
    click.echo(f"sandbox console {app.state.sandbox.catalog.release.name} on {url}/console")
    click.echo(f"  log on as {acct.admin_user}@{acct.alias}.onaliyun.com / {acct.admin_password}")
    click.echo(f"  API AccessKey {acct.admin_access_key_id} / {acct.admin_access_key_secret}")
    click.echo(f"  check against it: docverify check DOCS -O console.sandbox.url={url}")
    try:
        server_for(app).run(sockets=[sock])
    finally:
        sock.close()
        app.state.sandbox.store.close()


@sandbox.command(context_settings=CONTEXT)
@click.option("--release", default=None, help="Release date (default: newest).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def products(release: str | None, as_json: bool) -> None:
    """List products, resource types and operations (by their API Action names)."""
    from docverify_sandbox import catalog

    cat = catalog.load(release)
    data = []
    for key, p in cat.products.items():
        data.append({
            "product": key, "title": p["title"], "api_version": p["api_version"],
            "resource_types": [
                {"type": rkey, "title": r["title"], "resource_type": r["resource_type"],
                 "operations": sorted({spec.get("event", name) for name, spec in
                                       {**r.get("ops", {}), **r.get("extra_ops", {})}.items()})}
                for rkey, r in p.get("resources", {}).items()],
        })
    if as_json:
        click.echo(json.dumps({"release": cat.release.name, "products": data}, indent=2))
        return
    for p in data:
        click.echo(f"{p['product']:<12} {p['title']} (Version {p['api_version']})")
        for r in p["resource_types"]:
            click.echo(f"  {r['type']:<22} {', '.join(r['operations'])}")


@sandbox.command(context_settings=CONTEXT)
@click.option("--from", "from_date", required=True, help="Release the docs were written for, e.g. 2021-06.")
@click.option("--to", "to_date", required=True, help="Release to compare with, e.g. 2026-03.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the drift benchmark's ground truth).")
def changelog(from_date: str, to_date: str, as_json: bool) -> None:
    """Print the UI changes between two releases."""
    from docverify_sandbox import catalog

    rows = catalog.changelog(from_date, to_date)
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in rows], indent=2))
        return
    for r in rows:
        click.echo(f"{r.release}  {r.product:<11} {r.page:<22} {r.kind:<18} {r.old!s} -> {r.new!s}")
    click.echo(f"{len(rows)} changes")


@sandbox.command(context_settings=CONTEXT)
@click.option("--data", "data_dir", type=click.Path(file_okay=False), default=None,
              help="Reset the state kept in DIR/sandbox.db.")
@click.option("--url", default=None, help="Reset through a running sandbox's API instead (e.g. http://127.0.0.1:8123).")
@click.option("--account", default=None, help="Account alias to reset (default: every seeded account).")
@click.option("--resources", type=click.Choice(["seeded", "empty"]), default=None,
              help="With --data: what the accounts hold after the reset (default seeded). Through --url the "
                   "server's own setting (sandbox serve --resources) decides.")
def reset(data_dir: str | None, url: str | None, account: str | None, resources: str | None) -> None:
    """Return accounts to their starting state: seeded, or empty (a new account)."""
    from docverify.errors import UsageError
    from docverify_sandbox.state import DEFAULT_ACCOUNTS

    accounts = [a for a in DEFAULT_ACCOUNTS if account in (None, a.alias)]
    if not accounts:
        raise UsageError(f"unknown sandbox account {account!r}",
                         hint="valid: " + ", ".join(a.alias for a in DEFAULT_ACCOUNTS))
    if url:
        from docverify_sandbox.client import SandboxClient

        if resources is not None:
            raise UsageError("--resources applies to --data only",
                             hint="a running sandbox resets accounts to what it was started with "
                                  "(docverify sandbox serve --resources empty)")

        for acct in accounts:
            SandboxClient(url, acct.access_key_id, acct.access_key_secret).call("ResetAccount", "sandbox")
            click.echo(f"reset {acct.alias} ({acct.account_id})")
        return
    if not data_dir:
        raise UsageError("nothing to reset", hint="give --data DIR or --url URL")
    from pathlib import Path

    from docverify_sandbox.seed import seeder
    from docverify_sandbox.state import Store

    start = seeder(resources or "seeded")  # type: ignore[arg-type]
    store = Store(Path(data_dir) / "sandbox.db")
    try:
        store.seed_accounts(start)
        for acct in accounts:
            store.reset(acct.account_id, start)
            click.echo(f"reset {acct.alias} ({acct.account_id})")
    finally:
        store.close()
