"""GRPO's advantages: two-layer normalisation of rewards (issue 14).

Each task is rolled out G times (a *group*). A rollout's reward is 1.0 when the audit
log says the goal was reached (0.0 otherwise), from the judges where a task has no
audit criteria (:func:`docverify_training.grpo.reward_of_attempt`). Rollouts that
ended ENV_ERROR, or whose checker could not decide (INCONCLUSIVE), carry no reward
(``None``): they are dropped from the loss and counted, never scored 0.

1. Within each group: ``(r - mean_group) / (std_group + eps)``; a group whose
   rewards are all equal (every rollout passed, or none) teaches nothing and gets 0.
2. Across the batch: the group-normalised values of the groups that carry a signal
   standardised again over the batch, so batches of easy and hard tasks give the
   update the same scale; a flat group stays at 0 (no push either way).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rollout:
    task: str
    reward: float | None  #: None: dropped (INCONCLUSIVE, ENV_ERROR)
    verdict: str = ""


@dataclass
class Advantages:
    values: list[float | None]  #: one per rollout, in order; None for a dropped one
    dropped: int = 0
    flat_groups: list[str] = field(default_factory=list)  #: tasks whose rollouts all had one reward


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def advantages(rollouts: Sequence[Rollout], eps: float = 1e-6, *, across_batch: bool = True) -> Advantages:
    """Two-layer normalised advantages of ``rollouts`` (grouped by task)."""
    groups: dict[str, list[int]] = {}
    for index, rollout in enumerate(rollouts):
        if rollout.reward is not None:
            groups.setdefault(rollout.task, []).append(index)
    values: list[float | None] = [None] * len(rollouts)
    flat: list[str] = []
    for task, members in groups.items():
        rewards = [rollouts[i].reward for i in members]
        mean, std = _mean_std(rewards)  # type: ignore[arg-type]
        if std < eps:
            flat.append(task)
        for i in members:
            values[i] = 0.0 if std < eps else (rollouts[i].reward - mean) / (std + eps)  # type: ignore[operator]
    informative = [i for task, members in groups.items() if task not in flat for i in members]
    if across_batch and informative:
        mean, std = _mean_std([values[i] for i in informative])  # type: ignore[misc]
        if std >= eps:
            for i in informative:
                values[i] = (values[i] - mean) / (std + eps)  # type: ignore[operator]
    return Advantages(values, dropped=sum(r.reward is None for r in rollouts), flat_groups=flat)


def informative_tasks(rollouts: Sequence[Rollout], eps: float = 1e-6) -> set[str]:
    """The tasks whose scored rollouts did not all get one reward: the groups that give a
    gradient: those :func:`advantages` does not call flat (a group with fewer than two
    scored rollouts is)."""
    scored = advantages(rollouts, eps, across_batch=False)
    return {r.task for r in rollouts if r.reward is not None} - set(scored.flat_groups)

