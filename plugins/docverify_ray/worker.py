"""One Ray worker of a check: the run's plugins, its own console and browser, one procedure at a time.

:class:`ProcedureWorker` is a plain class; the backend makes it a Ray actor
(``ray.remote(ProcedureWorker)``) when a run starts, so this module imports no Ray.
It is an asyncio actor: its methods run on the actor's event loop, where the browser
lives, and a procedure cancelled from the driver (Ctrl-C) is cancelled there as it would
be locally (what it provisioned is destroyed, its browser context closed).

Everything a worker needs travels in a :class:`WorkerSpec`: the configuration as its
values (every family's plugin named), the stages' plugin names, the limits and the
folders. The plugins themselves are loaded from what is installed on the worker's
machine: the same docverify must be installed on every node of a cluster.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import tempfile
import time
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, AsyncIterator

from docverify.config import Config, Settings
from docverify.cost import Budget, CostMeter, Ledger
from docverify.errors import EnvironmentProblem
from docverify.lease.account import Account
from docverify.provision import PaidCount
from docverify.report.reporter import Reporter
from docverify.report.trajectory import ProcedureResult, Turn
from docverify.run.runner import RunLimits, Runner, Stages, finish
from docverify.scrub import known as known_secrets
from docverify.scrub import scrub_object
from docverify.task import Task

log = logging.getLogger(__name__)

#: Fault injection for tests and drills: ``ID`` (a procedure id) makes the worker running
#: that procedure exit at once, as a crash would, after the procedure's first turn; ``ID@N``
#: only on its N-th attempt. Comma-separated for several. Read by the driver.
CRASH_ENV = "DOCVERIFY_RAY_CRASH"
#: the exit status of a worker that :data:`CRASH_ENV` stopped
CRASH_STATUS = 71
#: ``1``: every worker sends its procedures' screenshots and traces back, as one on
#: another node does (for tests and drills on one machine). Read by the driver.
SHIP_ENV = "DOCVERIFY_RAY_SHIP_ARTIFACTS"
#: At most this many bytes of one procedure's artifacts travel back to the driver; the
#: rest stay on the worker's node, said in the log.
SHIP_MAX_BYTES = 64 * 1024 * 1024


@dataclass
class WorkerSpec:
    """What a worker builds its part of the run from."""

    settings: dict[str, Any]  #: the configuration's values (Config.values(): every family's plugin named)
    config_file: str | None
    origins: dict[str, str]
    cwd: str  #: the driver's working folder; the worker works there when its machine has it
    console: str
    provisioner: str
    executor: str
    policy: str
    checkers: list[str]
    limits: RunLimits
    artifacts: str  #: absolute
    output: str | None  #: absolute
    crash: str | None = None  #: :data:`CRASH_ENV`
    environ: dict[str, str] = field(default_factory=dict)  #: DOCVERIFY_* variables the plugins read where they run
    run_id: str | None = None  #: the driver's run (Provisioner.join_run: every worker tags with it)
    paid: Any = None  #: the run's :class:`PaidCounter` actor (Provisioner.count_paid_with: one limit for all)
    budget: tuple[float, str] | None = None  #: the run's ``--budget`` (amount, currency)
    ledger: Any = None  #: the run's :class:`Ledger` actor: every worker's calls spend from one budget
    driver_node: str | None = None  #: the driver's Ray node: a worker elsewhere sends its artifacts back
    turns: Any = None  #: the run's :class:`TurnRelay` actor: turns reach the driver's reporters as they are made
    ship: bool = False  #: :data:`SHIP_ENV`: send them back from every node

    def enter(self) -> None:
        """Take on the driver's working folder (relative paths of the configuration, the
        docs, the Terraform folders mean the same) and its DOCVERIFY_* variables."""
        if Path(self.cwd).is_dir():
            os.chdir(self.cwd)
        for name, value in self.environ.items():
            os.environ.setdefault(name, value)

    def config(self) -> Config:
        settings = Settings.model_validate(self.settings)
        return Config(settings, Path(self.config_file) if self.config_file else None, dict(self.origins))


def crashes(spec: str | None, task_id: str, attempt: int) -> bool:
    """Whether :data:`CRASH_ENV` ``spec`` says the worker dies in this attempt of ``task_id``."""
    for item in (spec or "").split(","):
        name, _, nth = item.strip().partition("@")
        if name == task_id and (not nth or (nth.isdigit() and int(nth) == attempt)):
            return True
    return False


class CrashOnTurn(Reporter):
    """:data:`CRASH_ENV`'s crash: the process exits without any clean-up (``os._exit``),
    mid-procedure: after its first turn, with its resources provisioned and its browser
    context open."""

    name = "ray-crash"

    def turn(self, task: Task, turn: Turn) -> None:
        log.warning("%s=%s: worker pid %d exits during %s", CRASH_ENV, task.id, os.getpid(), task.id)
        os._exit(CRASH_STATUS)


@dataclass
class Finished:
    """One procedure as a worker hands it back."""

    result: ProcedureResult  #: scrubbed of every secret the worker knows
    quarantined: str | None = None  #: why its account's credentials were rejected (the driver quarantines it)
    #: its screenshots and trace, from a worker on another node: path under the run's
    #: output (or artifacts) folder -> content (:class:`ArtifactsFolder`)
    files: dict[str, bytes] = field(default_factory=dict)


class ArtifactsFolder:
    """Where a worker writes its procedures' screenshots and traces.

    On the driver's node, the run's own folders. On another node (or with
    :data:`SHIP_ENV`), a private folder laid out as the run's output folder is, so the
    paths in the results mean the same on the driver; after each procedure its files
    travel back in :attr:`Finished.files` and are removed here."""

    def __init__(self, spec: "WorkerSpec", node: str | None) -> None:
        self.root: Path | None = None  #: the private folder; None: the run's own folders
        if not spec.ship and (spec.driver_node is None or node == spec.driver_node):
            self.artifacts = Path(spec.artifacts)
            self.output = Path(spec.output) if spec.output else None
            return
        self.root = Path(tempfile.mkdtemp(prefix="docverify-ray-artifacts-"))
        if spec.output is None:
            self.artifacts, self.output = self.root, None
            return
        try:
            inside = Path(spec.artifacts).relative_to(spec.output)
        except ValueError:
            inside = Path("artifacts")
        self.artifacts, self.output = self.root / inside, self.root

    def take(self, task_id: str) -> dict[str, bytes]:
        """The files the last procedure wrote, by path under the output (or artifacts)
        folder, removed here; beyond :data:`SHIP_MAX_BYTES` they stay, said in the log."""
        if self.root is None:
            return {}
        base = self.output or self.artifacts
        files: dict[str, bytes] = {}
        size = 0
        left: list[str] = []
        for path in sorted(p for p in self.root.rglob("*") if p.is_file()):
            length = path.stat().st_size
            if size + length > SHIP_MAX_BYTES:
                left.append(str(path))
                continue
            files[str(path.relative_to(base))] = path.read_bytes()
            size += length
            path.unlink()
        if left:
            log.warning("%s: %d artifact file(s) over %d MB stay on %s: %s", task_id, len(left),
                        SHIP_MAX_BYTES // 2**20, socket.gethostname(), ", ".join(left[:5]))
        return files

    def close(self) -> None:
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)


def receive(files: dict[str, bytes], base: Path) -> None:
    """Write what a worker on another node sent back under the driver's ``base`` (the
    run's output folder, else its artifacts folder); a path that would leave it is dropped."""
    root = base.resolve()
    for name, data in files.items():
        target = (root / name).resolve()
        if not target.is_relative_to(root):
            log.warning("dropped an artifact outside the run's folder: %s", name)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


