"""`docverify plan` as a user runs it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "examples" / "docs"


@pytest.fixture
def runner():
    return CliRunner(env={"COLUMNS": "200"})


def _json(runner, *args):
    result = runner.invoke(cli, ["plan", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_table_shows_meta_sources_and_terraform(runner):
    result = runner.invoke(cli, ["plan", str(DOCS / "vpc.md"), "--provider", "alicloud"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "vpc-create-vswitch" in out and "creates: vswitch" in out
    assert "default-vpc" in out and "alicloud_vpc.vpc_1" in out  # the name the doc clicks in the VPC list
    assert "vpc: inferred, step L21: 4. In the VPC list, click default-vpc. (+3 more)" in out
    assert 'resource "alicloud_vpc" "vpc_1" {' in out and "# main.tf" in out
    assert "1 procedure(s) planned, 1 need resources (provider alicloud" in result.stderr


def test_json_is_complete(runner):
    payload = _json(runner, str(DOCS / "ecs-instance.md"), "--provider", "alicloud", "--suffix", "ab12cd",
                    "--region", "cn-beijing")
    assert payload["provider"] == "alicloud" and payload["suffix"] == "ab12cd" and payload["diagnostics"] == []
    (procedure,) = payload["procedures"]
    assert procedure["id"] == "ecs-create-instance-wizard" and procedure["product"] == "ecs"
    assert [c["type"] for c in procedure["creates"]] == ["ecs_instance"]
    requirements = {r["type"]: r for r in procedure["requirements"]}
    assert list(requirements) == ["vpc", "vswitch", "security_group"]
    assert requirements["vswitch"]["dependencies"] == ["vpc"]
    assert requirements["vswitch"]["name"] == "docverify-vsw-ab12cd"
    assert requirements["vswitch"]["evidence"][0] == {
        "line": 43, "kind": "step",
        "text": "8. On the Networking page, select a vSwitch from the vSwitch drop-down list and select a security group "
                "from the Security …",
    }
    terraform = procedure["terraform"]
    assert terraform["region"] == "cn-beijing" and terraform["uncovered"] == []
    assert 'resource "alicloud_security_group" "security_group_1"' in terraform["files"]["main.tf"]
    assert "vswitch-id" in terraform["outputs"]["vswitch_1_id"]


def test_selection_by_fragment_and_keyword(runner):
    payload = _json(runner, f"{DOCS / 'ram.md'}#ram-grant-permission", "--provider", "alicloud")
    assert [p["id"] for p in payload["procedures"]] == ["ram-grant-permission"]
    assert [r["type"] for r in payload["procedures"][0]["requirements"]] == ["ram_user"]
    payload = _json(runner, str(DOCS), "-k", "bucket and not version and not zh", "--provider", "alicloud")
    assert [p["id"] for p in payload["procedures"]] == ["oss-create-bucket"]


def test_a_procedure_that_needs_nothing(runner):
    result = runner.invoke(cli, ["plan", str(DOCS / "kms.md"), "--provider", "alicloud"])
    assert result.exit_code == 0
    assert "creates: kms_key" in result.stdout and "needs nothing to exist beforehand" in result.stdout


def test_bad_requires_is_reported_on_its_line_and_others_still_plan(runner, tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_text(textwrap.dedent("""
        # Stop an instance

        <!-- docverify:
        requires:
          - type: ecs_instanse
        -->

        1. Log on to the ECS console.
        2. Click **Stop**.
        """).lstrip(), encoding="utf-8")
    result = runner.invoke(cli, ["plan", str(bad), str(DOCS / "vpc.md"), "--provider", "alicloud", "--no-terraform"])
    assert result.exit_code == ExitCode.USAGE
    assert f"{bad}:5: error: requires[0] of bad#stop-an-instance: unknown Resource META type 'ecs_instanse'" in result.stderr
    assert "valid types: vpc, vswitch" in result.stderr
    assert "vpc-create-vswitch" in result.stdout  # the good file is still planned


def test_unknown_provider_is_one_clear_error(runner):
    result = runner.invoke(cli, ["plan", str(DOCS / "vpc.md"), "--provider", "gcp"])
    assert result.exit_code == ExitCode.ENVIRONMENT
    assert "no Terraform templates for provider 'gcp'" in result.stderr and "alicloud" in result.stderr


def test_own_templates_folder_and_uncovered_types(runner, tmp_path):
    folder = tmp_path / "tpl" / "mini"
    folder.mkdir(parents=True)
    (folder / "types.yaml").write_text("vpc: mini_vpc\n")
    (folder / "provider.tf.j2").write_text("# mini\n")
    (folder / "vpc.tf.j2").write_text(
        'resource "mini_vpc" "{{ r.address }}" {}\noutput "{{ r.address }}_id" {}\noutput "{{ r.address }}_name" {}\n')
    payload = _json(runner, str(DOCS / "nat.md"), "--provider", "mini", "--templates", str(tmp_path / "tpl"))
    terraform = payload["procedures"][0]["terraform"]
    assert [r["address"] for r in terraform["resources"]] == ["mini_vpc.vpc_1"]
    assert terraform["uncovered"] == ["vswitch"]
    result = runner.invoke(cli, ["plan", str(DOCS / "nat.md"), "--provider", "mini", "--templates", str(tmp_path / "tpl")])
    assert "no template: ResourceCoder" in result.stdout


def test_no_procedures(runner, tmp_path):
    (tmp_path / "empty.md").write_text("# Nothing\n\nJust text.\n")
    result = runner.invoke(cli, ["plan", str(tmp_path)])
    assert result.exit_code == ExitCode.NO_PROCEDURES
    assert "no procedures to plan" in result.stderr


def test_help(runner):
    result = runner.invoke(cli, ["plan", "-h"])
    assert result.exit_code == 0
    assert "Resource META" in result.stdout and "--provider" in result.stdout and "DOCVERIFY_PROVIDER" in result.stdout
    assert "plan" in runner.invoke(cli, ["--help"]).stdout


def test_provider_follows_the_configured_console():
    on_aliyun = CliRunner(env={"COLUMNS": "200", "DOCVERIFY_CONSOLE__USE": "aliyun"})
    result = on_aliyun.invoke(cli, ["plan", str(DOCS / "vpc.md"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["provider"] == "alicloud"


def test_what_a_prerequisite_asks_to_be_absent_is_shown_as_not_made(runner, tmp_path):
    doc = tmp_path / "delete-user.md"
    doc.write_text(textwrap.dedent("""\
        # Delete a RAM user

        ## Prerequisites

        All AccessKey pairs of the RAM user are deleted.

        ## Procedure

        1. Log on to the RAM console.
        2. On the Users page, find the RAM user and click **Delete** in the **Actions** column.
        3. Click **OK**.
        """), encoding="utf-8")
    result = runner.invoke(cli, ["plan", str(doc), "--provider", "sandbox"])
    assert result.exit_code == 0, result.output
    assert ("not made: ram_access_key (prerequisite L5 asks for none: "
            "All AccessKey pairs of the RAM user are deleted.)") in result.stdout
    assert "sandbox_ram_access_key" not in result.stdout
    (procedure,) = _json(runner, str(doc), "--provider", "sandbox")["procedures"]
    assert [r["type"] for r in procedure["requirements"]] == ["ram_user"]
    assert procedure["absent"] == [{"type": "ram_access_key", "evidence": [
        {"line": 5, "kind": "prerequisite", "text": "All AccessKey pairs of the RAM user are deleted."}]}]
