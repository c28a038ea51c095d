"""Scores of a benchmark run: pass@1, pass@k and pass^k per split, category and
product, with bootstrap intervals over tasks, and what each task cost.

An attempt that ended in ENV_ERROR says nothing about the policy: it is left out
of the task's runs and counted on its own (the ENV_ERROR rate). A task with no
attempt left is not scored.

*Readiness* (the paper's environment readiness) is the share of attempts whose
prerequisites existed when they ran: all but the ENV_ERRORs because a prerequisite
was missing or provisioning failed. A stack that could not be destroyed afterwards
is an ENV_ERROR too, but the task was ready when it ran. (Where provisioning made
what a task declares, a policy's claim that a prerequisite is missing is its own
failure, not an ENV_ERROR: see :func:`docverify_bench.run.attempt_record`.)

A hybrid policy's *hand-overs* (the steps its literal follower could not do, handed to
its model) are scored twice: the share the model said it finished, and the share of
attempts with a hand-over that then reached the goal, which the audit log decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docverify_bench.stats import Estimate, bootstrap, mean, pass_at_k, pass_hat_k

#: The groupings a report breaks scores down by.
GROUPS = ("split", "category", "product")
#: Why an environment was not ready (:func:`env_cause`); the other causes leave it ready.
UNREADY = ("prerequisite missing", "provisioning failed")


def env_cause(reason: str | None) -> str:
    """What an ENV_ERROR's reason says went wrong: ``prerequisite missing``,
    ``provisioning failed``, ``teardown failed`` or ``other`` (console, browser)."""
    reason = (reason or "").lower()
    if "destroy failed" in reason:
        return "teardown failed"
    if "prerequisite missing" in reason or "prerequisite not ready" in reason:
        return "prerequisite missing"
    if any(word in reason for word in ("terraform", "provision", "template", "apply", "destroy")):
        return "provisioning failed"
    return "other"


@dataclass(frozen=True)
class TaskRuns:
    """One task's attempts that count (ENV_ERROR left out), and those that did not."""

    id: str
    info: Mapping[str, str]  #: family, category, product, split, release
    passed: tuple[bool, ...]  #: per counted attempt, in run order
    env_errors: int
    attempts: tuple[Mapping[str, Any], ...]  #: every attempt, ENV_ERROR included

    @property
    def n(self) -> int:
        return len(self.passed)

    @property
    def c(self) -> int:
        return sum(self.passed)


def task_runs(tasks: Mapping[str, Mapping[str, str]], attempts: Iterable[Mapping[str, Any]]) -> list[TaskRuns]:
    by_task: dict[str, list[Mapping[str, Any]]] = {task_id: [] for task_id in tasks}
    for attempt in attempts:
        if attempt["task"] in by_task:
            by_task[attempt["task"]].append(attempt)
    out = []
    for task_id, done in by_task.items():
        done.sort(key=lambda a: a["run"])
        counted = tuple(bool(a["success"]) for a in done if not a["env_error"])
        out.append(TaskRuns(task_id, tasks[task_id], counted, sum(bool(a["env_error"]) for a in done), tuple(done)))
    return out


def _per_task(runs: Sequence[TaskRuns], key: str) -> list[float]:
    """Mean of an attempt field per task (over all its attempts)."""
    values = []
    for task in runs:
        numbers = [a.get(key) for a in task.attempts]
        numbers = [n for n in numbers if n is not None]
        if numbers:
            values.append(mean(numbers))
    return values


def score_group(runs: Sequence[TaskRuns], *, seed: int = 0) -> dict[str, Any]:
    """The scores of a group of tasks."""
    scored = [t for t in runs if t.n]
    k_max = min((t.n for t in scored), default=0)
    attempts = sum(len(t.attempts) for t in runs)
    env = sum(t.env_errors for t in runs)
    unready = sum(1 for t in runs for a in t.attempts if a["env_error"] and a.get("env_cause") in UNREADY)
    out: dict[str, Any] = {
        "tasks": len(runs), "scored": len(scored), "attempts": attempts,
        "env_error_rate": env / attempts if attempts else 0.0,
        "readiness": (attempts - unready) / attempts if attempts else None,
        "pass@1": bootstrap([t.c / t.n for t in scored], seed=seed).to_dict(),
    }
    for k in range(2, k_max + 1):
        out[f"pass@{k}"] = bootstrap([pass_at_k(t.n, t.c, k) for t in scored], seed=seed).to_dict()
        out[f"pass^{k}"] = bootstrap([pass_hat_k(t.n, t.c, k) for t in scored], seed=seed).to_dict()
    for key in ("cost_usd", "tokens_in", "tokens_out", "calls", "turns", "duration_s", "setup_s"):
        values = _per_task(runs, key)
        out[f"{key}_per_task"] = round(mean(values), 6) if values else None
    handovers = handover_scores([a for t in runs for a in t.attempts])
    if handovers is not None:
        out["handovers"] = handovers
    return out


def handover_scores(attempts: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """How a hybrid policy's hand-overs went, over the attempts that count (None: the
    attempts do not record hand-overs, as a result file from before they were counted)."""
    counted = [a for a in attempts if "handovers" in a and not a["env_error"]]
    if not counted:
        return None
    handed = [a for a in counted if a["handovers"]]
    total = sum(a["handovers"] for a in handed)
    done = sum(a.get("handovers_done", 0) for a in handed)
    passed = sum(bool(a["success"]) for a in handed)
    return {"attempts": len(handed), "handovers": total, "done": done,
            "done_rate": done / total if total else None,
            "goal_reached": passed, "goal_rate": passed / len(handed) if handed else None}


def score(tasks: Mapping[str, Mapping[str, str]], attempts: Iterable[Mapping[str, Any]], *,
          seed: int = 0) -> dict[str, Any]:
    """Overall and per-group scores (``{"all": ..., "split": {"eval": ...}, ...}``)."""
    runs = task_runs(tasks, attempts)
    out: dict[str, Any] = {"all": score_group(runs, seed=seed)}
    for group in GROUPS:
        values = sorted({t.info.get(group, "") for t in runs})
        out[group] = {value: score_group([t for t in runs if t.info.get(group, "") == value], seed=seed)
                      for value in values}
    return out


def estimate(data: Mapping[str, Any]) -> Estimate:
    return Estimate(data["value"], data["low"], data["high"], data["tasks"])
