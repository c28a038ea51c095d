"""The ``playwright`` executor: one Chromium per run, one context per procedure.

- The browser is found by :func:`docverify_playwright.browser.find_browser` (Playwright's own,
  ``DOCVERIFY_BROWSER``/``--browser-path``, or a system Chromium).
- Signing in happens once per run; every context starts from that storage state,
  so a procedure's session is logged in without paying for the form again.
- Each session's context has the locale of its procedure (``zh-CN`` for a Chinese
  doc): its ``Accept-Language`` asks the console for that language. Signing in
  happens in English (the login form's labels are); a console that keeps a chosen
  language in a cookie (the sandbox's ``aliyun_lang``) sets none at sign-in, so the
  shared cookies leave each session's locale in charge.
- The browser reaches only the console's origins: any other request is aborted
  and named in the next observation's error. An origin ``https://*.example.com``
  allows every host under that domain (a real cloud's console loads from many).
- A console with a logon flow of its own (several pages, challenges, federation)
  gives a :class:`~docverify.console.LoginForm` with a ``browser_sign_in(contexts,
  timeout_s)`` coroutine method: it is handed sign-in browser contexts and answers
  the storage state (``docverify_aliyun.signin.AliyunLogin``).
- Actions address elements by the snapshot's refs (``aria-ref=e12``). Every action
  has a timeout; a failed action is an :class:`ActionResult` with the error, never
  an exception. A dead browser or context is an ``EnvironmentProblem``.
- Limits grow with the console's measured latency (:mod:`docverify_playwright.deadlines`).
  An action or page load that times out is tried once more with a longer limit
  (:meth:`PlaywrightSession.patiently`); one that times out again while the page shows
  nothing that explains it (the element gone, disabled, hidden, covered) is an
  ``EnvironmentProblem`` too: a slow console is no defect of the doc.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Literal
from urllib.parse import urljoin, urlsplit

from pydantic import Field

from docverify.console import ConsoleEndpoint, LoginForm, origin
from docverify.errors import CredentialsRejected, EnvironmentProblem
from docverify.execute.actions import Action, ActionKind, ActionResult, Observation
from docverify.execute.executor import Executor, artifact_name
from docverify_playwright.browser import CHROMIUM_ARGS, find_browser
from docverify_playwright.deadlines import RETRY, Deadlines, Kind
from docverify_playwright.form_sign_in import sign_in_over_http
from docverify_playwright.reveal import RevealedSecrets
from docverify_playwright.trace import scrub_trace

log = logging.getLogger(__name__)
#: Elements that say the page is still busy.
BUSY = '[aria-busy="true"], .spinner, .loading:not([hidden])'
#: The accessible name of the topmost open modal dialog (aria-modal, or a <dialog> shown modal) that
#: is displayed, "" when unnamed; null when none covers the page.
MODAL = """() => {
  const open = [...document.querySelectorAll('[aria-modal="true"], dialog')].filter(d =>
    (d.tagName !== 'DIALOG' || d.matches(':modal')) && d.getClientRects().length > 0 &&
    getComputedStyle(d).visibility !== 'hidden');
  const d = open[open.length - 1];
  if (!d) return null;
  const by = (d.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean);
  return (d.getAttribute('aria-label') ||
          by.map(id => (document.getElementById(id) || {}).textContent || '').join(' ')).trim();
}"""
#: the page's answer when the element acted on is not on it any more
GONE = "the element is not on the page"
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
        latency_factor: float = Field(
            10.0, ge=0, le=100, description="the limits grow to this many times the console's recent latency "
                                            "(a moving average of actions and page loads); 0 keeps them fixed")
        timeout_cap: float = Field(4.0, ge=1, le=20, description="the most the limits grow to, as a multiple of "
                                                                 "action_timeout_s / navigation_timeout_s")
        settle_timeout_s: float = Field(5.0, ge=0, le=120, description="how long to wait for spinners to go")
        trace: Literal["off", "on", "on-failure"] = Field(
            "off", description="Playwright trace per procedure; 'on-failure' keeps it only for procedures that "
                               "did not pass (docverify check turns that on with --report html)")
        viewport_width: int = Field(1280, ge=320, le=7680, description="page width in CSS pixels")
        viewport_height: int = Field(900, ge=240, le=4320, description="page height in CSS pixels")
        trace_screencast: bool = Field(
            False, description="keep the screencast (a film strip of JPEG frames, about 1 MB a procedure) in traces; "
                               "the DOM snapshots of each action are always kept")
        screenshot_quality: int = Field(
            40, ge=1, le=100, description="JPEG quality of the turn screenshots saved as .jpg (docverify check "
                                          "saves JPEG for the html report; PNG files are lossless)")

    _warm: "asyncio.Task[_Browser] | None" = None  #: the browser warm_up started, until open takes it

    async def warm_up(self) -> None:
        self._warm = asyncio.get_running_loop().create_task(self._start())

    async def cool_down(self) -> None:
        warm, self._warm = self._warm, None
        if warm is None:
            return
        try:
            started = await warm
        except BaseException:  # it never started: nothing to close (open would have said why)
            return
        await started.close()

    @asynccontextmanager
    async def open(self, endpoint: ConsoleEndpoint, artifacts: Path) -> AsyncIterator["PlaywrightRun"]:
        warm, self._warm = self._warm, None
        started = await (warm if warm is not None else self._start())
        try:
            run = PlaywrightRun(self.options, endpoint, started.browser, artifacts, started.launch)
            try:
                await run.sign_in()
                yield run
            finally:
                await run.close()
        finally:
            await started.close()

    async def _start(self) -> "_Browser":
        """Playwright's driver started and Chromium launched."""
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

            return _Browser(playwright, await launch(), launch)
        except BaseException:
            await playwright.stop()
            raise


