"""``docverify merge``: the shards of one sharded run, reported as one run."""

from __future__ import annotations

from pathlib import Path

import click

from docverify.check.verdict import FAIL_ON
from docverify.cli import CONTEXT_SETTINGS, completion, get_app
from docverify.errors import ExitCode, UsageError

#: missing procedures listed one per line before "... and N more"
SHOWN_MISSING = 10


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the merged docverify.json (always written there) and the --report files; the "
                   "screenshots and traces the results name are copied in.")
@click.option("--report", "reports", multiple=True, metavar="NAME[,NAME]",
              shell_complete=completion.plugin_names("reporters"),
              help="Reports of the merged run besides the configured ones (the terminal's): json, junit, github, "
                   "html (repeat or comma-separate). Files need --output.")
@click.option("--fail-on", "fail_on", default="drift,fail,env", show_default=True, envvar="DOCVERIFY_FAIL_ON",
              shell_complete=completion.fail_on_names,
              help="Verdicts that fail the merge, as for check: drift, fail, env. Env: DOCVERIFY_FAIL_ON.")
@click.option("--allow-missing", is_flag=True, envvar="DOCVERIFY_ALLOW_MISSING",
              help="Missing shards or procedures do not fail the merge (they are still reported). "
                   "Env: DOCVERIFY_ALLOW_MISSING.")
@click.option("--force", is_flag=True,
              help="Merge shards of different runs (other COUNT, selection, split, commit or policy) anyway.")
@click.option("--no-store", is_flag=True,
              help="Do not keep the merged run in .docverify/results.db (where --shard-balance store reads the "
                   "durations that balance the next sharded run).")
@click.option("-q", "--quiet", count=True, help="Less output: failures only in the table (-qq: the counts only).")
@click.pass_context
def merge(ctx: click.Context, folders: tuple[Path, ...], output: Path | None, reports: tuple[str, ...], fail_on: str,
          allow_missing: bool, force: bool, no_store: bool, quiet: int) -> int:
    """Merge the results of the shards of one run (`docverify check --shard INDEX/COUNT
    --report json --output DIR`) into one run, and report it as check would.

    FOLDER is a shard's output folder (holding its docverify.json), the docverify.json
    itself, or a folder of such folders (downloaded CI artifacts). The merge says which
    shards and which procedures are missing, and refuses shards of different runs.

    \b
    Exit codes: as check (0 all PASS; 1 DRIFT/FAIL; 3 only ENV_ERROR/INCONCLUSIVE),
    and 3 when a shard or a selected procedure has no result (unless --allow-missing);
    2 for shards of different runs (unless --force) or an unreadable folder.

    \b
    Examples:
      docverify merge shard-1 shard-2 shard-3 shard-4 -o report --report junit,html
      docverify merge shards/ -o report --report github,html     # CI: the downloaded artifacts
      docverify merge shard-* --allow-missing                     # look at what is there
    """
    from docverify.check.verdict import exit_code
    from docverify.run.check import build_reporters
    from docverify.run.merge import copy_artifacts, read_run, results_files, store_merged
    from docverify.run.merge import merge as merge_runs
    from docverify.run.store import default_store_path

    fail_on_names = [name.strip() for name in fail_on.split(",") if name.strip()]
    unknown = [name for name in fail_on_names if name not in FAIL_ON]
    if unknown:
        raise UsageError(f"--fail-on {fail_on}: unknown {', '.join(unknown)}; choose from {', '.join(FAIL_ON)}")
    app = get_app(ctx)
    report_names = app.plugin_names("reporters", [name.strip() for value in reports for name in value.split(",")
                                                  if name.strip()], "--report")
    if output is not None and "json" not in report_names:
        report_names.append("json")
    config = app.checked_config({"reporter.terminal.verbosity": -quiet or None},
                                {"reporter.terminal.verbosity": "-q"})
    reporters = build_reporters(config, app.plugins, report_names)
    if output is None and any(reporter.writes_files for reporter in reporters):
        wanting = ", ".join(reporter.name for reporter in reporters if reporter.writes_files)
        raise UsageError(f"--report {wanting} writes files: give --output DIR", hint="e.g. --output docverify-report")

    runs = [read_run(path) for path in results_files(folders)]
    if output is not None:
        for run in runs:
            if run.folder.resolve() == output.resolve():
                raise UsageError(f"--output {output} holds {run.source.name} of a shard, which the merge would "
                                 "overwrite", hint="give another folder, e.g. --output docverify-report")
    merged = merge_runs(runs, force=force, output=output)
    for warning in merged.warnings:
        click.echo(f"warning: {warning}", err=True)
    summary = merged.summary
    info = merged.info
    indexes = sorted(shard.index for shard in info.shards if shard.index is not None)
    what = (f"shard{'s' if len(indexes) != 1 else ''} {', '.join(map(str, indexes))} of {info.count}" if indexes
            else f"{len(runs)} run{'s' if len(runs) != 1 else ''}")
    click.echo(f"merging {what}: {len(summary.results)} results", err=True)
    if output is not None:
        for run in runs:
            copy_artifacts(run, run.summary.results, output)

    for reporter in reporters:
        reporter.run_started(len(summary.results), summary.console, summary.policy)
    for result in summary.results:
        for reporter in reporters:
            reporter.procedure_finished(result)
    for reporter in reporters:
        if output is None and reporter.writes_files:
            continue
        for written in reporter.run_finished(summary, output):
            click.echo(f"wrote {written}", err=True)

    if not no_store:
        store_merged(default_store_path(Path.cwd()), summary)
    for line in missing_lines(merged):
        click.secho(line, fg="yellow", err=True)
    code = exit_code(summary.verdicts_counted(), fail_on_names)
    if not info.complete:
        if allow_missing:
            click.echo("--allow-missing: the missing results do not fail the merge", err=True)
        elif code != ExitCode.DEFECTS:
            click.echo(f"the merge is incomplete: exit {int(ExitCode.ENVIRONMENT)} (give --allow-missing to accept "
                       "it)", err=True)
            code = ExitCode.ENVIRONMENT
    return code


