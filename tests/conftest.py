"""Shared fixtures: the corpus (tests/corpus) and the browser."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_location import corpus_root


@pytest.fixture(scope="session")
def corpus() -> Path:
    return corpus_root()


@pytest.fixture(scope="session")
def chromium():
    """The Chromium the browser tests drive (docverify_playwright.browser.find_browser); skips,
    saying why, where there is none or Playwright is not installed."""
    from docverify_playwright.browser import find_browser
    from docverify.errors import EnvironmentProblem

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
