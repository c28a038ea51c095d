"""Label lookup on a live snapshot: the 2021 docs' label against the 2026 sandbox."""

import pytest

from docverify.execute.locate import CLICKABLE, MatchKind, locate, parse_snapshot
from docverify_playwright.browser import CHROMIUM_ARGS

pytestmark = pytest.mark.browser


def test_renamed_button_is_a_close_match_on_the_2026_console(chromium):
    from playwright.sync_api import sync_playwright

    from docverify_sandbox.console import SandboxConsole

    with SandboxConsole(SandboxConsole.Options(latency_ms=0, release="2026-03")).start() as endpoint:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium.path, args=list(CHROMIUM_ARGS))
            try:
                page = browser.new_page()
                page.goto(endpoint.extra["signin_url"])
                page.get_by_label("User Name").fill(endpoint.extra["login_user"])
                page.get_by_label("Password").fill(endpoint.extra["login_password"])
                page.get_by_role("button", name="Log On").click()
                page.wait_for_url("**/console")
                page.goto(endpoint.url + "/console/ecs/instance")
                elements = parse_snapshot(page.locator("body").aria_snapshot(mode="ai"))
                located = locate("Create Instance", elements, CLICKABLE)
                assert located.kind is MatchKind.CLOSE
                assert located.element.name == "Create ECS Instance"
                page.locator(f"aria-ref={located.element.ref}").click()  # the ref is actionable
                page.wait_for_load_state()
                assert "/create" in page.url or page.get_by_role("dialog").count() > 0
            finally:
                browser.close()