def missing_lines(merged) -> list[str]:
    """What the merged run lacks, shard by shard, then the procedures."""
    from docverify.run.shard import hash_shard

    info = merged.info
    lines: list[str] = []
    assigned: dict[str, int] = {}
    balances: set[str] = set()
    for run in merged.runs:
        shard = run.summary.shard
        if shard is None:
            continue
        balances.add(shard.balance)
        for key in shard.assigned:
            assigned[key] = shard.index
    for index in info.missing_shards:
        if balances == {"hash"}:
            mine = [key for key in info.missing if key not in assigned and hash_shard(key, info.count) == index]
            lines.append(f"shard {index}/{info.count} missing: no folder holds it ({len(mine)} "
                         f"procedure{'s' if len(mine) != 1 else ''})")
        else:
            lines.append(f"shard {index}/{info.count} missing: no folder holds it")
    for run in merged.runs:
        shard = run.summary.shard
        if shard is None:
            continue
        lacking = [key for key in shard.assigned if key in set(info.missing)]
        if lacking:
            why = " (interrupted)" if run.summary.interrupted else (f" ({run.summary.stopped})" if run.summary.stopped
                                                                     else "")
            lines.append(f"shard {shard.index}/{shard.count} ({run.name}) has results for "
                         f"{len(shard.assigned) - len(lacking)} of its {len(shard.assigned)} procedures{why}")
    if info.missing:
        lines.append(f"{len(info.missing)} selected procedure{'s' if len(info.missing) != 1 else ''} without a result:")
        lines += [f"  {key}" for key in info.missing[:SHOWN_MISSING]]
        if len(info.missing) > SHOWN_MISSING:
            lines.append(f"  ... and {len(info.missing) - SHOWN_MISSING} more (the merged docverify.json lists "
                         "them all under merged.missing)")
    return lines