class _Browser:
    """A started Playwright with its Chromium, and how to launch another (a crashed one)."""

    def __init__(self, playwright: Any, browser: Any, launch: Callable[[], Awaitable[Any]]) -> None:
        self.playwright = playwright
        self.browser = browser
        self.launch = launch

    async def close(self) -> None:
        try:
            await self.browser.close()
        except Exception:  # already gone
            pass
        await self.playwright.stop()


def _own_browser(playwright: Any) -> str | None:
    try:
        return playwright.chromium.executable_path
    except Exception:  # Playwright without its browsers installed
        return None


def _origin_pattern(allowed: str) -> str:
    """An allowed origin as a regular expression; ``https://*.example.com`` matches
    every host under example.com."""
    scheme, _, host = allowed.partition("://")
    if host.startswith("*."):
        return re.escape(f"{scheme}://") + r"(?:[A-Za-z0-9-]+\.)+" + re.escape(host[2:])
    return re.escape(allowed)


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
        allowed = "|".join(_origin_pattern(o) + "(?:[/?#]|$)" for o in sorted(self.allowed))
        self.inside = re.compile(f"^(?:{allowed})")
        self.outside = re.compile(f"^(?!(?:{allowed}|data:|blob:|about:))")
        self.storage_state: dict[str, Any] | None = None  #: the endpoint's own account, signed in at open
        self.states: dict[tuple[str, str, str], dict[str, Any]] = {}  #: other accounts' (leased per task)
        self.signing_in = asyncio.Lock()
        self.contexts: set[Any] = set()
        #: how long actions and page loads may take now: run-wide, the load is the machine's
        self.deadlines = Deadlines(options.action_timeout_s, options.navigation_timeout_s,
                                   factor=options.latency_factor, cap=options.timeout_cap)

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
        """Sign in through the console's form as ``login``; the context's storage state.
        A plain HTML form is posted over HTTP (no browser context, no page load); a
        console's own logon flow (``login.browser_sign_in``) gets sign-in contexts."""
        own_flow = getattr(login, "browser_sign_in", None)
        if own_flow is not None:
            return await own_flow(self.sign_in_context, self.options.navigation_timeout_s)
        if login.form_fields is not None:
            return await asyncio.to_thread(sign_in_over_http, login, self.options.navigation_timeout_s)
        async with self.sign_in_context() as context:
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

    @asynccontextmanager
    async def sign_in_context(self, storage_state: dict[str, Any] | None = None) -> AsyncIterator[Any]:
        """A browser context to sign in with: ``storage_state``'s session (None: nobody's),
        in the sign-in locale, not routed, not traced; closed when left."""
        context = await self.new_context(storage_state or SIGNED_OUT, SIGN_IN_LOCALE)
        try:
            yield context
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
        self.revealed = RevealedSecrets()  #: secrets the console shows: registered, masked
        self.committed = asyncio.Event()  #: the page committed a navigation since the action began

    async def begin(self) -> None:
        # Only requests outside the allowed origins match, and the pattern is matched in
        # Playwright's driver: the console's own requests are never intercepted (no
        # round trip through Python, and the HTTP cache stays on).
        await self.context.route(self.run.outside, self._block)
        self.revealed.watch(self.context)
        if self.tracing:
            await self.context.tracing.start(screenshots=self.run.options.trace_screencast, snapshots=True,
                                             title=self.name)
        self.page = await self.context.new_page()
        self.page.on("framenavigated", self._navigated)
        home = self.run.endpoint.home or self.run.endpoint.url
        try:
            started = time.perf_counter()
            await self.page.goto(home, timeout=self.run.deadlines.navigation * 1000)
            self.run.deadlines.measure("navigation", time.perf_counter() - started)
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
                await asyncio.to_thread(scrub_trace, keep)  # no secret the console showed stays in it
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
                masks = await self.revealed.before_capture(page)  # secrets it shows: registered first
                snapshot = await page.aria_snapshot(mode="ai")
                modal = await page.evaluate(MODAL)
                shot = await page.screenshot(type="png", mask=masks) if screenshot else None
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
        return Observation(url=page.url, title=title, snapshot=snapshot, error=error, screenshot=shot, modal=modal)

    async def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        jpeg = path.suffix.lower() in (".jpg", ".jpeg")
        try:
            await self.page.screenshot(path=str(path), type="jpeg" if jpeg else "png",
                                       quality=self.run.options.screenshot_quality if jpeg else None,
                                       mask=await self.revealed.before_capture(self.page))
        except Exception as error:
            if is_dead(error):
                raise EnvironmentProblem("the browser died taking a screenshot") from None

    async def bounding_box(self, ref: str) -> dict[str, float] | None:
        """Where the element ``ref`` of the latest snapshot is in what a screenshot shows
        now (:func:`viewport_box`); None when it is not on the page or out of view."""
        try:
            box = await self.page.locator(f"aria-ref={ref}").first.bounding_box(timeout=1000)
        except Exception:  # gone, or not attached: nothing to outline
            return None
        return viewport_box(box, self.page.viewport_size)

    # -- acting ----------------------------------------------------------------------

    async def apply(self, action: Action) -> ActionResult:
        started = time.perf_counter()
        # what the page does after the action (settling, the snapshot) waits as long as the console needs now
        self.context.set_default_timeout(self.run.deadlines.action * 1000)
        self.context.set_default_navigation_timeout(self.run.deadlines.navigation * 1000)
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
        element = page.locator(f"aria-ref={action.ref}") if action.ref else None
        if element is not None and not await element.count():
            raise LookupError(f"no element {action.ref} on the page: refs come from the latest snapshot")

        match action.kind:
            case ActionKind.CLICK:
                await self.patiently(action, lambda ms: element.click(timeout=ms), element)
            case ActionKind.FILL:
                await self.patiently(action, lambda ms: element.fill(action.value, timeout=ms), element)
            case ActionKind.SELECT:
                await self._select(action, element, action.value)
            case ActionKind.CHECK:
                await self.patiently(action, lambda ms: element.check(timeout=ms), element)
            case ActionKind.UNCHECK:
                await self.patiently(action, lambda ms: element.uncheck(timeout=ms), element)
            case ActionKind.PRESS:
                if element is not None:  # a key may submit a form: pressed twice, it could submit twice
                    await self.patiently(action, lambda ms: element.press(action.value, timeout=ms), element,
                                         repeatable=False)
                else:
                    await page.keyboard.press(action.value)
            case ActionKind.GOTO:
                # a doc's link into the console this one stands in for opens the same page here
                url = self.run.endpoint.local(action.value) or urljoin(self.run.endpoint.url + "/", action.value)
                if not self.run.inside.match(url):
                    raise ValueError(f"{url} is outside the console ({', '.join(sorted(self.run.allowed))})")
                # a page that is slow to come is waited for: asked for again, it could be even slower
                await self.patiently(action, lambda ms: page.goto(url, timeout=ms), repeatable=False,
                                     kind="navigation")
            case ActionKind.SCROLL:
                if element is not None:
                    await self.patiently(action, lambda ms: element.scroll_into_view_if_needed(timeout=ms), element)
                else:
                    await page.mouse.wheel(0, -600 if action.value == "up" else 600)
            case ActionKind.WAIT_FOR:  # a text that never comes is the page's answer, not the environment's
                text = page.get_by_text(action.value).first
                seconds = self.run.deadlines.limit("action") * RETRY
                try:
                    await text.wait_for(timeout=round(seconds * 1000))
                except Exception as error:
                    if not timed_out(error):
                        raise
                    raise NotActionable(f"'{action.value}' did not appear within {seconds:.0f} s") from None
            case ActionKind.BACK:
                await self.patiently(action, lambda ms: page.go_back(timeout=ms), repeatable=False, kind="navigation")
            case _:
                raise ValueError(f"{action.kind.value} is not a page action")

    async def _select(self, action: Action, element: Any, value: str) -> None:
        """A native <select> by option label (else value); a custom combobox by
        opening it and clicking the option."""
        tag = await self.patiently(action, lambda ms: element.evaluate("e => e.tagName", timeout=ms), element)
        if tag == "SELECT":
            by_value = await element.evaluate(
                "(e, v) => ![...e.options].some(o => o.label.trim() === v) && [...e.options].some(o => o.value === v)",
                value)
            choice = {"value": value} if by_value else {"label": value}
            await self.patiently(action, lambda ms: element.select_option(**choice, timeout=ms), element)
            return
        await self.patiently(action, lambda ms: element.click(timeout=ms), element)
        option = self.page.get_by_role("option", name=value, exact=True).first
        await self.patiently(action, lambda ms: option.click(timeout=ms), option, located=False)

    async def patiently(self, action: Action, operation: Callable[[float], Awaitable[Any]], element: Any = None, *,
                        located: bool = True, repeatable: bool = True, kind: Kind = "action") -> Any:
        """``operation(ms)``, one browser operation of ``action``, under the current limit
        (:class:`~docverify_playwright.deadlines.Deadlines`); returns its result.

        A timeout is tried once more under RETRY times the limit: the operation again,
        or, where it was done and only the page it opened is slow (a click's call log
        says "click action done"; a page load, a key press, going back: never repeated),
        a longer wait for that page. What the page shows decides what a timeout means:
        ``element`` (the policy ``located`` it in the snapshot, or the page was to show
        it) gone, disabled, hidden or covered is the page's answer, an ordinary failed
        action (:class:`NotActionable`). Two timeouts the page does not explain are the
        environment's: :class:`EnvironmentProblem` naming the step, the action and the limits.

        Only what speaks to the console's speed is measured: an operation done, and a
        timeout the page does not explain. A click on a button a dialog covers says
        nothing about latency; measured, it would stretch every later limit (a model
        that clicks behind a dialog again and again waited 80 s a click). Such a timeout
        gets one more try under the same limit (a covering mask that goes by itself),
        not a longer one.
        """
        deadlines = self.run.deadlines
        limit = deadlines.limit(kind)
        self.committed.clear()
        started = time.perf_counter()
        try:
            result = await operation(round(limit * 1000))
        except Exception as error:
            if not timed_out(error):
                raise
            first = error
        else:
            deadlines.measure(kind, time.perf_counter() - started)
            return result
        done = not repeatable or performed(first)
        explained = None if done else await self._page_state(element, first, gone=located)
        if explained == GONE:
            raise NotActionable(f"{first_line(first)} (the element is no longer on the page)")
        if explained is None:
            deadlines.measure(kind, limit)  # at least that slow
        longer = limit if explained else limit * RETRY
        log.info("%s: %s timed out after %.3g s%s; trying once more for %.3g s", self.name, action.describe(),
                 limit, f" ({explained})" if explained else "", longer)
        try:
            result = await (self._landing(longer) if done else operation(round(longer * 1000)))
        except Exception as error:
            if not timed_out(error):
                raise
            if not done and (why := await self._page_state(element, error)) is not None:
                raise NotActionable(f"{first_line(error)} ({why})") from None
            deadlines.measure(kind, time.perf_counter() - started)
            step = f"step {action.step}: " if action.step else ""
            what = "the page it opened did not load" if done else "the console did not answer in time"
            raise EnvironmentProblem(
                f"{step}{action.describe()} timed out after {limit:.3g} s, and again after {longer:.3g} s more "
                f"({what}; {first_line(first)})",
                hint="a loaded machine or a slow console: fewer --jobs, or a higher action_timeout_s / "
                     "navigation_timeout_s in [executor.playwright]") from None
        if explained is None:
            deadlines.measure(kind, time.perf_counter() - started)
        return result

    async def _landing(self, seconds: float) -> None:
        """The page that a done action started to open: committed, then its document
        loaded, within ``seconds``."""
        async with asyncio.timeout(seconds):
            await self.committed.wait()
            await self.page.wait_for_load_state("domcontentloaded", timeout=seconds * 1000)

    def _navigated(self, frame: Any) -> None:
        if frame.parent_frame is None:
            self.committed.set()

    async def _page_state(self, element: Any, error: BaseException, *, gone: bool = True) -> str | None:
        """What on the page kept ``element`` from being acted on; None when nothing does
        (the console is slow). ``gone``: whether an element missing from the page is an
        answer (:data:`GONE`), or may still be on its way (an option of a list that loads)."""
        if "did not find some options" in str(error):
            return "the list does not offer that option"
        if element is None:
            return None
        try:
            if not await element.count():
                return GONE if gone else None
            if "intercepts pointer events" in str(error):
                return "another element covers it"
            if not await element.first.is_visible():
                return "the element is not visible"
            if await element.first.is_disabled(timeout=self.run.deadlines.action * 1000):
                return "the element is disabled"
        except Exception as probe:
            if is_dead(probe):
                raise
        return None