class HeldAccount:
    """The account the driver leased for one procedure, in the shape the runner leases
    from (``AccountPool.lease_async``): the lease itself stays the driver's, which
    releases it when the result is back; a quarantine (credentials rejected) is
    reported back for the driver to record."""

    def __init__(self, account: Account) -> None:
        self.account = account
        self.quarantined: str | None = None

    @asynccontextmanager
    async def lease_async(self, **options: Any) -> AsyncIterator["HeldAccount"]:
        yield self

    def quarantine(self, reason: str) -> None:
        self.quarantined = reason


class PaidCounter:
    """A Ray actor the driver starts for a run: the run's :class:`PaidCount`, which every
    worker's provisioner claims from, so ``--max-paid-resources`` holds for the run and not
    for each worker."""

    def __init__(self) -> None:
        self.count = PaidCount()

    def claim(self, wanted: list[str], limit: int | None) -> int | None:
        return self.count.claim(wanted, limit)

    def made(self) -> list[str]:
        return self.count.made


class RemoteLedger(Ledger):
    """A process's view of the run's :class:`Ledger`, held by a Ray actor the driver
    starts for a run with ``--budget`` (each call's hold and bill are answered there, one
    at a time, so workers running at once cannot overspend the budget together)."""

    def __init__(self, actor: Any) -> None:
        super().__init__()
        self.actor = actor

    def hold(self, worst: float, limit: float) -> tuple[bool, float, float]:
        import ray

        return ray.get(self.actor.hold.remote(worst, limit))

    def settle(self, held: float, cost: float) -> None:
        import ray

        ray.get(self.actor.settle.remote(held, cost))

    def state(self) -> tuple[float, bool]:
        import ray

        return ray.get(self.actor.state.remote())


