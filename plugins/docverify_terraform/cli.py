"""``docverify cleanup``: destroy what interrupted or crashed runs left provisioned, and stop
the Terraform and provider processes they left running."""

from __future__ import annotations

import json
from pathlib import Path

import click

from docverify.errors import EnvironmentProblem, ExitCode, UsageError


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path),
              help="The ledger of live stacks (default: the state_dir of every configured Terraform-based "
                   "provisioner, terraform and resourcecoder; .docverify/stacks).")
@click.option("--dry-run", is_flag=True,
              help="List the leftovers (each stack's resources, stray processes); destroy and stop nothing.")
@click.option("--forget", "forget", multiple=True, metavar="STACK",
              help="Drop a stack from the ledger without destroying it (its resources are gone: e.g. the embedded "
                   "sandbox that held them stopped). Repeatable; 'all' for every one.")
@click.option("--console", "console_name", metavar="NAME", envvar="DOCVERIFY_CLEANUP_CONSOLE",
              help="Also find what runs left through this console's cloud API, by docverify's tags, and delete it "
                   "(aliyun: every resource tagged docverify-run). Env: DOCVERIFY_CLEANUP_CONSOLE.")
@click.option("--region", "regions", multiple=True, metavar="REGION",
              help="With --console: the regions to look in (repeatable; default: the console's region and each "
                   "account's).")
@click.option("--run", "run_id", metavar="RUN_ID",
              help="Only what this run left: its ledger stacks and, with --console, what carries its docverify-run "
                   "tag.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def cleanup(ctx: click.Context, state_dir: Path | None, dry_run: bool, forget: tuple[str, ...], as_json: bool,
            console_name: str | None = None, regions: tuple[str, ...] = (), run_id: str | None = None) -> int:
    """Destroy the resources that runs provisioned and did not destroy.

    The terraform provisioner records every stack before it applies it and forgets
    it only after a successful destroy; a run killed in between (or whose destroy
    failed) leaves an entry here. Each destroyed stack's working folder is deleted.
    Credentials: the AccessKey the stack was applied with, found in
    ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET, DOCVERIFY_ALIYUN_ACCESS_KEY_ID/_SECRET or the
    account pool (docverify accounts); never stored in the ledger.

    First it stops stray processes: Terraform and provider processes of this user
    whose docverify run is gone (killed with kill -9, say). Processes of a run that
    is still going are never touched. Found through /proc (Linux).

    With --console aliyun it then asks the cloud for every resource tagged
    docverify-run (the ledger of another machine, a CI runner that is gone) in the
    accounts the console knows (DOCVERIFY_ALIYUN_ACCESS_KEY_ID/_SECRET or
    ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET, and the pool's aliyun accounts) and deletes
    it; a resource without that tag is never deleted. Do not run it while a run is
    provisioning in the same account (its resources carry the tag too), or give --run.

    \b
    Examples:
      docverify cleanup --dry-run         # stacks with their resources, stray processes
      docverify cleanup
      docverify cleanup --forget all      # the embedded sandbox that held them is gone
      docverify cleanup --console aliyun --dry-run --json
      docverify cleanup --console aliyun --region cn-hangzhou --run 20260314T101502.123456Z-3f9a1c2b
    """
    from docverify.cli import get_app
    from docverify_terraform.engine import Stack, Terraform, TerraformError, state_resources
    from docverify_terraform.provisioner import credentials_for, tag_value
    from docverify_terraform.strays import find_strays, stop_strays

    app = get_app(ctx)
    config = app.checked_config()
    ledgers = _ledgers(app, config, state_dir)
    tagged = _tagged_leftovers(app, config, console_name) if console_name else None  # a bad --console: before anything
    if regions and tagged is None:
        raise UsageError("--region: only with --console", hint="e.g. --console aliyun --region cn-hangzhou")
    strays = find_strays()
    # first: a stray Terraform holds its stack's state lock, and saves that state as it stops
    outcomes = {} if dry_run else stop_strays(strays)
    unstopped = sum(outcome == "still running" for outcome in outcomes.values())
    dropped, live = [], []
    for ledger, options in ledgers:
        for entry in ledger.entries():
            if run_id is not None and tag_value(entry.labels.get("run") or "-") != tag_value(run_id):
                continue
            if "all" in forget or entry.id in forget:
                ledger.forget(entry.id)
                dropped.append(entry)
            else:
                live.append((entry, ledger, options))
    rows = []
    failed = 0
    for entry, ledger, options in live:
        resources = state_resources(entry.workdir)
        row = {"stack": entry.id, "recorded": entry.recorded, "task": entry.labels.get("task"),
               "workdir": str(entry.workdir), "leftovers": list(entry.leftovers), "error": entry.error,
               "resources": None if resources is None else [
                   {"type": r.type, "name": r.name, "id": r.id, "address": r.address} for r in resources]}
        if not dry_run:
            try:
                if not entry.workdir.is_dir():
                    raise EnvironmentProblem(f"its working directory {entry.workdir} is gone")
                credentials = credentials_for(entry.labels.get("access_key_id"), entry.env, config_file=config.file)
                terraform = Terraform(options.binary, credentials=credentials, env=dict(entry.env),  # type: ignore[attr-defined]
                                      mirror=entry.labels.get("provider_mirror"))
                stack = Stack(terraform, entry.workdir, ledger=ledger, stack_id=entry.id, labels=entry.labels)
                stack.init(reinstall_sandbox=True)
                stack.destroy(attempts=options.destroy_attempts)  # type: ignore[attr-defined]
                row["destroyed"], row["removed"] = True, stack.remove()
            except (TerraformError, EnvironmentProblem) as error:
                row["destroyed"], row["error"] = False, str(error)
                failed += 1
        rows.append(row)
    processes = [{**stray.as_dict(), "outcome": outcomes.get(stray.pid, "left")} for stray in strays]
    tagged_rows: list[dict] = []
    if tagged is not None:  # after the ledger: Terraform destroys its stacks in order, the tags find the rest
        in_stacks = {r["id"]: row["stack"] for row in rows for r in (row["resources"] or []) if r["id"]}
        found = tagged.find(regions, tag_value(run_id) if run_id else None)
        if dry_run:
            tagged_rows = [{**left.to_dict(), "tagged": left.tagged, "stack": in_stacks.get(left.id)}
                           for left in found]
        else:
            tagged_rows = [{**done.to_dict(), "tagged": done.leftover.tagged} for done in tagged.delete(found)]
            failed += sum(1 for row in tagged_rows if row["tagged"] and not row["deleted"])
    if as_json:
        out = {"stacks": rows, "forgotten": [e.id for e in dropped], "processes": processes}
        if tagged is not None:
            out.update(tagged=tagged_rows, tag_problems=list(tagged.problems))
        click.echo(json.dumps(out, indent=2))
    else:
        for stray in strays:
            click.echo(f"stray {stray.describe()}: {outcomes.get(stray.pid, 'left')}")
        for entry in dropped:
            click.echo(f"forgot {entry.id} (not destroyed)")
        if not rows:
            where = ", ".join(str(ledger.dir) for ledger, _ in ledgers)
            click.echo("no leftover stacks" + (f" in {where}" if not dropped else ""))
        for row in rows:
            if dry_run:
                state = "left"
            elif row.get("destroyed"):
                kept = f", folder kept (it holds other files): {row['workdir']}"
                state = "destroyed" + ("" if row["removed"] else kept)
            else:
                state = f"NOT destroyed: {row['error']}"
            click.echo(f"{row['stack']}  task {row['task'] or '?'}  recorded {row['recorded']}: {state}")
            if dry_run:
                click.echo(_describe_resources(row["resources"], Path(row["workdir"])))
        if tagged is not None:
            _echo_tagged(tagged_rows, tagged.problems, dry_run)
        if failed:
            click.echo(f"{failed} stack(s) or tagged resource(s) could not be destroyed; when a stack's resources are "
                       "gone anyway (an embedded sandbox that stopped), drop it with --forget STACK", err=True)
        if unstopped:
            click.echo(f"{unstopped} stray process(es) could not be stopped", err=True)
    return ExitCode.ENVIRONMENT if failed or unstopped else ExitCode.OK


