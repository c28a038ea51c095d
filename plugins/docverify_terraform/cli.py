"""``docverify cleanup``: destroy what interrupted or crashed runs left provisioned, and stop
the Terraform and provider processes they left running."""

from __future__ import annotations

import json
from pathlib import Path

import click

from docverify.errors import EnvironmentProblem, ExitCode


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path),
              help="The ledger of live stacks (default: the state_dir of every configured Terraform-based "
                   "provisioner, terraform and resourcecoder; .docverify/stacks).")
@click.option("--dry-run", is_flag=True,
              help="List the leftovers (each stack's resources, stray processes); destroy and stop nothing.")
@click.option("--forget", "forget", multiple=True, metavar="STACK",
              help="Drop a stack from the ledger without destroying it (its resources are gone: e.g. the embedded "
                   "sandbox that held them stopped). Repeatable; 'all' for every one.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def cleanup(ctx: click.Context, state_dir: Path | None, dry_run: bool, forget: tuple[str, ...], as_json: bool) -> int:
    """Destroy the resources that runs provisioned and did not destroy.

    The terraform provisioner records every stack before it applies it and forgets
    it only after a successful destroy; a run killed in between (or whose destroy
    failed) leaves an entry here. Each destroyed stack's working folder is deleted.
    Credentials: the AccessKey the stack was applied with, found in
    ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET or the account pool (docverify accounts);
    never stored in the ledger.

    First it stops stray processes: Terraform and provider processes of this user
    whose docverify run is gone (killed with kill -9, say). Processes of a run that
    is still going are never touched. Found through /proc (Linux).

    \b
    Examples:
      docverify cleanup --dry-run         # stacks with their resources, stray processes
      docverify cleanup
      docverify cleanup --forget all      # the embedded sandbox that held them is gone
    """
    from docverify.cli import get_app
    from docverify_terraform.engine import Stack, Terraform, TerraformError, state_resources
    from docverify_terraform.provisioner import credentials_for
    from docverify_terraform.strays import find_strays, stop_strays

    app = get_app(ctx)
    config = app.checked_config()
    ledgers = _ledgers(app, config, state_dir)
    strays = find_strays()
    # first: a stray Terraform holds its stack's state lock, and saves that state as it stops
    outcomes = {} if dry_run else stop_strays(strays)
    unstopped = sum(outcome == "still running" for outcome in outcomes.values())
    dropped, live = [], []
    for ledger, options in ledgers:
        for entry in ledger.entries():
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
                terraform = Terraform(options.binary, credentials=credentials, env=dict(entry.env))  # type: ignore[attr-defined]
                stack = Stack(terraform, entry.workdir, ledger=ledger, stack_id=entry.id, labels=entry.labels)
                stack.init(reinstall_sandbox=True)
                stack.destroy(attempts=options.destroy_attempts)  # type: ignore[attr-defined]
                row["destroyed"], row["removed"] = True, stack.remove()
            except (TerraformError, EnvironmentProblem) as error:
                row["destroyed"], row["error"] = False, str(error)
                failed += 1
        rows.append(row)
    processes = [{**stray.as_dict(), "outcome": outcomes.get(stray.pid, "left")} for stray in strays]
    if as_json:
        click.echo(json.dumps({"stacks": rows, "forgotten": [e.id for e in dropped], "processes": processes},
                              indent=2))
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
        if failed:
            click.echo(f"{failed} stack(s) could not be destroyed; when their resources are gone anyway "
                       "(an embedded sandbox that stopped), drop them with --forget STACK", err=True)
        if unstopped:
            click.echo(f"{unstopped} stray process(es) could not be stopped", err=True)
    return ExitCode.ENVIRONMENT if failed or unstopped else ExitCode.OK


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
