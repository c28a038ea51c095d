"""`docverify bench` as a user runs it: the real task set, sandbox, Chromium and audit log."""

import json

import pytest
from click.testing import CliRunner
from test_tasks import REPO_TASKS, with_manifest, write_set

from docverify.cli import cli


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_tasks_counts_the_repository_set():
    done = invoke("bench", "tasks", "--tasks", str(REPO_TASKS), "--json")
    assert done.exit_code == 0, done.output
    counts = json.loads(done.output)
    assert counts["tasks"] == sum(counts["split"].values()) and counts["families"]["count"] >= 3


def test_manifest_without_write_says_what_changed(tmp_path):
    folder = write_set(tmp_path, {"a-1": "fam-a", "b-1": "fam-b"})
    with_manifest(folder, {"fam-a": "eval", "fam-b": "train"})
    assert "up to date" in invoke("bench", "manifest", "--tasks", str(folder)).output
    write_set(folder, {"a-2": "fam-a"})
    done = invoke("bench", "manifest", "--tasks", str(folder))
    assert done.exit_code == 0 and "new: a-2" in done.output
    assert invoke("bench", "tasks", "--tasks", str(folder)).exit_code != 0  # the manifest does not match
    assert invoke("bench", "manifest", "--tasks", str(folder), "--write").exit_code == 0
    assert invoke("bench", "tasks", "--tasks", str(folder)).exit_code == 0


@pytest.mark.browser
@pytest.mark.slow
def test_a_small_real_run_scores_resumes_and_compares(chromium, tmp_path, monkeypatch):
    monkeypatch.setenv("DOCVERIFY_EXECUTOR__PLAYWRIGHT__BROWSER_PATH", str(chromium.path))
    out = tmp_path / "literal.json"
    args = ["bench", "run", "--policy", "literal", "--tasks", str(REPO_TASKS), "--family", "vpc-create-vswitch",
            "--family", "ram-create-user", "--out", str(out), "--jobs", "2"]
    done = invoke(*args)
    assert done.exit_code == 0, done.output
    data = json.loads(out.read_text())
    assert data["format"] == "docverify-bench/1" and data["code"]["docverify"] and data["machine"]["cpus"]
    # what the tasks need is provisioned by default, in accounts seeded as in use
    assert data["environment"] == {"provisioner": "terraform", "resources": "seeded"}
    attempts = data["attempts"]
    assert len(attempts) == len(data["tasks"]) == 6
    # the literal policy follows standard tasks as written: the audit log shows each goal
    assert all(a["success"] and a["verdict"] == "PASS" for a in attempts), [a["reason"] for a in attempts]
    scores = data["scores"]
    assert scores["all"]["pass@1"]["value"] == 1.0 and scores["all"]["env_error_rate"] == 0.0
    assert set(scores["product"]) == {"ram", "vpc"}
    assert "pass@1 100.0%" in done.output

    again = invoke(*args)  # the file exists: not overwritten
    assert again.exit_code != 0 and "--resume" in again.output
    resumed = invoke(*args, "--resume")
    assert resumed.exit_code == 0 and "6 attempts already done" in resumed.output
    assert json.loads(out.read_text())["attempts"] == attempts

    compared = invoke("bench", "compare", str(out), str(out))
    assert compared.exit_code == 0 and "all" in compared.output and "p=1.0000" in compared.output
    assert compared.output.startswith("literal vs literal ")  # each run by its --label, else its policy
    labelled = tmp_path / "labelled.json"
    labelled.write_text(json.dumps({**json.loads(out.read_text()), "label": "first try"}))
    assert invoke("bench", "compare", str(out), str(labelled)).output.startswith("first try vs literal ")

    # a new, empty account without provisioning: the vSwitch tasks' VPC is not there
    empty = tmp_path / "empty.json"
    done = invoke("bench", "run", "--policy", "literal", "--tasks", str(REPO_TASKS), "--family", "vpc-create-vswitch",
                  "--out", str(empty), "--jobs", "2", "--label", "literal, no provisioning",
                  "-O", "console.sandbox.resources=empty", "-O", "provisioner.use=none")
    assert done.exit_code == 0, done.output
    data = json.loads(empty.read_text())
    assert data["environment"] == {"provisioner": "none", "resources": "empty"}
    assert {a["env_cause"] for a in data["attempts"]} == {"prerequisite missing"}
    assert data["scores"]["all"]["readiness"] == 0.0 and data["scores"]["all"]["scored"] == 0
    report = tmp_path / "report"
    done = invoke("bench", "report", str(out), str(empty), "-o", str(report), "--no-plots")
    assert done.exit_code == 0, done.output
    text = (report / "report.md").read_text()
    assert "| literal | seeded | terraform | 6 | 100.0% |" in text
    assert "| literal, no provisioning | empty | none | 3 | 0.0% | 3 | 0 | 0 | 0 |" in text
