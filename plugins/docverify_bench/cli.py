"""``docverify bench ...``: run a policy over a task set, compare two runs, keep the manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from docverify.cli import CONTEXT_SETTINGS, get_app, sharding
from docverify.errors import UsageError

#: Where ``--tasks`` points when not given: the repository's task set.
DEFAULT_TASKS = Path("benchmark") / "tasks"
#: ``--tasks DIR``, as every command over a task set takes it (bench, rollout).
TASKS_OPTION = click.option("--tasks", "tasks_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                            help=f"The task set's folder (holding manifest.json); default {DEFAULT_TASKS}.")


def task_set_folder(given: Path | None) -> Path:
    """The task set's folder: the one given, or the repository's benchmark/tasks."""
    if given is not None:
        return given
    if not DEFAULT_TASKS.is_dir():
        raise UsageError(f"no task set at {DEFAULT_TASKS}",
                         hint="give --tasks DIR, or run from the repository root for the benchmark's own tasks")
    return DEFAULT_TASKS


@click.group(context_settings=CONTEXT_SETTINGS)
def bench() -> None:
    """The benchmark: a policy's success rate on a task set, decided by the audit log.

    \b
    Examples:
      docverify bench tasks
      docverify bench run --policy literal --split eval --runs 3 --jobs 2 --out bench/literal.json
      docverify bench compare bench/literal.json bench/hybrid.json
    """


@bench.command(context_settings=CONTEXT_SETTINGS)
@TASKS_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
def tasks(tasks_dir: Path | None, as_json: bool) -> None:
    """Check the task set against its manifest and count its tasks by split,
    category and product."""
    from docverify_bench.tasks import load_task_set, summarize

    task_set = load_task_set(task_set_folder(tasks_dir))
    counts = summarize(task_set.tasks)
    if as_json:
        click.echo(json.dumps({"version": task_set.version, "tasks": len(task_set.tasks), **counts}, indent=2))
        return
    click.echo(f"task set {task_set.version}: {len(task_set.tasks)} tasks, {counts['families']['count']} families")
    for group in ("split", "category", "product"):
        click.echo(f"  {group:<9} " + ", ".join(f"{name} {count}" for name, count in sorted(counts[group].items())))


@bench.command(context_settings=CONTEXT_SETTINGS)
@TASKS_OPTION
@click.option("--version", "version", help="The task set's version to record (default: the manifest's).")
@click.option("--write", is_flag=True, help="Write manifest.json (after reviewing what changed).")
def manifest(tasks_dir: Path | None, version: str | None, write: bool) -> None:
    """Compute the manifest of a task set: checksums, families and their splits.

    Families keep their split; each new family joins the split short of half the
    tasks. Without --write, prints what would change."""
    from docverify_bench.tasks import MANIFEST, build_manifest

    folder = task_set_folder(tasks_dir)
    path = folder / MANIFEST
    previous = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    version = version or (previous or {}).get("version")
    if not version:
        raise UsageError("a new manifest needs --version, e.g. --version 1.0")
    data = build_manifest(folder, version, previous)
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if write:
        path.write_text(text, encoding="utf-8")
        click.echo(f"wrote {path}: {len(data['tasks'])} tasks, {len(data['families'])} families")
        return
    old = (previous or {}).get("tasks", {})
    changed = sorted(i for i, entry in data["tasks"].items() if old.get(i) != entry)
    gone = sorted(set(old) - set(data["tasks"]))
    for task_id in changed:
        click.echo(f"{'changed' if task_id in old else 'new'}: {task_id}")
    for task_id in gone:
        click.echo(f"removed: {task_id}")
    click.echo(f"{len(changed)} new or changed, {len(gone)} removed; --write records them" if changed or gone
               else "the manifest is up to date")


@bench.command(context_settings=CONTEXT_SETTINGS)
@click.option("--policy", required=True, help="The policy to measure (literal, hybrid, llamacpp, openai, ...).")
@TASKS_OPTION
@click.option("--split", type=click.Choice(["train", "eval"]), default=None, help="Only this split (default: all).")
@click.option("--category", "categories", multiple=True, help="Only these categories (repeatable).")
@click.option("--product", "products", multiple=True, help="Only these products, e.g. oss (repeatable).")
@click.option("--family", "families", multiple=True, help="Only these families (repeatable).")
@click.option("--sample", type=click.IntRange(1), default=None,
              help="Only N of the chosen tasks, drawn per category and spread over families; the same N "
                   "tasks on every machine for one --sample-seed (a slow policy measured on a fixed subset, "
                   "compared with others on the tasks both ran).")
@click.option("--sample-seed", type=int, default=0, show_default=True, help="Which sample --sample draws.")
@sharding.shard_option("tasks (after --sample)")
@click.option("--runs", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Attempts per task (pass@k for k up to it).")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Tasks at once.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The results file (JSON).")
@click.option("--resume", is_flag=True, help="Continue the interrupted run in --out.")
@click.option("--max-steps", type=click.IntRange(1), default=80, show_default=True, help="Turns per task.")
@click.option("--timeout", type=click.FloatRange(1), default=300.0, show_default=True, help="Seconds per task.")
@click.option("--set", "-O", "settings", multiple=True, metavar="KEY=VALUE",
              help="Any configuration key, e.g. -O policy.hybrid.model=qwen, -O provisioner.use=none, "
                   "-O console.sandbox.resources=empty (repeatable).")
@click.option("--label", default=None, help="This run's name in reports (default: the policy and its model).")
@click.pass_context
def run(ctx: click.Context, policy: str, tasks_dir: Path | None, split: str | None, categories: tuple[str, ...],
        products: tuple[str, ...], families: tuple[str, ...], sample: int | None, sample_seed: int, shard, runs: int,
        jobs: int, out: Path, resume: bool,
        max_steps: int, timeout: float, settings: tuple[str, ...], label: str | None) -> int:
    """Run a policy over the task set and score it: pass@1 (mean over runs), pass@k
    and pass^k with bootstrap 95% intervals over tasks, per split, category and
    product; cost, tokens, turns and time per task; the ENV_ERROR rate (never a
    policy failure) and readiness. Success is the audit log's alone (the
    actiontrail checker). What tasks declare in `requires:` is provisioned with
    Terraform unless -O provisioner.use says otherwise.

    \b
    The upper-bound reference: the literal policy on the tasks' reference solutions,
      docverify bench run --policy literal --tasks benchmark/solutions --label reference --out ref.json
    Readiness of a new account without and with provisioning:
      docverify bench run ... -O console.sandbox.resources=empty -O provisioner.use=none
    On Ray workers (--jobs of them; a local Ray unless RAY_ADDRESS names a cluster):
      docverify bench run ... -O backend.use=ray

    Every attempt is saved to --out as it ends; --resume continues.

    \b
    On four machines, then together (each task in exactly one shard, by the hash of its FILE#ID):
      docverify bench run --policy literal --shard 2/4 --out bench/literal-2.json
      docverify bench merge bench/literal-*.json --out bench/literal.json"""
    from docverify.cli.check import parse_assignments
    from docverify.scrub import scrub_object
    from docverify_bench.run import BenchOptions, ResultsFile, run_benchmark
    from docverify_bench.tasks import load_task_set
    from docverify_bench.tasks import sample as draw

    task_set = load_task_set(task_set_folder(tasks_dir))
    chosen = task_set.select(split, categories, [p.lower() for p in products], families)
    if not chosen:
        raise UsageError("no task matches the filters", hint="see `docverify bench tasks`")
    if sample is not None:
        chosen = draw(chosen, sample, sample_seed)
    shard_info = None
    if shard is not None:
        chosen, shard_info = shard_tasks(chosen, shard, task_set.folder)
    options = BenchOptions(policy=policy, runs=runs, jobs=jobs, split=split, settings=parse_assignments(settings),
                           max_steps=max_steps, timeout_s=timeout, label=label, shard=shard_info)
    if resume and out.is_file():
        results = ResultsFile.resume(out, chosen, task_set, options)
    else:
        if out.exists() and not resume:
            raise UsageError(f"{out} exists", hint="give --resume to continue it, or another --out")
        app = get_app(ctx)
        config = app.checked_config(options.overrides(), {key: f"-O {key}" for key in options.settings})
        results = ResultsFile.start(out, task_set, chosen, options, scrub_object(config.values()))
    click.echo(f"{len(chosen)} tasks x {runs} run{'s' if runs != 1 else ''}, policy {policy}"
               + (f", {len(results.done())} attempts already done" if results.done() else ""), err=True)
    scores = run_benchmark(get_app(ctx), task_set, chosen, options, results, lambda line: click.echo(line, err=True))
    print_scores(scores)
    click.echo(f"results: {out}", err=True)
    return 0


def shard_tasks(tasks, spec, folder: Path):
    """Shard ``spec``'s part of the chosen tasks (by the hash of ``FILE#ID``), and what
    the results file records of it."""
    from docverify.run.shard import git_commit, take_shard

    sharded = take_shard(tasks, spec, lambda task: f"{task.file}#{task.id}", root=folder, commit=git_commit(Path.cwd()))
    click.echo(f"shard {spec}: {len(sharded.items)} of {len(tasks)} tasks", err=True)
    return sharded.items, sharded.info


def print_scores(scores: dict[str, Any]) -> None:
    from docverify_bench.score import estimate

    def line(name: str, data: dict[str, Any]) -> str:
        passes = [f"pass@1 {estimate(data['pass@1']).describe()}"]
        passes += [f"{key} {100 * value['value']:.1f}%" for key, value in data.items()
                   if key.startswith(("pass@", "pass^")) and key != "pass@1"]
        cost = data.get("cost_usd_per_task")
        extra = [f"env {100 * data['env_error_rate']:.0f}%", f"{data['duration_s_per_task'] or 0:.1f}s/task"]
        if cost:
            extra.append(f"${cost:.4f}/task")
        handed = data.get("handovers")
        if handed and handed["handovers"]:
            extra.append(f"hand-overs {handed['done']}/{handed['handovers']} finished, "
                         f"{handed['goal_reached']}/{handed['attempts']} attempts reached the goal")
        return f"  {name:<14} {data['scored']:>4} tasks  " + "  ".join(passes + extra)

    click.echo(line("all", scores["all"]))
    for group in ("split", "category", "product"):
        click.echo(f"by {group}:")
        for name, data in scores[group].items():
            click.echo(line(name, data))


@bench.command(context_settings=CONTEXT_SETTINGS)
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The merged results file (JSON).")
@click.option("--allow-missing", is_flag=True, envvar="DOCVERIFY_ALLOW_MISSING",
              help="Missing shards or tasks do not fail the merge (they are still said). Env: DOCVERIFY_ALLOW_MISSING.")
@click.option("--force", is_flag=True, help="Merge results of different benchmark runs anyway.")
def merge(results: tuple[Path, ...], out: Path, allow_missing: bool, force: bool) -> int:
    """Merge the results files of the shards of one benchmark run (`bench run --shard
    INDEX/COUNT`) into one, scored over every task.

    Exit code 3 when a shard or a task is missing, or a task lacks attempts (unless
    --allow-missing); 2 for files of different runs (unless --force)."""
    from docverify.errors import ExitCode
    from docverify_bench.merge import merge_results
    from docverify_bench.run import read_results

    files = [(path, read_results(path)) for path in dict.fromkeys(path.resolve() for path in results)]
    data = merge_results(files, force=force)
    merged = data["merged"]
    for problem in merged["forced"]:
        click.echo(f"warning: --force: {problem}", err=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print_scores(data["scores"])
    click.echo(f"results: {out} ({len(files)} files, {len(data['tasks'])} tasks)", err=True)
    lines = [f"shard {index}/{merged['count']} missing" for index in merged["missing_shards"]]
    lines += [f"task {key} has no results" for key in merged["missing"]]
    lines += [f"task {task_id} has fewer than {data['runs']} attempts" for task_id in merged["unfinished"]]
    for line in lines:
        click.secho(line, fg="yellow", err=True)
    if lines and not allow_missing:
        click.echo(f"the merge is incomplete: exit {int(ExitCode.ENVIRONMENT)} (give --allow-missing to accept it)",
                   err=True)
        return ExitCode.ENVIRONMENT
    return ExitCode.OK


@bench.command(context_settings=CONTEXT_SETTINGS)
@click.argument("a", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("b", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Compare results of different task-set versions.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare(a: Path, b: Path, force: bool, as_json: bool) -> None:
    """B against A on the tasks both ran: the difference of pass@1 per split with its
    95% interval (paired bootstrap over tasks) and p-value, and McNemar's exact test
    on first attempts as a cross-check."""
    from docverify_bench.compare import compare as compare_results
    from docverify_bench.run import read_results
    from docverify_bench.score import estimate

    data = compare_results(read_results(a), read_results(b), force=force)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"{data['b']} vs {data['a']} (task set {data['task_set']}): B - A in pass@1")
    click.echo(f"  {'group':<8} {'tasks':>5}  {'A':>6}  {'B':>6}  {'B - A [95% CI]':<26} {'p':>7}  McNemar (only A / only B)")
    for name, group in data["groups"].items():
        difference = estimate(group["difference"])
        click.echo(f"  {name:<8} {group['tasks']:>5}  {100 * group['a']:5.1f}%  {100 * group['b']:5.1f}%  "
                   f"{difference.describe():<26} {group['p_value']:7.4f}  "
                   f"p={group['mcnemar_p']:.4f} ({group['only_a']} / {group['only_b']})")


@bench.command(context_settings=CONTEXT_SETTINGS)
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", "output", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for report.md and the plots.")
@click.option("--plots/--no-plots", default=True, show_default=True, help="PNG plots (needs matplotlib).")
def report(results: tuple[Path, ...], output: Path, plots: bool) -> None:
    """Markdown (and PNG plots) of one or more results files: pass@1 with its interval
    per policy and split, by category and by product; cost against success."""
    from docverify_bench.report import label, markdown, plot
    from docverify_bench.run import read_results

    named = [(label(data), data) for data in (read_results(path) for path in results)]
    written = plot(named, output) if plots else []
    output.mkdir(parents=True, exist_ok=True)
    path = output / "report.md"
    path.write_text(markdown(named, written), encoding="utf-8")
    click.echo(f"wrote {path}" + (f" and {len(written)} plots" if written else ""))


#: Where ``bench drift --docs`` points when not given: the repository's labelled docs.
DEFAULT_DRIFT_SET = Path("benchmark") / "accuracy"


@bench.command(context_settings=CONTEXT_SETTINGS)
@click.option("--docs", "set_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=f"The labelled set's folder (docs/ and truth/); default {DEFAULT_DRIFT_SET}.")
@click.option("--policy", default="literal", show_default=True, help="The policy that checks the docs.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=2, show_default=True, help="Procedures at once.")
@click.option("--only", "only", multiple=True, help="Only the docs under this folder of docs/, e.g. oss (repeatable).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report here (Markdown), with its figures as JSON and a plot beside it.")
@click.option("--keep-runs", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep each release's JSON report in DIR/<release>/docverify.json.")
@click.option("--from-runs", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Score the reports in DIR/<release>/docverify.json instead of checking (kept runs, or "
                   "another checkout's `docverify check --report json --output DIR/<release>`).")
@click.option("--plots/--no-plots", default=True, show_default=True, help="A PNG plot beside --out (matplotlib).")
@click.option("--set", "-O", "settings", multiple=True, metavar="KEY=VALUE",
              help="Any configuration key for the checks (repeatable).")
@click.pass_context
def drift(ctx: click.Context, set_dir: Path | None, policy: str, jobs: int, only: tuple[str, ...], out: Path | None,
          keep_runs: Path | None, from_runs: Path | None, plots: bool, settings: tuple[str, ...]) -> None:
    """Drift detection against ground truth: check every doc of the labelled set at
    every sandbox release and score the verdicts and findings: DRIFT precision and
    recall, the false-DRIFT rate at each doc's own release and on docs no change
    touched, finding precision and recall by line and by line and kind (findings
    that only follow from an earlier one are noise, counted apart).

    \b
    Examples:
      docverify bench drift --out benchmark/results/accuracy.md --keep-runs /tmp/drift
      docverify bench drift --from-runs /tmp/drift
    """
    from docverify.cli.check import parse_assignments
    from docverify_bench.drift import RELEASES, check_release, load_truth, markdown, plot, read_run, score_runs

    folder = set_dir or DEFAULT_DRIFT_SET
    truth = load_truth(folder)
    docs = folder / "docs"
    paths = [docs]
    if only:
        truth = [t for t in truth if any(t.file.startswith(o.rstrip("/") + "/") for o in only)]
        paths = [docs / o for o in only]
        if not truth:
            raise UsageError(f"no truth entry under {', '.join(only)} of {docs}")
    runs: dict[str, dict[str, Any]] = {}
    for release in RELEASES:
        if from_runs is not None:
            runs[release] = read_run(from_runs, release)
        else:
            runs[release] = check_release(get_app(ctx), paths, release, policy, jobs, parse_assignments(settings),
                                          lambda line: click.echo(line, err=True))
            if keep_runs is not None:
                kept = keep_runs / release / "docverify.json"
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_text(json.dumps(runs[release], indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        click.echo(f"{release}: {runs[release].get('counts')} in {runs[release]['wall_s']:.0f} s", err=True)
    scores = score_runs(truth, runs, docs)
    written = [plot(scores, out.with_name(out.stem + "-drift.png"))] if out is not None and plots else []
    command = " ".join(["docverify bench drift", f"--policy {policy}", f"--jobs {jobs}", *(f"--only {o}" for o in only),
                        *(f"-O {s}" for s in settings)])
    text = markdown(scores, command=command, plots=written)
    click.echo(text)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
        out.with_suffix(".json").write_text(json.dumps(scores.figures(), indent=2) + "\n", encoding="utf-8")
        click.echo(f"wrote {out}" + (f" and {written[0].name}" if written else ""), err=True)
