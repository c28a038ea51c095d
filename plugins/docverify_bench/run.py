"""``docverify bench run``: a policy over a task set, K times, decided by the audit log.

Each run of the task set is a ``check`` run per sandbox release (the tasks of one
release share a console), with the ``actiontrail`` checker deciding success and
no judges: a task succeeds when the audit log shows its expected events. Every
attempt is written to the results file as soon as it ends, so ``--resume``
continues an interrupted benchmark where it stopped.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from docverify.check.verdict import Verdict
from docverify.errors import ConfigError
from docverify.report.reporter import Reporter
from docverify.report.trajectory import ProcedureResult, ShardInfo
from docverify.scrub import scrub_argv
from docverify_bench.score import env_cause, score
from docverify_bench.tasks import BenchTask, TaskSet

#: The layout of a results file; ``compare`` and ``report`` refuse another.
FORMAT = "docverify-bench/1"
#: The checker that decides a benchmark task (the paper's: audit events only).
AUDIT_CHECKER = "actiontrail"
#: The benchmark provisions what its tasks declare (``requires:``) unless told otherwise
#: (``-O provisioner.use=none`` measures readiness without provisioning).
DEFAULT_PROVISIONER = "terraform"


@dataclass
class BenchOptions:
    policy: str
    runs: int = 1
    jobs: int = 1
    split: str | None = None
    settings: Mapping[str, object] = field(default_factory=dict)  #: -O overrides
    max_steps: int = 80
    timeout_s: float = 300.0
    label: str | None = None  #: the name of this run in reports (default: the policy, and its model)
    shard: ShardInfo | None = None  #: this run's part of a sharded benchmark (``--shard``)

    def overrides(self, release: str | None = None) -> dict[str, Any]:
        """The configuration a benchmark run uses: the policy, the audit-log checker
        alone, no reporters, the default provisioner; ``-O`` settings on top."""
        out: dict[str, Any] = {"policy.use": self.policy, "checker.use": AUDIT_CHECKER, "reporter.use": [],
                               "jobs": self.jobs, "provisioner.use": DEFAULT_PROVISIONER}
        if release is not None:
            out["console.sandbox.release"] = release
        return {**out, **self.settings}


def attempt_record(task: BenchTask, run: int, result: ProcedureResult, *, provisioned: bool) -> dict[str, Any]:
    """What the benchmark keeps of one attempt.

    An ENV_ERROR is the environment's, never the policy's failure, with one
    exception: a policy that stops because a prerequisite is missing or not in the
    state a step needs, where provisioning made what the task declares
    (``provisioned``). A task's environment is then as the task means it to be (its
    reference solution reaches the goal in it): a precondition task's key is
    disabled on purpose. That stop is the policy's failure; without provisioning
    the claim stands and the environment was not ready."""
    usage = result.usage
    cause = env_cause(result.env_error or result.reason) if result.verdict is Verdict.ENV_ERROR else None
    env_error = cause is not None and not (provisioned and cause == "prerequisite missing")
    return {
        "task": task.id, "run": run, "verdict": result.verdict.value, "goal_reached": result.goal_reached,
        "success": result.goal_reached is True and result.verdict is not Verdict.ENV_ERROR,
        "env_error": env_error, "reason": result.reason, "env_cause": cause,
        "duration_s": round(result.duration_s, 3), "setup_s": round(result.setup_s, 3), "turns": len(result.turns),
        "findings": len(result.drift), "calls": usage.calls, "tokens_in": usage.tokens_in,
        "tokens_out": usage.tokens_out, "cost_usd": usage.cost_usd, "cost_cny": usage.cost_cny,
        "handovers": usage.handovers, "handovers_done": usage.handovers_done,
    }


def code_version(root: Path) -> dict[str, Any]:
    """docverify's version and, in a git checkout, the commit and whether it was modified."""
    from docverify import __version__

    out: dict[str, Any] = {"docverify": __version__}
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10)
        if sha.returncode == 0:
            out.update(git=sha.stdout.strip(), dirty=bool(dirty.stdout.strip()))
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def machine() -> dict[str, Any]:
    return {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "machine": platform.machine()}