def viewport_box(box: dict[str, float] | None, viewport: dict[str, int] | None) -> dict[str, float] | None:
    """A bounding box in CSS pixels as ``x``, ``y``, ``width``, ``height`` fractions (0-1)
    of the viewport (of a screenshot of it), clipped to it; None when it lies outside or
    has no area there."""
    if not box or not viewport or not viewport.get("width") or not viewport.get("height"):
        return None
    width, height = viewport["width"], viewport["height"]
    left, top = max(box["x"], 0.0), max(box["y"], 0.0)
    right, bottom = min(box["x"] + box["width"], width), min(box["y"] + box["height"], height)
    if right <= left or bottom <= top:
        return None
    return {"x": round(left / width, 4), "y": round(top / height, 4),
            "width": round((right - left) / width, 4), "height": round((bottom - top) / height, 4)}


class NotActionable(Exception):
    """An action timed out because of what the page shows (the element gone, disabled,
    hidden, covered; an option the list lacks): the page's answer, an ordinary failed
    action that the policy and the verdict weigh, never an environment problem."""


def timed_out(error: BaseException) -> bool:
    """Playwright's TimeoutError (or asyncio's, for waits of our own)."""
    return type(error).__name__ == "TimeoutError"


def performed(error: BaseException) -> bool:
    """Whether a timed-out pointer action was done, and only the navigation it started
    was still pending (Playwright's call log: "click action done")."""
    return bool(re.search(r"^\s*- \w+ action done$", str(error), re.M))

