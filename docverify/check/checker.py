"""The checker family: decide whether a procedure reached its goal.

A checker reads the evidence — the task's success criteria, the trajectory, the
console's audit log — never the policy's own claim of success. It answers with a
:class:`~docverify.report.trajectory.CheckResult`: goal reached, not reached, or
undecided (``None``), with a reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from docverify.check.verdict import Finding
from docverify.console import ConsoleEndpoint
from docverify.cost import Metered
from docverify.execute.actions import Observation
from docverify.registry import Plugin
from docverify.report.trajectory import CheckResult, Turn
from docverify.task import Task


class AuditReader(Protocol):
    """A console's audit log, as one account sees it."""

    async def events(self, start: float, end: float, name: str | None = None) -> list[dict[str, Any]]:
        """Every event (named ``name``, when given) between ``start`` and ``end``
        (epoch seconds), newest first, as the log gives them (dicts)."""


@dataclass(frozen=True)
class Evidence:
    """What a checker may look at."""

    task: Task
    turns: list[Turn]
    endpoint: ConsoleEndpoint
    started: float  #: the execution window, epoch seconds
    finished: float
    findings: list[Finding] = field(default_factory=list)
    final: Observation | None = None  #: the page when the episode ended
    #: the console's audit log, where a configured checker reads one (:meth:`Checker.audit_reader`):
    #: a checker that decides otherwise (the judges) may weigh its events
    audit: AuditReader | None = None


class Checker(Metered, Plugin):
    """Base class of checker plugins. :attr:`meter` prices model calls (judges)."""

    def prepare(self) -> None:
        """Check and load what checking needs, once per run; raise a DocverifyError when unusable."""

    def close(self) -> None:
        """Free what :meth:`prepare` loaded; the run is over."""

    def applies(self, task: Task) -> bool:
        """Whether this checker can decide ``task`` (e.g. it has audit-event criteria)."""
        return True

    async def check(self, evidence: Evidence) -> CheckResult:
        raise NotImplementedError

    def audit_reader(self, endpoint: ConsoleEndpoint) -> AuditReader | None:
        """Optional: how this checker reads ``endpoint``'s audit log, for the evidence
        every checker gets (:attr:`Evidence.audit`); None (the default) when it reads none."""
        return None
