"""Where a run's procedures execute: the backend family.

:class:`~docverify.run.check.CheckRun` loads the plugins, takes over what ``--resume``
keeps and opens the results store; then it hands the procedures left to run to a
backend (``--backend``, ``[backend] use``, ``DOCVERIFY_BACKEND``) as :class:`Work`:

- ``local`` (:class:`LocalBackend`, the default): here, on the run's event loop, in one
  browser with ``--jobs`` contexts at once;
- ``ray`` (plugin ``docverify_ray``): workers of a Ray cluster, one browser each, on
  this machine or across machines.

Whatever the backend, every result leaves through :meth:`Work.finish` in this process,
as soon as it is known: scrubbed of secrets, saved in the results store, handed to the
reporters. So ``--resume``, the reports and the exit code do not depend on where a
procedure ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docverify.registry import Plugin
from docverify.run.runner import RunLimits, Runner, Stages, finish

if TYPE_CHECKING:
    from docverify.config import Config
    from docverify.console import Console
    from docverify.cost import CostMeter
    from docverify.plugins import PluginSet
    from docverify.report.trajectory import ProcedureResult
    from docverify.run.loop import RunLoop
    from docverify.task import Task


@dataclass
class Work:
    """A run's procedures as a backend receives them: the run's plugins and options,
    and where each result goes."""

    config: Config
    plugins: PluginSet
    console: Console  #: the configured console plugin (not started)
    stages: Stages  #: the plugin instances of this process (reporters included)
    loop: RunLoop  #: the run's event loop (the local backend's browser warms up on it)
    meter: CostMeter  #: the run's spending (``--budget``)
    limits: RunLimits
    artifacts: Path  #: screenshots and traces
    output: Path | None  #: the reports' folder (artifact paths are relative to it)
    jobs: int  #: procedures at once (``--jobs``)
    save: Callable[[Task, ProcedureResult], None]  #: the results store's (and the run's) record of a result
    stop: Callable[[], bool]  #: True once no further procedure may start (``--maxfail``)
    accounts: Any = None  #: the account pool (an AccountPool) when one is configured
    run_id: str | None = None  #: the run's id in the results store (what provisioning tags its resources with)
    lease_timeout: float | None = 600.0
    started: float = field(default_factory=time.perf_counter)  #: when the run began handing work out
    timings: dict[str, float] = field(default_factory=dict)  #: run-level seconds (RunSummary.timings)

    def finish(self, task: Task, result: ProcedureResult) -> ProcedureResult:
        """Where every result leaves the backend: scrubbed, saved, reported."""
        return finish(task, result, self.save, self.stages.reporters)


class Backend(Plugin):
    """Base class of backend plugins: they run a check's procedures and hand each result
    back through :meth:`Work.finish`."""

    #: whether procedures run in this process: the executor warming up while the docs
    #: are parsed (``EarlyStart``) is then theirs; otherwise it is not started at all
    in_process: ClassVar[bool] = False

    def prepare(self) -> None:
        """Check, before anything runs or is reported, what the backend needs (a library,
        a cluster it can reach): raise a :class:`~docverify.errors.DocverifyError` that
        says what to install or fix."""

    def run(self, work: Work, tasks: Sequence[Task]) -> str:
        """Run ``tasks``, each result through :meth:`Work.finish` as soon as it is known
        (a task not started because ``work.stop()`` said so has none). Returns the
        console as the reports describe it.

        Raise :class:`~docverify.errors.EnvironmentProblem` when nothing can run (the
        console or the cluster did not start): every task without a result is then
        ENV_ERROR with its message. On Ctrl-C (KeyboardInterrupt, as ``work.loop.run``
        raises it), stop the procedures, leave nothing running that the backend
        started, and let it propagate."""
        raise NotImplementedError


class LocalBackend(Backend):
    """Runs procedures in this process: one browser, --jobs contexts at once."""

    name = "local"
    in_process = True

    def run(self, work: Work, tasks: Sequence[Task]) -> str:
        with work.console.start() as endpoint:
            work.timings["console_s"] = time.perf_counter() - work.started
            for task in tasks:
                task.region = task.region or endpoint.default_region
            runner = Runner(work.stages, endpoint, artifacts=work.artifacts, limits=work.limits,
                            on_result=work.save, output=work.output, accounts=work.accounts,
                            lease_timeout=work.lease_timeout, console=work.console.name,
                            stop=work.stop, task_account=work.console.task_account)
            try:
                work.loop.run(runner.run(tasks, work.jobs))
            finally:
                work.timings.update(runner.timings)
                tick = time.perf_counter()
            described = endpoint.describe()
        work.timings["close_s"] = work.timings.get("close_s", 0.0) + time.perf_counter() - tick
        return described
