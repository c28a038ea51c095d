"""What deciding costs: model calls, tokens, money, and the run's budget.

Model policies and judges record every call in a :class:`Usage`; the run's
:class:`CostMeter` prices it from the configured price table (``[prices.MODEL]``
in docverify.toml, per million tokens, USD and CNY) and enforces ``--budget``:
before each call it checks that the call's worst case (the prompt plus the
longest answer allowed) still fits beside what was spent and what the calls in
flight hold (:class:`Ledger`), so a run stops *before* the budget is exceeded,
never after, however many procedures run at once.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from docverify.errors import ConfigError, Undecided
from docverify.records import Record, record, rounded

CURRENCIES = ("USD", "CNY")
BUDGET = re.compile(r"^\s*(?P<amount>\d+(?:\.\d+)?)\s*(?P<currency>USD|CNY|\$|¥)?\s*$", re.I)


class Price(BaseModel):
    """A model's price per million tokens. Unset currencies are unknown, not free."""

    model_config = ConfigDict(extra="forbid")

    input_usd: float | None = Field(None, ge=0, description="USD per million prompt tokens")
    output_usd: float | None = Field(None, ge=0, description="USD per million completion tokens")
    input_cny: float | None = Field(None, ge=0, description="CNY per million prompt tokens")
    output_cny: float | None = Field(None, ge=0, description="CNY per million completion tokens")

    def cost(self, tokens_in: int, tokens_out: int, currency: str) -> float | None:
        unit_in = getattr(self, f"input_{currency.lower()}")
        unit_out = getattr(self, f"output_{currency.lower()}")
        if unit_in is None or unit_out is None:
            return None
        return (tokens_in * unit_in + tokens_out * unit_out) / 1_000_000


#: Local engines cost no per-token money (their hardware is the user's own).
FREE = Price(input_usd=0, output_usd=0, input_cny=0, output_cny=0)


@record
class Usage(Record):
    """Model calls and tokens of one procedure (or one run), and what they cost."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    model_turns: int = 0  #: actions a model chose
    literal_turns: int = 0  #: actions the literal policy chose (the hybrid policy counts both)
    handovers: int = 0  #: steps the hybrid policy handed to its model
    handovers_done: int = 0  #: of those, the ones the model finished (it answered done: success)
    invalid_outputs: int = 0  #: answers that failed the action schema and were retried
    retries: int = 0  #: transport retries (429, 5xx, timeouts)
    cost_usd: float | None = 0.0  #: None: some call had no USD price
    cost_cny: float | None = 0.0

    def add(self, other: "Usage") -> None:
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            setattr(self, f.name, None if mine is None or theirs is None else mine + theirs)

    @property
    def used_model(self) -> bool:
        return self.calls > 0

    _money = field_serializer("cost_usd", "cost_cny")(rounded(6))

    def describe(self) -> str:
        """One line for reports ("" when no model was called): calls, tokens, cost, who decided."""
        if not self.calls:
            return ""
        parts = [f"{self.calls} model call{'s' if self.calls != 1 else ''}",
                 f"{self.tokens_in:,} tokens in / {self.tokens_out:,} out", self.describe_cost()]
        if self.model_turns or self.literal_turns:
            turns = f"{self.model_turns} turn{'s' if self.model_turns != 1 else ''} decided by the model"
            parts.append(turns + (f", {self.literal_turns} literally" if self.literal_turns else ""))
        if self.handovers:
            parts.append(f"{self.handovers_done} of {self.handovers} hand-over{'s' if self.handovers != 1 else ''} "
                         "finished by the model")
        if self.invalid_outputs:
            parts.append(f"{self.invalid_outputs} invalid answer{'s' if self.invalid_outputs != 1 else ''} retried")
        return " · ".join(parts)

    def describe_cost(self) -> str:
        """"$0.0123 / ¥0.0890", with "?" for an unknown currency."""
        usd = "?" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        cny = "?" if self.cost_cny is None else f"¥{self.cost_cny:.4f}"
        return f"{usd} / {cny}"


@dataclass(frozen=True)
class Budget:
    amount: float
    currency: str  #: "USD" or "CNY"

    @classmethod
    def parse(cls, text: str, origin: str = "--budget") -> "Budget":
        match = BUDGET.match(text)
        if not match:
            raise ConfigError(f"{origin}: '{text}' is not a budget",
                              hint="write an amount and a currency, e.g. 2.50USD or 20CNY")
        currency = (match["currency"] or "USD").upper()
        currency = {"$": "USD", "¥": "CNY"}.get(currency, currency)
        return cls(float(match["amount"]), currency)

    def describe(self) -> str:
        return f"{self.amount:g} {self.currency}"


class BudgetExhausted(Undecided):
    """The next model call could exceed the run's budget; nothing was spent on it."""


