"""Shared fixtures: the corpus (tests/corpus), the browser, the fake plugins installed."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest
from corpus_location import corpus_root

from docverify.openmp import share_cores

# As the CLI does: the suite's workers share the cores with browsers, and an OpenMP thread of
# llama.cpp or PyTorch spinning for work would hold one. Before any test loads the runtime,
# which reads the setting once.
share_cores()

# The Ctrl-C tests signal the docverify processes they start. A suite started in the background
# by a non-interactive shell (`pytest &`, a nohup'd script) has SIGINT ignored, every child
# inherits that, and Python then never raises KeyboardInterrupt in them: those tests would fail
# for the way the suite was started. Children of a process that handles SIGINT get the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN and threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def corpus() -> Path:
    return corpus_root()


@pytest.fixture(scope="session")
def chromium():
    """The Chromium the browser tests drive (docverify_playwright.browser.find_browser); skips,
    saying why, where there is none or Playwright is not installed."""
    from docverify.errors import EnvironmentProblem
    from docverify_playwright.browser import find_browser

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed: pip install -e '.[test]'")
    with sync_playwright() as playwright:
        own = playwright.chromium.executable_path
    try:
        return find_browser(playwright_path=own)
    except EnvironmentProblem as problem:
        pytest.skip(str(problem))


@pytest.fixture
def installed_fakes(monkeypatch):
    """The fake plugins (tests/fake_plugins.py) as if installed: what asks the installed
    plugins by name (``docverify.engines.get_engine("fake")``) finds them. The fake
    engine's shared queue (``fake_plugins.REPLIES``) and its list of engines made start
    empty."""
    import fake_plugins

    from docverify import plugins

    fakes = plugins.load_plugins(extra=[fake_plugins])
    monkeypatch.setattr(plugins, "installed_plugins", lambda: fakes)
    monkeypatch.setattr(fake_plugins, "REPLIES", [])
    monkeypatch.setattr(fake_plugins, "ENGINES", [])
    return fakes
