"""Fixtures: a live sandbox console on loopback (latency 0) and signed clients for its accounts."""

from __future__ import annotations

import pytest

from docverify_sandbox.client import SandboxClient
from docverify_sandbox.console import SandboxConsole
from docverify_sandbox.state import DEFAULT_ACCOUNTS


@pytest.fixture(scope="session")
def sandbox():
    """One sandbox for the checker tests; its endpoint is the first seeded account's."""
    with SandboxConsole(SandboxConsole.Options(latency_ms=0, release="2021-06")).start() as endpoint:
        yield endpoint


@pytest.fixture()
def client(sandbox):
    """The endpoint account's administrator (a RAM user), as the console's own calls are."""
    account = DEFAULT_ACCOUNTS[0]
    return SandboxClient(sandbox.url, account.admin_access_key_id, account.admin_access_key_secret)


@pytest.fixture()
def other_client(sandbox):
    """The administrator of another seeded account."""
    account = DEFAULT_ACCOUNTS[1]
    return SandboxClient(sandbox.url, account.admin_access_key_id, account.admin_access_key_secret)
