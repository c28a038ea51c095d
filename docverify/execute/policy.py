"""The policy family: given an observation, choose the next action.

A policy plays one *episode* per procedure: :meth:`Policy.start` returns an
:class:`Episode` holding that procedure's state; the runner calls
:meth:`Episode.next_action` after every observation until the episode answers
``done``. Model policies add their token usage to :attr:`Episode.usage`.
"""

from __future__ import annotations

from typing import ClassVar

from docverify.cost import Metered, Usage
from docverify.execute.actions import Action, Observation
from docverify.registry import Plugin
from docverify.task import Task

__all__ = ["Episode", "Policy", "Usage"]


class Episode:
    """One procedure's decisions."""

    usage: Usage

    def __init__(self) -> None:
        self.usage = Usage()

    async def next_action(self, observation: Observation) -> Action:
        raise NotImplementedError

    def provisioned(self, report: str) -> None:
        """A provisioner created something this procedure lacked (a structured,
        human-readable report): model policies add it to their context."""

    def resume(self) -> bool:
        """After the episode answered ``done`` blocked and what it lacked was created:
        go on (True), or stay finished (False, the default)."""
        return False


class Policy(Metered, Plugin):
    """Base class of policy plugins.

    :attr:`meter` is the run's :class:`~docverify.cost.CostMeter` (prices, budget);
    the run sets it before the first episode. :meth:`prepare` runs once before the
    first episode, where a policy loads its model or checks its endpoint, so a
    misconfiguration is one clear error instead of one per procedure."""

    #: chosen when its ``[policy.<name>]`` table is configured and no policy is named
    #: (``policy.use``): configuring the policy is choosing it (the hybrid policy's model)
    chosen_when_configured: ClassVar[bool] = False

    @property
    def sees_screenshots(self) -> bool:
        """Whether observations should carry a screenshot (a vision model reads it)."""
        return False

    def prepare(self) -> None:
        """Load what every episode shares; raise a DocverifyError when unusable."""

    def start(self, task: Task) -> Episode:
        raise NotImplementedError

    def close(self) -> None:
        """Free what :meth:`prepare` loaded (a model, connections); the run is over."""
