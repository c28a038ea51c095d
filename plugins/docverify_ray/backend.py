"""The ``ray`` backend: a check's procedures on Ray workers, every result back in this process.

``docverify check --backend ray`` starts a local Ray (``ray.init(num_cpus=...)``, stopped
when the run ends), or joins a cluster (``--ray-address``, ``RAY_ADDRESS``), and starts
``--ray-workers`` workers (default: ``--jobs``). Each worker is a Ray actor
(:class:`~docverify_ray.worker.ProcedureWorker`, one CPU): it loads the run's plugins
from the configuration, starts its own console (the embedded sandbox runs once per
worker, on that worker's loopback) and its own browser, and runs one procedure at a
time through the same :class:`~docverify.run.runner.Runner` as the local backend,
provisioning included. This process hands the procedures out and receives each result
as soon as it ends; it goes to the results store and the reporters here
(:meth:`Work.finish`), so ``--resume``, the reports and the exit code are those of a
local run.

Accounts. With an account pool, this process takes every lease (the pool's ``flock`` on
its lease folder) and hands the account to the worker with the procedure; the lease is
released when the result is back. A pool's account is so never used twice at once,
whichever node runs the procedures, nor by another docverify process on this machine
that shares the lease folder. (Workers that leased for themselves would only exclude
each other on one machine: flock holds across the processes of one host, not across
hosts.) Without a pool, each procedure gets a new account of its own from its
worker's console, as locally.

Faults. A worker that dies mid-procedure (its process crashed or was killed, its node
went away): what the procedure's provisioning left is reclaimed on that worker's node
(:meth:`~docverify.provision.Provisioner.reclaim`, from the provisioner's ledger: a Ray
task placed there), a new worker takes the dead one's place, and the procedure is
tried once more, by whichever worker is free first; dying a second time makes it
ENV_ERROR, saying so. Ctrl-C cancels the procedures on the workers (each destroys what
it provisioned and closes its browser context, as locally), closes every worker
(browser, console), and stops the local Ray this command started.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import math
import os
import re
import shutil
import socket
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from pydantic import Field

from docverify.check.verdict import Verdict
from docverify.cost import Ledger
from docverify.errors import ConfigError, EnvironmentProblem, UsageError
from docverify.provision import Provisioner
from docverify.run.backend import Backend, Work
from docverify.run.runner import not_started_spent, unfinished
from docverify.task import Task
from docverify_ray.worker import (
    CRASH_ENV,
    SHIP_ENV,
    Finished,
    PaidCounter,
    ProcedureWorker,
    RemoteLedger,
    TurnRelay,
    WorkerSpec,
    receive,
    reclaim,
)

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'docverify[ray]'"
ADDRESS_ENV = "RAY_ADDRESS"
#: seconds a cancelled procedure has to clean up on its worker (destroy what it provisioned)
SETTLE_S = 300.0
#: seconds a worker has to close its browser and console
CLOSE_S = 60.0
#: seconds reclaiming a dead worker's provisioning may take
RECLAIM_S = 600.0
#: where a local Ray's folder goes (Ray's own default parent: its socket paths must stay short)
SHORT_TMP = "/tmp" if os.path.isdir("/tmp") else None


class RayBackend(Backend):
    """Runs procedures on Ray workers (a browser and a console each): a local Ray or a cluster."""

    name = "ray"

    class Options(Backend.Options):
        address: str | None = Field(
            None, description="the Ray cluster to join: HOST:PORT of its head, ray://HOST:PORT (Ray Client) or "
                              "auto; default: RAY_ADDRESS, else a local Ray started for the run and stopped after it")
        workers: int | None = Field(
            None, ge=1, le=1024, description="workers, each a Ray actor with a browser and a console of its own, "
                                             "running one procedure at a time; default: jobs")
        cpus_per_worker: float = Field(1.0, gt=0, le=64, description="CPUs each worker reserves on the cluster")
        start_timeout_s: float = Field(
            300.0, gt=0, description="seconds a worker may take to be placed and to start its console and browser")

    #: the folder of the local Ray this run started (its logs and sockets), removed after it
    temp_dir: str | None = None

    def address(self) -> str | None:
        """The cluster to join: the option, else RAY_ADDRESS; None: start a local Ray."""
        return self.options.address or os.environ.get(ADDRESS_ENV) or None

    def prepare(self) -> None:
        try:
            importlib.import_module("ray")
        except ImportError as error:
            raise ConfigError(f"the ray backend needs Ray, which cannot be imported ({error})",
                              hint=f"{INSTALL_HINT}, or run with --backend local") from None
        address = self.address()
        if address is not None:
            reach(address, "--ray-address" if self.options.address else ADDRESS_ENV)

    def run(self, work: Work, tasks: Sequence[Task]) -> str:
        import ray

        policy = work.stages.policy
        if type(policy) is not work.plugins.get("policies", policy.name):
            raise UsageError(f"the ray backend builds each worker's policy from the configuration; this run's "
                             f"{policy.name!r} policy was changed in this process (a rollout's recorder) and "
                             "cannot go with it", hint="run it with --backend local")
        count = min(self.options.workers or work.jobs, len(tasks))
        spec = worker_spec(work)
        clock = time.perf_counter()
        restore = reroute_raylet_reports(debug=bool(os.environ.get("DOCVERIFY_DEBUG")))
        try:
            joined = self.join(ray, count)
            spec.paid = ray.remote(PaidCounter).options(num_cpus=0).remote()
            meter = work.meter
            if meter.budget is not None:  # the run's budget, spent from by the driver's and every worker's calls
                spec.budget = (meter.budget.amount, meter.budget.currency)
                spec.ledger = ray.remote(Ledger).options(num_cpus=0).remote(*meter.ledger.state())
                meter.ledger = RemoteLedger(spec.ledger)
            spec.driver_node = ray.get_runtime_context().get_node_id()
            spec.turns = ray.remote(TurnRelay).options(num_cpus=0).remote()
            work.timings["ray_start_s"] = time.perf_counter() - clock
            try:
                dispatch = Dispatch(ray, work, spec, count, self.options)
                work.loop.run(dispatch.run(tasks))
                return dispatch.describe()
            finally:
                tick = time.perf_counter()
                if spec.ledger is not None:  # the run's accounts, kept where the run's report reads them
                    meter.ledger = Ledger(*meter.ledger.state())
                if joined:
                    ray.shutdown()  # a local Ray this command started stops: its workers, their browsers
                    self.remove_temp_dir()
                work.timings["close_s"] = work.timings.get("close_s", 0.0) + time.perf_counter() - tick
        finally:
            restore()

    def remove_temp_dir(self) -> None:
        """The local Ray's folder (its logs), once it stopped; kept, and said, with DOCVERIFY_DEBUG."""
        folder, self.temp_dir = self.temp_dir, None
        if folder is None:
            return
        if os.environ.get("DOCVERIFY_DEBUG"):
            log.warning("the local Ray's logs: %s", folder)
            return
        shutil.rmtree(folder, ignore_errors=True)

    def join(self, ray: Any, workers: int) -> bool:
        """Start a local Ray for ``workers`` workers, or join the configured cluster;
        False when this process was in a Ray already (an embedding program's: left as it is)."""
        if ray.is_initialized():
            return False
        address = self.address()
        debug = bool(os.environ.get("DOCVERIFY_DEBUG"))
        quiet = {"logging_level": logging.DEBUG if debug else logging.ERROR, "log_to_driver": debug}
        try:
            if address is None:
                # its sessions' logs and sockets in a folder of the run's, removed with it (DOCVERIFY_DEBUG:
                # kept); in /tmp as Ray's own: its socket paths must stay short (AF_UNIX: 107 bytes)
                self.temp_dir = tempfile.mkdtemp(prefix=f"docverify-ray-{os.getpid()}-", dir=SHORT_TMP)
                ray.init(address="local", num_cpus=max(1, math.ceil(workers * self.options.cpus_per_worker)),
                         include_dashboard=False, _temp_dir=self.temp_dir, **quiet)
            else:
                ray.init(address=address, **quiet)
        except Exception as error:  # Ray's own: ConnectionError, RuntimeError, TimeoutError, ...
            what = f"join the Ray cluster at {address}" if address else "start a local Ray"
            root = error
            while root.__cause__ is not None:  # "Failed to connect" says less than what it came from (a token)
                root = root.__cause__
            why = f"{type(error).__name__}: {first_line(error)}" + (f" ({first_line(root)})" if root is not error else "")
            raise EnvironmentProblem(f"could not {what}: {why}",
                                     hint="DOCVERIFY_DEBUG=1 shows Ray's log; --backend local runs without Ray") from None
        return True


