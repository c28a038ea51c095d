"""A console too slow for the action limit (issue 18: "click link 'ECS console' failed:
Locator.click: Timeout 5000ms" under load was a FAIL). A timed-out action on an element
the page has is tried once more with a longer limit; one that times out again is an
ENV_ERROR naming the step, the action and the limits, never FAIL or DRIFT. What the page
shows (an element gone, disabled) is still the page's answer.

The slowness is Playwright routing in the session's context: the console's answer to
one page is held until the executor says it is trying again (its log), or for good. No
test waits on the clock."""

from __future__ import annotations

import asyncio
import logging
import textwrap
from contextlib import asynccontextmanager, contextmanager

import pytest

from docverify.check.verdict import Verdict
from docverify.execute.actions import Action, ActionKind
from docverify.parse.parser import parse_text
from docverify.run.runner import RunLimits, Runner, Stages
from docverify.task import make_task
from docverify_actiontrail.checker import ActionTrailChecker
from docverify_literal.policy import LiteralPolicy
from docverify_none import NoneProvisioner
from docverify_playwright.executor import PlaywrightExecutor
from docverify_sandbox.console import SandboxConsole

pytestmark = pytest.mark.browser

KEY_PAIR = """\
    # Create an SSH key pair

    <!-- docverify:
    id: slow-key-pair
    expect:
      - {event: CreateKeyPair, service: Ecs}
    -->

    1. Log on to the [ECS console](https://ecs.console.aliyun.com).
    2. In the left-side navigation pane, choose **Network & Security** \\> **Key Pairs**.
    3. Click **Create SSH Key Pair**.
    4. On the **Create SSH Key Pair** page, configure the following parameters.

       |Parameter|Value|
       |---------|-----|
       |**SSH Key Pair Name**|`slow-key-<suffix>`|
       |**Creation Type**|**Auto-create**|

    5. Click **OK**.
"""
#: the ECS console's pages: what step 1's link opens
ECS_PAGES = "**/console/ecs**"


class Retries(logging.Handler):
    """The executor's word that a timed-out action is tried once more: sets ``tried``."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.tried = asyncio.Event()
        self.messages: list[str] = []
        self.on_retry = lambda: None

    def emit(self, record: logging.LogRecord) -> None:
        if "trying once more" in record.getMessage():
            self.messages.append(record.getMessage())
            self.tried.set()
            self.on_retry()


@contextmanager
def retries():
    logger = logging.getLogger("docverify_playwright.executor")
    handler, level = Retries(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


class SlowPages:
    """Holds the console's answer to requests for ``pattern``: until ``release`` is set,
    or for good when it is None."""

    def __init__(self, pattern: str, release: asyncio.Event | None) -> None:
        self.pattern = pattern
        self.release = release
        self.requests: list[str] = []

    async def hold(self, route) -> None:
        self.requests.append(route.request.url)
        if self.release is None:
            return  # never answered: the context's close cancels it
        await self.release.wait()
        try:
            await route.continue_()
        except Exception:  # the page gave up on this request meanwhile
            pass


class SlowConsoleExecutor(PlaywrightExecutor):
    """The playwright executor with every session's requests for ``slow.pattern`` held."""

    name = "slow-console"

    def __init__(self, slow: SlowPages, **options) -> None:
        super().__init__(PlaywrightExecutor.Options(**options))
        self.slow = slow

    @asynccontextmanager
    async def open(self, endpoint, artifacts):
        async with super().open(endpoint, artifacts) as xrun:
            session = xrun.session

            @asynccontextmanager
            async def slowed(name, login=None, *, locale=None):
                async with session(name, login, locale=locale) as opened:
                    await opened.context.route(self.slow.pattern, self.slow.hold)
                    yield opened

            xrun.session = slowed
            yield xrun


def check(executor, tmp_path):
    task = make_task(parse_text(textwrap.dedent(KEY_PAIR), "docs/key-pair.md").procedures[0], suffix="s1o2w3")
    stages = Stages(NoneProvisioner(), executor, LiteralPolicy(), [ActionTrailChecker()])
    with SandboxConsole(SandboxConsole.Options(latency_ms=0)).start() as endpoint:
        runner = Runner(stages, endpoint, artifacts=tmp_path / "artifacts", limits=RunLimits(timeout_s=120),
                        output=tmp_path)
        (result,) = asyncio.run(runner.run([task], 1))
    return result


def test_a_click_whose_page_is_slow_once_is_waited_for_longer_and_passes(tmp_path, chromium):
    with retries() as log:
        slow = SlowPages(ECS_PAGES, log.tried)  # answered once the executor tries again
        result = check(SlowConsoleExecutor(slow, action_timeout_s=2), tmp_path)
    assert result.verdict is Verdict.PASS, result.reason
    assert len(log.messages) == 1 and "click link 'ECS console' timed out after" in log.messages[0]
    first = result.turns[0]
    assert first.description == "click link 'ECS console'" and first.ok and "/console/ecs" in first.url
    assert len(slow.requests) >= 1 and slow.requests[0].endswith("/console/ecs")
    assert slow.requests.count(slow.requests[0]) == 1  # the link was clicked once: its page was waited for


