"""Fake plugins for tests, registered through the plugin manager as a third party's
would be (``load_plugins(extra=[fake_plugins])``): a console of a few scripted pages,
an executor that shows them as accessibility snapshots and follows their links and
buttons, and a checker that decides from the page the procedure ended on.

With them, ``CheckRun`` and the runner run whole procedures without Chromium or the
sandbox: the wiring (plugins from the configuration, policy, checker, verdicts,
findings on doc lines) is tested in milliseconds.

A site is ``{path: (title, [(role, name, target), ...])}``; a target is the path that
clicking the element opens, or None for an element that does nothing (a textbox
keeps what is filled in).
"""

from __future__ import annotations

from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import AsyncIterator, Iterator

from docverify.check.checker import Checker, Evidence
from docverify.console import Console, ConsoleEndpoint
from docverify.execute.actions import Action, ActionKind, ActionResult, Observation
from docverify.execute.executor import Executor
from docverify.hookspecs import hookimpl
from docverify.report.trajectory import CheckResult

Page = tuple[str, list[tuple[str, str, "str | None"]]]
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

    def __init__(self) -> None:
        self.path = "/"
        self.values: dict[str, str] = {}
        self.refs: dict[str, tuple[str, str, str | None]] = {}

    async def observe(self, *, screenshot: bool = False) -> Observation:
        title, elements = SITE.get(self.path, ("Not Found", []))
        self.refs = {f"e{index}": element for index, element in enumerate(elements, 1)}
        lines = [f'- heading "{title}" [level=1]']
        for ref, (role, name, _) in self.refs.items():
            value = f": {self.values[name]}" if name in self.values else ""
            lines.append(f'- {role} "{name}" [ref={ref}]{value}')
        return Observation(url=URL + self.path, title=title, snapshot="\n".join(lines))

    async def apply(self, action: Action) -> ActionResult:
        element = self.refs.get(action.ref or "")
        if element is None:
            return ActionResult(False, f"no element {action.ref} on the page")
        role, name, target = element
        if action.kind is ActionKind.FILL:
            self.values[name] = action.value or ""
        elif action.kind is ActionKind.CLICK and target is not None:
            self.path = target
        return ActionResult(True, None, 0.001)

    async def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")

    def keep_trace(self, path: Path) -> bool:
        return False


class FakeRun:
    @asynccontextmanager
    async def session(self, name: str, login=None, *, locale: str | None = None) -> AsyncIterator[FakeSession]:
        yield FakeSession()


class FakeExecutor(Executor):
    """Shows the scripted site as accessibility snapshots; clicks follow its targets."""

    name = "fake-browser"

    @asynccontextmanager
    async def open(self, endpoint: ConsoleEndpoint, artifacts: Path) -> AsyncIterator[FakeRun]:
        yield FakeRun()


class PageChecker(Checker):
    """Goal reached when the procedure ended on the goal page (``GOAL``)."""

    name = "fake-goal"

    async def check(self, evidence: Evidence) -> CheckResult:
        reached = evidence.final is not None and evidence.final.url == URL + GOAL
        return CheckResult(self.name, reached, f"ended on {evidence.final.url if evidence.final else 'nothing'}")


@hookimpl
def register_consoles(register):
    register(FakeConsole)


@hookimpl
def register_executors(register):
    register(FakeExecutor)


@hookimpl
def register_checkers(register):
    register(PageChecker)
