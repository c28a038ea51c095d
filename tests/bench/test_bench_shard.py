"""`docverify bench run --shard` and `docverify bench merge`, with the fake console,
executor and checker (tests/fake_plugins.py) over a small written task set: the
shards run every task once and merge into the results one machine makes."""

from __future__ import annotations

import json
from pathlib import Path

import fake_plugins
import pytest
from click.testing import CliRunner
from test_tasks import REPO_TASKS, with_manifest, write_set

from docverify.cli import cli
from docverify.cli.app import App
from docverify.errors import ExitCode
from docverify.plugins import load_plugins
from docverify.run.shard import ShardSpec
from docverify_bench.cli import shard_tasks
from docverify_bench.tasks import load_task_set

FAKES = ["-O", "console.use=fake-console", "-O", "executor.use=fake-browser", "-O", "checker.use=fake-goal",
         "-O", "provisioner.use=none"]
ENV = {"DOCVERIFY_SHARD": None, "DOCVERIFY_ALLOW_MISSING": None, "DOCVERIFY_CONFIG": None}


@pytest.fixture(autouse=True)
def site(monkeypatch):
    monkeypatch.setattr(fake_plugins, "SITE", {
        "/": ("Overview", [("link", "OSS console", "/"), ("button", "Create Bucket", "/done")]),
        "/done": ("Buckets", [("row", "b-t0", None)]),
    })


@pytest.fixture
def task_set(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    folder = write_set(tmp_path / "set", {f"t-{index}": f"fam-{index % 3}" for index in range(9)})
    with_manifest(folder, {"fam-0": "eval", "fam-1": "train", "fam-2": "eval"})
    return folder


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), obj=App(plugins=load_plugins(extra=[fake_plugins])), env=ENV)


def bench_run(out: str, *extra: str):
    done = invoke("bench", "run", "--policy", "literal", "--tasks", "set", "--out", out, *FAKES, *extra)
    assert done.exit_code == 0, done.output
    return json.loads(Path(out).read_text(encoding="utf-8"))


@pytest.mark.parametrize("count", [2, 3, 5])
def test_the_shards_of_the_repository_task_set_are_complete_and_disjoint(count):
    task_set = load_task_set(REPO_TASKS)
    chosen = task_set.select("eval")
    parts = [shard_tasks(chosen, ShardSpec(index, count), task_set.folder) for index in range(1, count + 1)]
    ids = [task.id for tasks, _ in parts for task in tasks]
    assert sorted(ids) == sorted(task.id for task in chosen) and len(ids) == len(set(ids))
    assert all(info.selected == [f"{t.file}#{t.id}" for t in chosen] for _, info in parts)
    # the order of the task set does not matter
    again = shard_tasks(list(reversed(chosen)), ShardSpec(1, count), task_set.folder)
    assert {task.id for task in again[0]} == {task.id for task in parts[0][0]}


def test_a_bad_shard_is_a_usage_error(task_set):
    for value in ("0/2", "3/2", "a/b"):
        done = invoke("bench", "run", "--policy", "literal", "--tasks", "set", "--out", "x.json", "--shard", value)
        assert done.exit_code == ExitCode.USAGE and "Invalid value for '--shard'" in done.output
        assert not Path("x.json").exists()


def test_sharded_runs_merge_into_the_results_of_one_run(task_set):
    whole = bench_run("whole.json")
    shards = [bench_run(f"s{index}.json", "--shard", f"{index}/3") for index in (1, 2, 3)]
    assert sorted(task for shard in shards for task in shard["tasks"]) == sorted(whole["tasks"])
    assert [shard["shard"]["index"] for shard in shards] == [1, 2, 3]
    done = invoke("bench", "merge", "s1.json", "s2.json", "s3.json", "--out", "merged.json")
    assert done.exit_code == ExitCode.OK, done.output
    merged = json.loads(Path("merged.json").read_text())
    assert merged["tasks"] == {task: merged["tasks"][task] for task in whole["tasks"]}
    assert sorted((a["task"], a["verdict"]) for a in merged["attempts"]) == sorted(
        (a["task"], a["verdict"]) for a in whole["attempts"])
    assert merged["scores"]["all"]["pass@1"] == whole["scores"]["all"]["pass@1"]
    assert merged["scores"]["all"]["tasks"] == 9 and merged["merged"]["missing_shards"] == []
    assert "shard" not in merged
    # the merged file is a results file: compare reads it
    compared = invoke("bench", "compare", "whole.json", "merged.json", "--json")
    assert compared.exit_code == 0 and json.loads(compared.output)["groups"]["all"]["tasks"] == 9


def test_a_missing_shard_fails_the_merge_and_other_runs_are_refused(task_set):
    for index in (1, 2):
        bench_run(f"s{index}.json", "--shard", f"{index}/2")
    half = invoke("bench", "merge", "s1.json", "--out", "half.json")
    assert half.exit_code == ExitCode.ENVIRONMENT, half.output
    assert "shard 2/2 missing" in half.output and "--allow-missing" in half.output
    lacking = json.loads(Path("half.json").read_text())["merged"]["missing"]
    assert lacking and all(f"task {key} has no results" in half.output for key in lacking)
    assert invoke("bench", "merge", "s1.json", "--out", "half.json", "--allow-missing").exit_code == ExitCode.OK
    bench_run("other.json", "--shard", "2/2", "--runs", "2")
    refused = invoke("bench", "merge", "s1.json", "other.json", "--out", "no.json")
    assert refused.exit_code == ExitCode.USAGE and "another runs" in refused.output and "--force" in refused.output
    assert not Path("no.json").exists()
    forced = invoke("bench", "merge", "s1.json", "other.json", "--out", "forced.json", "--force")
    assert forced.exit_code in (ExitCode.OK, ExitCode.ENVIRONMENT) and "warning: --force:" in forced.output
    # --resume keeps to its shard
    resumed = invoke("bench", "run", "--policy", "literal", "--tasks", "set", "--out", "s1.json", "--shard", "2/2",
                     "--resume", *FAKES)
    assert resumed.exit_code == ExitCode.USAGE and "shard 1/2 (now 2/2)" in resumed.output
