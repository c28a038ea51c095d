"""Defaults and former names are declared by plugins (``register(..., default=True,
aliases=(...))``); the core names no plugin."""

import json
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.cli.app import App
from docverify.config import load_config
from docverify.errors import ConfigError, ExitCode, PluginError
from docverify.hookspecs import hookimpl
from docverify.plugins import load_plugins
from docverify.registry import FAMILY_BY_NAME, Plugin, Registry

DOC = Path(__file__).parents[2] / "examples" / "docs" / "oss-buckets.md"


class EchoPolicy(Plugin):
    """Repeats what it is told."""

    name = "echo"


class Loud(Plugin):
    """Shouts."""

    name = "loud"


def _module(name: str, **hooks) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook_name, function in hooks.items():
        setattr(module, hook_name, hookimpl(function))
    return module


def _echo_default() -> types.ModuleType:
    return _module("docverify_echo", register_policies=lambda register: register(EchoPolicy, default=True))


# ------------------------------------------------------------------ registry
def test_the_default_is_the_plugin_that_declares_itself_so():
    registry = Registry(FAMILY_BY_NAME["policies"])
    registry.add(Loud, plugin="one")
    registry.add(EchoPolicy, plugin="two", default=True)
    assert registry.default() == "echo" and registry.entry("echo").default and not registry.entry("loud").default


def test_two_defaults_name_both_plugins_and_ask_for_use():
    registry = Registry(FAMILY_BY_NAME["policies"])
    registry.add(Loud, plugin="one", default=True)
    registry.add("somewhere:EchoPolicy", plugin="two", name="echo", default=True)
    with pytest.raises(ConfigError) as caught:
        registry.default()
    message = str(caught.value)
    assert "'echo' (plugin 'two')" in message and "'loud' (plugin 'one')" in message
    assert "set policy.use" in message and caught.value.exit_code == ExitCode.USAGE


def test_no_default_says_which_family_needs_use():
    registry = Registry(FAMILY_BY_NAME["checkers"])
    registry.add(Loud, plugin="one")
    with pytest.raises(ConfigError, match=r"no checker is configured .*: set checker.use \(installed checkers: loud\)"):
        registry.default()


def test_a_former_name_selects_the_plugin_and_says_it_was_renamed():
    registry = Registry(FAMILY_BY_NAME["reporters"])
    registry.add("mod:Loud", plugin="one", name="loud", aliases=("noisy",))
    assert registry.canonical("noisy") == "loud" and registry.canonical("loud") == "loud"
    assert "noisy" in registry and registry.names() == ["loud"]
    assert registry.entry("noisy") is registry.entry("loud")
    assert registry.renamed("noisy").startswith("reporter 'noisy' is now 'loud'; use 'loud'")
    assert registry.renamed("loud") is None
    with pytest.raises(PluginError, match="two reporters are named 'noisy'"):
        registry.add("mod:Other", plugin="two", name="noisy")
    with pytest.raises(PluginError, match="two reporters are named 'loud'"):
        registry.add("mod:Other", plugin="two", name="other", aliases=("loud",))
    with pytest.raises(PluginError, match="an alias repeats a name"):
        registry.add("mod:Other", plugin="two", name="other", aliases=("other",))


# ------------------------------------------------------------------ configuration
def test_the_builtins_declare_the_defaults():
    config = load_config(cwd=Path("/"), environ={}, plugins=load_plugins)
    assert [getattr(config.settings, table).use for table in
            ("console", "provisioner", "executor", "policy", "checker", "reporter")] == \
        [["sandbox"], ["none"], ["playwright"], ["literal"], ["actiontrail"], ["terminal"]]
    assert config.settings.console.configured is None and config.origin("console.use") == "default"


def test_a_plugin_declares_its_familys_default(tmp_path):
    plugins = load_plugins(entry_points=False, extra=[_echo_default()])
    config = load_config(cwd=tmp_path, environ={}, plugins=lambda: plugins)
    assert config.settings.policy.use == ["echo"]
    # a configured `use` wins, and an explicit empty list stays empty
    config = load_config(cwd=tmp_path, environ={"DOCVERIFY_POLICY": "loud"}, plugins=lambda: plugins)
    assert config.settings.policy.use == ["loud"]
    none = load_config(cwd=tmp_path, environ={"DOCVERIFY_REPORTER": ""}, plugins=lambda: plugins)
    assert none.settings.reporter.use == []


