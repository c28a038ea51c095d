"""Fixtures: an accounts folder with secret files, a lease folder, a live sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docverify_sandbox.client import SandboxClient
from docverify_sandbox.console import SandboxConsole
from docverify_sandbox.state import DEFAULT_ACCOUNTS


@pytest.fixture()
def workdir(tmp_path, monkeypatch) -> Path:
    """An empty project folder as the working directory, with no DOCVERIFY_ACCOUNT* leaking in."""
    for name in list(os.environ):
        if name.startswith(("DOCVERIFY_ACCOUNT", "DOCVERIFY_LEASE", "DOCVERIFY_CONFIG", "DOCVERIFY_CONSOLE")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture()
def lease_dir(workdir) -> Path:
    return workdir / "leases"


@pytest.fixture(scope="session")
def sandbox():
    """One sandbox for the accounts tests (its state in memory)."""
    with SandboxConsole(SandboxConsole.Options(latency_ms=0)).start() as endpoint:
        yield endpoint


@pytest.fixture()
def tenant(sandbox):
    """The first seeded tenant, reset to its seeded state (alice's one AccessKey)."""
    account = DEFAULT_ACCOUNTS[0]
    SandboxClient(sandbox.url, account.access_key_id, account.access_key_secret).call("ResetAccount", "sandbox")
    return account


@pytest.fixture()
def root_client(sandbox, tenant):
    return SandboxClient(sandbox.url, tenant.access_key_id, tenant.access_key_secret)
