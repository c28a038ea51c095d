"""Fixtures: an embedded sandbox on loopback, Terraform with a private cache, a scripted fake
OpenAI-protocol server (tests/models/fake_openai.py) that answers with real HCL."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "models"))  # fake_openai
if importlib.util.find_spec("docverify_terraform.resourcecoder") is None:  # before the entry point is installed
    sys.path.insert(0, str(ROOT / "plugins"))

from coder_helpers import ScriptedModel  # noqa: E402

from docverify.errors import EnvironmentProblem  # noqa: E402
from docverify_sandbox.client import SandboxClient  # noqa: E402
from docverify_sandbox.server import build_app, running  # noqa: E402
from docverify_sandbox.state import DEFAULT_ACCOUNTS  # noqa: E402

LATENCY_MS = 100


@pytest.fixture(scope="session")
def sandbox_url():
    with running(build_app(latency_ms=LATENCY_MS)) as url:
        yield url


@pytest.fixture(scope="session")
def api(sandbox_url):
    account = DEFAULT_ACCOUNTS[0]
    return SandboxClient(sandbox_url, account.admin_access_key_id, account.admin_access_key_secret)


@pytest.fixture(scope="session")
def tf_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tf-cache")


@pytest.fixture(scope="session")
def terraform(sandbox_url, tf_cache):
    """Terraform pointed at the session's sandbox with the admin AccessKey; skips, saying why, without one."""
    if importlib.util.find_spec("pyvider") is None:
        pytest.skip("pyvider is not installed: pip install -e '.[terraform]'")
    from docverify_terraform.engine import Credentials, Terraform

    account = DEFAULT_ACCOUNTS[0]
    try:
        return Terraform(credentials=Credentials(account.admin_access_key_id, account.admin_access_key_secret,
                                                 "cn-hangzhou"),
                         env={"DOCVERIFY_SANDBOX_API_URL": sandbox_url}, cache_dir=tf_cache)
    except EnvironmentProblem as problem:
        pytest.skip(str(problem))


@pytest.fixture
def model():
    """``model(answers)`` starts a scripted endpoint; stopped after the test."""
    started: list[ScriptedModel] = []

    def start(answers: list) -> ScriptedModel:
        scripted = ScriptedModel(answers)
        scripted.server.__enter__()
        started.append(scripted)
        return scripted

    yield start
    for scripted in started:
        scripted.server.__exit__(None, None, None)
