"""The ``terraform`` provisioner in real runs: META applied before the procedure, its
outputs in the task context, destroyed after; and its faults — a broken template, a
failed apply, a failed destroy, a refused AccessKey — each a clear ENV_ERROR that
leaves nothing behind in the sandbox (or, for a failed destroy, a ledger entry)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from docverify.console import ConsoleEndpoint
from docverify.errors import EnvironmentProblem
from docverify.parse.parser import parse_text
from docverify.task import make_task
from docverify_sandbox.console import SandboxConsole
from docverify_terraform.provisioner import TerraformProvisioner

pytestmark = [pytest.mark.terraform, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]

NEEDS_A_GROUP = """\
    # Add a rule to a security group

    <!-- docverify:
    id: sg-rule
    requires:
      - type: security_group
    expect:
      - {event: AuthorizeSecurityGroup, service: Ecs}
    -->

    1. Log on to the ECS console.
    2. In the left-side navigation pane, choose **Network** > **Security Groups**.
    3. In the security group list, click **<security-group-name>**.
    4. On the **Inbound** tab, click **Add Security Group Rule**.
    5. Configure the rule.

        |Parameter|Value|
        |---|---|
        |**Protocol Type**|**Custom TCP**|
        |**Port Range**|8080/8080|
        |**Authorization Object**|0.0.0.0/0|

    6. Click **Save**.
