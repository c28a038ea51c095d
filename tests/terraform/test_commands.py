"""Issue 18 item 9: python-terraform builds the command lines, docverify runs them. Against a
fake ``terraform`` that records its argv and how it was started: no provider, no network."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from docverify_terraform.engine import Credentials, PlanSummary, Terraform, TerraformBinary, TerraformError
from docverify_terraform.strays import owner_marker

python_terraform = pytest.importorskip("python_terraform", reason="pip install -e '.[terraform]'")

SECRET = "s3cr3t-value-never-written"

#: records argv and how it was started (one JSON line a call), answers like Terraform
FAKE = textwrap.dedent("""
    import ctypes, json, os, stat, subprocess, sys, time
    args = sys.argv[1:]
    pdeathsig = ctypes.c_int(-1)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(2, ctypes.byref(pdeathsig), 0, 0, 0)  # PR_GET_PDEATHSIG
    with open(os.environ["FAKE_RECORD"], "a") as f:
        f.write(json.dumps({
            "argv": args, "pdeathsig": pdeathsig.value, "own_group": os.getpgrp() == os.getpid(),
            "stdout_is_file": stat.S_ISREG(os.fstat(1).st_mode), "stderr_is_file": stat.S_ISREG(os.fstat(2).st_mode),
            "owner": os.environ.get("DOCVERIFY_TERRAFORM_OWNER"), "stack": os.environ.get("DOCVERIFY_TERRAFORM_STACK"),
            "secret": os.environ.get("ALIBABA_CLOUD_ACCESS_KEY_SECRET")}) + "\\n")
    if args[0] == "init":
        os.makedirs(".terraform", exist_ok=True)
    elif args[0] == "plan" and os.environ.get("FAKE_HANG"):
        child = subprocess.Popen(["sleep", "600"])  # a provider: same process group
        open(os.environ["FAKE_HANG"], "w").write(str(child.pid))
        time.sleep(600)
    elif args[0] == "plan":
        print(json.dumps({"type": "change_summary", "changes": {"add": 1, "change": 0, "remove": 0}}))
    elif args[0] == "apply" and os.environ.get("FAKE_FAIL"):
        sys.stderr.write("Error: CreateVpc failed with secret " + os.environ["ALIBABA_CLOUD_ACCESS_KEY_SECRET"] + "\\n")
        sys.exit(1)
    elif args[0] == "output":
        print(json.dumps({"vpc_id": {"value": "vpc-1", "type": "string", "sensitive": False}}))
    elif args[0] == "state":
        print("sandbox_vpc_vpc.vpc_1")
""")


def fake_terraform(tmp_path: Path, **env: str) -> Terraform:
    binary = tmp_path / "bin" / "terraform"
    binary.parent.mkdir()
    binary.write_text(f"#!{sys.executable}\n{FAKE}")
    binary.chmod(0o755)
    return Terraform(TerraformBinary(binary, "terraform"), credentials=Credentials("LTAIkey", SECRET),
                     cache_dir=tmp_path / "cache", env={"FAKE_RECORD": str(tmp_path / "calls.jsonl"), **env})


def calls(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]


def test_python_terraform_builds_every_command_line_and_docverify_starts_it(tmp_path):
    tf = fake_terraform(tmp_path)
    stack = tf.stack(tmp_path / "s")
    assert isinstance(tf.commands(stack.workdir), python_terraform.Terraform)
    assert stack.plan() == PlanSummary(add=1)
    assert stack.apply() == {"vpc_id": "vpc-1"}
    stack.destroy()
    assert tf.run(stack.workdir, ("providers", "schema", "-json"), timeout=60).returncode == 0  # as ResourceCoder

    made = calls(tmp_path)
    assert [c["argv"] for c in made] == [
        ["init", "-no-color", "-input=false", "-backend=true"],  # not python-terraform's default -reconfigure
        ["plan", "-no-color", "-input=false", "-json", "-lock-timeout=30s"],  # nor -detailed-exitcode
        ["apply", "-no-color", "-input=false", "-json", "-lock-timeout=30s", "-auto-approve=true"],
        ["output", "-no-color", "-json"],
        ["state", "list"],
        ["destroy", "-no-color", "-input=false", "-auto-approve=true", "-json", "-lock-timeout=30s"],  # no -force
        ["providers", "schema", "-json"],
    ]
    for call in made:  # started by docverify, not by python-terraform's Popen
        assert call["stdout_is_file"] and call["stderr_is_file"]  # files, not pipes: a dead parent breaks none
        assert call["own_group"]  # killed with its providers at a timeout
        assert call["pdeathsig"] == (signal.SIGINT if sys.platform.startswith("linux") else -1)  # dies with us
        assert (call["owner"], call["stack"]) == (owner_marker(), str(stack.workdir))
        assert call["secret"] == SECRET and SECRET not in " ".join(call["argv"])  # in the environment only
        assert not any(arg.startswith(("-var-file", "-synchronous", "-force")) for arg in call["argv"])
    assert "$ terraform destroy -no-color -input=false -auto-approve=true" in stack.log_path.read_text()


def test_a_failure_is_one_redacted_line_and_the_log_is_redacted(tmp_path):
    stack = fake_terraform(tmp_path, FAKE_FAIL="1").stack(tmp_path / "s")
    with pytest.raises(TerraformError) as info:
        stack.apply()
    assert str(info.value).startswith("terraform apply failed in s: CreateVpc failed with secret ***")
    assert SECRET not in str(info.value) and SECRET not in stack.log_path.read_text()
    assert "# exit 1" in stack.log_path.read_text()


def test_a_timeout_stops_terraform_and_the_processes_it_started(tmp_path):
    from docverify_terraform.strays import running

    started = tmp_path / "provider.pid"
    stack = fake_terraform(tmp_path, FAKE_HANG=str(started)).stack(tmp_path / "s")
    stack.init()
    with pytest.raises(TerraformError, match=r"terraform plan timed out after 3 s in s"):
        stack.plan(timeout=3)
    provider = int(started.read_text())
    try:
        deadline = time.monotonic() + 10
        while running(provider) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(provider), f"the fake provider {provider} outlived the timeout"
    finally:
        if running(provider):
            os.kill(provider, signal.SIGKILL)
    assert "$ terraform plan" in stack.log_path.read_text() and "# exit -1" in stack.log_path.read_text()
