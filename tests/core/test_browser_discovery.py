import stat

import pytest

from docverify.errors import EnvironmentProblem, ExitCode
from docverify_playwright.browser import find_browser


def _fake_executable(path):
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_explicit_path_wins(tmp_path):
    browser = _fake_executable(tmp_path / "my-chrome")
    env = {"DOCVERIFY_BROWSER": "/nope", "PATH": ""}
    found = find_browser(str(browser), environ=env)
    assert found.path == str(browser) and found.found_by == "--browser-path"


def test_env_var_before_playwright_and_system(tmp_path):
    browser = _fake_executable(tmp_path / "env-chrome")
    playwright_own = _fake_executable(tmp_path / "pw-chrome")
    found = find_browser(environ={"DOCVERIFY_BROWSER": str(browser)}, playwright_path=str(playwright_own))
    assert found.found_by == "DOCVERIFY_BROWSER"


def test_playwright_own_browser_before_system(tmp_path):
    playwright_own = _fake_executable(tmp_path / "pw-chrome")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_executable(bin_dir / "chromium")
    found = find_browser(environ={"PATH": str(bin_dir)}, playwright_path=str(playwright_own))
    assert found.found_by == "playwright"


def test_system_chromium_on_path(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    chromium = _fake_executable(bin_dir / "chromium")
    found = find_browser(environ={"PATH": str(bin_dir)}, playwright_path=str(tmp_path / "not-installed"))
    assert found.path == str(chromium) and found.found_by == "system"


def test_nothing_found_says_how_to_install(tmp_path):
    with pytest.raises(EnvironmentProblem) as caught:
        find_browser(environ={"PATH": str(tmp_path)})
    assert "apt-get install chromium" in str(caught.value)
    assert caught.value.exit_code == ExitCode.ENVIRONMENT


def test_explicit_path_that_is_not_executable(tmp_path):
    with pytest.raises(EnvironmentProblem, match="--browser-path names .* not an executable"):
        find_browser(str(tmp_path / "missing"), environ={})