class TurnRelay:
    """A Ray actor the driver starts for a run: the turns the workers make, in the order
    they arrive, for the driver's reporters (``-v`` step lines as the procedure goes)."""

    def __init__(self) -> None:
        self.items: asyncio.Queue = asyncio.Queue()

    def put(self, item: tuple[str, int, int, Turn]) -> None:
        self.items.put_nowait(item)

    async def take(self) -> list[tuple[str, int, int, Turn]]:
        """The next turns: waits for one, then takes every one already there."""
        items = [await self.items.get()]
        while not self.items.empty():
            items.append(self.items.get_nowait())
        return items


class TurnStream(Reporter):
    """Sends each turn of one attempt of a procedure to the driver's :class:`TurnRelay` as it
    is made, scrubbed here of every secret this worker knows (procedure id, attempt, the
    turn's index, the turn). Nothing waits for it: a turn that arrives late is shown from
    the procedure's result."""

    name = "ray-turns"

    def __init__(self, relay: Any, attempt: int) -> None:
        self.relay = relay
        self.attempt = attempt

    def turn(self, task: Task, turn: Turn) -> None:
        self.relay.put.remote((task.id, self.attempt, turn.index, scrub_object(turn) if known_secrets() else turn))


class RemotePaidCount(PaidCount):
    """A worker's view of the run's count, held by the driver's :class:`PaidCounter`
    (its claims are answered there, one at a time)."""

    def __init__(self, actor: Any) -> None:
        super().__init__()
        self.actor = actor

    @property
    def made(self) -> list[str]:
        import ray

        return ray.get(self.actor.made.remote())

    def claim(self, wanted, limit: int | None) -> int | None:
        import ray

        return ray.get(self.actor.claim.remote(list(wanted), limit))


