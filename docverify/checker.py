"""The checker family: decide whether a procedure reached its goal.

A checker reads the evidence — the task's success criteria, the trajectory, the
console's audit log — never the policy's own claim of success. It answers with a
:class:`~docverify.trajectory.CheckResult`: goal reached, not reached, or
undecided (``None``), with a reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from docverify.console import ConsoleEndpoint
from docverify.registry import Plugin
from docverify.task import Task
from docverify.trajectory import CheckResult, Turn


@dataclass(frozen=True)
class Evidence:
    """What a checker may look at."""

    task: Task
    turns: list[Turn]
    endpoint: ConsoleEndpoint
    started: float  #: the execution window, epoch seconds
    finished: float


class Checker(Plugin):
    """Base class of checker plugins."""

    def applies(self, task: Task) -> bool:
        """Whether this checker can decide ``task`` (e.g. it has audit-event criteria)."""
        return True

    async def check(self, evidence: Evidence) -> CheckResult:
        raise NotImplementedError
