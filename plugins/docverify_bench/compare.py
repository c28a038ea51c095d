"""``docverify bench compare A.json B.json``: B against A on the tasks both ran."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docverify.errors import ConfigError
from docverify_bench.report import label
from docverify_bench.score import TaskRuns, task_runs
from docverify_bench.stats import Difference, paired


def compare(a: Mapping[str, Any], b: Mapping[str, Any], *, force: bool = False, seed: int = 0) -> dict[str, Any]:
    """Per split (and over all), the paired difference of pass@1 (B - A) on the tasks
    both scored, with its bootstrap interval, p-value and McNemar's test."""
    version_a, version_b = a["task_set"]["version"], b["task_set"]["version"]
    if version_a != version_b and not force:
        raise ConfigError(f"the results are of different task sets ({version_a} and {version_b}): "
                          "their tasks may not be the same tasks", hint="pass --force to compare them anyway")
    runs_a = {t.id: t for t in task_runs(a["tasks"], a["attempts"]) if t.n}
    runs_b = {t.id: t for t in task_runs(b["tasks"], b["attempts"]) if t.n}
    common = sorted(set(runs_a) & set(runs_b))
    if not common:
        raise ConfigError("the two results share no scored task", hint="compare runs of the same task set")
    groups: dict[str, list[str]] = {"all": common}
    for task_id in common:
        groups.setdefault(runs_a[task_id].info.get("split") or "none", []).append(task_id)
    out: dict[str, Any] = {"a": label(a), "b": label(b), "task_set": version_a, "groups": {}}
    for name, ids in groups.items():
        difference = _paired([runs_a[i] for i in ids], [runs_b[i] for i in ids], seed)
        out["groups"][name] = {"tasks": len(ids), "a": _rate(runs_a, ids), "b": _rate(runs_b, ids),
                               **difference.to_dict()}
    return out


def _paired(a: list[TaskRuns], b: list[TaskRuns], seed: int) -> Difference:
    return paired([t.c / t.n for t in a], [t.c / t.n for t in b], [t.passed[0] for t in a], [t.passed[0] for t in b],
                  seed=seed)


def _rate(runs: Mapping[str, TaskRuns], ids: list[str]) -> float:
    return sum(runs[i].c / runs[i].n for i in ids) / len(ids)
