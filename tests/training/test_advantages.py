"""GRPO's two-layer advantage normalisation on fixed numbers."""

from __future__ import annotations

import math

import pytest

from docverify_training.advantages import Rollout, advantages, informative_tasks


def test_within_each_group_then_across_the_batch():
    rollouts = [Rollout("a", 1.0), Rollout("a", 0.0), Rollout("a", 0.0), Rollout("a", 1.0),
                Rollout("b", 1.0), Rollout("b", 0.0), Rollout("b", 0.0), Rollout("b", 0.0)]
    within = advantages(rollouts, across_batch=False).values
    # a: mean 0.5, std 0.5 -> +1 / -1; b: mean 0.25, std sqrt(3)/4
    assert within[:4] == pytest.approx([1, -1, -1, 1], abs=1e-5)
    assert within[4:] == pytest.approx([0.75 / (math.sqrt(3) / 4), -0.25 / (math.sqrt(3) / 4)] + [-0.25 / (math.sqrt(3) / 4)] * 2,
                                       abs=1e-5)
    both = advantages(rollouts).values
    mean = sum(within) / 8
    std = math.sqrt(sum((v - mean) ** 2 for v in within) / 8)
    assert both == pytest.approx([(v - mean) / std for v in within], abs=1e-5)
    assert sum(both) == pytest.approx(0, abs=1e-6)


def test_a_group_with_one_reward_teaches_nothing_and_undecided_rollouts_are_dropped():
    rollouts = [Rollout("easy", 1.0), Rollout("easy", 1.0), Rollout("hard", 0.0), Rollout("hard", None, "ENV_ERROR"),
                Rollout("mixed", 1.0), Rollout("mixed", 0.0)]
    result = advantages(rollouts)
    assert result.dropped == 1 and result.values[3] is None
    assert sorted(result.flat_groups) == ["easy", "hard"]
    assert result.values[0] == result.values[1] == result.values[2] == 0.0  # no signal: no push either way
    assert result.values[4] == pytest.approx(1, abs=1e-5) and result.values[5] == pytest.approx(-1, abs=1e-5)


def test_the_groups_with_a_gradient_are_those_whose_scored_rewards_differ():
    rollouts = [Rollout("mixed", 1.0), Rollout("mixed", 0.0), Rollout("mixed", None),
                Rollout("failed", 0.0), Rollout("failed", 0.0),
                Rollout("passed", 1.0), Rollout("passed", 1.0),
                Rollout("one-scored", 1.0), Rollout("one-scored", None), Rollout("none-scored", None)]
    assert informative_tasks(rollouts) == {"mixed"}
    assert set(advantages(rollouts).flat_groups) == {"failed", "passed", "one-scored"}
