"""The benchmark's statistics: pass@k, pass^k, bootstrap intervals and paired tests.

Everything is over *tasks*: a task's score is the share of its runs that succeeded,
and an interval resamples tasks (a benchmark's uncertainty is which tasks it drew,
not which runs). Resampling is seeded, so a report is reproducible.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

#: Resamples for a bootstrap; 10,000 keeps a 95% bound's Monte Carlo error near 0.2 pp.
RESAMPLES = 10_000


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` runs drawn from ``n`` (``c`` of them
    successful) succeeds: the unbiased estimator 1 - C(n-c, k) / C(n, k)."""
    _check_counts(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` runs drawn from ``n`` succeed (pass^k, a policy's
    reliability): C(c, k) / C(n, k)."""
    _check_counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= successes ({c}) <= runs ({n}) and 1 <= k ({k}) <= runs")


@dataclass(frozen=True)
class Estimate:
    """A mean over tasks and its bootstrap confidence interval."""

    value: float
    low: float
    high: float
    tasks: int

    def describe(self, percent: bool = True) -> str:
        if percent:
            return f"{100 * self.value:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def to_dict(self) -> dict[str, float | int]:
        return {"value": round(self.value, 6), "low": round(self.low, 6), "high": round(self.high, 6),
                "tasks": self.tasks}


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _percentile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile (0-1) of sorted values, interpolated linearly between ranks."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def bootstrap(scores: Sequence[float], *, confidence: float = 0.95, resamples: int = RESAMPLES,
              seed: int = 0) -> Estimate:
    """The mean of per-task ``scores`` with a percentile bootstrap interval over tasks."""
    if not scores:
        return Estimate(0.0, 0.0, 0.0, 0)
    rng = random.Random(seed)
    n = len(scores)
    means = sorted(sum(rng.choices(scores, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    return Estimate(mean(scores), _percentile(means, tail), _percentile(means, 1 - tail), n)


@dataclass(frozen=True)
class Difference:
    """B minus A over the tasks both ran: the mean difference, its bootstrap interval,
    the two-sided bootstrap p-value, and McNemar's exact test on the tasks where the
    two disagree (pass@1 of a single run each: solved by one, not the other)."""

    difference: Estimate
    p_value: float
    only_a: int  #: tasks A solved and B did not (both at their first run)
    only_b: int
    mcnemar_p: float

    def to_dict(self) -> dict[str, object]:
        return {"difference": self.difference.to_dict(), "p_value": round(self.p_value, 6),
                "only_a": self.only_a, "only_b": self.only_b, "mcnemar_p": round(self.mcnemar_p, 6)}


def paired(a: Sequence[float], b: Sequence[float], first_a: Sequence[bool], first_b: Sequence[bool], *,
           confidence: float = 0.95, resamples: int = RESAMPLES, seed: int = 0) -> Difference:
    """Compare two policies on the same tasks (``a[i]`` and ``b[i]`` are task i's scores,
    ``first_*`` whether its first run passed)."""
    if not (len(a) == len(b) == len(first_a) == len(first_b)):
        raise ValueError("paired scores need the same tasks on both sides")
    deltas = [y - x for x, y in zip(a, b)]
    estimate = bootstrap(deltas, confidence=confidence, resamples=resamples, seed=seed)
    only_a = sum(x and not y for x, y in zip(first_a, first_b))
    only_b = sum(y and not x for x, y in zip(first_a, first_b))
    return Difference(estimate, bootstrap_p_value(deltas, resamples=resamples, seed=seed), only_a, only_b,
                      mcnemar(only_a, only_b))


def bootstrap_p_value(deltas: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0) -> float:
    """Two-sided p-value of "the mean difference is 0": resample the differences
    centred on 0 and count means at least as far from 0 as the one observed."""
    if not deltas:
        return 1.0
    observed = abs(mean(deltas))
    if observed == 0:
        return 1.0
    centred = [d - mean(deltas) for d in deltas]
    rng = random.Random(seed)
    n = len(centred)
    extreme = sum(abs(sum(rng.choices(centred, k=n)) / n) >= observed - 1e-12 for _ in range(resamples))
    return (extreme + 1) / (resamples + 1)


def mcnemar(only_a: int, only_b: int) -> float:
    """McNemar's exact two-sided p-value: a binomial (sign) test on the discordant
    tasks, under "each is equally likely to be the one that solves it"."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    low = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(low + 1)) / 2 ** n
    return min(1.0, 2 * tail)
