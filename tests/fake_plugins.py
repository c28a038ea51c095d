"""Fake plugins for tests, registered through the plugin manager as a third party's
would be (``load_plugins(extra=[fake_plugins])``): a console of a few scripted pages,
an executor that shows them as accessibility snapshots and follows their links and
buttons, a checker that decides from the page the procedure ended on, and a model
engine (``fake``) that answers from a queue of scripted replies.

With them, ``CheckRun`` and the runner run whole procedures without Chromium or the
sandbox: the wiring (plugins from the configuration, policy, checker, verdicts,
findings on doc lines, results store, reports, exit codes) is tested in milliseconds.

A site is ``{path: (title, [(role, name, target), ...])}``; a target is the path that
clicking the element opens, None for an element that does nothing (a textbox keeps
what is filled in), an exception that clicking it raises (an
:class:`~docverify.errors.EnvironmentProblem`: the page timed out, the browser died),
or a function of the session (async or not) that returns the path.

Not registered (tests build the runner's stages with them): :class:`ScriptedPolicy`,
queued actions per procedure, and :class:`AnswerChecker`, an answer per procedure.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import math
import os
import signal
import sys
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator

from pydantic import Field as Option

from docverify.check.checker import Checker, Evidence
from docverify.console import Console, ConsoleEndpoint
from docverify.engines import Completion, Engine
from docverify.execute.actions import NEEDS_REF, Action, ActionKind, ActionResult, Observation
from docverify.execute.executor import Executor
from docverify.execute.policy import Episode, Policy
from docverify.hookspecs import hookimpl
from docverify.report.trajectory import CheckResult

Page = tuple[str, list[tuple[str, str, Any]]]
URL = "http://fake.console"

#: the site every fake run uses; tests set it (``fake_plugins.SITE = {...}``)
SITE: dict[str, Page] = {}
#: the path the fake checker counts as the goal
GOAL = "/done"


class FakeConsole(Console):
    """A console of scripted pages (no server, no sign-in)."""

    name = "fake-console"

    @contextmanager
    def start(self) -> Iterator[ConsoleEndpoint]:
        yield ConsoleEndpoint(url=URL, api_url="", audit_url="", home=URL + "/")


class FakeSession:
    """One procedure on the scripted site."""

    def __init__(self, name: str = "", *, trace: bool = False) -> None:
        self.name = name
        self.trace = trace
        self.path = "/"
        self.values: dict[str, str] = {}
        self.refs: dict[str, tuple[str, str, Any]] = {}
        self.history: list[str] = []  #: the paths before, for back
        self.applied: list[Action] = []  #: every action applied, in order

    async def observe(self, *, screenshot: bool = False) -> Observation:
        title, elements = SITE.get(self.path, ("Not Found", []))
        self.refs = {f"e{index}": element for index, element in enumerate(elements, 1)}
        lines = [f'- heading "{title}" [level=1]']
        for ref, (role, name, _) in self.refs.items():
            value = f": {self.values[name]}" if name in self.values else ""
            lines.append(f'- {role} "{name}" [ref={ref}]{value}')
        return Observation(url=URL + self.path, title=title, snapshot="\n".join(lines),
                           screenshot=self.picture() if screenshot else None)

    async def apply(self, action: Action) -> ActionResult:
        self.applied.append(action)
        if action.kind not in NEEDS_REF:
            return self.elsewhere(action)
        element = self.refs.get(action.ref or "")
        if element is None:
            return ActionResult(False, f"no element {action.ref} on the page")
        role, name, target = element
        if action.kind is ActionKind.FILL:
            self.values[name] = action.value or ""
        elif action.kind is ActionKind.CLICK:
            if isinstance(target, BaseException):
                raise target
            if callable(target):
                target = target(self)
                if inspect.isawaitable(target):
                    target = await target
            if target is not None:
                self.history.append(self.path)
                self.path = target
        return ActionResult(True, None, 0.001)

    def elsewhere(self, action: Action) -> ActionResult:
        """An action on no element: goto and back move, wait_for looks for its text, scroll
        and press change nothing."""
        if action.kind is ActionKind.GOTO:
            self.history.append(self.path)
            self.path = (action.value or "/").removeprefix(URL) or "/"
        elif action.kind is ActionKind.BACK and self.history:
            self.path = self.history.pop()
        elif action.kind is ActionKind.WAIT_FOR:
            title, elements = SITE.get(self.path, ("Not Found", []))
            if not any(action.value and action.value in text for text in (title, *(n for _, n, _ in elements))):
                return ActionResult(False, f"'{action.value}' did not appear")
        return ActionResult(True, None, 0.001)

    def picture(self) -> bytes:
        """What a screenshot shows: the same bytes for the same page and values."""
        return f"{self.path} {sorted(self.values.items())}".encode()

    async def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.picture())

    async def bounding_box(self, ref: str) -> dict[str, float] | None:
        """Element ``eN`` is the N-th band of the page (:func:`box`)."""
        return box(int(ref[1:])) if ref in self.refs else None

    def keep_trace(self, path: Path) -> bool:
        if not self.trace:
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"trace of {self.name}".encode())
        return True


def box(index: int) -> dict[str, float]:
    """Where the fake page shows its ``index``-th element (1-based), as fractions of the viewport."""
    return {"x": 0.1, "y": round(0.05 * index, 2), "width": 0.3, "height": 0.04}


class FakeRun:
    def __init__(self, trace: bool = False) -> None:
        self.trace = trace
        self.sessions: dict[str, FakeSession] = {}  #: by procedure (task id)

    @asynccontextmanager
    async def session(self, name: str, login=None, *, locale: str | None = None) -> AsyncIterator[FakeSession]:
        session = self.sessions[name] = FakeSession(name, trace=self.trace)
        yield session


class FakeExecutor(Executor):
    """Shows the scripted site as accessibility snapshots; clicks follow its targets."""

    name = "fake-browser"

    class Options(Executor.Options):
        trace: bool = Option(False, description="keep a (fake) trace of each procedure that does not pass")

    def __init__(self, options: "FakeExecutor.Options | None" = None) -> None:
        super().__init__(options)
        self.runs: list[FakeRun] = []

    @asynccontextmanager
    async def open(self, endpoint: ConsoleEndpoint, artifacts: Path) -> AsyncIterator[FakeRun]:
        run = FakeRun(trace=self.options.trace)
        self.runs.append(run)
        yield run


class PageChecker(Checker):
    """Goal reached when the procedure ended on the goal page (``GOAL``)."""

    name = "fake-goal"

    async def check(self, evidence: Evidence) -> CheckResult:
        reached = evidence.final is not None and evidence.final.url == URL + GOAL
        return CheckResult(self.name, reached, f"ended on {evidence.final.url if evidence.final else 'nothing'}")


class AnswerChecker(Checker):
    """Says what it is told for each procedure (by title; ``default`` for the rest), for
    tasks with success criteria; records the evidence it was given."""

    name = "fake-answer"

    def __init__(self, answers: dict[str, bool | None] | None = None, default: bool | None = True) -> None:
        super().__init__()
        self.answers = dict(answers or {})
        self.default = default
        self.evidence: dict[str, Evidence] = {}  #: by procedure title

    def applies(self, task) -> bool:
        return bool(task.criteria)

    async def check(self, evidence: Evidence) -> CheckResult:
        title = evidence.task.procedure.title
        self.evidence[title] = evidence
        answer = self.answers.get(title, self.default)
        return CheckResult(self.name, answer, f"fake says {answer}")


# -- a policy of queued actions ----------------------------------------------------------

Step = Action | Callable[[Observation], Action]


class ScriptedEpisode(Episode):
    """Plays its queued actions (a callable gets the observation), then ``done(success)``."""

    def __init__(self, script: list[Step]) -> None:
        super().__init__()
        self.script = list(script)
        self.seen: list[Observation] = []  #: every observation it was shown

    async def next_action(self, observation: Observation) -> Action:
        self.seen.append(observation)
        step = self.script.pop(0) if self.script else Action(ActionKind.DONE, status="success")
        return step(observation) if callable(step) else step


class ScriptedPolicy(Policy):
    """Replays queued actions per procedure title (``scripts[title]``)."""

    name = "fake-script"

    def __init__(self, scripts: dict[str, list[Step]]) -> None:
        super().__init__()
        self.scripts = scripts
        self.episodes: dict[str, ScriptedEpisode] = {}  #: by procedure title

    def start(self, task) -> ScriptedEpisode:
        episode = self.episodes[task.procedure.title] = ScriptedEpisode(self.scripts[task.procedure.title])
        return episode


def click(name: str, step: str = "1") -> Callable[[Observation], Action]:
    """A scripted step: click the element called ``name`` on the page the policy sees."""
    def pick(observation: Observation) -> Action:
        element = next(e for e in observation.elements if e.name == name and e.ref)
        return Action(ActionKind.CLICK, ref=element.ref, target=f"{element.role} '{name}'", step=step)
    return pick


# -- Ctrl-C ------------------------------------------------------------------------------


def main_thread_awaits_the_run() -> bool:
    """Whether the main thread is blocked in :meth:`docverify.run.loop.RunLoop.run`,
    waiting for the run's result: where a Ctrl-C cancels the run."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    where = []
    while frame is not None and len(where) < 3:
        where.append((Path(frame.f_code.co_filename).name, frame.f_code.co_name))
        frame = frame.f_back
    return where == [("threading.py", "wait"), ("_base.py", "result"), ("loop.py", "run")]


