"""The benchmark's statistics against closed forms and fixed numbers."""

import itertools
import math

import pytest

from docverify_bench.stats import bootstrap, bootstrap_p_value, mcnemar, paired, pass_at_k, pass_hat_k


def _enumerate(n: int, c: int, k: int) -> tuple[float, float]:
    """pass@k and pass^k by counting every k-subset of n runs, c of which pass."""
    runs = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(runs, k))
    return (sum(any(s) for s in subsets) / len(subsets), sum(all(s) for s in subsets) / len(subsets))


@pytest.mark.parametrize("n,c,k", [(1, 0, 1), (1, 1, 1), (5, 2, 1), (5, 2, 3), (6, 3, 6), (8, 7, 2), (10, 0, 4)])
def test_pass_at_k_and_pass_hat_k_count_the_subsets(n, c, k):
    at, hat = _enumerate(n, c, k)
    assert pass_at_k(n, c, k) == pytest.approx(at)
    assert pass_hat_k(n, c, k) == pytest.approx(hat)


def test_pass_at_1_is_the_success_rate():
    assert pass_at_k(4, 3, 1) == pass_hat_k(4, 3, 1) == 0.75


@pytest.mark.parametrize("n,c,k", [(3, 4, 1), (3, 1, 4), (3, 1, 0), (3, -1, 1)])
def test_impossible_counts_are_refused(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_bootstrap_interval_matches_the_normal_approximation():
    scores = [1.0] * 60 + [0.0] * 40  # p = 0.6 over 100 tasks
    estimate = bootstrap(scores, seed=1)
    half = 1.96 * math.sqrt(0.6 * 0.4 / 100)  # 0.096
    assert estimate.value == 0.6 and estimate.tasks == 100
    assert estimate.low == pytest.approx(0.6 - half, abs=0.015)
    assert estimate.high == pytest.approx(0.6 + half, abs=0.015)


def test_bootstrap_is_reproducible_and_degenerate_cases_are_exact():
    scores = [0.0, 0.5, 1.0, 1.0, 0.0, 1.0]
    assert bootstrap(scores, seed=3) == bootstrap(scores, seed=3)
    assert bootstrap([1.0] * 10).low == bootstrap([1.0] * 10).high == 1.0
    assert bootstrap([]).tasks == 0


def test_mcnemar_is_the_exact_binomial_test():
    assert mcnemar(0, 0) == 1.0
    assert mcnemar(3, 3) == 1.0
    assert mcnemar(0, 6) == pytest.approx(2 / 64)  # 2 * 0.5**6
    assert mcnemar(1, 9) == pytest.approx(2 * 11 / 1024)  # 2 * (C(10,0) + C(10,1)) / 2**10


def test_paired_difference_finds_a_real_gain_and_not_a_null_one():
    a = [0.0] * 30 + [1.0] * 20
    b = [1.0] * 25 + [0.0] * 5 + [1.0] * 20  # B solves 25 tasks A does not
    difference = paired(a, b, [x == 1 for x in a], [x == 1 for x in b], seed=2)
    assert difference.difference.value == pytest.approx(0.5)
    assert difference.difference.low > 0.3 and difference.p_value < 0.001
    assert (difference.only_a, difference.only_b) == (0, 25) and difference.mcnemar_p < 1e-6
    same = paired(a, a, [x == 1 for x in a], [x == 1 for x in a])
    assert same.p_value == 1.0 and same.mcnemar_p == 1.0
    balanced = [1.0, -1.0] * 20
    assert bootstrap_p_value(balanced) == 1.0


def test_paired_needs_the_same_tasks():
    with pytest.raises(ValueError):
        paired([1.0], [1.0, 0.0], [True], [True, False])
