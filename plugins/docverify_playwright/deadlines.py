"""How long the browser may take: limits that grow with how slowly the console answers.

On a loaded machine (two runs on two cores, a busy CI runner) every click and page
load takes longer than the configured limits assume, and a fixed limit turns that
slowness into failed actions. :class:`Deadlines` keeps a moving average of how long
recent actions and page loads took, run-wide (the load is the machine's, not one
procedure's), and sets each limit to ``factor`` times it: never below the configured
limit (the floor), never above ``cap`` times it. An operation that still times out
gets one more try under :data:`RETRY` times its limit (the executor's ``patiently``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: what is being timed: an action on the page (click, fill, ...) or a page load (goto, back)
Kind = Literal["action", "navigation"]
#: the second try's limit, as a multiple of the first's
RETRY = 3.0


@dataclass
class Deadlines:
    """The current limit of an action and of a page load, in seconds."""

    action_s: float  #: the configured action limit: the floor
    navigation_s: float  #: the configured page-load limit: the floor
    factor: float = 10.0  #: a limit is at least this many times the measured latency (0: fixed limits)
    cap: float = 4.0  #: a limit is at most this many times the configured one
    weight: float = 0.3  #: how much the newest measurement counts in the moving average
    latency: dict[str, float] = field(default_factory=dict)  #: kind → moving average, seconds

    def measure(self, kind: Kind, seconds: float) -> None:
        """One operation of ``kind`` took ``seconds`` (a timed-out one: at least its limit)."""
        before = self.latency.get(kind)
        self.latency[kind] = seconds if before is None else before + self.weight * (seconds - before)

    def limit(self, kind: Kind) -> float:
        """The limit for the next operation of ``kind``: ``factor`` × its measured latency,
        between the configured limit and ``cap`` times it."""
        floor = self.action_s if kind == "action" else self.navigation_s
        return min(max(floor, self.factor * self.latency.get(kind, 0.0)), floor * max(self.cap, 1.0))

    @property
    def action(self) -> float:
        return self.limit("action")

    @property
    def navigation(self) -> float:
        return self.limit("navigation")
