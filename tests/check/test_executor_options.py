"""`docverify check`'s browser options go to the table of the executor in use
(`executor.<name>.<option>`), never to a plugin named in the core."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import Field

from docverify.cli import cli
from docverify.cli.app import App
from docverify.cli.check import _executor_options
from docverify.config import load_config
from docverify.errors import ExitCode, UsageError
from docverify.execute.executor import Executor
from docverify.hookspecs import hookimpl
from docverify.plugins import load_plugins

DOCS = Path(__file__).resolve().parents[2] / "examples" / "docs"


class BareExecutor(Executor):
    """An executor with a window option of its own and no browser path."""

    name = "bare"

    class Options(Executor.Options):
        headed: bool = Field(False, description="show the window")


bare_plugin = types.SimpleNamespace(__name__="bare_plugin",
                                    register_executors=hookimpl(lambda register: register(BareExecutor)))


@pytest.fixture(scope="module")
def plugins():
    return load_plugins(extra=[bare_plugin])


def _config(tmp_path, **overrides):
    return load_config(cwd=tmp_path, environ={}, overrides=overrides)


def test_flags_go_to_the_executor_in_use(plugins, tmp_path):
    config = _config(tmp_path, **{"executor.use": "bare"})
    overrides, names = _executor_options(config, plugins, {"headed": (True, "--headed")})
    assert overrides == {"executor.bare.headed": True} and names == {"executor.bare.headed": "--headed"}
    default = _config(tmp_path)
    overrides, _ = _executor_options(default, plugins, {"slow_mo_ms": (50, "--slow-mo"), "trace": ("on-failure", None)})
    assert overrides == {f"executor.{default.settings.executor.use[0]}.slow_mo_ms": 50,
                         f"executor.{default.settings.executor.use[0]}.trace": "on-failure"}


def test_a_flag_the_executor_lacks_is_one_usage_error(plugins, tmp_path):
    config = _config(tmp_path, **{"executor.use": "bare"})
    with pytest.raises(UsageError, match="--browser-path: the executor 'bare' has no option 'browser_path'"):
        _executor_options(config, plugins, {"browser_path": ("/usr/bin/chromium", "--browser-path")})
    # a default the command picks itself (the html report's trace) is simply left out
    assert _executor_options(config, plugins, {"trace": ("on-failure", None)}) == ({}, {})


def test_a_trace_the_configuration_sets_is_kept(plugins, tmp_path):
    config = _config(tmp_path, **{"executor.playwright.trace": "off"})
    assert _executor_options(config, plugins, {"trace": ("on-failure", None)}) == ({}, {})


def test_the_cli_says_which_option_is_missing(plugins):
    result = CliRunner().invoke(cli, ["check", f"{DOCS / 'oss-buckets.md'}#oss-create-bucket", "--dry-run",
                                      "-O", "executor.use=bare", "--browser-path", "/usr/bin/chromium"],
                                obj=App(plugins=plugins))
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "--browser-path: the executor 'bare' has no option 'browser_path'" in result.stderr
    assert "its options: headed" in result.stderr
