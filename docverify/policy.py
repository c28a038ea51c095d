"""The policy family: given an observation, choose the next action.

A policy plays one *episode* per procedure: :meth:`Policy.start` returns an
:class:`Episode` holding that procedure's state; the runner calls
:meth:`Episode.next_action` after every observation until the episode answers
``done``. Model policies add their token usage to :attr:`Episode.usage`.
"""

from __future__ import annotations

from dataclasses import dataclass

from docverify.actions import Action, Observation
from docverify.registry import Plugin
from docverify.task import Task


@dataclass
class Usage:
    """What deciding cost: model calls and tokens (zero for the literal policy)."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    model_turns: int = 0  #: turns decided by a model (the hybrid policy counts them)


class Episode:
    """One procedure's decisions."""

    usage: Usage

    def __init__(self) -> None:
        self.usage = Usage()

    async def next_action(self, observation: Observation) -> Action:
        raise NotImplementedError


class Policy(Plugin):
    """Base class of policy plugins."""

    def start(self, task: Task) -> Episode:
        raise NotImplementedError
