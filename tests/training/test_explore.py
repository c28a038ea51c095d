"""`docverify explore`: tasks written from the sandbox console's catalog, then rolled out
by the literal teacher against the sandbox, kept as trajectories."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.parse.parser import parse_file
from docverify.provision.meta import META_TYPES
from docverify_bench.tasks import BenchError, check_splits, load_task_set
from docverify_sandbox.catalog import load
from docverify_training.explore import CATEGORY, KINDS, Operation, explore, write_task_set


@pytest.fixture(scope="module")
def catalog():
    return load()


@pytest.fixture(scope="module")
def exploration(catalog):
    return explore(catalog)


def invoke(*args: str):
    return CliRunner().invoke(cli, ["explore", *args], catch_exceptions=False)


def test_generation_is_deterministic_and_covers_every_creatable_resource_type(catalog, exploration):
    again = explore(catalog)
    assert [(t.id, t.file, t.text) for t in again.tasks] == [(t.id, t.file, t.text) for t in exploration.tasks]
    creatable = {(p, r) for p, product in catalog.products.items()
                 for r, res in product["resources"].items() if res.get("create")}
    written = {(t.operation.product, t.operation.rtype) for t in exploration.tasks if t.operation.kind == "create"}
    skipped = {(s.operation.product, s.operation.rtype): s.reason for s in exploration.skipped
               if s.operation.kind == "create"}
    assert written | set(skipped) == creatable and not written & set(skipped)
    assert all(skipped.values())  # every skip says why
    assert len(written) >= 0.9 * len(creatable)
    assert {t.operation.kind for t in exploration.tasks} == set(KINDS)
    assert len({t.id for t in exploration.tasks}) == len(exploration.tasks)


def test_each_task_parses_with_its_audit_event_and_resource_meta(catalog, exploration, tmp_path):
    write_task_set(exploration, tmp_path)
    task_set = load_task_set(tmp_path)  # the manifest matches; every task is train, category exploration
    assert len(task_set.tasks) == len(exploration.tasks)
    assert {(t.split, t.category, t.release) for t in task_set.tasks} == {("train", CATEGORY, catalog.release.name)}
    by_id = {task.id: task for task in exploration.tasks}
    for bench_task in task_set.tasks:
        operation: Operation = by_id[bench_task.id].operation
        assert bench_task.product == operation.product, bench_task.file
        annotation = parse_file(tmp_path / bench_task.file).procedures[0].annotation
        res = catalog.resource(operation.product, operation.rtype)
        spec = {**res.get("ops", {}), **res.get("extra_ops", {})}[operation.op]
        [expected] = annotation.expect  # as written: the parser keeps the annotation's mappings
        assert expected["service"] == catalog.product(operation.product)["service_name"]
        assert expected["event"] == spec.get("event", operation.op)
        resource = expected.get("resource")
        required = [item["type"] for item in annotation.requires]
        assert set(required) <= set(META_TYPES)
        if operation.kind != "create":  # the resource acted on is provisioned, and the event names it
            assert resource in {f"<{meta}_1_id>" for meta in required}
        else:
            assert resource is None or "<suffix>" in resource or resource.endswith("_1_id>")

    parsed = CliRunner().invoke(cli, ["parse", str(tmp_path), "--json", "--jobs", "1"])
    assert parsed.exit_code == 0, parsed.output
    assert len(json.loads(parsed.output)["procedures"]) == len(exploration.tasks)


def test_an_operation_the_catalog_cannot_support_is_skipped_with_its_reason(exploration):
    reasons = {(s.operation.rtype, s.operation.action): s.reason for s in exploration.skipped}
    # a security group rule has no Terraform template: its update and delete cannot be provisioned
    assert "no Terraform template" in reasons[("security_group_rule", "modify")]
    # a key pending deletion is a state provisioning cannot reach
    assert "PendingDeletion" in reasons[("key", "cancel_deletion")]


def test_generate_only_writes_the_task_set_and_its_summary(tmp_path):
    result = invoke("--out", str(tmp_path), "--product", "kms", "--operations", "create,delete", "--generate-only")
    assert result.exit_code == 0, result.output
    assert "1 tasks from the sandbox console's catalog" in result.output
    assert "kms" in result.output and "create" in result.output
    assert (tmp_path / "manifest.json").is_file() and not (tmp_path / "trajectories.jsonl").exists()
    assert [t.id for t in load_task_set(tmp_path).tasks] == ["explore-kms-key-create"]


def test_bad_input_names_the_valid_choices(tmp_path):
    result = invoke("--out", str(tmp_path), "--product", "nosuch", "--generate-only")
    assert result.exit_code == 2
    assert "nosuch" in result.output and "vpc" in result.output and "kms" in result.output
    result = invoke("--out", str(tmp_path), "--operations", "create,read", "--generate-only")
    assert result.exit_code == 2 and "read" in result.output and "transition" in result.output


def test_an_exploration_task_belongs_to_the_train_split():
    manifest = {"families": {"f": {"split": "eval"}},
                "tasks": {"t": {"family": "f", "category": CATEGORY}}}
    with pytest.raises(BenchError, match="train split"):
        check_splits(manifest)
    manifest["families"]["f"]["split"] = "train"
    check_splits(manifest)  # and an all-train exploration set needs no eval share


@pytest.mark.browser
@pytest.mark.terraform
def test_the_literal_teacher_keeps_trajectories_of_generated_tasks(tmp_path):
    if shutil.which("terraform") is None:
        pytest.skip("no terraform executable: the key the edit task acts on is provisioned with Terraform")
    result = invoke("--out", str(tmp_path), "--product", "kms", "--operations", "create,update", "--jobs", "2",
                    "-O", "console.sandbox.latency_ms=0")
    assert result.exit_code == 0, result.output
    assert "kept 2 of 2 attempts" in result.output
    assert "create kept 1 of 1, update kept 1 of 1" in result.output
    lines = (tmp_path / "trajectories.jsonl").read_text().splitlines()
    tasks = {json.loads(line)["task"]["id"]: json.loads(line) for line in lines}
    assert set(tasks) == {"explore-kms-key-create", "explore-kms-key-edit"}
    assert all(t["success"] and t["task"]["category"] == CATEGORY and t["task"]["split"] == "train"
               for t in tasks.values())
    stats = json.loads((tmp_path / "trajectories.jsonl.stats.json").read_text())
    assert stats["kept"] == 2 and stats["attempts"] == 2
    assert invoke("--out", str(tmp_path), "--product", "kms").exit_code == 2  # exists: --resume or another --out