async def press_ctrl_c(within: float = 10.0, sig: int = signal.SIGINT) -> None:
    """SIGINT to this process, as a terminal's Ctrl-C (or ``sig``: SIGTERM, as a CI runner
    cancelling a job), once the main thread awaits the run (from the run's loop; a signal
    a moment earlier would interrupt the main thread before it waits, where nothing
    cancels the run)."""
    deadline = time.monotonic() + within
    while not main_thread_awaits_the_run():
        assert time.monotonic() < deadline, "the main thread never waited for the run"
        await asyncio.sleep(0.001)
    os.kill(os.getpid(), sig)


# -- a model engine of scripted replies --------------------------------------------------

#: replies for engines made without a queue of their own (by name, from a plugin's options)
REPLIES: list[Any] = []
#: every FakeEngine made, oldest first: the one a plugin made by name, for its calls
ENGINES: list["FakeEngine"] = []


@dataclass
class Call:
    """What the fake engine was asked once."""

    messages: list[dict[str, Any]]
    schema: dict[str, Any]
    name: str
    max_tokens: int
    temperature: float

    @property
    def user(self) -> str:
        """The text of the last user message."""
        content = next((m["content"] for m in reversed(self.messages) if m.get("role") == "user"), "")
        if isinstance(content, list):
            return "\n".join(part.get("text", "") for part in content)
        return content