def test_a_second_default_is_an_error_only_where_the_default_is_needed(tmp_path):
    plugins = load_plugins(extra=[_echo_default()])  # the built-in literal policy is the default too
    config = load_config(cwd=tmp_path, environ={}, plugins=lambda: plugins)
    assert config.settings.console.use == ["sandbox"]  # other families are not affected
    with pytest.raises(ConfigError) as caught:
        config.settings.policy.use
    assert "'echo' (plugin 'docverify_echo')" in str(caught.value)
    assert "'literal' (plugin 'literal')" in str(caught.value) and "set policy.use" in str(caught.value)
    chosen = load_config(cwd=tmp_path, environ={}, overrides={"policy.use": "literal"}, plugins=lambda: plugins)
    assert chosen.settings.policy.use == ["literal"]


def test_docverify_config_shows_the_error_and_the_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("DOCVERIFY_POLICY", "DOCVERIFY_CONFIG", "DOCVERIFY_REPORTER"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()
    result = runner.invoke(cli, ["config"], obj=App(plugins=load_plugins(extra=[_echo_default()])))
    assert result.exit_code == ExitCode.USAGE
    assert "'echo' (plugin 'docverify_echo') and 'literal' (plugin 'literal')" in result.output
    result = runner.invoke(cli, ["config"])
    assert result.exit_code == 0, result.output
    assert 'console.use = ["sandbox"]    # default' in result.output
    assert 'reporter.use = ["terminal"]    # default' in result.output
    values = json.loads(runner.invoke(cli, ["config", "--json"]).stdout)
    assert values["settings"]["policy"]["use"] == ["literal"]


def test_docverify_plugins_marks_the_defaults_and_former_names():
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    rows = {(row["family"], row["name"]): row for row in json.loads(result.stdout)}
    defaults = sorted(name for (family, name), row in rows.items() if row["default"])
    assert defaults == ["actiontrail", "literal", "local", "none", "playwright", "sandbox", "terminal"]
    assert rows[("reporters", "terminal")]["aliases"] == ["console"]
    table = CliRunner().invoke(cli, ["plugins"], env={"COLUMNS": "200"}).stdout
    assert "sandbox (default)" in table and "formerly console" in table


# ------------------------------------------------------------------ the terminal reporter's former name
def test_a_config_file_naming_the_console_reporter_gets_the_terminal_one(tmp_path):
    (tmp_path / "docverify.toml").write_text(
        '[reporter]\nuse = ["console", "json"]\n\n[reporter.console]\nverbosity = -1\n')
    config = load_config(cwd=tmp_path, environ={})
    assert config.settings.reporter.use == ["terminal", "json"]
    assert config.settings.reporter.plugin_tables() == {"terminal": {"verbosity": -1}}
    assert config.origin("reporter.terminal.verbosity").endswith("docverify.toml:5")
    [warning] = config.warnings
    assert "docverify.toml:2: reporter 'console' is now 'terminal'; use 'terminal'" in warning
    # -q/-v set the terminal table: they still win over the file's old table
    config = load_config(cwd=tmp_path, environ={}, overrides={"reporter.terminal.verbosity": 1})
    assert config.settings.reporter.plugin_tables() == {"terminal": {"verbosity": 1}}


def test_the_env_var_naming_the_console_reporter_warns_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DOCVERIFY_CONFIG", raising=False)
    monkeypatch.setenv("DOCVERIFY_REPORTER", "console")
    monkeypatch.setenv("DOCVERIFY_REPORTER__CONSOLE__VERBOSITY", "1")
    result = CliRunner().invoke(cli, ["config"])
    assert result.exit_code == 0, result.output
    assert 'reporter.use = ["terminal"]    # env DOCVERIFY_REPORTER' in result.stdout
    assert 'reporter.terminal.verbosity = "1"    # env DOCVERIFY_REPORTER__CONSOLE__VERBOSITY' in result.stdout
    assert result.stderr.splitlines() == [
        "warning: env DOCVERIFY_REPORTER: reporter 'console' is now 'terminal'; use 'terminal' "
        "(the name 'console' still works for now but will be removed)"]


@pytest.mark.parametrize("args, where", [(["--report", "console"], "option --report"),
                                         (["-O", "reporter.use=console"], "option --set reporter.use")])
def test_the_cli_naming_the_console_reporter_warns_once(tmp_path, monkeypatch, args, where):
    monkeypatch.chdir(tmp_path)
    for name in ("DOCVERIFY_CONFIG", "DOCVERIFY_REPORTER"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(cli, ["check", f"{DOC}#oss-create-bucket", "--dry-run", *args])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: {where}: reporter 'console' is now 'terminal'; use 'terminal' "
                        "(the name 'console' still works for now but will be removed)"]
