"""Plugin loading through entry points and pluggy, as a third party would."""

import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import click
import pytest

from docverify.errors import PluginError
from docverify.hookspecs import hookimpl
from docverify.plugins import load_plugins
from docverify.registry import Plugin


class EchoPolicy(Plugin):
    """Repeats what it is told."""

    name = "echo"

    class Options(Plugin.Options):
        times: int = 1


def _module(name: str, **hooks) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook_name, function in hooks.items():
        setattr(module, hook_name, hookimpl(function))
    return module


def test_builtin_plugins_load_through_entry_points():
    plugin_set = load_plugins()
    entry = plugin_set.registry("provisioners").entry("none")
    assert plugin_set.origin(entry).builtin
    assert plugin_set.origin(entry).describe() == "built-in"


def test_extra_plugin_registers_classes_and_commands():
    @click.command("hello")
    def hello():
        """Say hello."""

    module = _module(
        "docverify_echo",
        register_policies=lambda register: register(EchoPolicy),
        register_commands=lambda register: register(hello),
    )
    plugin_set = load_plugins(entry_points=False, extra=[module])
    assert plugin_set.get("policies", "echo") is EchoPolicy
    assert plugin_set.get("commands", "hello") is hello


def test_misspelt_hook_is_a_plugin_error():
    module = _module("docverify_typo", register_policy=lambda register: None)
    with pytest.raises(PluginError, match="docverify_typo"):
        load_plugins(entry_points=False, extra=[module])


def test_plugin_raising_in_its_hook_is_a_plugin_error():
    def broken(register):
        raise RuntimeError("boom")

    module = _module("docverify_broken", register_checkers=broken)
    with pytest.raises(PluginError, match="'docverify_broken' failed in register_checkers: RuntimeError: boom"):
        load_plugins(entry_points=False, extra=[module])


def _install_fake_distribution(root, name, module_source):
    """A real distribution on sys.path (dist-info + module), found by importlib.metadata."""
    (root / f"{name}.py").write_text(textwrap.dedent(module_source))
    info = root / f"{name}-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(f"[docverify]\n{name} = {name}\n")


def _docverify(*args, pythonpath):
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    env.pop("DOCVERIFY_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "docverify", *args], capture_output=True, text=True, env=env)


def test_third_party_distribution_is_listed_with_its_origin(tmp_path):
    _install_fake_distribution(
        tmp_path,
        "docverify_thirdparty",
        """
        from docverify.hookspecs import hookimpl
        from docverify.registry import Plugin

        class LoudReporter(Plugin):
            '''Shouts results.'''
            name = "loud"
            class Options(Plugin.Options):
                volume: int = 11

        @hookimpl
        def register_reporters(register):
            register(LoudReporter)
        """,
    )
    result = _docverify("plugins", "--json", pythonpath=tmp_path)
    assert result.returncode == 0, result.stderr
    import json

    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["loud"]["family"] == "reporters"
    assert rows["loud"]["origin"] == "docverify_thirdparty 1.2.3"
    assert rows["loud"]["builtin"] is False
    assert rows["loud"]["options"] == [{"name": "volume", "type": "int", "description": "", "default": 11}]
    assert rows["none"]["builtin"] is True


def test_plugin_that_fails_to_import_exits_4_with_one_line(tmp_path):
    _install_fake_distribution(tmp_path, "docverify_crashy", "import does_not_exist_anywhere\n")
    result = _docverify("plugins", pythonpath=tmp_path)
    assert result.returncode == 4
    assert "plugin 'docverify_crashy' (from docverify_crashy 1.2.3) failed to load" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.browser
def test_a_check_imports_only_the_plugins_it_uses(tmp_path, chromium):
    """Built-ins register by reference: a literal check on the sandbox never imports
    the model policies, the judges, ResourceCoder, Terraform or the html report."""
    doc = Path(__file__).parents[2] / "examples" / "docs" / "oss-buckets.md"
    listing = tmp_path / "modules.json"
    code = ("import atexit, json, sys\n"
            f"atexit.register(lambda: open({str(listing)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n"
            "from docverify.cli import main\n"
            f"main(['check', {str(doc) + '#oss-create-bucket'!r}, '--no-store', '-qq'])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    modules = set(json.loads(listing.read_text()))
    assert {"docverify_literal.policy", "docverify_playwright.executor", "docverify_sandbox.console",
            "docverify_actiontrail.checker", "docverify_reports.terminal"} <= modules
    unused = {"docverify_models.policies", "docverify_models.judges", "docverify_terraform.resourcecoder.provisioner",
              "docverify_terraform.provisioner", "docverify_reports.html", "docverify_sandbox.cli",
              "docverify_terraform.cli", "docverify_terraform.resourcecoder.cli"}
    assert not unused & modules, sorted(unused & modules)


def test_engines_are_a_family_any_plugin_asks_by_name():
    """Policies, judges and ResourceCoder get a model engine by name, never by
    importing the models plugin; an unknown one lists the installed engines."""
    from docverify.engines import EndpointOptions, Engine, get_engine
    from docverify.errors import ConfigError

    openai = get_engine("openai")
    assert issubclass(openai, Engine) and openai.name == "openai"
    engine = openai.from_endpoint(EndpointOptions(base_url="http://127.0.0.1:9/v1", model="m", local=True))
    assert (engine.model, engine.local) == ("m", True)
    with pytest.raises(ConfigError, match="does not talk to an endpoint"):
        get_engine("llamacpp").from_endpoint(EndpointOptions())
    with pytest.raises(PluginError, match="unknown engine 'opneai' \\(did you mean 'openai'\\?\\); valid engines: "
                                          "llamacpp, openai, vllm"):
        get_engine("opneai")
    rows = subprocess.run([sys.executable, "-m", "docverify", "plugins", "--json"], capture_output=True, text=True)
    engines = {row["name"]: row for row in json.loads(rows.stdout) if row["family"] == "engines"}
    assert set(engines) == {"openai", "llamacpp", "vllm"} and engines["openai"]["description"]
