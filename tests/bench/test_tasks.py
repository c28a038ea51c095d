"""Task sets: annotations, the manifest's checksums and splits by family."""

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from docverify_bench.tasks import BenchError, build_manifest, load_task_set, read_tasks, sample

REPO_TASKS = Path(__file__).resolve().parents[2] / "benchmark" / "tasks"

TASK = """# Create a bucket

<!-- docverify:
id: {id}
expect:
  - {{service: Oss, event: PutBucket, resource: "b-<suffix>"}}
x-bench: {{family: {family}, category: standard, release: "2026-03"}}
-->
## Procedure

1.  Log on to the [OSS console](https://oss.console.aliyun.com/).
2.  Click **Create Bucket**.
"""


def write_set(folder: Path, tasks: dict[str, str]) -> Path:
    for task_id, family in tasks.items():
        path = folder / family / f"{task_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TASK.format(id=task_id, family=family), encoding="utf-8")
    return folder


def with_manifest(folder: Path, splits: dict[str, str]) -> dict:
    manifest = build_manifest(folder, "t1", {"families": {f: {"split": s} for f, s in splits.items()}})
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return manifest


def test_the_repository_task_set_matches_its_manifest():
    task_set = load_task_set(REPO_TASKS)
    assert task_set.tasks and task_set.version
    assert {t.split for t in task_set.tasks} == {"train", "eval"}
    families = {}
    for task in task_set.tasks:
        assert families.setdefault(task.family, task.split) == task.split  # one split per family
        assert task.procedure.annotation.expect  # success criteria: audit events
        assert all(e.get("params") or e.get("resource") for e in task.procedure.annotation.expect)  # field matches


def test_splits_are_per_family_and_eval_is_big_enough(tmp_path):
    folder = write_set(tmp_path, {"a-1": "fam-a", "a-2": "fam-a", "b-1": "fam-b", "c-1": "fam-c"})
    with_manifest(folder, {"fam-a": "eval", "fam-b": "train", "fam-c": "train"})
    task_set = load_task_set(folder)
    assert {t.id: t.split for t in task_set.tasks} == {"a-1": "eval", "a-2": "eval", "b-1": "train", "c-1": "train"}
    with pytest.raises(BenchError, match="eval split has 1 of 4 tasks"):
        with_manifest(folder, {"fam-a": "train", "fam-b": "train", "fam-c": "eval"})


def test_a_changed_new_or_missing_task_is_named(tmp_path):
    folder = write_set(tmp_path, {"a-1": "fam-a", "b-1": "fam-b"})
    with_manifest(folder, {"fam-a": "eval", "fam-b": "train"})
    (folder / "fam-a" / "a-1.md").write_text(TASK.format(id="a-1", family="fam-a") + "3.  Click **OK**.\n")
    write_set(folder, {"d-1": "fam-b"})
    (folder / "fam-b" / "b-1.md").unlink()
    with pytest.raises(BenchError) as error:
        load_task_set(folder)
    text = str(error.value)
    assert "changed: fam-a/a-1.md: a-1" in text and "not in the manifest: fam-b/d-1.md: d-1" in text
    assert "in the manifest, not found: b-1" in text


def test_a_task_without_criteria_or_with_a_bad_annotation_names_file_and_line(tmp_path):
    folder = write_set(tmp_path, {"a-1": "fam-a"})
    bad = folder / "fam-a" / "a-2.md"
    bad.write_text(TASK.format(id="a-2", family="fam-a").replace(
        '  - {service: Oss, event: PutBucket, resource: "b-<suffix>"}\n', "").replace("expect:\n", ""))
    typo = folder / "fam-a" / "a-3.md"
    typo.write_text(TASK.format(id="a-3", family="fam-a").replace("category: standard", "category: hardest"))
    with pytest.raises(BenchError) as error:
        read_tasks(folder)
    text = str(error.value)
    assert f"{bad}:3: task a-2 has no success criteria" in text
    assert f"{typo}:3: x-bench.category: Input should be 'standard'" in text


def test_one_id_twice_is_refused(tmp_path):
    folder = write_set(tmp_path, {"a-1": "fam-a"})
    shutil.copy(folder / "fam-a" / "a-1.md", folder / "fam-a" / "copy.md")
    with pytest.raises(BenchError, match="task id a-1 is also used"):
        read_tasks(folder)


def test_the_task_files_are_rendered_from_their_families():
    import subprocess
    import sys

    script = REPO_TASKS.parent / "generate_tasks.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "tasks up to date" in done.stdout


def test_a_sample_spans_categories_and_families_and_is_the_same_each_time():
    tasks = load_task_set(REPO_TASKS).select("eval")
    drawn = sample(tasks, 24)
    assert len(drawn) == 24 and drawn == sample(tasks, 24)
    categories = Counter(task.category for task in tasks)
    got = Counter(task.category for task in drawn)
    assert set(got) == set(categories)  # every category, in proportion (within one task)
    for category, count in categories.items():
        assert abs(got[category] - 24 * count / len(tasks)) < 1.5, category
    per_family = Counter(task.family for task in drawn)
    assert max(per_family.values()) == 1  # 24 tasks over more families: no family twice
    assert sample(tasks, 24, seed=1) != drawn
    assert [t.id for t in drawn] == [t.id for t in tasks if t in drawn]  # the set's order
    assert sample(tasks, 3) and len({t.category for t in sample(tasks, 3)}) == 3
    assert sample(tasks, 1000) == tasks
