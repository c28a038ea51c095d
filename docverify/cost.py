"""What deciding costs: model calls, tokens, money, and the run's budget.

Model policies and judges record every call in a :class:`Usage`; the run's
:class:`CostMeter` prices it from the configured price table (``[prices.MODEL]``
in docverify.toml, per million tokens, USD and CNY) and enforces ``--budget``:
before each call it checks that the call's worst case (the prompt plus the
longest answer allowed) still fits, so a run stops *before* the budget is
exceeded, never after.
"""

from __future__ import annotations

import re
import threading
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


class CostMeter:
    """Prices calls and guards the budget; one per run, shared by every episode and judge."""

    def __init__(self, prices: dict[str, Price] | None = None, budget: Budget | None = None) -> None:
        self.prices = dict(prices or {})
        self.budget = budget
        self.spent = 0.0  #: in the budget's currency
        self.refused = False  #: a call did not fit: the budget is spent for this run's purposes
        self._lock = threading.Lock()

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
        return self.budget is not None and (self.refused or self.spent >= self.budget.amount)

    def reserve(self, model: str, tokens_in: int, max_tokens_out: int, *, local: bool = False) -> None:
        """Raise :class:`BudgetExhausted` when a call of this size could exceed the budget."""
        if self.budget is None:
            return
        price = self.price(model, local=local)
        worst = price.cost(tokens_in, max_tokens_out, self.budget.currency) if price else None
        if worst is None:
            raise BudgetExhausted(f"no {self.budget.currency} price for model '{model}'")
        with self._lock:
            if self.spent + worst > self.budget.amount:
                self.refused = True
                raise BudgetExhausted(
                    f"the cost budget ran out ({self.budget.describe()}; spent {self.spent:.4f}, the next call "
                    f"could cost up to {worst:.4f}; --budget)")

    def charge(self, usage: Usage, model: str, tokens_in: int, tokens_out: int, *, local: bool = False) -> None:
        """Record one call in ``usage`` and in the run's spending."""
        price = self.price(model, local=local)
        usage.calls += 1
        usage.tokens_in += tokens_in
        usage.tokens_out += tokens_out
        for currency in CURRENCIES:
            key = f"cost_{currency.lower()}"
            cost = price.cost(tokens_in, tokens_out, currency) if price else None
            current = getattr(usage, key)
            setattr(usage, key, None if cost is None or current is None else current + cost)
            if self.budget is not None and currency == self.budget.currency and cost is not None:
                with self._lock:
                    self.spent += cost


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
