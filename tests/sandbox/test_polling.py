"""Rows on their way to another status are refreshed in place, never by a reload that
could swallow a click or close what the user opened."""

from __future__ import annotations

import time

import pytest
from sandbox_helpers import login

from docverify_sandbox.client import SandboxClient
from docverify_sandbox.console import SandboxConsole
from docverify_sandbox.state import DEFAULT_ACCOUNTS

expect = pytest.importorskip("playwright.sync_api", reason="the browser extra: pip install -e '.[browser]'").expect

pytestmark = pytest.mark.browser
VPC = "2016-04-28"


@pytest.fixture(scope="module")
def slow_sandbox():
    """Asynchronous states that take 2.5 s, long enough to act while they settle (the page
    polls only while a row is settling), even on a loaded machine."""
    with SandboxConsole(SandboxConsole.Options(latency_ms=2500, release="2021-06")).start() as endpoint:
        yield endpoint


@pytest.fixture()
def console(browser, slow_sandbox):
    account = DEFAULT_ACCOUNTS[0]
    client = SandboxClient(slow_sandbox.url, account.admin_access_key_id, account.admin_access_key_secret)
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(10_000)
    login(page, slow_sandbox.url, f"{account.admin_user}@{account.alias}.onaliyun.com", account.admin_password)
    yield page, client, slow_sandbox.url
    context.close()


def create_vpc(client, name: str) -> str:
    return client.call("CreateVpc", VPC, {"RegionId": "cn-hangzhou", "VpcName": name, "CidrBlock": "10.0.0.0/8"})["VpcId"]


def wait_until_available(client, vpc: str, seconds: float = 10.0) -> None:
    """Poll the API until ``vpc`` has settled (Available), for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while client.call("DescribeVpcs", VPC, {"RegionId": "cn-hangzhou", "VpcId": vpc})["Vpcs"]["Vpc"][0]["Status"] \
            != "Available":
        assert time.monotonic() < deadline, f"{vpc} did not become Available in {seconds} s"
        time.sleep(0.1)


def polls_after_now(page) -> None:
    """Count the page's polling requests from now on in ``window.polls`` (a reload starts a
    new document, without the count)."""
    page.evaluate("""() => {
        window.polls = 0;
        const fetch = window.fetch;
        window.fetch = (...args) => { window.polls += 1; return fetch(...args); };
    }""")


def test_a_settling_row_turns_final_in_place_without_a_reload(console):
    page, client, url = console
    vpc = create_vpc(client, "poll-in-place")
    page.goto(f"{url}/console/vpc")
    row = page.locator(f'tr[data-id="{vpc}"]')
    expect(row).to_have_attribute("data-transient", "1")
    expect(row.locator(".status")).to_have_text("Pending")
    page.evaluate("window.sameDocument = true")
    expect(row.locator(".status")).to_have_text("Available", timeout=8_000)
    expect(row).not_to_have_attribute("data-transient", "1")
    assert page.evaluate("window.sameDocument === true"), "the page reloaded"
    client.call("DeleteVpc", VPC, {"RegionId": "cn-hangzhou", "VpcId": vpc})


def test_an_open_dialog_is_never_reloaded_away(console):
    page, client, url = console
    other = create_vpc(client, "poll-other")
    wait_until_available(client, other)
    settling = create_vpc(client, "poll-settling")  # keeps the page polling
    page.goto(f"{url}/console/vpc")
    page.get_by_role("row").filter(has_text="poll-other").get_by_role("button", name="Edit").click()
    dialog = page.get_by_role("dialog", name="Edit VPC")
    expect(dialog).to_be_visible()
    page.evaluate("window.sameDocument = true")
    client.call("DeleteVpc", VPC, {"RegionId": "cn-hangzhou", "VpcId": other})  # the list changes under the dialog
    polls_after_now(page)
    # the second poll starts once the first, sent after the deletion, was handled: the page
    # saw the changed list (or it reloaded, and this document is gone)
    page.wait_for_function("window.polls >= 2 || window.sameDocument !== true", timeout=10_000)
    expect(dialog).to_be_visible()
    assert page.evaluate("window.sameDocument === true"), "the page reloaded under an open dialog"
    client.call("DeleteVpc", VPC, {"RegionId": "cn-hangzhou", "VpcId": settling})


def test_rows_that_came_or_went_reload_the_list_when_nothing_is_open(console):
    page, client, url = console
    first = create_vpc(client, "poll-first")
    page.goto(f"{url}/console/vpc")
    expect(page.locator(f'tr[data-id="{first}"]')).to_have_attribute("data-transient", "1")
    second = create_vpc(client, "poll-second")  # appears only after a reload
    expect(page.locator(f'tr[data-id="{second}"]')).to_be_visible(timeout=8_000)
    for vpc in (first, second):
        client.call("DeleteVpc", VPC, {"RegionId": "cn-hangzhou", "VpcId": vpc})