class Ledger:
    """A budget's accounts: what the run's calls spent, and what the calls in flight
    hold (each its worst case, until it is billed). One per run, shared by every episode
    and judge, whatever runs them at once: a call is made only when its worst case fits
    beside everything spent and held, so concurrent calls cannot overspend together.
    A run on Ray shares the driver's with its workers (a Ray actor of this class holds it).
    ``spent``, ``refused``: the accounts it starts from."""

    def __init__(self, spent: float = 0.0, refused: bool = False) -> None:
        self.spent = spent  #: in the budget's currency
        self.held = 0.0
        self.refused = refused  #: a call did not fit: the budget is spent for this run's purposes
        self._lock = threading.Lock()

    def hold(self, worst: float, limit: float) -> tuple[bool, float, float]:
        """Hold ``worst`` if it fits under ``limit``: (held, spent, held before it)."""
        with self._lock:
            spent, held = self.spent, self.held
            if spent + held + worst > limit:
                self.refused = True
                return False, spent, held
            self.held += worst
            return True, spent, held

    def settle(self, held: float, cost: float) -> None:
        """A call's hold let go, and what it cost spent."""
        with self._lock:
            self.held = max(0.0, self.held - held)
            self.spent += cost

    def state(self) -> tuple[float, bool]:
        """(spent, refused)."""
        with self._lock:
            return self.spent, self.refused


class CostMeter:
    """Prices calls and guards the budget; one per run, shared by every episode and judge."""

    def __init__(self, prices: dict[str, Price] | None = None, budget: Budget | None = None,
                 ledger: Ledger | None = None) -> None:
        self.prices = dict(prices or {})
        self.budget = budget
        self.ledger = ledger or Ledger()

    @property
    def spent(self) -> float:
        """What the run's calls cost, in the budget's currency."""
        return self.ledger.state()[0]

    @property
    def refused(self) -> bool:
        """Whether a call did not fit: the budget is spent for this run's purposes."""
        return self.ledger.state()[1]

    def price(self, model: str, *, local: bool = False) -> Price | None:
        """The configured price of ``model`` (by exact name, then by its last path
        part); a local engine without one is free; otherwise unknown (None)."""
        for key in (model, model.rsplit("/", 1)[-1]):
            if key in self.prices:
                return self.prices[key]
        return FREE if local else None

    def require_price(self, model: str, *, local: bool = False) -> None:
        """With a budget, a model must have a price in its currency: say so at start."""
        if self.budget is None:
            return
        price = self.price(model, local=local)
        if price is None or price.cost(0, 0, self.budget.currency) is None:
            raise ConfigError(
                f"--budget {self.budget.describe()} needs a {self.budget.currency} price for model '{model}'",
                hint=f'add [prices."{model}"] with input_{self.budget.currency.lower()} and '
                     f"output_{self.budget.currency.lower()} (per million tokens) to docverify.toml")

    @property
    def exhausted(self) -> bool:
        """Whether a model call was already refused (or the budget is all spent): the run
        starts no further procedure."""
        if self.budget is None:
            return False
        spent, refused = self.ledger.state()
        return refused or spent >= self.budget.amount

    @contextmanager
    def spending(self, model: str, tokens_in: int, max_tokens_out: int, *,
                 local: bool = False) -> Iterator[Callable[[Usage, int, int], None]]:
        """Around one model call: :class:`BudgetExhausted` (nothing sent) when the call's
        worst case (``tokens_in`` and the longest answer allowed) could exceed the budget
        beside what is spent and what the calls in flight hold; otherwise the worst case
        is held until the call ends, and the block bills the call with what it yields:
        ``bill(usage, tokens_in, tokens_out)`` (recorded in ``usage`` and the run's spending)."""
        price = self.price(model, local=local)
        worst = 0.0
        if self.budget is not None:
            cost = price.cost(tokens_in, max_tokens_out, self.budget.currency) if price else None
            if cost is None:
                raise BudgetExhausted(f"no {self.budget.currency} price for model '{model}'")
            fits, spent, held = self.ledger.hold(cost, self.budget.amount)
            if not fits:
                in_flight = f", {held:.4f} held by calls in flight" if held else ""
                raise BudgetExhausted(
                    f"the cost budget ran out ({self.budget.describe()}; spent {spent:.4f}{in_flight}, the next "
                    f"call could cost up to {cost:.4f}; --budget)")
            worst = cost
        billed = [0.0]

        def bill(usage: Usage, tokens_in: int, tokens_out: int) -> None:
            usage.calls += 1
            usage.tokens_in += tokens_in
            usage.tokens_out += tokens_out
            for currency in CURRENCIES:
                key = f"cost_{currency.lower()}"
                cost = price.cost(tokens_in, tokens_out, currency) if price else None
                current = getattr(usage, key)
                setattr(usage, key, None if cost is None or current is None else current + cost)
                if self.budget is not None and currency == self.budget.currency and cost is not None:
                    billed[0] += cost

        try:
            yield bill
        finally:
            if self.budget is not None:
                self.ledger.settle(worst, billed[0])


class Metered:
    """A plugin that may spend (model calls): :attr:`meter` is its run's
    :class:`CostMeter`, set by the run before first use; until then (a plugin used on
    its own, in a test) a meter of its own, never one shared with other instances."""

    _meter: CostMeter | None = None

    @property
    def meter(self) -> CostMeter:
        if self._meter is None:
            self._meter = CostMeter()
        return self._meter

    @meter.setter
    def meter(self, meter: CostMeter) -> None:
        self._meter = meter
