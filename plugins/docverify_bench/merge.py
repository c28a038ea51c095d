"""``docverify bench merge``: the results files of a sharded benchmark
(``bench run --shard INDEX/COUNT``) as one, scored again over every task.

Each shard's file records its shard (``shard``: index, count, every task selected
before sharding as ``FILE#ID``, digests of the selection and of the split). The
shards of one benchmark share the task set's version, the policy, the split, the
runs and the ``-O`` settings; files that differ are refused unless ``force``.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from docverify.errors import ConfigError
from docverify.run.shard import missing_shards
from docverify_bench.run import shard_name
from docverify_bench.score import score

#: what the shards of one benchmark must agree on: a results file's key -> how it is said
SAME = {"policy": "policy", "split": "split", "runs": "runs", "settings": "-O settings", "label": "label"}


def merge_results(files: Sequence[tuple[Path, Mapping[str, Any]]], *, force: bool = False) -> dict[str, Any]:
    """One results file of the shards ``files`` (path, data). Its ``merged`` says which
    shards and tasks are missing (``missing_shards``, ``missing``) and which tasks
    lack attempts (``unfinished``)."""
    problems = mismatches(files)
    if problems and not force:
        raise ConfigError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
                          hint="merge the shards of one benchmark run only, or give --force")
    first = files[0][1]
    out = copy.deepcopy(dict(first))
    out.pop("shard", None)
    out.pop("scores", None)
    shards = [data.get("shard") for _, data in files]
    count = max((shard["count"] for shard in shards if shard), default=None)
    selected = list(dict.fromkeys(key for shard in shards if shard for key in shard["selected"]))
    tasks: dict[str, Any] = {}
    attempts: dict[tuple[str, int], dict[str, Any]] = {}
    for _, data in files:
        for task_id, info in data["tasks"].items():
            tasks.setdefault(task_id, info)
        for attempt in data["attempts"]:
            attempts.setdefault((attempt["task"], attempt["run"]), attempt)
    out["tasks"] = tasks
    out["attempts"] = list(attempts.values())
    started = [data["started_at"] for _, data in files if data.get("started_at")]
    finished = [data.get("finished_at") for _, data in files]
    out["started_at"] = min(started) if started else None
    out["finished_at"] = max(finished) if finished and all(finished) else None
    made = Counter(task_id for task_id, _ in attempts)
    out["merged"] = {
        "count": count,
        "shards": [{"file": str(path), "index": (data.get("shard") or {}).get("index"),
                    "started_at": data.get("started_at"), "machine": data.get("machine")} for path, data in files],
        "missing_shards": missing_shards({shard["index"] for shard in shards if shard}, count) if count else [],
        "missing": [key for key in selected if key.split("#", 1)[-1] not in tasks],  # FILE#ID
        "unfinished": [task_id for task_id in tasks if made[task_id] < first["runs"]],
        "forced": problems,
    }
    out["scores"] = score(out["tasks"], out["attempts"])
    return out


def mismatches(files: Sequence[tuple[Path, Mapping[str, Any]]]) -> list[str]:
    """Why ``files`` are not the shards of one benchmark run (empty when they are)."""
    problems: list[str] = []
    first_path, first = files[0]
    seen: dict[int, Path] = {}
    for path, data in files:
        shard = data.get("shard")
        if not shard:
            problems.append(f"{path}: not a shard (its run had no --shard INDEX/COUNT)")
            continue
        if data["task_set"]["version"] != first["task_set"]["version"]:
            problems.append(f"{path} is of task set {data['task_set']['version']}, {first_path} of "
                            f"{first['task_set']['version']}")
        for key, said in SAME.items():
            if data.get(key) != first.get(key):
                problems.append(f"{path} has another {said} than {first_path}: {data.get(key)!r}, not "
                                f"{first.get(key)!r}")
        other = first.get("shard")
        if other and shard["count"] != other["count"]:
            problems.append(f"{path} is shard {shard_name(shard)}, {first_path} shard {shard_name(other)}: "
                            "shards of different runs")
            continue
        if other and shard["selected_digest"] != other["selected_digest"]:
            problems.append(f"{path} and {first_path} selected different tasks ({len(shard['selected'])} and "
                            f"{len(other['selected'])})")
        elif other and shard["plan_digest"] != other["plan_digest"]:
            problems.append(f"{path} and {first_path} split the tasks differently")
        if shard["index"] in seen:
            problems.append(f"shard {shard_name(shard)} is in two files: {seen[shard['index']]} and {path}")
        seen.setdefault(shard["index"], path)
    return problems
