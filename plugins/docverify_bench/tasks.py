"""Benchmark task sets: Markdown procedures with a benchmark annotation, and a manifest.

A task is one procedure in a Markdown file under the set's folder. Its
``<!-- docverify: ... -->`` annotation gives its ``id``, its success criteria
(``expect``: audit events with field matches), its Resource META (``requires``)
and, under ``x-bench``, its family, category and the sandbox release it runs
against. ``manifest.json`` beside the tasks holds the set's version, each task's
checksum, family and split; splits are per family, so no eval task is a renamed
train task.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from docverify.errors import ConfigError
from docverify.parse.model import Procedure

#: What makes a task hard, or not: the issue's categories; ``exploration``: a task
#: `docverify explore` wrote from the console's catalog (train only, never measured).
CATEGORIES = ("standard", "drifted", "precondition", "prerequisite", "stateful", "long", "exploration")
EXPLORATION = "exploration"
SPLITS = ("train", "eval")
MANIFEST = "manifest.json"
#: The eval split's share of the tasks, at least.
MIN_EVAL_SHARE = 0.4
_REVIEW = "review the change, then record it with `docverify bench manifest --tasks DIR --write`"


class BenchError(ConfigError):
    """A task set that cannot be run as it is: names file and line, or the manifest."""


class BenchAnnotation(BaseModel):
    """The ``x-bench`` key of a task's annotation."""

    model_config = ConfigDict(extra="forbid")

    family: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="the operation this task varies")
    category: Literal[CATEGORIES] = Field(description="standard, or what makes it hard")  # type: ignore[valid-type]
    release: str = Field(pattern=r"^\d{4}-\d{2}$", description="the sandbox release it runs against")
    written_for: str | None = Field(None, pattern=r"^\d{4}-\d{2}$",
                                    description="the release the doc was written for, when not the one it runs "
                                                "against (a drifted task)")


@dataclass(frozen=True)
class BenchTask:
    """One task of a set: its procedure and what the benchmark knows of it."""

    procedure: Procedure
    family: str
    category: str
    release: str
    split: str
    product: str
    file: str  #: relative to the set's folder, with forward slashes
    checksum: str

    @property
    def id(self) -> str:
        return self.procedure.id

    @property
    def hard(self) -> bool:
        return self.category != "standard"


@dataclass(frozen=True)
class TaskSet:
    folder: Path
    version: str
    tasks: list[BenchTask]

    def select(self, split: str | None = None, categories: Sequence[str] = (), products: Sequence[str] = (),
               families: Sequence[str] = ()) -> list[BenchTask]:
        return [t for t in self.tasks
                if (split is None or t.split == split) and (not categories or t.category in categories)
                and (not products or t.product in products) and (not families or t.family in families)]


def sample(tasks: Sequence[BenchTask], n: int, seed: int = 0) -> list[BenchTask]:
    """``n`` of ``tasks``, the same for the same tasks and ``seed`` on any machine:
    each category gets its share of ``n`` (largest remainders, at least one while
    ``n`` allows), and within a category the families take turns, so a small
    sample still spans categories and families. In the tasks' order."""
    if n >= len(tasks):
        return list(tasks)
    by_category: dict[str, list[BenchTask]] = {}
    for task in tasks:
        by_category.setdefault(task.category, []).append(task)
    names = sorted(by_category)
    shares = {name: n * len(by_category[name]) / len(tasks) for name in names}
    counts = {name: int(shares[name]) for name in names}
    if n >= len(names):
        counts = {name: max(1, count) for name, count in counts.items()}
    order = sorted(names, key=lambda name: (counts[name] - shares[name], name))  # largest remainder first
    while sum(counts.values()) < n:
        for name in order:
            if sum(counts.values()) < n and counts[name] < len(by_category[name]):
                counts[name] += 1
    while sum(counts.values()) > n:  # the minimum of one overshot: take from the largest
        counts[max(names, key=lambda name: (counts[name], name))] -= 1

    def key(task: BenchTask) -> str:
        return hashlib.sha256(f"{seed}/{task.id}".encode()).hexdigest()

    chosen: set[str] = set()
    for name in names:
        families: dict[str, list[BenchTask]] = {}
        for task in sorted(by_category[name], key=key):
            families.setdefault(task.family, []).append(task)
        turns = sorted(families.values(), key=lambda group: key(group[0]))
        picked: list[BenchTask] = []
        while len(picked) < counts[name]:
            for group in turns:
                if group and len(picked) < counts[name]:
                    picked.append(group.pop(0))
        chosen.update(task.id for task in picked)
    return [task for task in tasks if task.id in chosen]


