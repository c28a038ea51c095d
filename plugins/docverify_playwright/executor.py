"""The ``playwright`` executor: one Chromium per run, one context per procedure.

- The browser is found by :func:`docverify.browser.find_browser` (Playwright's own,
  ``DOCVERIFY_BROWSER``/``--browser-path``, or a system Chromium).
- Signing in happens once per run; every context starts from that storage state,
  so a procedure's session is logged in without paying for the form again.
- Each session's context has the locale of its procedure (``zh-CN`` for a Chinese
  doc): its ``Accept-Language`` asks the console for that language. Signing in
  happens in English (the login form's labels are); a console that keeps a chosen
  language in a cookie (the sandbox's ``aliyun_lang``) sets none at sign-in, so the
  shared cookies leave each session's locale in charge.
- The browser reaches only the console's origins: any other request is aborted
  and named in the next observation's error.
- Actions address elements by the snapshot's refs (``aria-ref=e12``). Every action
  has a timeout; a failed action is an :class:`ActionResult` with the error, never
  an exception. A dead browser or context is an ``EnvironmentProblem``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Literal
from urllib.parse import urljoin, urlsplit

from pydantic import Field

from docverify.actions import Action, ActionKind, ActionResult, Observation
from docverify.browser import CHROMIUM_ARGS, find_browser
from docverify.console import ConsoleEndpoint, LoginForm, origin
from docverify.errors import CredentialsRejected, EnvironmentProblem
from docverify.executor import Executor, artifact_name

#: Elements that say the page is still busy.
BUSY = '[aria-busy="true"], .spinner, .loading:not([hidden])'
#: Error texts that mean the browser, not the page, is gone.
DEAD = ("Target page, context or browser has been closed", "Browser has been closed", "Target closed",
        "browser has disconnected", "Connection closed")


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def is_dead(error: BaseException) -> bool:
    return any(marker.lower() in str(error).lower() for marker in DEAD)


class PlaywrightExecutor(Executor):
    """Chromium through Playwright: contexts per procedure, refs from the accessibility snapshot."""

    name = "playwright"

    class Options(Executor.Options):
        browser_path: str | None = Field(None, description="Chromium executable (env DOCVERIFY_BROWSER)")
        headed: bool = Field(False, description="show the browser window")
        slow_mo_ms: int = Field(0, ge=0, le=10_000, description="pause after every browser operation")
        action_timeout_s: float = Field(5.0, gt=0, le=300, description="limit for one action")
        navigation_timeout_s: float = Field(20.0, gt=0, le=600, description="limit for a page load")
        settle_timeout_s: float = Field(5.0, ge=0, le=120, description="how long to wait for spinners to go")
        trace: Literal["off", "on", "on-failure"] = Field(
            "off", description="Playwright trace per procedure; 'on-failure' keeps it only for procedures that "
                               "did not pass (docverify check turns that on with --report html)")
        viewport_width: int = Field(1280, ge=320, le=7680, description="page width in CSS pixels")
        viewport_height: int = Field(900, ge=240, le=4320, description="page height in CSS pixels")

    @asynccontextmanager
    async def open(self, endpoint: ConsoleEndpoint, artifacts: Path) -> AsyncIterator["PlaywrightRun"]:
        try:
            from playwright.async_api import async_playwright
        except ImportError:
            raise EnvironmentProblem(
                "the playwright executor needs Playwright", hint="pip install 'docverify[browser]'"
            ) from None
        playwright = await async_playwright().start()
        try:
            binary = find_browser(self.options.browser_path, playwright_path=_own_browser(playwright))

            async def launch() -> Any:
                try:
                    return await playwright.chromium.launch(
                        executable_path=binary.path, args=list(CHROMIUM_ARGS), headless=not self.options.headed,
                        slow_mo=self.options.slow_mo_ms,
                    )
                except Exception as error:
                    raise EnvironmentProblem(
                        f"could not launch {binary.path} (found by {binary.found_by}): {first_line(error)}",
                        hint="check that the browser runs here, or point --browser-path at another Chromium",
                    ) from None

            run = PlaywrightRun(self.options, endpoint, await launch(), artifacts, launch)
            try:
                await run.sign_in()
                yield run
            finally:
                await run.close()
        finally:
            await playwright.stop()


def _own_browser(playwright: Any) -> str | None:
    try:
        return playwright.chromium.executable_path
    except Exception:  # Playwright without its browsers installed
        return None


#: a context's storage state with no cookies: a session of nobody, for signing in
SIGNED_OUT: dict[str, Any] = {"cookies": [], "origins": []}
#: the locale of sign-in contexts: the login form's labels (LoginForm) are English
SIGN_IN_LOCALE = "en-US"


class PlaywrightRun:
    """One browser for the run; hands out logged-in sessions."""

    def __init__(self, options: PlaywrightExecutor.Options, endpoint: ConsoleEndpoint, browser: Any,
                 artifacts: Path, launch: Callable[[], Awaitable[Any]]) -> None:
        self.options = options
        self.launch = launch
        self.relaunching = asyncio.Lock()
        self.endpoint = endpoint
        self.browser = browser
        self.artifacts = artifacts
        self.allowed = {origin(o) for o in (*endpoint.origins, endpoint.url)}
        allowed = "|".join(re.escape(o) + "(?:[/?#]|$)" for o in sorted(self.allowed))
        self.outside = re.compile(f"^(?!(?:{allowed}|data:|blob:|about:))")
        self.storage_state: dict[str, Any] | None = None  #: the endpoint's own account, signed in at open
        self.states: dict[tuple[str, str, str], dict[str, Any]] = {}  #: other accounts' (leased per task)
        self.signing_in = asyncio.Lock()
        self.contexts: set[Any] = set()

    async def new_context(self, storage_state: dict[str, Any] | None = None, locale: str | None = None) -> Any:
        """A browser context from ``storage_state`` (default: the endpoint's signed-in
        one), in ``locale`` (``navigator.language`` and ``Accept-Language``; None: the
        browser's own)."""
        if not self.browser.is_connected():
            await self.relaunch()
        context = await self.browser.new_context(
            storage_state=storage_state if storage_state is not None else self.storage_state,
            viewport={"width": self.options.viewport_width, "height": self.options.viewport_height},
            locale=locale,
        )
        context.set_default_timeout(self.options.action_timeout_s * 1000)
        context.set_default_navigation_timeout(self.options.navigation_timeout_s * 1000)
        self.contexts.add(context)
        return context

    async def relaunch(self) -> None:
        """A browser that crashed is started again, so the rest of the run goes on
        (the procedure it crashed in is an ENV_ERROR)."""
        async with self.relaunching:
            if self.browser.is_connected():
                return
            self.contexts.clear()
            self.browser = await self.launch()

    async def sign_in(self) -> None:
        """Sign in once through the console's form; keep the cookies for every session."""
        if self.endpoint.login is not None:
            self.storage_state = await self.signed_in(self.endpoint.login)

    async def state_for(self, login: LoginForm) -> dict[str, Any] | None:
        """The cookies of ``login``'s account: signed in once, then reused."""
        if login == self.endpoint.login:  # the same account, password included
            return self.storage_state
        key = (login.url, login.user, login.password)
        async with self.signing_in:
            if key not in self.states:
                self.states[key] = await self.signed_in(login)
            return self.states[key]

    async def signed_in(self, login: LoginForm) -> dict[str, Any]:
        """Sign in through the console's form as ``login``; the context's storage state."""
        context = await self.new_context(SIGNED_OUT, SIGN_IN_LOCALE)
        try:
            page = await context.new_page()
            try:
                await page.goto(login.url)
            except Exception as error:
                raise EnvironmentProblem(
                    f"the console at {login.url} is unreachable: {first_line(error)}",
                    hint="is the console running? check [console] in docverify.toml",
                ) from None
            try:
                await page.get_by_role("textbox", name=login.user_label, exact=True).fill(login.user)
                await page.get_by_role("textbox", name=login.password_label, exact=True).fill(login.password)
                await page.get_by_role("button", name=login.submit_label, exact=True).click()
                await page.wait_for_load_state("domcontentloaded")
            except Exception as error:
                raise EnvironmentProblem(f"signing in at {login.url} failed: {first_line(error)}") from None
            if urlsplit(page.url).path == urlsplit(login.url).path:
                alert = page.get_by_role("alert")
                reason = (await alert.first.inner_text()).strip() if await alert.count() else "still on the sign-in page"
                raise CredentialsRejected(f"signing in at {login.url} as {login.user} failed: {reason}",
                                          hint="check the account's user name and password")
            return await context.storage_state()
        finally:
            await self._close_context(context)

    @asynccontextmanager
    async def session(self, name: str, login: LoginForm | None = None, *,
                      locale: str | None = None) -> AsyncIterator["PlaywrightSession"]:
        context = await self.new_context(await self.state_for(login) if login is not None else None, locale)
        session = PlaywrightSession(self, context, name)
        try:
            await session.begin()
            yield session
        finally:
            await session.end()
            await self._close_context(context)

    async def _close_context(self, context: Any) -> None:
        self.contexts.discard(context)
        try:
            await context.close()
        except Exception:  # already gone with the browser
            pass

    async def close(self) -> None:
        for context in list(self.contexts):
            await self._close_context(context)
        try:
            await self.browser.close()
        except Exception:
            pass


class PlaywrightSession:
    """One procedure's context and page."""

    def __init__(self, run: PlaywrightRun, context: Any, name: str) -> None:
        self.run = run
        self.context = context
        self.name = name
        self.page: Any = None
        self.blocked: list[str] = []
        self.trace_to: Path | None = None
        self.tracing = run.options.trace != "off"

    async def begin(self) -> None:
        # Only requests outside the allowed origins match, and the pattern is matched in
        # Playwright's driver: the console's own requests are never intercepted (no
        # round trip through Python, and the HTTP cache stays on).
        await self.context.route(self.run.outside, self._block)
        if self.tracing:
            await self.context.tracing.start(screenshots=True, snapshots=True, title=self.name)
        self.page = await self.context.new_page()
        home = self.run.endpoint.home or self.run.endpoint.url
        try:
            await self.page.goto(home)
        except Exception as error:
            if is_dead(error):
                raise EnvironmentProblem(f"the browser died opening {home}") from None
            raise EnvironmentProblem(f"the console at {home} is unreachable: {first_line(error)}",
                                     hint="is the console running?") from None

    async def end(self) -> None:
        if not self.tracing:
            return
        keep = self.trace_to if self.run.options.trace == "on-failure" else (
            self.trace_to or self.run.artifacts / f"{artifact_name(self.name)}.trace.zip")
        try:
            if keep is not None:
                keep.parent.mkdir(parents=True, exist_ok=True)
                await self.context.tracing.stop(path=str(keep))
            else:
                await self.context.tracing.stop()
        except Exception:  # a dead context has no trace to give
            pass

    def keep_trace(self, path: Path) -> bool:
        self.trace_to = path
        return self.tracing

    async def _block(self, route: Any) -> None:
        self.blocked.append(route.request.url)
        await route.abort("blockedbyclient")

    # -- observing -------------------------------------------------------------------

    async def settle(self) -> str:
        """Wait for the document to load and spinners to go (returns at once on a quiet
        page); returns the page title."""
        page = self.page
        probe = f"() => [document.title, !!document.querySelector({BUSY!r})]"
        try:
            await page.wait_for_load_state("domcontentloaded")
            title, busy = await page.evaluate(probe)
            if busy and self.run.options.settle_timeout_s:
                try:
                    await page.wait_for_function(f"() => !document.querySelector({BUSY!r})",
                                                 timeout=self.run.options.settle_timeout_s * 1000)
                except Exception as error:
                    if is_dead(error):
                        raise
                    # a page that stays busy is observed as it is
                title = await page.title()
            return title
        except Exception as error:
            if is_dead(error):
                raise EnvironmentProblem("the browser died while the page loaded") from None
            raise

    async def observe(self, *, screenshot: bool = False) -> Observation:
        page = self.page
        for attempt in range(3):
            try:
                title = await self.settle()
                snapshot = await page.aria_snapshot(mode="ai")
                shot = await page.screenshot(type="png") if screenshot else None
                break
            except EnvironmentProblem:
                raise
            except Exception as error:
                if is_dead(error):
                    raise EnvironmentProblem("the browser died while observing the page") from None
                if attempt == 2:  # the page kept navigating away under us
                    raise EnvironmentProblem(f"could not observe {page.url}: {first_line(error)}") from None
        error = None
        if self.blocked:
            error = "blocked requests outside the console: " + ", ".join(self.blocked[:3])
            self.blocked.clear()
        return Observation(url=page.url, title=title, snapshot=snapshot, error=error, screenshot=shot)

    async def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            await self.page.screenshot(path=str(path), type="png")
        except Exception as error:
            if is_dead(error):
                raise EnvironmentProblem("the browser died taking a screenshot") from None

    # -- acting ----------------------------------------------------------------------

    async def apply(self, action: Action) -> ActionResult:
        started = time.perf_counter()
        try:
            await self._apply(action)
        except EnvironmentProblem:
            raise
        except Exception as error:
            if is_dead(error):
                raise EnvironmentProblem(f"the browser died during '{action.describe()}'") from None
            message = first_line(error)
            if action.secret and action.value:
                message = message.replace(action.value, "••••••")
            return ActionResult(False, message, time.perf_counter() - started)
        return ActionResult(True, None, time.perf_counter() - started)

    async def _apply(self, action: Action) -> None:
        page = self.page
        timeout = self.run.options.action_timeout_s * 1000
        element = page.locator(f"aria-ref={action.ref}") if action.ref else None
        if element is not None and not await element.count():
            raise LookupError(f"no element {action.ref} on the page: refs come from the latest snapshot")
        match action.kind:
            case ActionKind.CLICK:
                await element.click(timeout=timeout)
            case ActionKind.FILL:
                await element.fill(action.value, timeout=timeout)
            case ActionKind.SELECT:
                await self._select(element, action.value, timeout)
            case ActionKind.CHECK:
                await element.check(timeout=timeout)
            case ActionKind.UNCHECK:
                await element.uncheck(timeout=timeout)
            case ActionKind.PRESS:
                if element is not None:
                    await element.press(action.value, timeout=timeout)
                else:
                    await page.keyboard.press(action.value)
            case ActionKind.GOTO:
                # a doc's link into the console this one stands in for opens the same page here
                url = self.run.endpoint.local(action.value) or urljoin(self.run.endpoint.url + "/", action.value)
                if origin(url) not in self.run.allowed:
                    raise ValueError(f"{url} is outside the console ({', '.join(sorted(self.run.allowed))})")
                await page.goto(url)
            case ActionKind.SCROLL:
                if element is not None:
                    await element.scroll_into_view_if_needed(timeout=timeout)
                else:
                    await page.mouse.wheel(0, -600 if action.value == "up" else 600)
            case ActionKind.WAIT_FOR:
                await page.get_by_text(action.value).first.wait_for(timeout=timeout)
            case ActionKind.BACK:
                await page.go_back()
            case _:
                raise ValueError(f"{action.kind.value} is not a page action")

    async def _select(self, element: Any, value: str, timeout: float) -> None:
        """A native <select> by option label (then value); a custom combobox by
        opening it and clicking the option."""
        tag = await element.evaluate("e => e.tagName", timeout=timeout)
        if tag == "SELECT":
            try:
                await element.select_option(label=value, timeout=timeout)
            except Exception:
                await element.select_option(value=value, timeout=timeout)
            return
        await element.click(timeout=timeout)
        await self.page.get_by_role("option", name=value, exact=True).first.click(timeout=timeout)

