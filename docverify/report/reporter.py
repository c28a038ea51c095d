"""The reporter family: present results while a run goes and when it ends.

The runner calls every selected reporter's hooks in order; a reporter overrides
the ones it needs. File reporters write under the run's output directory.
"""

from __future__ import annotations

from pathlib import Path

from docverify.registry import Plugin
from docverify.report.trajectory import ProcedureResult, RunSummary, Turn
from docverify.task import Task


class Reporter(Plugin):
    """Base class of reporter plugins."""

    #: whether it writes files (and so needs ``--output``)
    writes_files: bool = False

    def run_started(self, total: int, console: str, policy: str) -> None:
        """The run begins with ``total`` procedures."""

    def procedure_started(self, task: Task) -> None:
        """A procedure begins."""

    def turn(self, task: Task, turn: Turn) -> None:
        """A procedure made one turn."""

    def procedure_finished(self, result: ProcedureResult) -> None:
        """A procedure has its verdict."""

    def run_finished(self, summary: RunSummary, output: Path | None) -> list[Path]:
        """The run is over; write reports (under ``output``) and return the files written."""
        return []