def _echo_tagged(rows: list[dict], problems: list[str], dry_run: bool) -> None:
    """The lines for what --console found by tag."""
    if not rows:
        click.echo("no tagged leftovers")
    for row in rows:
        what = (f"{row['what']} {row['id']} in {row['region']} of {row['account']} ({row['access_key_id']}): "
                f"run {row['run'] or '?'}, task {row['task'] or '?'}")
        if not row["tagged"]:
            click.echo(f"listed without a docverify-run tag, left alone: {row['what']} {row['id']} in {row['region']}")
        elif dry_run:
            click.echo(f"tagged {what}" + (f" (in stack {row['stack']})" if row.get("stack") else ""))
        elif row["deleted"]:
            click.echo(f"deleted {what}" + (f" ({row['error']})" if row.get("error") else ""))
        else:
            click.echo(f"NOT deleted {what}: {row['error']}")
    for problem in problems:
        click.echo(f"not looked at: {problem}", err=True)


def _tagged_leftovers(app, config, name: str):
    """The console ``name``'s finder of what runs left, by tag (``Console.leftovers``)."""
    console_class = app.plugins.get("consoles", name)
    console = console_class(config.plugin_options("console", name, console_class))
    finder = getattr(console, "leftovers", None)
    if finder is None:
        raise UsageError(f"--console {name}: this console cannot find what runs left by tag",
                         hint="consoles of a real cloud can (--console aliyun); the ledger alone is read without "
                              "--console")
    return finder(config_file=config.file)


def _describe_resources(resources: list[dict] | None, workdir: Path) -> str:
    """The lines under a stack in ``--dry-run``: one per resource in its state."""
    if resources is None:
        return f"  (its state cannot be read: {workdir / 'terraform.tfstate'})" if workdir.is_dir() else \
            f"  (its working directory {workdir} is gone)"
    if not resources:
        return "  (no resources in its state)"
    return "\n".join(f"  {r['type']}  {r['name']}  {r['id'] or '(no id)'}" for r in resources)


def _ledgers(app, config, state_dir: Path | None) -> list:
    """(ledger, provisioner options) for ``--state-dir``, else one per distinct
    ``state_dir`` of the installed provisioners that keep a ledger (their Options
    have ``state_dir``: terraform, resourcecoder, third-party ones built on them)."""
    from docverify_terraform.engine import Ledger
    from docverify_terraform.provisioner import TerraformProvisioner

    if state_dir is not None:
        return [(Ledger(state_dir), config.plugin_options("provisioner", "terraform", TerraformProvisioner))]
    found: dict[Path, tuple] = {}
    for entry in sorted(app.plugins.registry("provisioners"), key=lambda e: e.name != "terraform"):
        plugin = entry.obj
        if "state_dir" not in getattr(plugin, "Options").model_fields:
            continue
        options = config.plugin_options("provisioner", entry.name, plugin)
        found.setdefault(Path(options.state_dir).resolve(), (Ledger(options.state_dir), options))
    return list(found.values())
