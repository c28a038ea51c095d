"""Limits that grow with the console's measured latency (issue 18: timeouts under load)."""

from __future__ import annotations

import pytest

from docverify_playwright.deadlines import Deadlines


def test_the_configured_limits_are_the_floor_on_a_quick_console():
    deadlines = Deadlines(action_s=5, navigation_s=20)
    assert (deadlines.action, deadlines.navigation) == (5, 20)  # nothing measured yet
    for _ in range(5):
        deadlines.measure("action", 0.05)
        deadlines.measure("navigation", 0.3)
    assert (deadlines.action, deadlines.navigation) == (5, 20)  # 10 × 0.05 s and 10 × 0.3 s are below them


def test_a_slow_console_stretches_the_limits_up_to_the_cap():
    deadlines = Deadlines(action_s=5, navigation_s=20, factor=10, cap=4)
    deadlines.measure("action", 0.8)
    assert deadlines.action == pytest.approx(8.0)  # 10 × the measured latency
    assert deadlines.navigation == 20  # each kind measured on its own
    deadlines.measure("action", 30)
    assert deadlines.action == 20  # at most 4 × the configured limit
    deadlines.measure("navigation", 100)
    assert deadlines.navigation == 80


def test_the_latency_is_a_moving_average_that_comes_down_again():
    deadlines = Deadlines(action_s=1, navigation_s=1, factor=10, cap=10, weight=0.5)
    deadlines.measure("action", 0.4)
    deadlines.measure("action", 0.2)
    assert deadlines.latency["action"] == pytest.approx(0.3)
    assert deadlines.action == pytest.approx(3.0)
    for _ in range(20):
        deadlines.measure("action", 0.01)
    assert deadlines.action == 1  # back at the floor once the console is quick again


def test_a_factor_of_zero_keeps_the_limits_fixed():
    deadlines = Deadlines(action_s=5, navigation_s=20, factor=0)
    deadlines.measure("action", 60)
    deadlines.measure("navigation", 60)
    assert (deadlines.action, deadlines.navigation) == (5, 20)

