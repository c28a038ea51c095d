"""The executor family: browser lifecycle, observations, applying actions.

An executor opens once per run (:meth:`Executor.open`: one browser) and gives
each procedure its own isolated :class:`Session` (one browser context, logged in
as the leased account). Everything is async so ``--jobs N`` sessions share one
event loop and one browser.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol

from docverify.console import ConsoleEndpoint, LoginForm
from docverify.execute.actions import Action, ActionResult, Observation
from docverify.registry import Plugin

#: The browser locale a procedure runs in, by the language its document is written in.
LOCALES = {"en": "en-US", "zh": "zh-CN"}


def browser_locale(language: str | None) -> str | None:
    """The browser locale for a procedure written in ``language`` (``en``, ``zh``);
    None for a language without one (the executor's default)."""
    return LOCALES.get(language or "")


def artifact_name(text: str) -> str:
    """A file-system-safe name for a procedure id (screenshots, traces)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:120]


class Session(Protocol):
    """One procedure's browser context."""

    async def observe(self, *, screenshot: bool = False) -> Observation:
        """The page as it is now (waits for it to settle first)."""

    async def apply(self, action: Action) -> ActionResult:
        """Do one page action (never FLAG_STEP/DONE); a failure is an ``ActionResult``
        with ``ok=False``, not an exception. A broken browser raises
        :class:`~docverify.errors.EnvironmentProblem`, and so does an action that keeps
        timing out (tried again with a longer limit) while the page shows nothing that
        explains it: a slow console, not the doc."""

    async def screenshot(self, path: Path) -> None:
        """Save a screenshot of the page (what the viewport shows) to ``path``: JPEG
        when its name ends in ``.jpg``, else PNG."""

    async def bounding_box(self, ref: str) -> dict[str, float] | None:
        """Where the element ``ref`` of the latest observation's snapshot is in what a
        screenshot shows now: ``x``, ``y``, ``width``, ``height`` as fractions (0-1) of
        the viewport; None when it is not on the page or out of view. Optional: the
        runner outlines a finding's element with it where the session has it."""

    def keep_trace(self, path: Path) -> bool:
        """Keep this session's trace at ``path`` when it closes; False when it records none."""


class ExecutorRun(Protocol):
    """An open executor: one browser for the run."""

    def session(self, name: str, login: LoginForm | None = None, *,
                locale: str | None = None) -> AbstractAsyncContextManager[Session]:
        """A fresh, logged-in session; leaving it closes the context. ``login``: sign
        in as this account instead of the endpoint's (a task's leased account).
        ``locale``: the browser's language for this session (a BCP 47 tag such as
        ``zh-CN``: ``navigator.language`` and ``Accept-Language``), so a console that
        speaks the procedure's language shows it; None keeps the executor's default."""


class Executor(Plugin):
    """Base class of executor plugins."""

    async def warm_up(self) -> None:
        """Optional: start what needs no console (the browser) before :meth:`open`, on
        the loop the run will use, while the run still loads and parses; ``open`` then
        takes it over. A failure here is raised by ``open``, so it reaches the run where
        a failure to start would. What ``open`` never took over, :meth:`cool_down` closes."""

    async def cool_down(self) -> None:
        """Close what :meth:`warm_up` started and no :meth:`open` took over."""

    def open(self, endpoint: ConsoleEndpoint, artifacts: Path) -> AbstractAsyncContextManager[ExecutorRun]:
        """Start the browser for a run against ``endpoint``; artifacts (traces,
        screenshots) go under ``artifacts``. Leaving the context closes everything."""
        raise NotImplementedError
