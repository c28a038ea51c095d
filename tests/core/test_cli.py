"""The CLI as a user meets it: exit codes, one-line errors, the crash handler."""

import types

import click
import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.cli.app import App
from docverify.errors import EnvironmentProblem, ExitCode
from docverify.hookspecs import hookimpl
from docverify.plugins import load_plugins


@pytest.fixture
def runner():
    return CliRunner()


def _app_with_commands(*commands):
    module = types.ModuleType("docverify_testcommands")
    module.register_commands = hookimpl(lambda register: [register(command) for command in commands])
    return App(plugins=load_plugins(extra=[module]))


@click.command("explode")
def explode():
    """Fail like a bug would."""
    raise RuntimeError("kaboom")


@click.command("console-down")
def console_down():
    """Fail like an unreachable console would."""
    raise EnvironmentProblem("console http://127.0.0.1:9 is unreachable", hint="is it running?")


def test_help_lists_builtin_commands(runner):
    for flag in ("-h", "--help"):
        result = runner.invoke(cli, [flag])
        assert result.exit_code == 0
        for command in ("parse", "plugins", "config"):
            assert command in result.output


def test_version(runner):
    result = runner.invoke(cli, ["--version"])
    assert result.exit_code == 0 and "docverify" in result.output


def test_unknown_command_is_a_usage_error(runner):
    result = runner.invoke(cli, ["nosuch"])
    assert result.exit_code == ExitCode.USAGE
    assert "No such command" in result.output


def test_plugin_command_is_reachable_and_listed(runner):
    app = _app_with_commands(explode)
    result = runner.invoke(cli, ["--help"], obj=app)
    assert "explode" in result.output


def test_internal_error_is_one_line_without_traceback(runner, monkeypatch):
    monkeypatch.delenv("DOCVERIFY_DEBUG", raising=False)
    result = runner.invoke(cli, ["explode"], obj=_app_with_commands(explode))
    assert result.exit_code == ExitCode.INTERNAL
    assert "internal error: RuntimeError: kaboom" in result.output
    assert "Traceback" not in result.output


def test_debug_shows_the_traceback(runner, monkeypatch):
    monkeypatch.setenv("DOCVERIFY_DEBUG", "1")
    result = runner.invoke(cli, ["explode"], obj=_app_with_commands(explode))
    assert result.exit_code == ExitCode.INTERNAL
    assert "Traceback" in result.output


def test_docverify_error_maps_to_its_exit_code(runner, monkeypatch):
    monkeypatch.delenv("DOCVERIFY_DEBUG", raising=False)
    result = runner.invoke(cli, ["console-down"], obj=_app_with_commands(console_down))
    assert result.exit_code == ExitCode.ENVIRONMENT
    assert result.output.strip() == "error: console http://127.0.0.1:9 is unreachable (is it running?)"


def test_config_error_is_exit_2_naming_the_file(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docverify.toml").write_text("jobs = 0\n")
    result = runner.invoke(cli, ["config"])
    assert result.exit_code == ExitCode.USAGE
    assert "docverify.toml:1: jobs: Input should be greater than or equal to 1" in result.output


def test_config_shows_origins(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docverify.toml").write_text("jobs = 3\n")
    monkeypatch.setenv("DOCVERIFY_POLICY", "literal")
    result = runner.invoke(cli, ["config"])
    assert result.exit_code == 0, result.output
    assert "jobs = 3    # docverify.toml:1" in result.output
    assert 'policy.use = ["literal"]    # env DOCVERIFY_POLICY' in result.output


def test_config_option_points_at_a_file(runner, tmp_path):
    config_file = tmp_path / "custom.toml"
    config_file.write_text("jobs = 5\n")
    result = runner.invoke(cli, ["--config", str(config_file), "config", "--json"])
    assert result.exit_code == 0, result.output
    assert '"jobs": 5' in result.output


def test_plugin_table_naming_no_plugin(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docverify.toml").write_text("[provisioner.nonee]\n")
    result = runner.invoke(cli, ["config"])
    assert result.exit_code == ExitCode.USAGE
    assert "unknown provisioner 'nonee' (did you mean 'none'?)" in result.output


@click.command("wait-for-sigterm")
def wait_for_sigterm():
    """SIGTERM to this process; the second one while the first one's clean-up runs."""
    import os
    import signal
    import time

    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the signal interrupts the sleep
        raise AssertionError("SIGTERM did not stop the command")
    except KeyboardInterrupt:
        os.kill(os.getpid(), signal.SIGTERM)  # a CI runner's second signal: the clean-up goes on
        time.sleep(0.05)
        click.echo("cleaned up")
        raise


def test_sigterm_stops_a_command_as_ctrl_c_and_a_second_one_lets_its_clean_up_finish(runner, monkeypatch):
    import signal

    monkeypatch.setattr("docverify.cli._app", lambda ctx: _app_with_commands(wait_for_sigterm))
    before = signal.getsignal(signal.SIGTERM)
    result = runner.invoke(cli, ["wait-for-sigterm"])
    assert result.exit_code == ExitCode.INTERRUPTED
    assert "cleaned up" in result.stdout and "terminated (SIGTERM)" in result.stderr
    assert signal.getsignal(signal.SIGTERM) is before  # restored: the process's own again


ENTRY_POINT = """
import os, sys
from docverify import cli
sys.argv = ["docverify", "--version"]
try:
    cli.main()
except SystemExit:
    pass
print(os.environ.get("OMP_WAIT_POLICY"))
"""


@pytest.mark.parametrize(("given", "expected"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_the_entry_point_lets_openmp_threads_sleep_unless_told_otherwise(given, expected):
    """OpenMP's idle threads (llama.cpp's, PyTorch's) must not spin on the cores the browser
    needs: the CLI sets OMP_WAIT_POLICY before any command loads the runtime, and a
    policy the user set stays."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given:
        env["OMP_WAIT_POLICY"] = given
    done = subprocess.run([sys.executable, "-c", ENTRY_POINT], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == expected