def product_key(procedure: Procedure) -> str:
    """The console product's key (``rds``, not "ApsaraDB RDS"), as the success criteria read it."""
    from docverify.check.criteria import product_of

    return product_of(procedure) or (procedure.product or "").lower()


def checksum(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_tasks(folder: Path) -> list[tuple[Procedure, BenchAnnotation, str, str]]:
    """Every procedure of every Markdown file under ``folder``: (procedure, its
    benchmark annotation, its file relative to the folder, the file's checksum).
    A parse error, a procedure without ``x-bench``, ``id`` or success criteria, or
    two tasks with one id is a BenchError naming file and line."""
    from docverify.parse.parser import parse_file

    if not folder.is_dir():
        raise BenchError(f"{folder}: no such task set folder", hint="give the folder that holds manifest.json")
    found: list[tuple[Procedure, BenchAnnotation, str, str]] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path in sorted(folder.rglob("*.md")):
        if path.name.lower() == "readme.md":
            continue
        relative = path.relative_to(folder).as_posix()
        document = parse_file(path)
        problems += [str(d) for d in document.errors]
        digest = checksum(path.read_text(encoding="utf-8"))
        if not document.procedures and not document.errors:
            problems.append(f"{path}:1: no procedure (a task file holds one numbered procedure)")
        for procedure in document.procedures:
            annotation = procedure.annotation
            where = f"{path}:{annotation.line if annotation is not None else procedure.line}"
            extra = annotation.extra.get("x-bench") if annotation is not None else None
            if annotation is None or annotation.id is None:
                problems.append(f"{where}: a task needs a docverify annotation with an 'id'")
                continue
            if extra is None:
                problems.append(f"{where}: a task needs 'x-bench: {{family, category, release}}' in its annotation")
                continue
            try:
                bench = BenchAnnotation.model_validate(extra)
            except ValidationError as error:
                problems += [f"{where}: x-bench.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()]
                continue
            if not annotation.expect:
                problems.append(f"{where}: task {annotation.id} has no success criteria: "
                                "add 'expect:' audit events (the benchmark decides by the audit log only)")
                continue
            if procedure.id in seen:
                problems.append(f"{where}: task id {procedure.id} is also used at {seen[procedure.id]}")
                continue
            seen[procedure.id] = where
            found.append((procedure, bench, relative, digest))
    if problems:
        raise BenchError(f"{folder}: {len(problems)} problem{'s' if len(problems) != 1 else ''} in the task set:\n  "
                         + "\n  ".join(problems))
    return found


def load_task_set(folder: Path) -> TaskSet:
    """The task set in ``folder``, checked against its manifest: a task that changed,
    appeared or went away since the manifest was written is an error naming it."""
    manifest = read_manifest(folder)
    tasks, changed, unknown, found = [], [], [], set()
    for procedure, bench, relative, digest in read_tasks(folder):
        found.add(procedure.id)
        entry = manifest["tasks"].get(procedure.id)
        if entry is None:
            unknown.append(f"{relative}: {procedure.id}")
        elif entry["sha256"] != digest or entry["family"] != bench.family:
            changed.append(f"{relative}: {procedure.id}")
        else:
            split = manifest["families"][bench.family]["split"]
            tasks.append(BenchTask(procedure, bench.family, bench.category, bench.release, split,
                                   product_key(procedure), relative, digest))
    gone = sorted(set(manifest["tasks"]) - found)
    if changed or unknown or gone:
        lines = ([f"changed: {c}" for c in changed] + [f"not in the manifest: {u}" for u in unknown]
                 + [f"in the manifest, not found: {g}" for g in gone])
        raise BenchError(f"{folder / MANIFEST} does not match the tasks:\n  " + "\n  ".join(lines), hint=_REVIEW)
    return TaskSet(folder, manifest["version"], tasks)


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{path}: no manifest", hint="write one with `docverify bench manifest --tasks DIR --write`") from None
    except json.JSONDecodeError as error:
        raise BenchError(f"{path}:{error.lineno}: not JSON ({error.msg})") from None
    for key in ("version", "families", "tasks"):
        if key not in data:
            raise BenchError(f"{path}: the manifest needs '{key}'", hint=_REVIEW)
    check_splits(data, path)
    return data


def check_splits(manifest: dict[str, Any], where: Path | str = MANIFEST) -> None:
    """Splits are per family (every family in one split), and eval is at least
    :data:`MIN_EVAL_SHARE` of the tasks; exploration tasks are train data only and
    count for neither split's share."""
    families = manifest["families"]
    problems = [f"family {name}: split {entry.get('split')!r} is not one of {', '.join(SPLITS)}"
                for name, entry in families.items() if entry.get("split") not in SPLITS]
    problems += [f"task {task_id}: family {entry.get('family')!r} is not in 'families'"
                 for task_id, entry in manifest["tasks"].items() if entry.get("family") not in families]
    if problems:
        raise BenchError(f"{where}: " + "; ".join(problems), hint=_REVIEW)
    problems = [f"task {task_id}: an exploration task belongs to the train split"
                for task_id, entry in manifest["tasks"].items()
                if entry.get("category") == EXPLORATION and families[entry["family"]]["split"] != "train"]
    if problems:
        raise BenchError(f"{where}: " + "; ".join(problems), hint=_REVIEW)
    counts = Counter(families[entry["family"]]["split"] for entry in manifest["tasks"].values()
                     if entry.get("category") != EXPLORATION)
    total = sum(counts.values())
    if total and counts["eval"] / total < MIN_EVAL_SHARE:
        raise BenchError(f"{where}: the eval split has {counts['eval']} of {total} tasks; "
                         f"it needs at least {MIN_EVAL_SHARE:.0%}", hint="move families to eval")


def build_manifest(folder: Path, version: str, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest of the tasks in ``folder``: families keep the split ``previous``
    gave them, so a family never moves between splits; each new family, in name
    order, joins the split that is short of half the tasks."""
    tasks = read_tasks(folder)
    known = (previous or {}).get("families", {})
    families: dict[str, dict[str, Any]] = {}
    for procedure, bench, _, _ in tasks:
        entry = families.setdefault(bench.family, {
            "split": known.get(bench.family, {}).get("split"), "product": product_key(procedure), "tasks": 0,
        })
        entry["tasks"] += 1
    sizes = Counter({split: 0 for split in SPLITS})
    for entry in families.values():
        if entry["split"] in SPLITS:
            sizes[entry["split"]] += entry["tasks"]
    for name in sorted(families):
        entry = families[name]
        if entry["split"] not in SPLITS:
            entry["split"] = "eval" if sizes["eval"] <= sizes["train"] else "train"
            sizes[entry["split"]] += entry["tasks"]
    manifest = {
        "version": version,
        "families": dict(sorted(families.items())),
        "tasks": {procedure.id: {"file": relative, "sha256": digest, "family": bench.family,
                                 "category": bench.category, "release": bench.release}
                  for procedure, bench, relative, digest in sorted(tasks, key=lambda t: t[0].id)},
    }
    check_splits(manifest, folder / MANIFEST)
    return manifest


def summarize(tasks: Iterable[BenchTask]) -> dict[str, dict[str, int]]:
    """Task counts by split, category and product."""
    tasks = list(tasks)
    return {
        "split": dict(Counter(t.split for t in tasks)),
        "category": dict(Counter(t.category for t in tasks)),
        "product": dict(Counter(t.product for t in tasks)),
        "families": {"count": len({t.family for t in tasks})},
    }