class ScriptExhausted(AssertionError):
    """The fake engine was asked more often than its script has replies."""


def text_tokens(text: str) -> int:
    """The fake engine's count of an answer's tokens: one per four characters, rounded up."""
    return math.ceil(len(text) / 4)


class FakeEngine(Engine):
    """Answers from a queue of scripted replies; records every call (engine ``fake``).

    A reply is a JSON string (answered as is), a dict or list (answered as JSON), an
    exception (raised: the endpoint failed) or a function of the :class:`Call` returning
    one of those. Tokens in are :func:`~docverify.engines.estimate_tokens` of the
    messages, tokens out :func:`text_tokens` of the answer: the same for the same call.
    Asked once more than it has replies, it raises :class:`ScriptExhausted` naming the call."""

    name = "fake"
    local = True  #: no price needed

    def __init__(self, replies: list[Any] | None = None, *, model: str = "fake-model") -> None:
        self.model = model
        self.replies = REPLIES if replies is None else list(replies)
        self.calls: list[Call] = []
        self.closed = False
        ENGINES.append(self)

    @classmethod
    def from_endpoint(cls, options: Any) -> "FakeEngine":
        return cls(model=options.model)

    def enqueue(self, *replies: Any) -> None:
        self.replies.extend(replies)

    async def complete(self, messages: list[dict[str, Any]], schema: dict[str, Any], *, name: str,
                       max_tokens: int, temperature: float) -> Completion:
        call = Call(copy.deepcopy(messages), copy.deepcopy(schema), name, max_tokens, temperature)
        self.calls.append(call)
        if not self.replies:
            raise ScriptExhausted(f"fake engine {self.model!r} has no reply left for call {len(self.calls)} "
                                  f"({name}); it was asked: {call.user[-500:]!r}")
        reply = self.replies.pop(0)
        if callable(reply) and not isinstance(reply, BaseException):
            reply = reply(call)
        if isinstance(reply, BaseException):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return Completion(text, self.count_tokens(messages), text_tokens(text), "json_schema")

    def close(self) -> None:
        self.closed = True


@hookimpl
def register_consoles(register):
    register(FakeConsole)


@hookimpl
def register_executors(register):
    register(FakeExecutor)


@hookimpl
def register_checkers(register):
    register(PageChecker)


@hookimpl
def register_engines(register):
    register(FakeEngine)
