"""Shell completion (docs/shell-completion.md): click's own, plus plugin names and procedures."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
from click.shell_completion import BashComplete, ZshComplete

from docverify.cli import cli, completion
from docverify.cli.app import App
from docverify.errors import PluginError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "docs"


def values(command: click.Command, args: list[str], incomplete: str, shell=BashComplete) -> list[str]:
    """What the shell is offered for ``incomplete`` after ``args`` (click's own resolution)."""
    completer = shell(command, {}, "docverify", "_DOCVERIFY_COMPLETE")
    return [item.value for item in completer.get_completions(args, incomplete)]


@click.command()
@click.argument("paths", nargs=-1, shell_complete=completion.doc_paths)
@click.option("--policy", shell_complete=completion.plugin_name("policies"))
@click.option("--console", shell_complete=completion.plugin_name("consoles"))
@click.option("--report", multiple=True, shell_complete=completion.plugin_names("reporters"))
@click.option("--fail-on", shell_complete=completion.fail_on_names)
@click.option("--set", "-O", "settings", multiple=True, shell_complete=completion.setting_assignments)
def wired(**_):
    """A command wired as `docverify check` is, completing from the installed plugins."""


def test_commands_complete_builtins_and_plugin_commands():
    offered = values(cli, [], "")
    assert {"check", "parse", "init", "plugins", "sandbox"} <= set(offered)
    assert values(cli, [], "in") == ["init"]


def test_options_of_init_complete():
    assert {"--docs", "--force", "--no-workflow", "--action"} <= set(values(cli, ["init"], "--"))


def test_policy_completes_installed_policy_names():
    assert values(wired, ["--policy"], "") == ["hybrid", "literal", "llamacpp", "openai", "oracle", "vllm"]
    assert values(wired, ["--policy"], "l") == ["literal", "llamacpp"]
    assert values(wired, ["--console"], "") == ["aliyun", "sandbox"]


def test_plugin_summaries_reach_shells_that_show_them():
    completer = ZshComplete(wired, {}, "docverify", "_DOCVERIFY_COMPLETE")
    (item,) = completer.get_completions(["--policy"], "lit")
    assert "as written" in item.help
    assert completer.format_completion(item).startswith("plain\nliteral\n")


def test_report_completes_the_last_of_comma_separated_reporters():
    assert values(wired, ["--report"], "") == ["github", "html", "json", "junit", "terminal"]
    assert values(wired, ["--report"], "json,j") == ["json,junit"]
    assert values(wired, ["--report"], "github,") == ["github,html", "github,json", "github,junit", "github,terminal"]


def test_fail_on_completes_verdict_classes():
    assert values(wired, ["--fail-on"], "drift,") == ["drift,fail", "drift,env"]


def test_set_completes_plugin_choices_of_every_family():
    offered = values(wired, ["--set"], "policy.use=")
    assert offered == [f"policy.use={name}" for name in ("hybrid", "literal", "llamacpp", "openai", "oracle", "vllm")]
    assert "reporter.use=junit" in values(wired, ["-O"], "rep")
    assert "console.use=sandbox" in values(wired, ["-O"], "")


def test_file_hash_completes_the_procedures_of_that_file():
    doc = str(FIXTURES / "ram-user.md")
    assert values(wired, [], f"{doc}#") == [f"{doc}#ram-create-user", f"{doc}#ram-delete-user"]
    assert values(wired, [], f"{doc}#ram-d") == [f"{doc}#ram-delete-user"]
    heading = str(FIXTURES / "create-security-group.md")
    assert values(wired, [], f"{heading}#") == [f"{heading}#create-a-security-group"]  # the part check takes
    assert values(wired, [], str(FIXTURES / "nope.md#")) == []


def test_paths_complete_as_files():
    completer = BashComplete(wired, {}, "docverify", "_DOCVERIFY_COMPLETE")
    (item,) = completer.get_completions([], "doc")
    assert item.type == "file"  # the shell lists files and folders itself


class _BrokenPlugins:
    def registry(self, family):
        raise PluginError("plugin 'x' failed in register_policies: ImportError: no module named y")


def test_a_broken_plugin_completes_to_nothing_rather_than_failing_the_shell():
    context = click.Context(wired, obj=App(plugins=_BrokenPlugins()))
    param = next(p for p in wired.params if p.name == "policy")
    assert param.shell_complete(context, "") == []


def test_check_completes_plugin_names():
    assert values(cli, ["check", "docs", "--policy"], "") == ["hybrid", "literal", "llamacpp", "openai", "oracle", "vllm"]
    assert values(cli, ["check", "docs", "--report"], "json,j") == ["json,junit"]
    assert "console.use=sandbox" in values(cli, ["check", "docs", "--set"], "con")
    doc = str(FIXTURES / "ram-user.md")
    assert values(cli, ["check"], f"{doc}#ram-c") == [f"{doc}#ram-create-user"]


def _docverify() -> list[str]:
    script = shutil.which("docverify", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "docverify"]


def test_the_installed_command_answers_the_shell():
    """What ~/.bashrc runs: the script, then the completions it asks for."""
    source = subprocess.run(_docverify(), env={**os.environ, "_DOCVERIFY_COMPLETE": "bash_source"},
                            capture_output=True, text=True, timeout=120)
    assert source.returncode == 0, source.stderr
    assert "complete -o nosort -F _docverify_completion docverify" in source.stdout
    asked = subprocess.run(_docverify(), capture_output=True, text=True, timeout=120, env={
        **os.environ, "_DOCVERIFY_COMPLETE": "bash_complete", "COMP_WORDS": "docverify init --no-w", "COMP_CWORD": "2"})
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.split() == ["plain,--no-workflow"]