def reach(address: str, origin: str) -> None:
    """Raise EnvironmentProblem, saying so, when nothing answers at a cluster ``address``
    (Ray itself would retry for a minute and then raise from deep inside)."""
    if address in ("auto", "local"):
        return
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if not port.isdigit() or not host:
        raise UsageError(f"{origin} {address}: not a Ray address", hint="HOST:PORT, ray://HOST:PORT or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as error:
        raise EnvironmentProblem(
            f"cannot reach the Ray cluster at {address} ({origin}): {error.strerror or error}",
            hint=f"start it (ray start --head) or fix {origin}; without an address the command starts a local Ray",
        ) from None


def reroute_raylet_reports(*, debug: bool) -> Callable[[], None]:
    """Ray's driver prints what the raylets report (a worker that died, with Ray's advice
    about the OOM killer) on this process's stdout, where docverify's verdicts go: for
    the run, those reports go to the debug log (the run says itself what became of the
    procedure), or to stderr with DOCVERIFY_DEBUG. Returns what puts Ray's printing back.
    (Ray offers no switch for it: its driver's error thread calls this module function.)"""
    try:
        from ray._private import worker as driver
    except ImportError:
        return lambda: None
    original = getattr(driver, "print_to_stdstream", None)
    if original is None:
        return lambda: None

    def reroute(data: dict[str, Any], ignore_prefix: bool) -> None:
        if data.get("pid") != "raylet" or data.get("is_err"):
            original(data, ignore_prefix)
        elif debug:
            original({**data, "is_err": True}, ignore_prefix)
        else:
            for line in data.get("lines", ()):
                log.debug("raylet: %s", line)

    driver.print_to_stdstream = reroute
    return lambda: setattr(driver, "print_to_stdstream", original)


def worker_spec(work: Work) -> WorkerSpec:
    """What every worker builds its part of the run from (:class:`WorkerSpec`)."""
    stages, config = work.stages, work.config
    passed = {name: value for name, value in os.environ.items()
              if name.startswith("DOCVERIFY_") and not name.startswith(("DOCVERIFY_ACCOUNT", "DOCVERIFY_LEASE"))}
    return WorkerSpec(
        settings=config.values(), config_file=str(config.file.resolve()) if config.file else None,
        origins=dict(config.origins), cwd=os.getcwd(), console=work.console.name,
        provisioner=stages.provisioner.name, executor=stages.executor.name, policy=stages.policy.name,
        checkers=[checker.name for checker in stages.checkers], limits=work.limits,
        artifacts=str(work.artifacts.resolve()), output=str(work.output.resolve()) if work.output else None,
        crash=os.environ.get(CRASH_ENV) or None, environ=passed, run_id=work.run_id,
        ship=os.environ.get(SHIP_ENV) == "1",
    )


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def describe(error: BaseException) -> str:
    """A Ray error in one line: the worker's own exception for a task that raised; how
    its process ended for a worker that died; what Ray says first otherwise."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {first_line(cause)}"
    exited = re.search(r"Worker exit detail: (.+?)(?:\.(?: |$)|$)", str(error), re.MULTILINE)
    return exited.group(1) if exited else first_line(error)


@dataclass
class Worker:
    """A started worker: its actor and what it said when it started."""

    actor: Any
    info: dict[str, Any]

    @property
    def where(self) -> str:
        return f"pid {self.info.get('pid')} on {self.info.get('host')}"


class Dispatch:
    """One run's procedures handed out to ``count`` workers, on the run's event loop: a
    coroutine per worker takes the next procedure as soon as its worker is free."""

    def __init__(self, ray: Any, work: Work, spec: WorkerSpec, count: int, options: RayBackend.Options) -> None:
        self.ray = ray
        self.work = work
        self.spec = spec
        self.count = count
        self.options = options
        self.actor_class = ray.remote(ProcedureWorker).options(num_cpus=options.cpus_per_worker, max_restarts=0)
        self.reclaim_task = ray.remote(num_cpus=0, max_retries=0)(reclaim)
        #: whether the provisioner keeps a record of what it made (a dead worker's is reclaimed)
        self.reclaims = type(work.stages.provisioner).reclaim is not Provisioner.reclaim
        self.queue: deque[tuple[Task, int]] = deque()  #: (task, attempt)
        self.running: dict[tuple[str, int], tuple[Task, set[int]]] = {}  #: (id, attempt) -> (task, turns shown)
        self.consoles: list[str] = []  #: each started worker's console
        self.problem: str | None = None  #: why the last worker that could not start did not
        self.clock = time.perf_counter()

    async def run(self, tasks: Sequence[Task]) -> None:
        self.queue.extend((task, 1) for task in tasks)
        self.clock = time.perf_counter()
        serving = [asyncio.ensure_future(self.serve()) for _ in range(self.count)]
        relaying = asyncio.ensure_future(self.relay()) if self.spec.turns is not None else None
        try:
            await asyncio.gather(*serving)
        finally:
            for coroutine in (*serving, *([relaying] if relaying else [])):
                coroutine.cancel()
            await asyncio.gather(*serving, *([relaying] if relaying else []), return_exceptions=True)
            self.work.timings["procedures_s"] = time.perf_counter() - self.clock
        while self.queue:  # no worker was left to take them: none could start
            task, _ = self.queue.popleft()
            self.work.finish(task, unfinished(task, self.problem or "no Ray worker started", time.time()))

    async def relay(self) -> None:
        """The workers' turns to the reporters as they come (:class:`TurnRelay`); one that
        arrives after its procedure's result was shown from the result."""
        while True:
            for task_id, attempt, index, turn in await self.wait(self.spec.turns.take.remote()):
                running = self.running.get((task_id, attempt))
                if running is None or index in running[1]:
                    continue
                running[1].add(index)
                for reporter in self.work.stages.reporters:
                    reporter.turn(running[0], turn)

    async def serve(self) -> None:
        """Start a worker and run procedures on it until none is left; a worker that
        died is replaced (the procedure it ran is back in the queue, or finished)."""
        while self.queue:
            worker = await self.start()
            if worker is None:
                return
            alive = True
            try:
                while self.queue and alive:
                    task, attempt = self.queue.popleft()
                    alive = await self.run_one(worker, task, attempt)
            finally:
                if alive:
                    await self.close(worker)
                else:
                    self.kill(worker.actor)

    async def start(self) -> Worker | None:
        actor = self.actor_class.remote(self.spec)
        try:
            info = await asyncio.wait_for(self.wait(actor.start.remote()), self.options.start_timeout_s)
        except asyncio.TimeoutError:
            self.problem = (f"no Ray worker started within {self.options.start_timeout_s:g} s: does the cluster "
                            f"have {self.options.cpus_per_worker:g} CPU(s) free for each? "
                            "(backend.ray.start_timeout_s, backend.ray.cpus_per_worker)")
            self.kill(actor)
            return None
        except self.ray.exceptions.RayError as error:
            self.problem = f"a Ray worker did not start: {describe(error)}"
            self.kill(actor)
            return None
        except BaseException:
            self.kill(actor)
            raise
        if "problem" in info:  # its console or browser did not start (it closed what did)
            self.problem = info["problem"]
            self.kill(actor)
            return None
        self.consoles.append(info["console"])
        timings = self.work.timings
        timings.setdefault("workers_s", time.perf_counter() - self.clock)  # until the first one could work
        for key in ("console_s", "browser_s"):
            timings[key] = max(timings.get(key, 0.0), info.get(key, 0.0))
        return Worker(actor, info)

    async def run_one(self, worker: Worker, task: Task, attempt: int) -> bool:
        """Run ``task`` on ``worker``; False when the worker died doing it."""
        work = self.work
        if attempt == 1:
            if work.stop():  # --maxfail: not started, absent from the results
                return True
            if work.meter.exhausted:
                work.finish(task, not_started_spent(task, work.meter))
                return True
        started = time.time()
        lease = None
        if work.accounts is not None:
            try:
                lease = await work.accounts.acquire_async(console=work.console.name, timeout=work.lease_timeout,
                                                          label=task.id)
            except EnvironmentProblem as problem:  # the pool stayed exhausted, or its account cannot be read
                work.finish(task, unfinished(task, str(problem), started))
                return True
        if attempt == 1:
            for reporter in work.stages.reporters:
                reporter.procedure_started(task)
        account = lease.account if lease is not None else None
        errors = self.ray.exceptions
        self.running[(task.id, attempt)] = (task, set())
        try:
            ref = worker.actor.run.remote(task, account, attempt)
            try:
                finished: Finished = await self.wait(ref)
            except asyncio.CancelledError:  # Ctrl-C: the procedure cleans up on its worker
                self.ray.cancel(ref)
                await self.settle(ref)
                raise
            except (errors.RayActorError, errors.WorkerCrashedError) as died:
                self.died(worker, task, attempt, died, await self.reclaim(worker, task, account))
                return False
            except errors.RayError as error:  # the worker's own bug: this procedure is undecided, the run goes on
                log.debug("%s failed on a Ray worker", task.id, exc_info=True)
                finished = Finished(unfinished(
                    task, f"internal error on Ray worker {worker.where}: {describe(error)} (a bug in docverify or a "
                          "plugin; DOCVERIFY_DEBUG=1 shows the worker's log)", started, verdict=Verdict.INCONCLUSIVE))
            if finished.quarantined and lease is not None:
                lease.quarantine(finished.quarantined)
        finally:
            shown = self.running.pop((task.id, attempt), (task, set()))[1]  # what the relay showed
            if lease is not None:
                lease.release()
        if finished.files:  # from a worker on another node: its screenshots and trace, where the reports look
            receive(finished.files, work.output or work.artifacts)
        for reporter in work.stages.reporters:  # the turns the relay has not shown yet
            for turn in finished.result.turns:
                if turn.index not in shown:
                    reporter.turn(task, turn)
        work.finish(task, finished.result)
        return True

    def died(self, worker: Worker, task: Task, attempt: int, error: BaseException, reclaimed: list[str]) -> None:
        """``task``'s worker died under it: tried once more, then ENV_ERROR."""
        what = f"its Ray worker ({worker.where}) died mid-procedure ({describe(error)})"
        after = "".join(f"; {line}" for line in reclaimed)
        if attempt == 1:
            log.warning("%s: %s%s; trying it once more on another worker", task.id, what, after)
            self.queue.appendleft((task, attempt + 1))
        else:
            self.work.finish(task, unfinished(task, f"{what}, on its second try too: not tried again{after}",
                                              time.time()))

    async def reclaim(self, worker: Worker, task: Task, account: Any) -> list[str]:
        """What ``task``'s provisioning left when ``worker`` died, destroyed on its node."""
        if not self.reclaims:
            return []
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        there = NodeAffinitySchedulingStrategy(worker.info["node_id"], soft=False)
        ref = self.reclaim_task.options(scheduling_strategy=there).remote(self.spec, task.id, account)
        try:
            return list(await asyncio.wait_for(self.wait(ref), RECLAIM_S))
        except (asyncio.TimeoutError, self.ray.exceptions.RayError) as error:
            why = describe(error) if isinstance(error, self.ray.exceptions.RayError) else f"not done in {RECLAIM_S:g} s"
            return [f"what its provisioning left on {worker.info.get('host')} was not reclaimed ({why}): "
                    "`docverify cleanup` there destroys it"]

    async def wait(self, ref: Any) -> Any:
        """A Ray object, awaited on this loop (whatever thread it runs on)."""
        return await asyncio.wrap_future(ref.future())

    async def settle(self, ref: Any) -> None:
        """Wait for a cancelled procedure to clean up (bounded: a worker that hangs is killed after)."""
        try:
            await asyncio.wait_for(self.wait(ref), SETTLE_S)
        except Exception:  # cancelled as asked, or the worker died meanwhile
            pass

    async def close(self, worker: Worker) -> None:
        try:
            await asyncio.wait_for(self.wait(worker.actor.close.remote()), CLOSE_S)
        except Exception as error:
            log.debug("closing Ray worker %s: %s", worker.where, error)
        finally:
            self.kill(worker.actor)

    def kill(self, actor: Any) -> None:
        try:
            self.ray.kill(actor, no_restart=True)
        except Exception as error:  # gone already
            log.debug("ray.kill: %s", error)

    def describe(self) -> str:
        """The console as the reports name it: the first worker's, and how many more."""
        if not self.consoles:
            return f"ray: no worker started ({self.problem})" if self.problem else "ray: no worker started"
        distinct = list(dict.fromkeys(self.consoles))
        if len(distinct) == 1:
            return distinct[0]
        return f"{distinct[0]} and {len(distinct) - 1} more (one per Ray worker)"
