"""The playwright executor on the real sandbox: sign-in once, refs, allowlist, timeouts."""

from __future__ import annotations

import asyncio
import socket

import pytest

from docverify.console import LoginForm
from docverify.errors import EnvironmentProblem
from docverify.execute.actions import Action, ActionKind
from docverify_playwright.executor import PlaywrightExecutor
from docverify_sandbox.console import SandboxConsole

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def endpoint():
    with SandboxConsole(SandboxConsole.Options(latency_ms=0)).start() as endpoint:
        yield endpoint


def run(coroutine):
    return asyncio.run(coroutine)


def ref(observation, role, name):
    return next(e.ref for e in observation.elements if e.role == role and e.name == name and e.ref)


def test_sessions_start_signed_in_and_act_by_ref(endpoint, tmp_path, chromium):
    async def scenario():
        async with PlaywrightExecutor().open(endpoint, tmp_path) as xrun:
            async with xrun.session("one") as session:
                home = await session.observe()
                assert home.url.endswith("/console") and "OSS console" in home.snapshot
                result = await session.apply(Action(ActionKind.CLICK, ref=ref(home, "link", "OSS console")))
                assert result.ok and result.seconds > 0
                page = await session.observe(screenshot=True)
                assert page.url.endswith("/console/oss/bucket") and page.screenshot[:4] == b"\x89PNG"
                stale = await session.apply(Action(ActionKind.CLICK, ref=ref(home, "link", "ECS console") + "0"))
                assert not stale.ok and "latest snapshot" in stale.error
                outside = await session.apply(Action(ActionKind.GOTO, value="https://example.com/"))
                assert not outside.ok and "outside the console" in outside.error
            async with xrun.session("two") as session:  # a fresh context: still signed in
                assert (await session.observe()).url.endswith("/console")

    run(scenario())


def test_an_observation_names_the_modal_dialog_that_covers_the_page(endpoint, tmp_path, chromium):
    """The sandbox's own Create dialog (aria-modal), a native <dialog> shown modal (named
    by aria-labelledby), and dialogs that cover nothing: a non-modal one, a hidden one."""
    async def scenario():
        async with PlaywrightExecutor().open(endpoint, tmp_path) as xrun:
            async with xrun.session("modal") as session:
                await session.apply(Action(ActionKind.GOTO, value="/console/oss/bucket?dialog=create"))
                sandbox = await session.observe()
                page = session.page
                await page.set_content("<button>Connect</button><dialog aria-labelledby=t><h2 id=t>Enter  VNC "
                                       "Password</h2><button>OK</button></dialog><div role=dialog aria-modal=true "
                                       "aria-label=Hidden hidden><button>No</button></div>")
                await page.evaluate("() => document.querySelector('dialog').showModal()")
                native = await session.observe()
                await page.set_content("<button>Connect</button><div role=dialog aria-label=Help>"
                                       "<button>Close</button></div>")
                plain = await session.observe()
                return sandbox, native, plain

    sandbox, native, plain = run(scenario())
    assert sandbox.modal == "Create Bucket"
    inside = {e.ref for e in sandbox.elements if e.ref and e.ref not in sandbox.covered}
    assert {e.name for e in sandbox.elements if e.ref in inside and e.role == "button"} >= {"OK", "Cancel"}
    assert ref(sandbox, "link", "ECS console") in sandbox.covered
    assert native.modal == "Enter  VNC Password" and ref(native, "button", "Connect") in native.covered
    assert ref(native, "button", "OK") not in native.covered
    assert plain.modal is None and not plain.covered


def test_requests_outside_the_console_are_blocked_and_reported(endpoint, tmp_path, chromium):
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        port = other.getsockname()[1]

        async def scenario():
            async with PlaywrightExecutor().open(endpoint, tmp_path) as xrun:
                async with xrun.session("net") as session:
                    await session.observe()
                    for url in ("http://example.com/x.js", f"http://127.0.0.1:{port}/y"):
                        outcome = await session.page.evaluate(
                            "u => fetch(u).then(() => 'reached', () => 'blocked')", url)
                        assert outcome == "blocked"
                    observation = await session.observe()
                    assert "example.com/x.js" in observation.error and f"127.0.0.1:{port}/y" in observation.error

        run(scenario())


def test_a_wrong_password_is_an_environment_problem(endpoint, tmp_path, chromium):
    from dataclasses import replace

    wrong = replace(endpoint, login=LoginForm(endpoint.login.url, endpoint.login.user, "not-the-password"))

    async def scenario():
        async with PlaywrightExecutor().open(wrong, tmp_path):
            pass

    with pytest.raises(EnvironmentProblem, match="signing in .* failed"):
        run(scenario())


def test_a_form_that_needs_the_browser_is_signed_in_there_and_both_ways_open_the_same_console(
        endpoint, tmp_path, chromium):
    """A login without form fields (a form that needs JavaScript) is filled in the browser;
    the sandbox's plain form is posted over HTTP. Either way the session is signed in."""
    from dataclasses import replace

    assert endpoint.login.form_fields is not None
    in_browser = replace(endpoint, login=replace(endpoint.login, form_fields=None))

    async def scenario(target):
        async with PlaywrightExecutor().open(target, tmp_path) as xrun:
            async with xrun.session("signed-in") as session:
                observation = await session.observe()
                return observation.url, "Log Out" in observation.snapshot

    for target in (endpoint, in_browser):
        url, signed_in = run(scenario(target))
        assert "/signin" not in url and signed_in, url


def test_a_missing_browser_says_how_to_install_one(endpoint, tmp_path):
    executor = PlaywrightExecutor(PlaywrightExecutor.Options(browser_path=str(tmp_path / "no-chromium")))

    async def scenario():
        async with executor.open(endpoint, tmp_path):
            pass

    with pytest.raises(EnvironmentProblem, match="not an executable") as raised:
        run(scenario())
    assert "apt-get install chromium" in raised.value.hint


def test_a_warmed_up_browser_is_the_one_the_run_uses(endpoint, tmp_path, chromium):
    executor = PlaywrightExecutor()

    async def scenario():
        await executor.warm_up()  # returns at once: the browser launches meanwhile
        warm = executor._warm
        assert warm is not None
        async with executor.open(endpoint, tmp_path) as xrun:
            assert executor._warm is None and xrun.browser is (await warm).browser
            async with xrun.session("one") as session:
                assert (await session.observe()).url.endswith("/console")
        assert not xrun.browser.is_connected()
        await executor.cool_down()  # nothing left to close

    run(scenario())


def test_a_warm_up_the_run_never_took_is_closed(tmp_path, chromium):
    executor = PlaywrightExecutor()

    async def scenario():
        await executor.warm_up()
        browser = (await executor._warm).browser
        assert browser.is_connected()
        await executor.cool_down()
        assert not browser.is_connected() and executor._warm is None

    run(scenario())


def test_a_warm_up_that_fails_says_so_where_the_run_opens(endpoint, tmp_path):
    executor = PlaywrightExecutor(PlaywrightExecutor.Options(browser_path=str(tmp_path / "no-chromium")))

    async def scenario():
        await executor.warm_up()  # no error yet: the run decides what a browser that does not start means
        with pytest.raises(EnvironmentProblem, match="not an executable"):
            async with executor.open(endpoint, tmp_path):
                pass

    run(scenario())
    quiet = PlaywrightExecutor(PlaywrightExecutor.Options(browser_path=str(tmp_path / "no-chromium")))

    async def abandoned():
        await quiet.warm_up()
        await quiet.cool_down()  # a run that ended before it opened: nothing to raise

    run(abandoned())
