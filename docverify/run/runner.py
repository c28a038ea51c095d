"""The runner: one procedure through execute → check → verdict, many in parallel.

Data flows forward (docs/architecture.md, "The pipeline"): a :class:`~docverify.task.Task`
goes through the provisioner, a browser session where the policy and the executor
take turns, the checker, and :func:`~docverify.check.verdict.decide`; the
:class:`~docverify.report.trajectory.ProcedureResult` goes to the results store (at once, so
an interrupted run loses nothing) and to the reporters.

The runner never raises for one procedure's trouble: a broken console, browser or
provisioner is that procedure's ENV_ERROR, and the run goes on.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from docverify.check.checker import Checker, Evidence
from docverify.check.verdict import Finding, Verdict, decide
from docverify.console import ConsoleEndpoint
from docverify.cost import Usage
from docverify.errors import CredentialsRejected, EnvironmentProblem, Undecided
from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.executor import Executor, ExecutorRun, Session, artifact_name, browser_locale
from docverify.execute.guard import Guard, Stopped, followed_before, owned_outputs
from docverify.execute.policy import Policy
from docverify.parse.model import Step
from docverify.parse.sequence import as_written, is_lead_step, lead_part
from docverify.provision import Provisioned, Provisioner
from docverify.report.reporter import Reporter
from docverify.report.trajectory import CheckResult, ProcedureResult, StepOutcome, StepStatus, Turn
from docverify.run.consequences import Consequences
from docverify.scrub import known as known_secrets
from docverify.scrub import scrub_object
from docverify.task import Task

log = logging.getLogger(__name__)
T = TypeVar("T")
#: times one procedure may be unblocked by provisioning on demand
MAX_UNBLOCKS = 2


@dataclass
class RunLimits:
    """Budgets per procedure, and how far one may go."""

    max_steps: int = 80  #: turns (actions and flags) before the run is INCONCLUSIVE
    timeout_s: float = 300.0  #: wall time per procedure
    screenshots: bool = False  #: one screenshot after every page action (for the HTML report)
    pass_screenshots: bool = True  #: keep them for procedures that pass (False: deleted once the verdict is PASS)
    screenshot_type: str = "png"  #: "png" or "jpeg" (smaller; the executor's quality)
    #: a dry run (``check --dry-run=browse``): nothing provisioned, the steps followed up to the
    #: first action that changes the console's state (:mod:`docverify.execute.guard`), no check
    dry_run: bool = False


@dataclass
class Stages:
    """The plugin instances one run uses."""

    provisioner: Provisioner
    executor: Executor
    policy: Policy
    checkers: Sequence[Checker]
    reporters: Sequence[Reporter] = ()


@dataclass
class Outcome:
    """What executing one procedure produced, before checking."""

    turns: list[Turn] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    done: Action | None = None
    step_status: dict[str, StepStatus] = field(default_factory=dict)
    budget: str | None = None  #: which budget ran out
    environment: str | None = None  #: the console or the browser gave out mid-procedure (ENV_ERROR): why
    browser_s: float = 0.0
    started: float = 0.0  #: epoch seconds, for the audit window
    finished: float = 0.0
    final: Observation | None = None  #: the page when the episode ended
    usage: Usage = field(default_factory=Usage)
    #: the action not taken that ended it: a dry run's first change, a refused destructive action
    stopped: Stopped | None = None
    refusal: str | None = None  #: a refused action's reason (ENV_ERROR)


@asynccontextmanager
async def in_thread(manager: AbstractContextManager[T]) -> AsyncIterator[T]:
    """A blocking context manager (a provisioner's Terraform) entered and left in a
    worker thread, so the other procedures go on meanwhile. It is left even when the
    procedure is cancelled (Ctrl-C): what was created is destroyed, also when the
    cancellation came while the thread was still entering it (it is waited for, then left)."""
    entering = asyncio.ensure_future(asyncio.to_thread(manager.__enter__))
    try:
        value = await asyncio.shield(entering)
    except asyncio.CancelledError as cancelled:
        try:
            await entering  # the thread goes on: what it makes must not outlive the procedure
        except Exception:
            raise cancelled from None  # entering failed: nothing to leave
        await asyncio.to_thread(manager.__exit__, type(cancelled), cancelled, cancelled.__traceback__)
        raise
    try:
        yield value
    except BaseException as error:
        if not await asyncio.to_thread(manager.__exit__, type(error), error, error.__traceback__):
            raise
    else:
        await asyncio.to_thread(manager.__exit__, None, None, None)


def cut_short(task: Task, error: BaseException | None = None) -> None:
    """Raise CancelledError when the running procedure was asked to stop (Ctrl-C) and
    went on (a plugin caught the cancellation, or failed because of it: its browser or
    console closing): what it ends with is no result, and ``--resume`` runs it again."""
    current = asyncio.current_task()
    if current is not None and current.cancelling():
        log.debug("%s was cut short by Ctrl-C: no result", task.id, exc_info=error)
        raise asyncio.CancelledError from error


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Runner:
    """Runs tasks against one console endpoint with one executor run."""

    def __init__(self, stages: Stages, endpoint: ConsoleEndpoint, *, artifacts: Path, limits: RunLimits,
                 on_result: Callable[[Task, ProcedureResult], None] | None = None,
                 output: Path | None = None, accounts: Any = None, lease_timeout: float | None = 600.0,
                 console: str | None = None, stop: Callable[[], bool] | None = None,
                 task_account: Callable[[ConsoleEndpoint, str], AbstractContextManager[ConsoleEndpoint]] | None = None,
                 ) -> None:
        self.stages = stages
        self.endpoint = endpoint
        self.accounts = accounts  #: an AccountPool: each task leases its own account; None: the endpoint's
        self.lease_timeout = lease_timeout
        self.console = console
        self.task_account = task_account  #: without a pool: the console's account for one task (Console.task_account)
        self.artifacts = artifacts
        self.output = output
        self.limits = limits
        self.on_result = on_result
        self.stop = stop  #: asked before each task starts: True ends the run there (--maxfail)
        self.results: dict[str, ProcedureResult] = {}
        self.timings: dict[str, float] = {}  #: run-level seconds: browser (launch and sign-in), procedures, close

    # -- the run ---------------------------------------------------------------------

    async def run(self, tasks: Sequence[Task], jobs: int) -> list[ProcedureResult]:
        """Every task's result, in the tasks' order. A console or browser that cannot
        start makes every task an ENV_ERROR (the run itself does not fail)."""
        clock = time.perf_counter()
        try:
            async with self.stages.executor.open(self.endpoint, self.artifacts) as xrun:
                self.timings["browser_s"] = time.perf_counter() - clock
                gate = asyncio.Semaphore(jobs)

                async def one(task: Task) -> None:
                    async with gate:
                        if self.stop is not None and self.stop():  # not started: absent from the results
                            return
                        if self.stages.policy.meter.exhausted:  # spent: the rest are not started
                            self.finish(task, not_started_spent(task, self.stages.policy.meter))
                            return
                        result = await self.run_one(xrun, task)
                        cut_short(task)
                        self.finish(task, result)

                clock = time.perf_counter()
                await asyncio.gather(*(one(task) for task in tasks))
                self.timings["procedures_s"] = time.perf_counter() - clock
                clock = time.perf_counter()
            self.timings["close_s"] = time.perf_counter() - clock
        except EnvironmentProblem as problem:
            for task in tasks:
                if task.id not in self.results:
                    self.finish(task, unfinished(task, str(problem), time.time()))
        return [self.results[task.id] for task in tasks if task.id in self.results]

    def finish(self, task: Task, result: ProcedureResult) -> None:
        self.results[task.id] = finish(task, result, self.on_result, self.stages.reporters)

    async def run_one(self, xrun: ExecutorRun, task: Task) -> ProcedureResult:
        started = time.time()
        clock = time.perf_counter()
        for reporter in self.stages.reporters:
            reporter.procedure_started(task)
        try:
            async with self.account(task) as endpoint, in_thread(self.provision(task, endpoint)) as provisioned:
                task.context.update({k: str(v) for k, v in provisioned.outputs.items()})
                login = endpoint.login if endpoint is not self.endpoint else None
                locale = browser_locale(task.procedure.language)  # the console speaks the doc's language
                async with xrun.session(task.id, login, locale=locale) as session:
                    opened = time.perf_counter() - clock
                    outcome = await self.execute(session, task, provisioned, endpoint)
                    tick = time.perf_counter()
                    unready = outcome.environment is not None or (outcome.done is not None
                                                                  and outcome.done.environment)
                    check = (await self.check(task, outcome, endpoint)
                             if outcome.budget is None and not unready and outcome.stopped is None
                             and not self.limits.dry_run else None)
                    result = self.result(task, outcome, check, started)
                    result.check_s = time.perf_counter() - tick
                    if result.verdict is not Verdict.PASS:
                        trace = self.artifacts / f"{artifact_name(task.id)}.trace.zip"
                        if session.keep_trace(trace):
                            result.artifacts["trace"] = self.relative(trace)
                    elif self.limits.screenshots and not self.limits.pass_screenshots:
                        self.drop_screenshots(task, result)
        except EnvironmentProblem as problem:
            return unfinished(task, str(problem), started, duration=time.perf_counter() - clock)
        except Exception as error:  # a bug in a plugin: this procedure is undecided, the run goes on
            cut_short(task, error)
            log.debug("internal error in %s", task.id, exc_info=True)
            message = (f"internal error: {type(error).__name__}: {error} (a bug in docverify or a plugin; "
                       "DOCVERIFY_DEBUG=1 shows the traceback)")
            return unfinished(task, message, started, duration=time.perf_counter() - clock,
                              verdict=Verdict.INCONCLUSIVE)
        result.duration_s = time.perf_counter() - clock
        result.setup_s = opened
        return result

    def provision(self, task: Task, endpoint: ConsoleEndpoint) -> AbstractContextManager[Provisioned]:
        """What ``task`` needs made before it runs (the provisioner's); nothing in a dry run,
        which creates nothing: steps that act on a resource it would provision find none."""
        if self.limits.dry_run:
            return nullcontext(Provisioned())
        return self.stages.provisioner.provision(task, endpoint)

    @asynccontextmanager
    async def account(self, task: Task) -> AsyncIterator[ConsoleEndpoint]:
        """The console as ``task`` uses it: signed in as an account leased from the pool
        for this task alone (waiting up to the lease timeout for a free one), or, when
        there is no pool, the account the console gives it (a new one on the embedded
        sandbox; the endpoint's own elsewhere). An account that cannot sign in is
        quarantined, so the next task leases another."""
        if self.accounts is None:
            if self.task_account is None:
                yield self.endpoint
                return
            async with in_thread(self.task_account(self.endpoint, task.id)) as endpoint:
                yield endpoint
            return
        async with self.accounts.lease_async(console=self.console, timeout=self.lease_timeout,
                                             label=task.id) as lease:
            try:
                yield lease.account.on(self.endpoint)
            except CredentialsRejected as problem:
                lease.quarantine(str(problem))
                raise

    # -- executing -------------------------------------------------------------------

    async def execute(self, session: Session, task: Task, provisioned: Provisioned | None = None,
                      endpoint: ConsoleEndpoint | None = None) -> Outcome:
        outcome = Outcome(started=time.time())
        consequences = Consequences()
        unblocks = MAX_UNBLOCKS
        episode = self.stages.policy.start(task)
        guard = self.guard(task, provisioned, endpoint or self.endpoint)
        if provisioned is not None and provisioned.resources:
            episode.provisioned("Created before this procedure: " + "; ".join(provisioned.resources))
        shots = self.artifacts / artifact_name(task.id) if self.limits.screenshots else None
        before = await self.screenshot(session, shots, 0)
        tick = time.perf_counter()
        observation = await session.observe(screenshot=self.stages.policy.sees_screenshots)
        outcome.browser_s += time.perf_counter() - tick
        try:
            async with asyncio.timeout(self.limits.timeout_s):
                while True:
                    if len(outcome.turns) >= self.limits.max_steps:
                        outcome.budget = f"the step budget ran out ({self.limits.max_steps} turns; --max-steps)"
                        break
                    tick = time.perf_counter()
                    try:
                        action = await episode.next_action(observation)
                    except Undecided as why:
                        outcome.budget = str(why)
                        break
                    policy_s = time.perf_counter() - tick
                    turn = Turn(len(outcome.turns), action.step, action.to_dict(), action.describe(),
                                policy_s=policy_s, thought=action.thought, url=observation.url, title=observation.title,
                                by=action.by)
                    if action.kind is ActionKind.DONE:
                        # a missing prerequisite (the literal policy says so), or a model that is stuck
                        if action.status == "blocked" and (action.environment or action.by == "model") \
                                and unblocks > 0 and not self.limits.dry_run:  # a dry run creates nothing
                            unblocks -= 1
                            fresh = await self.unblock(session, task, endpoint or self.endpoint, episode, action,
                                                       observation, outcome, guard)
                            if fresh is not None:
                                observation = fresh
                                continue
                        outcome.done = action
                        break
                    if action.kind is ActionKind.FLAG_STEP:
                        assert action.finding is not None
                        action.finding = consequences.finding(action.finding)
                        outcome.findings.append(action.finding)
                        turn.action = action.to_dict()
                        if shots is not None:
                            await self.outline(session, action.finding, observation, before)
                    elif (stopped := guard.before(action, observation)) is not None:
                        self.halt(task, turn, action, stopped, guard, outcome)
                        break
                    else:
                        previous = observation
                        try:
                            observation = await self.apply(session, action, turn, outcome)
                        except EnvironmentProblem as problem:  # not the doc's: the turns so far stay in the result
                            turn.ok, turn.error = False, str(problem)
                            outcome.turns.append(turn)
                            outcome.environment = str(problem)
                            break
                        if action.kind.touches_page:
                            consequences.page_action(previous, observation, turn.ok)
                        after = await self.screenshot(session, shots, turn.index + 1, before)
                        turn.screenshot_before, turn.screenshot_after = before, after
                        before = after
                    outcome.turns.append(turn)
                    for reporter in self.stages.reporters:
                        reporter.turn(task, turn)
        except TimeoutError:  # asyncio.timeout's: the procedure's wall-time budget
            outcome.budget = f"the time budget ran out ({self.limits.timeout_s:g} s; --timeout)"
        outcome.finished = time.time()
        outcome.step_status = dict(getattr(episode, "step_status", {}))
        outcome.final = observation
        outcome.usage = episode.usage
        if provisioned is not None:
            outcome.usage.add(provisioned.usage)  # templates ResourceCoder wrote for this procedure
        return outcome

    def guard(self, task: Task, provisioned: Provisioned | None, endpoint: ConsoleEndpoint) -> Guard:
        """The procedure's safety rules (:mod:`docverify.execute.guard`): a dry run's stop
        before the first change; the console's protection of what the run did not create,
        which owns what provisioning made for the procedure and the names it suffixes."""
        setting = f"console.{self.console}.protect_unowned" if self.console else "protect_unowned"
        return Guard(task.procedure, dry_run=self.limits.dry_run, protect=endpoint.protect_unowned,
                     owned=owned_outputs(provisioned.outputs) if provisioned is not None else (),
                     suffix=task.context.get("suffix", ""), setting=setting)

    def halt(self, task: Task, turn: Turn, action: Action, stopped: Stopped, guard: Guard, outcome: Outcome) -> None:
        """End the procedure before ``action``: a turn that says so, in place of the action."""
        outcome.stopped = stopped
        if stopped.by == "protection":
            outcome.refusal = guard.refusal(stopped, task.procedure.path)
            turn.description = f"refused {stopped.action}: {stopped.effect}, on {stopped.resource}"
        else:
            turn.description = f"dry run: stopped before {stopped.action} ({stopped.effect})"
        turn.action = {"kind": "stop", "by": stopped.by, "action": action.to_dict()}
        outcome.turns.append(turn)
        for reporter in self.stages.reporters:
            reporter.turn(task, turn)

    async def unblock(self, session: Session, task: Task, endpoint: ConsoleEndpoint, episode: Any, blocked: Action,
                      observation: Observation, outcome: Outcome, guard: Guard | None = None) -> Observation | None:
        """The policy is blocked (a list it must act on is empty…): a provisioner that
        provisions on demand (``on_blocked``, e.g. ResourceCoder) may create what is
        missing; then the report goes into the policy's context, the page is loaded
        again and the episode resumes. None when nothing was created."""
        on_blocked = getattr(self.stages.provisioner, "on_blocked", None)
        if on_blocked is None:
            return None
        try:
            report = await on_blocked(task, endpoint, blocked.message or "", observation.snapshot)
        except EnvironmentProblem as problem:  # it tried and failed: say so after the policy's own reason
            blocked.message = f"{blocked.message or 'blocked'}; on-demand provisioning failed: {problem}"
            return None
        if report is None:
            return None
        if getattr(report, "usage", None) is not None:
            episode.usage.add(report.usage)  # deciding what to create goes on the procedure's bill
        made = {k: str(v) for k, v in getattr(report, "context", {}).items()}
        task.context.update(made)
        if guard is not None:  # made for this procedure: the run owns it
            guard.own(made.values())
        text = getattr(report, "text", None) or str(report)
        episode.provisioned(text)
        if not episode.resume():
            return None
        outcome.turns.append(Turn(len(outcome.turns), blocked.step, {"kind": "provision", "message": text},
                                  f"provisioned what was missing: {text}", url=observation.url,
                                  title=observation.title))
        reload = Action(ActionKind.GOTO, value=observation.url, target="reload after provisioning")
        turn = Turn(len(outcome.turns), blocked.step, reload.to_dict(), reload.describe())
        fresh = await self.apply(session, reload, turn, outcome)
        outcome.turns.append(turn)
        return fresh

    async def apply(self, session: Session, action: Action, turn: Turn, outcome: Outcome) -> Observation:
        tick = time.perf_counter()
        result = await session.apply(action)
        observation = await session.observe(screenshot=self.stages.policy.sees_screenshots)
        elapsed = time.perf_counter() - tick
        outcome.browser_s += elapsed
        turn.browser_s = elapsed
        turn.ok, turn.error = result.ok, result.error
        turn.url, turn.title = observation.url, observation.title
        if not result.ok:
            observation.error = result.error if observation.error is None else f"{result.error}; {observation.error}"
        return observation

    async def screenshot(self, session: Session, folder: Path | None, index: int,
                         previous: str | None = None) -> str | None:
        """The page now, saved as ``turn-<index>`` in ``folder``; where it looks exactly as
        the ``previous`` screenshot did (an action that changed nothing on screen), that
        one's name and no new file."""
        if folder is None:
            return None
        path = folder / f"turn-{index:03d}.{'jpg' if self.limits.screenshot_type == 'jpeg' else 'png'}"
        await session.screenshot(path)
        before = (self.output or self.artifacts) / previous if previous else None
        if before is not None and path.is_file() and before.is_file() and path.read_bytes() == before.read_bytes():
            path.unlink()
            return previous
        return self.relative(path)

    @staticmethod
    async def outline(session: Session, finding: Finding, observation: Observation, screenshot: str | None) -> None:
        """Record on ``finding`` the screenshot of the page it was raised on and where the
        element it points at is on it: the label the console shows instead (a close
        match), else the nearest candidate, else the doc's own label, among the elements
        of the snapshot the policy saw."""
        finding.screenshot = screenshot
        measure = getattr(session, "bounding_box", None)  # optional in the Session protocol
        names = (finding.observed, *finding.candidates, finding.expected)
        element = next((e for name in names for e in observation.elements if e.ref and e.name == name), None)
        if screenshot is not None and measure is not None and element is not None:
            finding.box = await measure(element.ref)

    def drop_screenshots(self, task: Task, result: ProcedureResult) -> None:
        """A procedure that passed keeps no screenshots (``RunLimits.pass_screenshots``):
        its files go, and its turns and findings no longer name them."""
        shutil.rmtree(self.artifacts / artifact_name(task.id), ignore_errors=True)
        for turn in result.turns:
            turn.screenshot_before = turn.screenshot_after = None
        for finding in (*result.findings, *(f for step in result.steps for f in step.findings)):
            finding.screenshot = finding.box = None

    def relative(self, path: Path) -> str:
        """Artifact paths as reports name them: relative to the output directory."""
        base = self.output or self.artifacts
        try:
            return str(path.relative_to(base))
        except ValueError:
            return str(path)

    # -- checking and deciding -------------------------------------------------------

    async def check(self, task: Task, outcome: Outcome, endpoint: ConsoleEndpoint) -> CheckResult | None:
        for checker in self.stages.checkers:
            if checker.applies(task):
                audit = next((reader for other in self.stages.checkers
                              if (reader := other.audit_reader(endpoint)) is not None), None)
                evidence = Evidence(task, outcome.turns, endpoint, outcome.started, outcome.finished,
                                    outcome.findings, outcome.final, audit)
                result = await checker.check(evidence)
                if result.usage is not None:  # judging this procedure goes on its bill
                    outcome.usage.add(result.usage)
                return result
        return None

    def result(self, task: Task, outcome: Outcome, check: CheckResult | None, started: float) -> ProcedureResult:
        goal = check.goal_reached if check else None
        unready = outcome.done.message if outcome.done is not None and outcome.done.environment else None
        browsing = self.limits.dry_run and outcome.environment is None
        if browsing and (outcome.stopped is not None or unready):
            # where a dry run stops, and a resource its steps act on that it did not provision, its reason says
            unready = None
        else:
            unready = self.lead_in_failed(task, outcome) or unready
        unready = outcome.environment or outcome.refusal or unready
        if task.procedure.lead_in:  # the parts run first are judged in their own results
            outcome.findings = [f for f in outcome.findings if not is_lead_step(f.step)]
        verdict = decide(outcome.findings, goal_reached=goal, environment_error=unready)
        if outcome.budget and verdict is not Verdict.DRIFT:
            verdict = Verdict.INCONCLUSIVE
        steps = self.step_outcomes(task, outcome)
        untaken = self.untaken(task, outcome, steps) if verdict is Verdict.FAIL else None
        if untaken:
            verdict = Verdict.INCONCLUSIVE
        if verdict is Verdict.ENV_ERROR and unready:
            reason = unready
        elif browsing and verdict is Verdict.INCONCLUSIVE:
            reason = self.dry_run_reason(task, outcome, steps)
        elif untaken:
            said = f" ({outcome.done.message})" if outcome.done is not None and outcome.done.message else ""
            reason = (f"{check.reason if check else 'goal not reached'}; the model ended the procedure{said} before "
                      f"step {untaken}, which it never took: a goal the doc's last steps were not taken for is no "
                      "failure of the doc")
        else:
            reason = self.reason(verdict, outcome, check)
        result = ProcedureResult(
            id=task.id, title=task.procedure.title, path=task.procedure.path, line=task.procedure.line,
            verdict=verdict, reason=reason, findings=outcome.findings,
            steps=steps, turns=outcome.turns, check=check, goal_reached=goal,
            started_at=datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
            browser_s=outcome.browser_s, context=dict(task.context),
            criteria=[c.to_dict() for c in task.criteria], env_error=unready, usage=outcome.usage,
            dry_run=True if self.limits.dry_run else None, stopped=outcome.stopped,
        )
        return result

    @staticmethod
    def dry_run_reason(task: Task, outcome: Outcome, steps: Sequence[StepOutcome]) -> str:
        """Why a dry run without drift is INCONCLUSIVE: where it stopped and what it
        followed before ("dry run: stopped before step 4 (click button 'OK': ...); steps 1-3
        followed as written"), or why it ended before any change."""
        statuses = [(step.number, step.status.value) for step in steps]
        stopped = outcome.stopped
        if stopped is not None:
            where = f" at {task.procedure.path}:{stopped.line}" if stopped.line else ""
            before = f"step {stopped.step}{where} " if stopped.step else ""
            head = f"dry run: stopped before {before}({stopped.action}: {stopped.effect})"
            if stopped.step and is_lead_step(stopped.step):  # in a part of the doc run first
                part = task.procedure.lead_in[min(lead_part(stopped.step) or 1, len(task.procedure.lead_in)) - 1]
                return as_written(f"{head} in the part it goes on from, '{part}'; its own steps were not reached")
            return f"{head}; {followed_before(statuses, stopped.step)}"
        if outcome.budget:
            return f"dry run: {outcome.budget}"
        done = outcome.done
        if done is not None and done.status == "success":
            return ("dry run: every step followed as written, and none changes the console's state (a dry run "
                    "checks no audit log)")
        ended = next((number for number, status in statuses if status == StepStatus.NOT_REACHED.value), None)
        why = done.message if done is not None and done.message else "the policy stopped"
        if done is not None and done.environment:
            why += " (a dry run provisions nothing: what `requires:` declares is not made)"
        return as_written(f"dry run: {why}; {followed_before(statuses, ended)}")

    @staticmethod
    def lead_in_failed(task: Task, outcome: Outcome) -> str | None:
        """Why the procedure's own steps were never reached: a part of the doc run before it
        (``lead_in``) got stuck; None when they were."""
        if not task.procedure.lead_in or any(turn.step and not is_lead_step(turn.step) for turn in outcome.turns):
            return None  # the part's own steps were reached (what drifted before them is that part's finding)
        # the part it got stuck in (the last one reached), and what drifted there last
        last = next((turn.step for turn in reversed(outcome.turns) if turn.step), "")
        number = lead_part(last) or 1
        drift = next((f for f in reversed(outcome.findings) if lead_part(f.step) == number and f.kind.is_drift), None)
        part = task.procedure.lead_in[min(number, len(task.procedure.lead_in)) - 1]
        stopped = outcome.done.message if outcome.done is not None else None
        why = f"{drift.path}:{drift.line}: {drift.message}" if drift is not None else (stopped or outcome.budget or "stuck")
        why = as_written(why)  # that part's own step number
        return (f"not judged: the part of the doc it goes on from, '{part}', did not get through here ({why}); "
                "that part's own result has the finding")

    @staticmethod
    def reason(verdict: Verdict, outcome: Outcome, check: CheckResult | None) -> str:
        drift = [f for f in outcome.findings if f.kind.is_drift]
        if verdict is Verdict.ENV_ERROR and outcome.done is not None and outcome.done.message:
            return outcome.done.message
        if verdict is Verdict.DRIFT:
            first = drift[0]
            more = f" (+{len(drift) - 1} more)" if len(drift) > 1 else ""
            return f"{first.path}:{first.line}: {first.message}{more}"
        if outcome.budget:
            return outcome.budget
        if check is None:
            return ("no success criteria: add an `expect:` annotation (audit events) or configure a checker "
                    "that judges without them")
        if verdict is Verdict.FAIL and outcome.done is not None and outcome.done.status == "blocked":
            return f"{outcome.done.message}; {check.reason}"
        unfollowed = list(dict.fromkeys(f.step for f in outcome.findings if not f.kind.is_drift))
        if verdict is Verdict.INCONCLUSIVE and check.goal_reached is False and unfollowed:
            return (f"{check.reason}; step(s) {', '.join(unfollowed)} could not be followed literally and may be "
                    "what reaches the goal (a model policy, --policy hybrid, can take them)")
        return check.reason

    @staticmethod
    def untaken(task: Task, outcome: Outcome, steps: Sequence[StepOutcome]) -> str | None:
        """The doc's last required step, when a model ended the procedure before taking it
        (nor any of its sub-steps or alternatives): then a goal not reached is the model's
        giving up early, not the doc's failure. None when it was taken, or the procedure
        did not end by a model's answer."""
        if outcome.done is None or outcome.done.by != "model":
            return None
        status = {step.number: step.status for step in steps}

        def taken(step: Step) -> bool:
            inner = [*step.substeps, *(s for alternative in step.alternatives for s in alternative.steps)]
            return status.get(step.number, StepStatus.NOT_REACHED) is not StepStatus.NOT_REACHED or any(
                taken(s) for s in inner)

        required = [step for step in task.procedure.steps if not (step.optional or step.conditional)
                    and not (task.procedure.lead_in and is_lead_step(step.number))]
        return required[-1].number if required and not taken(required[-1]) else None

    @staticmethod
    def step_outcomes(task: Task, outcome: Outcome) -> list[StepOutcome]:
        by_step: dict[str, list[Finding]] = {}
        for finding in outcome.findings:
            by_step.setdefault(finding.step, []).append(finding)
        acted = {turn.step for turn in outcome.turns if turn.action.get("kind") != "stop"}  # a stop took nothing
        steps = []
        for step in task.procedure.all_steps():
            if task.procedure.lead_in and is_lead_step(step.number):
                continue  # a part of the doc run first: its own result has its steps
            findings = by_step.get(step.number, [])
            if any(f.kind.is_drift for f in findings):
                status = StepStatus.DRIFTED
            elif findings:
                status = StepStatus.NOT_VERIFIABLE
            else:
                status = outcome.step_status.get(step.number) or (
                    StepStatus.FOLLOWED if step.number in acted else StepStatus.NOT_REACHED)
            steps.append(StepOutcome(step.number, step.line, step.text, status, findings))
        return steps


def not_started_spent(task: Task, meter: Any) -> ProcedureResult:
    """The result of a procedure not started because the run's cost budget (``meter``'s,
    a :class:`~docverify.cost.CostMeter`) was spent: INCONCLUSIVE."""
    budget = meter.budget
    return unfinished(task, f"not run: the cost budget ({budget.describe() if budget else ''}) was spent before it "
                            "started (--budget)", time.time(), verdict=Verdict.INCONCLUSIVE)


def unfinished(task: Task, message: str, started: float, duration: float = 0.0, *,
               verdict: Verdict = Verdict.ENV_ERROR) -> ProcedureResult:
    """The result of a procedure that was not run to its end, or not at all: ENV_ERROR
    (the environment's doing), or INCONCLUSIVE (a plugin's bug, a spent budget), with
    ``message`` as the reason and every step not reached."""
    return ProcedureResult(
        id=task.id, title=task.procedure.title, path=task.procedure.path, line=task.procedure.line,
        verdict=verdict, reason=message, env_error=message if verdict is Verdict.ENV_ERROR else None,
        started_at=datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
        duration_s=duration, context=dict(task.context), criteria=[c.to_dict() for c in task.criteria],
        steps=[StepOutcome(s.number, s.line, s.text, StepStatus.NOT_REACHED) for s in task.procedure.all_steps()],
    )


def finish(task: Task, result: ProcedureResult, on_result: Callable[[Task, ProcedureResult], None] | None,
           reporters: Sequence[Any]) -> ProcedureResult:
    """Where a result leaves the run (the results store, the reporters): whatever a page,
    an error or a model echoed, no registered secret leaves with it. Returns the result
    as it left."""
    if known_secrets():
        result = scrub_object(result)
    if on_result is not None:
        on_result(task, result)
    for reporter in reporters:
        reporter.procedure_finished(result)
    return result