class ResultsFile:
    """The benchmark's results, written whole after every attempt (atomically)."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data

    @classmethod
    def start(cls, path: Path, task_set: TaskSet, tasks: Sequence[BenchTask], options: BenchOptions,
              config: Mapping[str, Any]) -> "ResultsFile":
        data = {
            "format": FORMAT,
            "task_set": {"path": str(task_set.folder), "version": task_set.version},
            "policy": options.policy, "label": options.label, "environment": environment(config),
            "split": options.split, "runs": options.runs, "jobs": options.jobs,
            "settings": {key: value for key, value in options.settings.items()},
            "config": config, "code": code_version(Path(__file__).resolve().parent),
            "machine": machine(), "argv": scrub_argv(sys.argv[1:]), "started_at": _now(), "finished_at": None,
            "tasks": {t.id: {"family": t.family, "category": t.category, "product": t.product, "split": t.split,
                             "release": t.release} for t in tasks},
            "attempts": [],
        }
        if options.shard is not None:
            data["shard"] = options.shard.to_dict()
        return cls(path, data)

    @classmethod
    def resume(cls, path: Path, tasks: Sequence[BenchTask], task_set: TaskSet, options: BenchOptions) -> "ResultsFile":
        """The results of an interrupted run of the same benchmark; an error naming what
        differs when it is another (task set version, policy, tasks, runs)."""
        data = read_results(path)
        differs = []
        if data["task_set"]["version"] != task_set.version:
            differs.append(f"task set version {data['task_set']['version']} (now {task_set.version})")
        if data["policy"] != options.policy:
            differs.append(f"policy {data['policy']} (now {options.policy})")
        if data["split"] != options.split:
            differs.append(f"split {data['split']} (now {options.split})")
        if set(data["tasks"]) != {t.id for t in tasks}:
            differs.append("its tasks")
        if data["runs"] > options.runs:
            differs.append(f"runs {data['runs']} (now {options.runs})")
        now = f"{options.shard.index}/{options.shard.count}" if options.shard else None
        if shard_name(data.get("shard")) != now:
            differs.append(f"shard {shard_name(data.get('shard')) or 'none'} (now {now or 'none'})")
        if differs:
            raise ConfigError(f"{path}: --resume needs the same benchmark; it differs in " + ", ".join(differs),
                              hint="give another --out, or run it again without --resume")
        data["runs"] = options.runs
        data["finished_at"] = None
        return cls(path, data)

    def done(self) -> set[tuple[str, int]]:
        return {(a["task"], a["run"]) for a in self.data["attempts"]}

    def add(self, attempt: dict[str, Any]) -> None:
        self.data["attempts"] = [a for a in self.data["attempts"]
                                 if (a["task"], a["run"]) != (attempt["task"], attempt["run"])]
        self.data["attempts"].append(attempt)
        self.write()

    def finish(self) -> None:
        self.data["finished_at"] = _now()
        self.data["scores"] = score(self.data["tasks"], self.data["attempts"])
        self.write()

    def write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(json.dumps(self.data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        partial.replace(self.path)


def shard_name(shard: Mapping[str, Any] | None) -> str | None:
    """``"2/4"`` of a results file's ``shard``, or None."""
    return f"{shard['index']}/{shard['count']}" if shard else None


def environment(config: Mapping[str, Any]) -> dict[str, str]:
    """What the tasks' environment was: the provisioner, and what the sandbox's
    accounts started with (``seeded``, or ``empty`` as a new account)."""
    provisioner = config.get("provisioner", {}).get("use") or ["none"]
    sandbox = config.get("console", {}).get("sandbox", {})
    return {"provisioner": provisioner[0] if isinstance(provisioner, list) else str(provisioner),
            "resources": str(sandbox.get("resources") or "seeded") if isinstance(sandbox, dict) else "seeded"}


def read_results(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such results file") from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}:{error.lineno}: not a results file ({error.msg})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{path}: not a docverify bench results file (format {FORMAT})",
                          hint="give a file `docverify bench run --out` wrote")
    return data


class AttemptRecorder(Reporter):
    """Hands each finished procedure of a check run to the benchmark."""

    name = "bench"

    def __init__(self, on_result: Callable[[ProcedureResult], None]) -> None:
        super().__init__()
        self.on_result = on_result

    def procedure_finished(self, result: ProcedureResult) -> None:
        self.on_result(result)


def run_benchmark(app: Any, task_set: TaskSet, tasks: Sequence[BenchTask], options: BenchOptions,
                  results: ResultsFile, progress: Callable[[str], None], *,
                  wrap_policy: Callable[[Any], Any] | None = None,
                  on_attempt: Callable[[dict[str, Any], ProcedureResult], None] | None = None) -> dict[str, Any]:
    """Run every attempt ``results`` does not hold yet; the final scores.
    ``wrap_policy``: the policy each check runs, given the configured one (a
    rollout records it); ``on_attempt``: told of each attempt as it is kept."""
    from docverify.run.check import CheckOptions, CheckRun
    from docverify.run.runner import RunLimits
    from docverify.task import make_task

    by_id = {task.id: task for task in tasks}
    releases = sorted({task.release for task in tasks})
    for run in range(1, options.runs + 1):
        for release in releases:
            todo = [t for t in tasks if t.release == release and (t.id, run) not in results.done()]
            if not todo:
                continue
            config = app.checked_config(options.overrides(release), {key: f"-O {key}" for key in options.settings})
            provisioned = environment(config.values())["provisioner"] != "none"
            started = time.perf_counter()

            def record(result: ProcedureResult, run: int = run) -> None:
                attempt = attempt_record(by_id[result.id], run, result, provisioned=provisioned)
                results.add(attempt)
                if on_attempt is not None:
                    on_attempt(attempt, result)
                mark = "ok " if attempt["success"] else ("env" if attempt["env_error"] else "no ")
                progress(f"[run {run}] {mark} {result.id}  {result.verdict.value}  {result.duration_s:.1f}s"
                         + ("" if attempt["success"] else f"  ({result.reason})"))

            check = CheckRun(config, app.plugins,
                             CheckOptions(jobs=options.jobs, store=None,
                                          limits=RunLimits(max_steps=options.max_steps, timeout_s=options.timeout_s)),
                             [AttemptRecorder(record)])
            if wrap_policy is not None:
                if not check.backend.in_process:  # the wrapped policy lives here, not on the backend's workers
                    raise ConfigError(f"recording the policy (a rollout) needs the local backend, not "
                                      f"{check.backend.name!r}", hint="-O backend.use=local")
                check.stages = replace(check.stages, policy=wrap_policy(check.stages.policy))
            check.run([make_task(t.procedure) for t in todo])
            progress(f"[run {run}] release {release}: {len(todo)} tasks in {time.perf_counter() - started:.1f}s")
    results.finish()
    return results.data["scores"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
