"""One ``docverify check`` run, as a library call: plugins from the configuration,
the console started, the tasks run, every result stored and reported.

The CLI (``docverify/cli/check.py``) chooses the procedures and prints; this
module owns the order of things and what happens on Ctrl-C: the browser and the
console are closed, every finished result is already in the store, and the run
is marked interrupted so ``--resume`` continues it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Sequence

from docverify import IMPORTED_AT
from docverify.check.verdict import Verdict, failing_verdicts
from docverify.config import Config
from docverify.cost import Budget, CostMeter
from docverify.errors import ConfigError, EnvironmentProblem
from docverify.execute.executor import Executor
from docverify.plugins import PluginSet
from docverify.registry import Plugin
from docverify.report.reporter import Reporter
from docverify.report.trajectory import ProcedureResult, RunSummary, ShardInfo
from docverify.run.backend import Backend, Work
from docverify.run.loop import RunLoop
from docverify.run.runner import RunLimits, Stages, finish, now_iso, unfinished
from docverify.run.store import ResultStore, fingerprint, new_run_id
from docverify.task import Task

log = logging.getLogger(__name__)


@dataclass
class CheckOptions:
    jobs: int = 1
    limits: RunLimits = field(default_factory=RunLimits)
    output: Path | None = None
    resume: bool = False
    store: Path | None = None  #: the results database; None: no store
    lease_timeout: float | None = 600.0  #: seconds a task waits for a free account (None: forever)
    argv: Sequence[str] = ()
    changed_since: str | None = None  #: the git ref of ``--changed-since``, for the reports
    maxfail: int | None = None  #: stop starting procedures after this many failed (``-x``, ``--maxfail``)
    failing: frozenset[Verdict] = failing_verdicts()  #: the verdicts --maxfail counts (--fail-on's)
    shard: ShardInfo | None = None  #: this run's part of a sharded run (``--shard``), for the results


def instances(config: Config, plugins: PluginSet, table: str, family: str,
              names: Sequence[str] | None = None) -> list[Plugin]:
    """The configured plugins of one family, each with its validated options."""
    names = list(names if names is not None else getattr(config.settings, table).use)
    out = []
    for name in dict.fromkeys(names):
        cls = plugins.get(family, name)
        out.append(cls(config.plugin_options(table, name, cls)))
    return out


def policy_names(config: Config, plugins: PluginSet) -> list[str]:
    """The configured policy; when none is named (``policy.use``), a policy whose
    table is configured and that is then chosen (``Policy.chosen_when_configured``:
    the hybrid policy, once its model is configured)."""
    if "policy.use" not in config.origins:
        policies = plugins.registry("policies")
        for name in config.settings.policy.plugin_tables():
            if name in policies and getattr(policies.get(name), "chosen_when_configured", False):
                return [name]
    return list(config.settings.policy.use)


def build_reporters(config: Config, plugins: PluginSet, extra: Sequence[str]) -> list[Reporter]:
    """The configured reporters plus those ``--report`` names."""
    names = [*config.settings.reporter.use, *extra]
    return instances(config, plugins, "reporter", "reporters", names)  # type: ignore[return-value]


class EarlyStart:
    """What a check starts before its procedures are known: the run's event loop (on
    a thread of its own, :class:`~docverify.run.loop.RunLoop`) and the configured
    executor warming up on it (the browser launching while the main thread loads the
    other plugins, parses the docs and starts the console). A context manager: leaving
    it closes what the run did not take over, and the loop."""

    def __init__(self, config: Config, plugins: PluginSet, *, warm: bool = True,
                 executor: Executor | None = None) -> None:
        #: the configured executor (``executor``: one already made, e.g. the run's own)
        self.executor: Executor = executor or instances(config, plugins, "executor", "executors")[0]  # type: ignore[assignment]
        self.loop = RunLoop(on_error=self._on_loop_error)
        self.closed = False
        if warm:
            self.loop.submit(self.executor.warm_up()).result()  # returns at once: the launch goes on, on the loop

    def __enter__(self) -> "EarlyStart":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close(interrupted=kind is not None and issubclass(kind, KeyboardInterrupt))

    def close(self, *, interrupted: bool = False) -> None:
        """Close what warming up started and the run did not take over; stop the loop."""
        if self.closed:
            return
        self.closed = True
        self.loop.interrupted = self.loop.interrupted or interrupted
        try:
            self.loop.submit(self.executor.cool_down()).result()
        finally:
            self.loop.close()

    def _on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """After Ctrl-C, errors nobody awaited (the browser driver got the signal too and
        died: "Connection closed while reading from the driver") go to the debug log,
        not the user's terminal: the run has already said it was interrupted."""
        if self.loop.interrupted:
            log.debug("after Ctrl-C: %s: %r", context.get("message"), context.get("exception"))
            return
        loop.default_exception_handler(context)