"""


def names(api, action: str, key: list[str], name_field: str) -> set[str]:
    data = api.call(action, "2014-05-26" if action.startswith("DescribeSecurity") else "2016-04-28",
                    {"RegionId": "cn-hangzhou", "PageSize": "100"})
    items = data
    for part in key:
        items = items.get(part, {}) if isinstance(items, dict) else items
    return {item.get(name_field) for item in items or [] if item.get(name_field, "").startswith("docverify-")}


def leftovers(api) -> set[str]:
    return (names(api, "DescribeVpcs", ["Vpcs", "Vpc"], "VpcName")
            | names(api, "DescribeSecurityGroups", ["SecurityGroups", "SecurityGroup"], "SecurityGroupName"))


def check(tmp_path: Path, sandbox_url: str, chromium, *options: str) -> tuple[subprocess.CompletedProcess, dict]:
    args = [sys.executable, "-m", "docverify", "check", "docs", "--no-store", "--report", "json", "--output", "out",
            "--browser-path", str(chromium.path), "-O", "provisioner.use=terraform",
            "-O", f"console.sandbox.url={sandbox_url}", *options]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    report = json.loads((tmp_path / "out" / "docverify.json").read_text())
    return done, report


@pytest.fixture
def docs(tmp_path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "sg-rule.md").write_text(textwrap.dedent(NEEDS_A_GROUP))
    return tmp_path


@pytest.mark.browser
def test_a_procedure_runs_on_what_was_provisioned_for_it_and_it_is_destroyed_after(docs, sandbox_url, api, chromium):
    before = leftovers(api)
    done, report = check(docs, sandbox_url, chromium)
    result = report["results"][0]
    assert done.returncode == 0, (done.stderr, result["reason"])
    assert result["verdict"] == "PASS"
    suffix = result["context"]["suffix"]
    assert result["context"]["security-group-name"] == f"docverify-sg-{suffix}"
    assert result["context"]["security-group-id"].startswith("sg-")
    assert result["setup_s"] > 1  # the stack was applied before the browser opened
    assert leftovers(api) == before  # and destroyed after
    assert not list((docs / ".docverify" / "stacks").glob("*.json"))


def test_a_broken_template_is_an_environment_error_naming_the_file_and_line(docs, sandbox_url, api, tmp_path):
    templates = tmp_path / "templates" / "sandbox"
    templates.mkdir(parents=True)
    (templates / "vpc.tf.j2").write_text('resource "sandbox_vpc_vpc" "{{ r.address }}" {\n  vpc_name = {{ r.nmae }}\n}\n')
    task = make_task(parse_text(textwrap.dedent(NEEDS_A_GROUP), "docs/sg-rule.md").procedures[0])
    provisioner = TerraformProvisioner(TerraformProvisioner.Options(templates=str(tmp_path / "templates")))
    with pytest.raises(EnvironmentProblem, match=r"vpc\.tf\.j2.*line 2|vpc\.tf\.j2:2"):
        with provisioner.provision(task, SandboxConsole.endpoint(sandbox_url, None)):
            pass


def test_a_failed_apply_destroys_what_it_made_and_is_an_environment_error(sandbox_url, api, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = leftovers(api)
    templates = tmp_path / "templates" / "sandbox"
    templates.mkdir(parents=True)
    shutil.copy(ROOT / "terraform_templates/sandbox/security_group.tf.j2", templates)
    # the VPC is created; the security group is refused by the API (a malformed name)
    (templates / "security_group.tf.j2").write_text(
        (templates / "security_group.tf.j2").read_text().replace("{{ r.name | hcl }}", '"-bad name-"')
        .replace('"{{ r.name }}"', '"-bad name-"'))
    task = make_task(parse_text(textwrap.dedent(NEEDS_A_GROUP), "docs/sg-rule.md").procedures[0])
    provisioner = TerraformProvisioner(TerraformProvisioner.Options(templates=str(tmp_path / "templates")))
    with pytest.raises(EnvironmentProblem, match="apply"):
        with provisioner.provision(task, SandboxConsole.endpoint(sandbox_url, None)):
            pytest.fail("the procedure must not run on a half-made environment")
    assert leftovers(api) == before
    assert not list((tmp_path / ".docverify" / "stacks").glob("*.json"))


def test_a_refused_access_key_is_an_environment_error_and_nothing_is_left(sandbox_url, api, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = leftovers(api)
    good = SandboxConsole.endpoint(sandbox_url, None)
    bad = ConsoleEndpoint(url=good.url, api_url=good.api_url, audit_url=good.audit_url,
                          extra={**good.extra, "access_key_secret": "not-the-secret-0000"})
    task = make_task(parse_text(textwrap.dedent(NEEDS_A_GROUP), "docs/sg-rule.md").procedures[0])
    with pytest.raises(EnvironmentProblem) as raised:
        with TerraformProvisioner().provision(task, bad):
            pytest.fail("must not run")
    assert "not-the-secret-0000" not in str(raised.value)
    assert "Signature" in str(raised.value) or "AccessKey" in str(raised.value)
    assert leftovers(api) == before


def test_a_failed_destroy_is_retried_reported_and_left_in_the_ledger_for_cleanup(sandbox_url, api, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    templates = tmp_path / "templates" / "sandbox"
    templates.mkdir(parents=True)
    text = (ROOT / "terraform_templates/sandbox/vpc.tf.j2").read_text()
    (templates / "vpc.tf.j2").write_text(text.replace('" {\n', '" {\n  lifecycle {\n    prevent_destroy = true\n  }\n', 1))
    task = make_task(parse_text(textwrap.dedent(NEEDS_A_GROUP), "docs/sg-rule.md").procedures[0])
    provisioner = TerraformProvisioner(TerraformProvisioner.Options(templates=str(tmp_path / "templates"),
                                                                    destroy_attempts=2))
    with pytest.raises(EnvironmentProblem, match="destroy") as raised:
        with provisioner.provision(task, SandboxConsole.endpoint(sandbox_url, None)) as made:
            assert any("sandbox_vpc_vpc" in r for r in made.resources)
    assert "sandbox_vpc_vpc" in str(raised.value)  # the leftover is named
    (entry,) = list((tmp_path / ".docverify" / "stacks").glob("*.json"))
    recorded = json.loads(entry.read_text())
    assert recorded["labels"]["task"] == "sg-rule" and "access_key_secret" not in entry.read_text()
    # clean up for the next tests: the VPC by hand (prevent_destroy stops Terraform by design)
    vpc = next(v for v in api.call("DescribeVpcs", "2016-04-28", {"RegionId": "cn-hangzhou", "PageSize": "100"})
               ["Vpcs"]["Vpc"] if v["VpcName"] == f"docverify-vpc-{task.context['suffix']}")
    for group in api.call("DescribeSecurityGroups", "2014-05-26", {"RegionId": "cn-hangzhou", "VpcId": vpc["VpcId"]})[
            "SecurityGroups"]["SecurityGroup"]:
        api.call("DeleteSecurityGroup", "2014-05-26", {"RegionId": "cn-hangzhou", "SecurityGroupId": group["SecurityGroupId"]})
    api.call("DeleteVpc", "2016-04-28", {"RegionId": "cn-hangzhou", "VpcId": vpc["VpcId"]})


@pytest.mark.browser
def test_ctrl_c_while_a_procedure_runs_on_provisioned_resources_still_destroys_them(docs, sandbox_url, api, chromium):
    import os
    import queue
    import signal
    import threading

    before = leftovers(api)
    args = [sys.executable, "-m", "docverify", "check", "docs", "--browser-path", str(chromium.path), "-v",
            "-O", "provisioner.use=terraform", "-O", f"console.sandbox.url={sandbox_url}", "--slow-mo", "1500"]
    process = subprocess.Popen(args, cwd=docs, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={"PATH": "/usr/bin:/bin", "HOME": str(docs)}, start_new_session=True)
    lines: queue.Queue[str | None] = queue.Queue()
    output: list[str] = []

    def read() -> None:
        for line in process.stdout:
            output.append(line)
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while True:  # -v prints each step as it is done: the first one is the procedure under way
            line = lines.get(timeout=300)
            assert line is not None, "the run ended before its procedure did a step:\n" + "".join(output)
            if line.startswith("  sg-rule  "):
                break
        assert leftovers(api) != before, "the procedure runs, but nothing was provisioned"
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
        process.wait(timeout=180)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        reader.join(timeout=10)
    stderr = "".join(output)
    assert process.returncode == 130, stderr
    ledger = docs / ".docverify" / "stacks"
    assert leftovers(api) == before  # destroyed on the way out
    assert not list(ledger.glob("*.json"))
