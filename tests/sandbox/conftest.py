"""Fixtures: a live sandbox on loopback (latency 0), signed clients, the official SDK."""

from __future__ import annotations

import pytest
from sandbox_helpers import login, sdk_config

from docverify_playwright.browser import CHROMIUM_ARGS
from docverify_sandbox.client import SandboxClient
from docverify_sandbox.console import SandboxConsole
from docverify_sandbox.state import DEFAULT_ACCOUNTS


@pytest.fixture(scope="session")
def sandbox():
    """One sandbox (newest release) for the whole session."""
    with SandboxConsole(SandboxConsole.Options(latency_ms=0, release="2021-06")).start() as endpoint:
        yield endpoint


@pytest.fixture()
def account():
    return DEFAULT_ACCOUNTS[0]


@pytest.fixture()
def other_account():
    return DEFAULT_ACCOUNTS[1]


@pytest.fixture()
def client(sandbox, account):
    return SandboxClient(sandbox.url, account.admin_access_key_id, account.admin_access_key_secret)


@pytest.fixture()
def root_client(sandbox, account):
    return SandboxClient(sandbox.url, account.access_key_id, account.access_key_secret)


@pytest.fixture()
def trail_client(sandbox, account):
    from alibabacloud_actiontrail20200706.client import Client

    return Client(sdk_config(sandbox, account.admin_access_key_id, account.admin_access_key_secret))


@pytest.fixture(scope="module")
def browser(chromium):
    """One Chromium (found as docverify finds it; see tests/conftest.py) per test module.

    Closed after the module: sync Playwright keeps an event loop running on this thread
    while it is open, and later tests that run ``docverify check`` start their own
    (``asyncio.run`` refuses to run inside a running loop)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium.path, args=list(CHROMIUM_ARGS))
        yield b
        b.close()


@pytest.fixture()
def page(browser, sandbox, account):
    """A browser page logged in as the seeded administrator; the account is reset first."""
    SandboxClient(sandbox.url, account.access_key_id, account.access_key_secret).call("ResetAccount", "sandbox")
    context = browser.new_context()
    p = context.new_page()
    p.set_default_timeout(10_000)
    login(p, sandbox.url, f"{account.admin_user}@{account.alias}.onaliyun.com", account.admin_password)
    yield p
    context.close()
