"""``docverify check``: run procedures against a console and report drift on the doc's lines."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from docverify.check.verdict import FAIL_ON
from docverify.cli import CONTEXT_SETTINGS, completion, get_app, sharding
from docverify.errors import ExitCode, NoProceduresError, UsageError
from docverify.parse.model import Procedure, Severity
from docverify.scrub import scrub_argv


def _executor_options(config, plugins, wanted: dict[str, tuple[object, str | None]]):
    """``executor.<name>.<option>`` overrides (and the CLI flag naming each) for the
    executor in use: ``wanted`` maps an option to its value and flag (None: a default
    this command picks, left out when the executor has no such option or the
    configuration already sets it). A flag the executor has no option for is a
    usage error."""
    name = config.settings.executor.use[0]
    fields = plugins.get("executors", name).Options.model_fields
    overrides: dict[str, object] = {}
    names: dict[str, str] = {}
    for option, (value, flag) in wanted.items():
        key = f"executor.{name}.{option}"
        if option not in fields:
            if flag is None:
                continue
            raise UsageError(f"{flag}: the executor {name!r} has no option {option!r}",
                             hint=f"its options: {', '.join(fields) or 'none'}; choose another with "
                                  "-O executor.use=NAME")
        if flag is None and key in config.origins:
            continue
        overrides[key] = value
        names[key] = flag or key
    return overrides, names


class DryRunMode(click.Choice):
    """``--dry-run``'s optional value: ``plan`` (what a bare ``--dry-run`` means) or
    ``browse``. Click takes the word after a bare ``--dry-run`` as its value, so a PATH
    there is said to belong before it."""

    def __init__(self) -> None:
        super().__init__(["plan", "browse"])

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
        if isinstance(value, str) and value not in self.choices:
            self.fail(f"{value!r} is neither plan nor browse: write --dry-run=browse (or =plan), and give PATHS "
                      f"before a bare --dry-run", param, ctx)
        return super().convert(value, param, ctx)


def _csv(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def parse_assignments(values: tuple[str, ...]) -> dict[str, object]:
    """``--set console.sandbox.release=2021-06`` -> {"console.sandbox.release": "2021-06"}."""
    out: dict[str, object] = {}
    for value in values:
        key, sep, raw = value.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {value!r}: expected KEY=VALUE, e.g. --set console.sandbox.release=2021-06")
        text = raw.strip()
        out[key.strip()] = {"true": True, "false": False}.get(text.lower(), text)
    return out


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("paths", nargs=-1, required=True, shell_complete=completion.doc_paths)
@click.option("-k", "keyword", metavar="EXPR",
              help="Only procedures whose id or title match, e.g. -k 'bucket and not delete'.")
@click.option("--changed-since", metavar="GIT_REF", envvar="DOCVERIFY_CHANGED_SINCE",
              help="Only documents changed since GIT_REF (committed, staged or not). Env: DOCVERIFY_CHANGED_SINCE.")
@sharding.shard_option()
@sharding.shard_balance_option()
@click.option("-j", "--jobs", type=click.IntRange(1, 64), help="Procedures in parallel (browser contexts). Env: DOCVERIFY_JOBS.")
@click.option("--policy", shell_complete=completion.plugin_name("policies"),
              help="Policy plugin (default literal, or hybrid once [policy.hybrid] is configured). "
                   "Env: DOCVERIFY_POLICY.")
@click.option("--console", "console_name", shell_complete=completion.plugin_name("consoles"),
              help="Console plugin (default sandbox). Env: DOCVERIFY_CONSOLE.")
@click.option("--provisioner", shell_complete=completion.plugin_name("provisioners"),
              help="Provisioner plugin: none (default), terraform, resourcecoder. Env: DOCVERIFY_PROVISIONER.")
@click.option("--max-paid-resources", "max_paid", type=click.IntRange(0), metavar="N",
              envvar="DOCVERIFY_MAX_PAID_RESOURCES",
              help="Paid resources (ECS, disks, EIPs, NAT gateways, SLB/ALB, RDS, MongoDB, KMS keys) provisioning may "
                   "create in this run; more is ENV_ERROR before anything is applied (default 0 on a real cloud). "
                   "Env: DOCVERIFY_MAX_PAID_RESOURCES.")
@click.option("--backend", shell_complete=completion.plugin_name("backends"),
              help="Where procedures run: local (default: this process, one browser) or ray (Ray workers, a browser "
                   "and a console each; pip install 'docverify[ray]'). Env: DOCVERIFY_BACKEND.")
@click.option("--ray-workers", type=click.IntRange(1, 1024), metavar="N",
              help="With --backend ray: workers, one procedure at a time each (default: --jobs). "
                   "Env: DOCVERIFY_BACKEND__RAY__WORKERS.")
@click.option("--ray-address", metavar="ADDR",
              help="With --backend ray: the cluster to join (HOST:PORT, ray://HOST:PORT, auto); default: a local Ray "
                   "started for the run. Env: RAY_ADDRESS.")
@click.option("--report", "reports", multiple=True, metavar="NAME[,NAME]",
              shell_complete=completion.plugin_names("reporters"),
              help="Extra reports: json, junit, github, html (repeat or comma-separate). Needs --output for files.")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), envvar="DOCVERIFY_OUTPUT",
              help="Folder for reports, screenshots and traces. Env: DOCVERIFY_OUTPUT.")
@click.option("--fail-on", "fail_on", default="drift,fail,env", show_default=True, envvar="DOCVERIFY_FAIL_ON",
              shell_complete=completion.fail_on_names,
              help="Verdicts that fail the run: drift, fail, env (ENV_ERROR/INCONCLUSIVE). Env: DOCVERIFY_FAIL_ON.")
@click.option("--max-steps", type=click.IntRange(1, 10_000), default=80, show_default=True, envvar="DOCVERIFY_MAX_STEPS",
              help="Turn budget per procedure. Env: DOCVERIFY_MAX_STEPS.")
@click.option("--timeout", type=click.FloatRange(1, 86_400), default=300, show_default=True, envvar="DOCVERIFY_TIMEOUT",
              help="Seconds per procedure. Env: DOCVERIFY_TIMEOUT.")
@click.option("--budget", metavar="AMOUNT", envvar="DOCVERIFY_BUDGET",
              help="Stop model calls before this is spent, e.g. 2.50USD or 20CNY (needs [prices.MODEL]). "
                   "Env: DOCVERIFY_BUDGET.")
@click.option("--lease-timeout", type=click.FloatRange(0, 86_400), default=600, show_default=True,
              envvar="DOCVERIFY_LEASE_TIMEOUT",
              help="With an account pool: seconds a procedure waits for a free account (0: fail at once). "
                   "Env: DOCVERIFY_LEASE_TIMEOUT.")
@click.option("--headed", is_flag=True, default=None, help="Show the browser window.")
@click.option("--slow-mo", type=click.IntRange(0, 10_000), metavar="MS", help="Pause after each browser operation.")
@click.option("--browser-path", type=click.Path(dir_okay=False), envvar="DOCVERIFY_BROWSER",
              help="Chromium executable. Env: DOCVERIFY_BROWSER.")
@click.option("--screenshots/--no-screenshots", default=None,
              help="A screenshot after every action, kept for the procedures that do not pass (default: on when "
                   "the html report is asked for).")
@click.option("--pass-screenshots", is_flag=True, envvar="DOCVERIFY_PASS_SCREENSHOTS",
              help="Keep the screenshots of procedures that pass too (implies --screenshots). "
                   "Env: DOCVERIFY_PASS_SCREENSHOTS.")
@click.option("--resume", is_flag=True, help="Skip procedures the last (interrupted) run finished, unless they changed.")
@click.option("--no-store", is_flag=True, help="Do not keep results in .docverify/results.db.")
@click.option("--dry-run", "dry_run", type=DryRunMode(), is_flag=False, flag_value="plan", default=None,
              metavar="[=plan|browse]",
              help="Change nothing. --dry-run (=plan): parse and plan only, list what would run with its success "
                   "criteria. --dry-run=browse: sign in and follow each procedure's steps up to the first action that "
                   "changes the console's state (submit, create, delete, confirm, ...), and stop there; nothing is "
                   "provisioned, no audit log is checked, no result is stored: DRIFT for a step that could not be "
                   "followed as written, else INCONCLUSIVE naming the step it stopped before.")
@click.option("-x", "--exitfirst", is_flag=True, help="Start no further procedure after the first failed one (--maxfail 1).")
@click.option("--maxfail", type=click.IntRange(1), metavar="N",
              help="Start no further procedure after N failed ones (a verdict --fail-on counts).")
@click.option("-q", "--quiet", count=True, help="Less output: no line per PASS, failures only in the table (-qq: the counts only).")
@click.option("-v", "--verbose", count=True, help="More output: every step of every procedure as it runs.")
@click.option("--set", "-O", "settings", multiple=True, metavar="KEY=VALUE",
              shell_complete=completion.setting_assignments,
              help="Any configuration key, e.g. -O console.sandbox.release=2021-06 (repeatable).")
@click.pass_context
def check(ctx: click.Context, paths: tuple[str, ...], keyword: str | None, changed_since: str | None,
          shard, shard_balance: str,
          jobs: int | None, policy: str | None, console_name: str | None, provisioner: str | None,
          reports: tuple[str, ...],
          output: Path | None, fail_on: str, max_steps: int, timeout: float, budget: str | None, lease_timeout: float, headed: bool | None,
          slow_mo: int | None, browser_path: str | None, screenshots: bool | None, pass_screenshots: bool, resume: bool,
          no_store: bool, dry_run: str | None, exitfirst: bool, maxfail: int | None, quiet: int, verbose: int,
          settings: tuple[str, ...], backend: str | None = None, ray_workers: int | None = None,
          ray_address: str | None = None, max_paid: int | None = None) -> int:
    """Run the procedures under PATHS against a console and report drift, step by step.

    PATH is a Markdown file or a folder (recursive); PATH#ID picks one procedure of a
    file. Without a configured console, the embedded sandbox console starts on a free
    port and stops afterwards.

    \b
    Verdicts: PASS, DRIFT (the doc is wrong), FAIL (goal not reached, no drift),
    ENV_ERROR (console, browser or provisioning trouble), INCONCLUSIVE.
    Exit codes: 0 all PASS; 1 DRIFT/FAIL; 2 usage; 3 only ENV_ERROR/INCONCLUSIVE;
    4 plugin error; 5 no procedures; 130 interrupted (resume with --resume).

    \b
    Examples:
      docverify check examples/docs
      docverify check docs/oss/create-bucket.md#create-a-bucket --headed
      docverify check docs -k bucket --jobs 4 --report junit,html -o report/
      docverify check docs --changed-since origin/main --report github
      docverify check docs --console aliyun --dry-run=browse      # sign in, follow, change nothing
      docverify check docs -O console.sandbox.release=2021-06
      docverify check docs --backend ray --ray-workers 4            # or --ray-address HEAD:6379
      docverify check docs --shard 2/4 --report json -o shard-2   # then: docverify merge shard-*
    """
    from docverify.check.verdict import exit_code, failing_verdicts
    from docverify.run.check import CheckOptions, CheckRun, EarlyStart, build_reporters
    from docverify.run.runner import RunLimits
    from docverify.run.store import default_store_path

    fail_on_names = _csv((fail_on,))
    unknown = [name for name in fail_on_names if name not in FAIL_ON]
    if unknown:
        raise UsageError(f"--fail-on {fail_on}: unknown {', '.join(unknown)}; choose from {', '.join(FAIL_ON)}")
    browse = dry_run == "browse"
    if browse and resume:
        raise UsageError("--resume: a dry run (--dry-run=browse) keeps no results to resume from",
                         hint="leave out --resume, or run without --dry-run")
    # a dry run's results are no results of the docs: --resume and --shard-balance store must not take them
    store_path = None if no_store or browse else default_store_path(Path.cwd())
    if shard is not None:
        sharding.check_balance(shard_balance, store_path)
    overrides: dict[str, object] = {"jobs": jobs, "policy.use": policy, "console.use": console_name, "budget": budget,
                                    "provisioner.use": provisioner,
                                    "reporter.terminal.verbosity": (verbose - quiet) or None,
                                    "backend.use": backend, "backend.ray.workers": ray_workers,
                                    "backend.ray.address": ray_address}
    names = {"jobs": "--jobs", "policy.use": "--policy", "console.use": "--console", "budget": "--budget",
             "provisioner.use": "--provisioner", "reporter.terminal.verbosity": "-q/-v", "backend.use": "--backend",
             "backend.ray.workers": "--ray-workers", "backend.ray.address": "--ray-address"}
    assigned = parse_assignments(settings)
    names.update({key: f"--set {key}" for key in assigned})
    app = get_app(ctx)
    config = app.checked_config({**overrides, **assigned}, names)
    given = [flag for flag, value in (("--ray-workers", ray_workers), ("--ray-address", ray_address)) if value]
    if given and "ray" not in config.settings.backend.use:
        raise UsageError(f"{' and '.join(given)}: only with --backend ray",
                         hint=f"the backend is {config.settings.backend.use[0]} "
                              f"({config.origins.get('backend.use', 'the default')}): add --backend ray")
    # the browser options go to the table of the executor in use: [executor.<name>]
    wanted = {option: (value, flag) for option, value, flag in (("headed", headed, "--headed"),
                                                               ("slow_mo_ms", slow_mo, "--slow-mo"),
                                                               ("browser_path", browser_path, "--browser-path"))
              if value is not None}
    report_names = app.plugin_names("reporters", _csv(reports), "--report")
    if "html" in {*config.settings.reporter.use, *report_names}:
        wanted["trace"] = ("on-failure", None)  # the html report shows the trace of what did not pass
    if wanted:
        executor_overrides, executor_names = _executor_options(config, app.plugins, wanted)
        if executor_overrides:
            names.update(executor_names)
            overrides.update(executor_overrides)
            config = app.checked_config({**overrides, **assigned}, names)
    if max_paid is not None:  # the provisioner in use's cost guard
        chosen = config.settings.provisioner.use[0]
        if "max_paid_resources" not in app.plugins.get("provisioners", chosen).Options.model_fields:
            raise UsageError(f"--max-paid-resources: the provisioner {chosen!r} creates nothing it could count",
                             hint="provision with --provisioner terraform (or resourcecoder)")
        overrides[f"provisioner.{chosen}.max_paid_resources"] = max_paid
        names[f"provisioner.{chosen}.max_paid_resources"] = "--max-paid-resources"
        config = app.checked_config({**overrides, **assigned}, names)

    # the browser launches while the docs are parsed and the console starts (when procedures run here)
    in_process = app.plugins.get("backends", config.settings.backend.use[0]).in_process
    plan = dry_run == "plan"
    with contextlib.nullcontext() if plan else EarlyStart(config, app.plugins, warm=in_process) as early:
        tasks, problems = select_tasks(paths, config, keyword, changed_since, app.plugins)
        if tasks is None and shard is None:
            return ExitCode.OK
        shard_info = None
        if shard is not None:  # a shard with nothing changed still writes its (empty) part, for the merge
            tasks, shard_info = sharding.take(tasks or [], shard, shard_balance, store_path)
        if plan:
            _print_plan(tasks)
            return ExitCode.OK
        if browse:
            click.echo("dry run: each procedure is followed up to the first action that changes the console's state, "
                       "and stops there; nothing is provisioned, no audit log is checked", err=True)

        reporters = build_reporters(config, app.plugins, report_names)
        if output is None and any(r.writes_files for r in reporters):
            wanting = ", ".join(r.name for r in reporters if r.writes_files)
            raise UsageError(f"--report {wanting} writes files: give --output DIR", hint="e.g. --output docverify-report")
        if screenshots is None:
            screenshots = pass_screenshots or "html" in {r.name for r in reporters}
        options = CheckOptions(
            jobs=config.settings.jobs,
            limits=RunLimits(max_steps=max_steps, timeout_s=timeout, screenshots=screenshots,
                             pass_screenshots=pass_screenshots, screenshot_type="jpeg", dry_run=browse),
            output=output, resume=resume, lease_timeout=lease_timeout,
            store=store_path,
            argv=scrub_argv(sys.argv[1:]), changed_since=changed_since, maxfail=1 if exitfirst else maxfail,
            failing=failing_verdicts(fail_on_names), shard=shard_info,
        )
        run = CheckRun(config, app.plugins, options, reporters, early=early)
        try:
            summary = run.run(tasks)
        except KeyboardInterrupt:
            summary = run.summary(tasks, interrupted=True)
            _finish_reports(reporters, summary, output)
            if options.store is not None:
                click.echo(f"{len(summary.results)} of {len(tasks)} results are saved: run the same command with "
                           "--resume to continue", err=True)
            return ExitCode.INTERRUPTED
        except BaseException:
            if run.reporting:  # a run that never started (a configuration error) has nothing to report
                _finish_reports(reporters, run.summary(tasks, interrupted=True), None)
            raise
    _finish_reports(reporters, summary, output)
    code = exit_code(summary.verdicts_counted(), fail_on_names)
    if code == ExitCode.OK and any(p.severity is Severity.ERROR for p in problems):
        return ExitCode.USAGE
    return code


def select_tasks(paths: tuple[str, ...], config, keyword: str | None, changed_since: str | None, plugins):
    """The tasks to run of the procedures under ``paths``, and the problems found
    reading them (skipped procedures are said on stderr); ``(None, problems)`` when
    ``--changed-since`` left nothing to check. Raises UsageError for a missing PATH
    or an error in the docs, NoProceduresError when nothing is left to run."""
    from docverify.run.select import collect, runnable
    from docverify.task import make_task

    procedures, problems = collect(paths, config.settings.parse, keyword, changed_since)
    sys.stdout.flush()
    unreadable = [p for p in problems if p.severity is Severity.ERROR and p.line == 0]  # a PATH missing, unreadable
    if unreadable:
        raise UsageError("; ".join(problem.message for problem in unreadable), hint="check the PATH arguments")
    if nothing_changed(changed_since, procedures):
        return None, problems
    for problem in problems:
        click.echo(str(problem), err=True)
    blocking = input_errors(procedures, problems)
    if blocking:
        raise UsageError(
            f"{len(blocking)} error(s) in the docs (listed above): nothing was run",
            hint="fix them (an annotation that cannot be read would lose a procedure's `skip:`, `requires:` or `expect:`)",
        )
    console_cloud = plugins.get("consoles", config.settings.console.use[0]).cloud
    ready, skipped = runnable(procedures, cloud=console_cloud)
    for skip in skipped:
        click.echo(f"{skip.procedure.path}:{skip.procedure.line}: {skip.procedure.id} {skip.reason}", err=True)
    if not ready:
        raise NoProceduresError(
            f"no procedures to check in {', '.join(paths)}" + (" (all skipped)" if skipped else ""),
            hint="a procedure is an ordered list of steps; see `docverify parse PATH --steps`",
        )
    return [make_task(procedure) for procedure in ready], problems


def input_errors(procedures: list[Procedure], problems: list) -> list:
    """The input errors that stop a run before anything runs: those in a file that
    holds a selected procedure (its annotation may be the one that could not be
    read), and those that kept a whole file or path from being read."""
    selected = {procedure.path for procedure in procedures}
    return [problem for problem in problems
            if problem.severity is Severity.ERROR and (problem.path in selected or problem.line == 0)]


def _finish_reports(reporters, summary, output: Path | None) -> None:
    """Every reporter's end of run; file reporters only when there is an output folder."""
    for reporter in reporters:
        if output is None and reporter.writes_files:
            continue
        for written in reporter.run_finished(summary, output):
            click.echo(f"wrote {written}", err=True)


def nothing_changed(changed_since: str | None, procedures: list[Procedure]) -> bool:
    """With ``--changed-since``, a change that touches no procedure (prose, images,
    other files) is nothing to check, not a failure: say so and succeed."""
    if changed_since and not procedures:
        click.echo(f"no procedures changed since {changed_since}: nothing to check", err=True)
        return True
    return False


def _print_plan(tasks) -> None:
    for task in tasks:
        procedure = task.procedure
        criteria = ", ".join(c.describe() for c in task.criteria) or "none (INCONCLUSIVE unless a judge is configured)"
        click.echo(f"{procedure.id}  {procedure.title}  ({procedure.path}:{procedure.line}-{procedure.end_line})")
        click.echo(f"  steps: {len(procedure.all_steps())}; region: {task.region or 'console default'}; "
                   f"success: {criteria}")
        if procedure.annotation and procedure.annotation.requires:
            click.echo(f"  requires: {procedure.annotation.requires}")
        if procedure.lead_in:
            click.echo(f"  goes on from (run first): {', '.join(procedure.lead_in)}")
    click.echo(f"{len(tasks)} procedure(s) would run (dry run)", err=True)