class ProcedureWorker:
    """A Ray actor: the run's plugins, its own console and browser (:meth:`start`), one
    procedure at a time (:meth:`run`), closed by :meth:`close`."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.exits = AsyncExitStack()
        self.prepared: set[str] = set()  #: checkers prepared so far
        self.console: Any = None
        self.stages: Stages | None = None
        self.endpoint: Any = None
        self.xrun: Any = None
        self.folder: ArtifactsFolder | None = None

    async def start(self) -> dict[str, Any]:
        """Load the plugins, start the console and the browser. Returns where the worker
        runs and how long starting took; ``problem``: why it could not start (the
        console or the browser did not: an environment problem, said in one line)."""
        import ray

        from docverify.plugins import installed_plugins
        from docverify.run.check import instances

        clock = time.perf_counter()
        spec = self.spec
        spec.enter()
        info: dict[str, Any] = {"pid": os.getpid(), "host": socket.gethostname(),
                                "node_id": ray.get_runtime_context().get_node_id()}
        try:
            config, plugins = spec.config(), installed_plugins()
            self.console = instances(config, plugins, "console", "consoles", [spec.console])[0]
            self.stages = Stages(
                provisioner=instances(config, plugins, "provisioner", "provisioners", [spec.provisioner])[0],  # type: ignore[arg-type]
                executor=instances(config, plugins, "executor", "executors", [spec.executor])[0],  # type: ignore[arg-type]
                policy=instances(config, plugins, "policy", "policies", [spec.policy])[0],  # type: ignore[arg-type]
                checkers=instances(config, plugins, "checker", "checkers", spec.checkers),  # type: ignore[arg-type]
            )
            self.folder = ArtifactsFolder(spec, info["node_id"])
            self.exits.callback(self.folder.close)
            if spec.run_id:
                self.stages.provisioner.join_run(spec.run_id)
            if spec.paid is not None:
                self.stages.provisioner.count_paid_with(RemotePaidCount(spec.paid))
            self.meter = CostMeter(config.settings.prices, Budget(*spec.budget) if spec.budget else None,
                                   RemoteLedger(spec.ledger) if spec.ledger is not None else None)
            for plugin in (self.stages.policy, *self.stages.checkers, self.stages.provisioner):
                plugin.meter = self.meter
            self.stages.policy.prepare()
            tick = time.perf_counter()
            self.endpoint = self.exits.enter_context(self.console.start())
            info["console_s"] = time.perf_counter() - tick
            tick = time.perf_counter()
            self.xrun = await self.exits.enter_async_context(
                self.stages.executor.open(self.endpoint, self.folder.artifacts))
            info["browser_s"] = time.perf_counter() - tick
        except EnvironmentProblem as problem:
            await self.close()
            info["problem"] = str(problem)
            return info
        info["console"] = self.endpoint.describe()
        info["start_s"] = time.perf_counter() - clock
        return info

    async def run(self, task: Task, account: Account | None, attempt: int) -> Finished:
        """Run one procedure (the ``attempt``-th time) as ``account`` (the pool's, leased
        by the driver; None: the console's account for it). Its model calls spend from
        the run's budget (``spec.ledger``)."""
        assert self.stages is not None, "start() first"
        task.region = task.region or self.endpoint.default_region
        checker = next((c for c in self.stages.checkers if c.applies(task)), None)
        if checker is not None and checker.name not in self.prepared:
            checker.prepare()
            self.prepared.add(checker.name)
        reporters: list[Reporter] = [TurnStream(self.spec.turns, attempt)] if self.spec.turns is not None else []
        if crashes(self.spec.crash, task.id, attempt):
            reporters.append(CrashOnTurn())
        held = HeldAccount(account) if account is not None else None
        folder = self.folder
        assert folder is not None
        runner = Runner(replace(self.stages, reporters=reporters), self.endpoint, artifacts=folder.artifacts,
                        limits=self.spec.limits, output=folder.output, accounts=held, lease_timeout=0,
                        console=self.console.name, task_account=self.console.task_account)
        result = await runner.run_one(self.xrun, task)
        return Finished(finish(task, result, None, ()), held.quarantined if held is not None else None,
                        folder.take(task.id))

    async def close(self) -> None:
        """Close the browser and stop the console; the plugins let go of their models."""
        try:
            await self.exits.aclose()
        finally:
            if self.stages is not None:
                for plugin in (self.stages.policy, *self.stages.checkers):
                    plugin.close()


def reclaim(spec: WorkerSpec, task_id: str, account: Account | None) -> list[str]:
    """What provisioning for ``task_id`` left when its worker died, reclaimed on that
    worker's machine (a Ray task placed there): :meth:`Provisioner.reclaim`."""
    from docverify.plugins import installed_plugins
    from docverify.run.check import instances

    spec.enter()
    provisioner = instances(spec.config(), installed_plugins(), "provisioner", "provisioners", [spec.provisioner])[0]
    return provisioner.reclaim(task_id, account)  # type: ignore[attr-defined]