class CheckRun:
    """Runs tasks with the configured plugins and returns the run's summary.

    ``early``: the loop and executor that :class:`EarlyStart` started while the run
    was prepared; without it, the run starts its own (no warm-up) when it runs."""

    def __init__(self, config: Config, plugins: PluginSet, options: CheckOptions,
                 reporters: Sequence[Reporter], *, early: EarlyStart | None = None) -> None:
        self.config = config
        self.plugins = plugins
        self.options = options
        self.reporters = list(reporters)
        self.early = early
        self.console = instances(config, plugins, "console", "consoles")[0]
        self.backend: Backend = instances(config, plugins, "backend", "backends")[0]  # type: ignore[assignment]
        self.stages = Stages(
            provisioner=instances(config, plugins, "provisioner", "provisioners")[0],  # type: ignore[arg-type]
            executor=early.executor if early is not None else
            instances(config, plugins, "executor", "executors")[0],  # type: ignore[arg-type]
            policy=instances(config, plugins, "policy", "policies", policy_names(config, plugins))[0],  # type: ignore[arg-type]
            checkers=instances(config, plugins, "checker", "checkers"),  # type: ignore[arg-type]
            reporters=self.reporters,
        )
        budget = Budget.parse(config.settings.budget, config.origin("budget")) if config.settings.budget else None
        self.meter = CostMeter(config.settings.prices, budget)
        for plugin in (self.stages.policy, *self.stages.checkers, self.stages.provisioner):
            plugin.meter = self.meter
        self.run_id = new_run_id()
        self.stages.provisioner.join_run(self.run_id)
        self.console_text = self.console.name
        self.started_at, self.clock = now_iso(), time.perf_counter()
        self.results: dict[str, ProcedureResult] = {}
        self.resumed: dict[str, ProcedureResult] = {}
        self.accounts = None  #: the account pool, when one is configured (set by prepare)
        self.reporting = False  #: whether the reporters were told the run started
        self.timings: dict[str, float] = {}  #: run-level seconds (RunSummary.timings)

    @property
    def policy_name(self) -> str:
        return self.stages.policy.name

    def summary(self, tasks: Sequence[Task], *, interrupted: bool = False) -> RunSummary:
        """The run so far: every finished result, in the tasks' order."""
        ordered = [self.results[task.id] for task in tasks if task.id in self.results]
        stopped = None
        if self.stopping() and len(ordered) < len(tasks):
            failed = self.options.maxfail
            stopped = (f"stopped after {failed} failed procedure{'s' if failed != 1 else ''} (--maxfail {failed}): "
                       f"{len(tasks) - len(ordered)} not run")
        return RunSummary(
            run_id=self.run_id, started_at=self.started_at, results=ordered,
            duration_s=time.perf_counter() - self.clock, console=self.console_text, policy=self.policy_name,
            resumed=len(self.resumed), interrupted=interrupted,
            output_dir=str(self.options.output) if self.options.output else None,
            changed_since=self.options.changed_since, stopped=stopped, timings=dict(self.timings),
            shard=self.options.shard, dry_run=True if self.options.limits.dry_run else None,
        )

    def stopping(self) -> bool:
        """Whether ``--maxfail`` procedures have failed: no further one starts."""
        maxfail = self.options.maxfail
        return maxfail is not None and sum(r.verdict in self.options.failing for r in self.results.values()) >= maxfail

    def run(self, tasks: Sequence[Task]) -> RunSummary:
        """Run ``tasks``; Ctrl-C propagates as KeyboardInterrupt once everything is
        closed and the run is marked interrupted (:meth:`summary` has what finished)."""
        self.started_at, self.clock = now_iso(), time.perf_counter()
        self.timings["startup_s"] = self.clock - IMPORTED_AT
        store = ResultStore(self.options.store) if self.options.store else None
        fingerprints = {task.id: fingerprint(task.procedure) for task in tasks}
        interrupted = started = False
        try:
            if store is not None:
                self.take_over(store, fingerprints)
            todo = [task for task in tasks if task.id not in self.resumed]
            if todo:
                tick = time.perf_counter()
                self.prepare(todo)
                self.timings["prepare_s"] = time.perf_counter() - tick
            for reporter in self.reporters:
                reporter.run_started(len(tasks), self.console_text, self.policy_name)
            self.reporting = True
            for task in tasks:
                if task.id in self.resumed:
                    self.results[task.id] = self.resumed[task.id]
                    for reporter in self.reporters:
                        reporter.procedure_finished(self.resumed[task.id])
            if store is not None:
                shard = self.options.shard
                store.start_run(self.run_id, options={"argv": list(self.options.argv),
                                                      **({"shard": f"{shard.index}/{shard.count}"} if shard else {})},
                                console=self.console_text, policy=self.policy_name)
                started = True
                for task_id, result in self.resumed.items():
                    store.save(self.run_id, fingerprints[task_id], result)

            def save(task: Task, result: ProcedureResult) -> None:
                self.results[task.id] = result
                if store is not None:
                    store.save(self.run_id, fingerprints[task.id], result)

            if todo:
                self.console_text = self.execute(todo, save)
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            for plugin in (self.stages.policy, *self.stages.checkers):
                plugin.close()
            if store is not None:
                if started:  # not when preparing failed (a model, an account pool, the backend)
                    store.finish_run(self.run_id, interrupted=interrupted)
                store.close()
        return self.summary(tasks)

    def account_pool(self):
        """The configured account pool (docverify-accounts.toml, DOCVERIFY_ACCOUNT_*):
        each task then leases an account of its own. None when none is configured:
        every task uses the console's own account."""
        from docverify.lease import open_pool

        pool = open_pool(console=self.console.name, config_file=self.config.file, defaults=False)
        if not pool.specs:
            return None
        if not any(spec.matches(console=self.console.name) for spec in pool.specs):
            raise ConfigError(f"the account pool ({pool.source}) has no account for the {self.console.name} console",
                              hint=f"add one with console = \"{self.console.name}\" (docverify accounts add)")
        return pool

    def prepare(self, tasks: Sequence[Task]) -> None:
        """Load the policy's model and the checkers that these tasks need, once,
        so a misconfigured model is one clear error before anything runs."""
        self.accounts = self.account_pool()
        self.backend.prepare()
        self.stages.policy.prepare()
        deciding = {next((c for c in self.stages.checkers if c.applies(task)), None) for task in tasks}
        for checker in self.stages.checkers:
            if checker in deciding:
                checker.prepare()

    def execute(self, tasks: Sequence[Task], save) -> str:
        """Start the console and run ``tasks``; returns the console's description."""
        artifacts = (self.options.output / "artifacts") if self.options.output else (
            Path(".docverify") / "artifacts" / self.run_id)
        early = self.early or EarlyStart(self.config, self.plugins, warm=False, executor=self.stages.executor)
        work = Work(config=self.config, plugins=self.plugins, console=self.console, stages=self.stages,
                    loop=early.loop, meter=self.meter, limits=self.options.limits, artifacts=artifacts,
                    output=self.options.output, jobs=self.options.jobs, save=save, stop=self.stopping,
                    accounts=self.accounts, lease_timeout=self.options.lease_timeout, timings=self.timings,
                    run_id=self.run_id)
        try:
            with early:  # the backend (docverify.run.backend) starts the console and runs the tasks
                described = self.backend.run(work, tasks)
                tick = time.perf_counter()
            self.timings["close_s"] = self.timings.get("close_s", 0.0) + time.perf_counter() - tick
            return described
        except EnvironmentProblem as problem:  # the console (or the backend's cluster) did not start
            for task in tasks:
                if task.id not in self.results:
                    finish(task, unfinished(task, str(problem), time.time()), save, self.reporters)
            return f"{self.console.name} (not started: {problem})"

    def take_over(self, store: ResultStore, fingerprints: dict[str, str]) -> None:
        """With ``--resume``: the latest run's results whose procedures did not change."""
        if not self.options.resume:
            return
        latest = store.latest_run()
        if latest is None:
            return
        self.resumed = store.resumable(latest.run_id, fingerprints)
        for result in self.resumed.values():
            result.resumed_from = result.resumed_from or latest.run_id
