"""The run's budget: a call is made only when its worst case fits beside what was spent
and what the calls in flight hold, so calls made at once cannot overspend together."""

from __future__ import annotations

import threading

import pytest

from docverify.cost import Budget, BudgetExhausted, CostMeter, Price, Usage

# $1 per thousand tokens: a call of 100 tokens in and at most 200 out costs at most $0.30
PRICES = {"m": Price(input_usd=1000.0, output_usd=1000.0)}


def test_a_call_in_flight_holds_its_worst_case_until_it_is_billed():
    meter = CostMeter(PRICES, Budget(0.5, "USD"))
    usage = Usage()
    with meter.spending("m", 100, 200) as bill:  # holds $0.30
        with pytest.raises(BudgetExhausted, match=r"spent 0.0000, 0.3000 held by calls in flight"):
            with meter.spending("m", 100, 200):  # 0.30 + 0.30 > 0.5: not sent
                pass
        bill(usage, 100, 20)  # it cost $0.12
    assert meter.spent == pytest.approx(0.12) and usage.cost_usd == pytest.approx(0.12) and usage.calls == 1
    assert meter.refused and meter.exhausted  # a refused call ends the run's spending
    fresh = CostMeter(PRICES, Budget(0.5, "USD"))
    with fresh.spending("m", 100, 200) as bill:
        bill(Usage(), 100, 20)
    with fresh.spending("m", 100, 200) as bill:  # 0.12 spent + 0.30 fits in 0.5 once the first let go
        bill(Usage(), 100, 20)
    assert fresh.spent == pytest.approx(0.24) and not fresh.refused


def test_a_call_that_fails_lets_go_of_its_hold_and_costs_nothing():
    meter = CostMeter(PRICES, Budget(0.5, "USD"))
    with pytest.raises(ConnectionError):
        with meter.spending("m", 100, 200):
            raise ConnectionError("the model's server went away")
    assert meter.ledger.held == 0 and meter.spent == 0
    with meter.spending("m", 100, 200) as bill:
        bill(Usage(), 100, 200)
    assert meter.spent == pytest.approx(0.30)


def test_calls_at_once_never_spend_more_than_the_budget():
    meter = CostMeter(PRICES, Budget(1.0, "USD"))
    inside = threading.Barrier(3, timeout=10)
    sent, refused = [], []

    def call() -> None:
        try:
            with meter.spending("m", 100, 200) as bill:
                sent.append(1)
                inside.wait()  # three calls in flight at once, each holding $0.30
                bill(Usage(), 100, 200)
        except BudgetExhausted:
            refused.append(1)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(sent) == 3 and len(refused) == 5
    assert meter.spent == pytest.approx(0.90) and meter.spent <= 1.0


def test_without_a_budget_calls_are_only_priced():
    meter = CostMeter(PRICES)
    usage = Usage()
    with meter.spending("unpriced", 100, 200) as bill:
        bill(usage, 100, 20)
    assert usage.cost_usd is None and usage.calls == 1 and not meter.exhausted