def test_a_click_whose_page_never_loads_is_an_environment_error_naming_step_action_and_limits(tmp_path, chromium):
    with retries() as log:
        result = check(SlowConsoleExecutor(SlowPages(ECS_PAGES, None), action_timeout_s=2), tmp_path)
    assert result.verdict is Verdict.ENV_ERROR, result.reason
    assert len(log.messages) == 1  # tried once more, then given up
    assert result.reason.startswith("step 1: click link 'ECS console' timed out after ")
    assert "s, and again after " in result.reason and "the page it opened did not load" in result.reason
    assert "Timeout 2000ms" in result.reason
    assert not result.findings and result.check is None  # no drift, nothing to judge
    assert result.turns[-1].description == "click link 'ECS console'" and not result.turns[-1].ok


def ref(observation, role, name):
    return next(e.ref for e in observation.elements if e.role == role and e.name == name and e.ref)


@pytest.fixture(scope="module")
def endpoint():
    with SandboxConsole(SandboxConsole.Options(latency_ms=0)).start() as endpoint:
        yield endpoint


def test_a_page_load_that_times_out_once_is_waited_for_longer(endpoint, tmp_path, chromium):
    async def scenario(log):
        slow = SlowPages("**/console/oss/**", log.tried)
        executor = PlaywrightExecutor(PlaywrightExecutor.Options(navigation_timeout_s=2, latency_factor=0))
        async with executor.open(endpoint, tmp_path) as xrun:
            async with xrun.session("goto") as session:
                await session.context.route(slow.pattern, slow.hold)
                result = await session.apply(Action(ActionKind.GOTO, value="/console/oss/bucket", step="1"))
                page = await session.observe()
        return result, page, slow

    with retries() as log:
        result, page, slow = asyncio.run(scenario(log))
    assert log.messages == ["goto: goto /console/oss/bucket timed out after 2 s; trying once more for 6 s"]
    assert result.ok and page.url.endswith("/console/oss/bucket")
    assert len(slow.requests) == 1  # the page asked for is waited for, not asked for again


def test_an_action_that_times_out_once_is_done_again(endpoint, tmp_path, chromium):
    """A button that does not take the click in time (something lies over it) is
    clicked again, and only once it took it does the action count as done."""
    async def scenario(log):
        executor = PlaywrightExecutor(PlaywrightExecutor.Options(action_timeout_s=1, latency_factor=0))
        async with executor.open(endpoint, tmp_path) as xrun:
            async with xrun.session("cover") as session:
                page = session.page
                await page.set_content("<button onclick='this.textContent = \"Clicked\"'>Go</button>"
                                       "<div id=cover style='position:fixed;inset:0'></div>")
                button = ref(await session.observe(), "button", "Go")
                uncovering = []
                log.on_retry = lambda: uncovering.append(asyncio.ensure_future(
                    page.evaluate("() => document.getElementById('cover').remove()")))
                result = await session.apply(Action(ActionKind.CLICK, ref=button, target="button 'Go'", step="1"))
                await asyncio.gather(*uncovering)
                return result, await page.locator("button").inner_text()

    with retries() as log:
        result, text = asyncio.run(scenario(log))
    # the page explains the wait (a cover), so the second try is no longer than the first
    assert log.messages == ["cover: click button 'Go' timed out after 1 s (another element covers it); "
                            "trying once more for 1 s"]
    assert result.ok and text == "Clicked"


def test_clicks_behind_a_dialog_do_not_stretch_the_limits(endpoint, tmp_path, chromium):
    """A policy that clicks a button an open dialog covers, again and again, gets the
    page's answer each time within twice the configured limit; the timeouts are the
    page's, not the console's latency, so they do not stretch later limits (measured,
    they had: 20 s, then 80 s a click)."""
    async def scenario():
        executor = PlaywrightExecutor(PlaywrightExecutor.Options(action_timeout_s=0.5, latency_factor=10))
        async with executor.open(endpoint, tmp_path) as xrun:
            async with xrun.session("dialog") as session:
                await session.page.set_content(
                    "<button>Connect</button><div role=dialog aria-label='Enter VNC Password' "
                    "style='position:fixed;inset:0;background:white'><button>OK</button></div>")
                connect = ref(await session.observe(), "button", "Connect")
                results = [await session.apply(Action(ActionKind.CLICK, ref=connect, target="button 'Connect'",
                                                      step="1")) for _ in range(3)]
                return results, xrun.deadlines

    with retries() as log:
        results, deadlines = asyncio.run(scenario())
    assert all(not r.ok and r.error.endswith("(another element covers it)") for r in results)
    assert log.messages == ["dialog: click button 'Connect' timed out after 0.5 s (another element covers it); "
                            "trying once more for 0.5 s"] * 3
    assert deadlines.action == 0.5


def test_what_the_page_shows_is_still_the_pages_answer(endpoint, tmp_path, chromium):
    """A timeout on an element the page disables is an ordinary failed action (the
    policy and the verdict weigh it), not the environment's; so is a ref the page lost."""
    async def scenario():
        executor = PlaywrightExecutor(PlaywrightExecutor.Options(action_timeout_s=0.5, latency_factor=0))
        async with executor.open(endpoint, tmp_path) as xrun:
            async with xrun.session("page") as session:
                await session.page.set_content("<button>Go</button>")
                button = ref(await session.observe(), "button", "Go")
                await session.page.evaluate("() => document.querySelector('button').disabled = true")
                disabled = await session.apply(Action(ActionKind.CLICK, ref=button, target="button 'Go'", step="1"))
                await session.page.set_content("<button>Gone</button>")
                gone = await session.apply(Action(ActionKind.CLICK, ref=button, target="button 'Go'", step="2"))
        return disabled, gone

    disabled, gone = asyncio.run(scenario())
    assert not disabled.ok and disabled.error.endswith("(the element is disabled)")
    assert not gone.ok and "latest snapshot" in gone.error
