"""Verdicts and findings (docs/architecture.md, "Verdicts"): how one procedure ended, and why.

A procedure ends in exactly one :class:`Verdict`. Findings say, step by step and on
the doc's own line, where the documentation and the console disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from enum import StrEnum

from docverify.errors import ExitCode
from docverify.records import Record, optional, record


class Verdict(StrEnum):
    PASS = "PASS"  #: every step followed as written, success criteria hold
    DRIFT = "DRIFT"  #: the documentation is wrong somewhere
    FAIL = "FAIL"  #: goal not reached, and no drift explains it
    ENV_ERROR = "ENV_ERROR"  #: the environment, not the doc
    INCONCLUSIVE = "INCONCLUSIVE"  #: judges disagreed, or a budget ran out


class FindingKind(StrEnum):
    LABEL_CHANGED = "label_changed"  #: followed a close match: doc and console words differ
    ELEMENT_NOT_FOUND = "element_not_found"  #: nothing on the page matches the doc's label
    MENU_MOVED = "menu_moved"  #: a menu path leads elsewhere
    VALUE_REJECTED = "value_rejected"  #: the console refused a value the doc gives
    MISSING_STEP = "missing_step"  #: the console needs a step the doc does not have
    EXTRA_STEP = "extra_step"  #: the doc has a step the console no longer needs
    NOT_VERIFIABLE = "not_verifiable"  #: the step cannot be followed literally (not a defect)

    @property
    def is_drift(self) -> bool:
        return self is not FindingKind.NOT_VERIFIABLE


@record
class Finding(Record):
    """One disagreement between a doc step and the console."""

    kind: FindingKind
    path: str  #: the document
    line: int  #: the step's line in it
    step: str  #: the step number, "3" or "3.2"
    expected: str  #: what the doc says
    observed: str  #: what the console shows
    candidates: list[str] = field(default_factory=list)  #: nearest labels on the page
    resolved_by: str | None = optional()  #: what was done instead (a hybrid policy's model), if anything
    #: "path:line" of an earlier finding this one only follows from: the page never
    #: changed after that step's action, so this step could not be reached as written
    consequence_of: str | None = optional()
    #: the screenshot of the page it was raised on (a file name under the run's output, like a
    #: turn's); None when the run took none, or dropped them (a procedure that passed)
    screenshot: str | None = optional(compare=False)
    #: where on that screenshot the element it points at is (the console's label, the nearest
    #: candidate): ``x``, ``y``, ``width``, ``height`` as fractions (0-1) of the screenshot's size
    box: dict[str, float] | None = optional(compare=False)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def message(self) -> str:
        text = f"step {self.step}: {self.kind.value.replace('_', ' ')}: doc: {self.expected}; console: {self.observed}"
        if self.candidates:
            text += f" (nearest: {', '.join(self.candidates)})"
        if self.resolved_by:
            text += f"; instead: {self.resolved_by}"
        if self.consequence_of:
            text += f" (follows from the finding at line {self.consequence_of.rpartition(':')[2]})"
        return text


def decide(
    findings: Iterable[Finding],
    *,
    goal_reached: bool | None,
    environment_error: str | None = None,
) -> Verdict:
    """The verdict of one procedure.

    ``goal_reached`` is the checker's answer: True, False, or None when it could not
    decide (judges disagreed, a budget ran out). An environment error wins over
    everything: a broken console is never a doc defect. Drift is reported whether or
    not the goal was reached by another path. A goal not reached after steps that
    could not be followed literally is INCONCLUSIVE, not FAIL: those steps (a CLI
    command, "wait until ...") may be the ones that reach it.
    """
    findings = list(findings)
    if environment_error:
        return Verdict.ENV_ERROR
    if any(finding.kind.is_drift for finding in findings):
        return Verdict.DRIFT
    if goal_reached is None:
        return Verdict.INCONCLUSIVE
    if not goal_reached and any(finding.kind is FindingKind.NOT_VERIFIABLE for finding in findings):
        # steps that could not be followed literally (a CLI command, "wait until...")
        # may be what reaches the goal: not an agent failure the check can show
        return Verdict.INCONCLUSIVE
    return Verdict.PASS if goal_reached else Verdict.FAIL


#: What ``--fail-on`` can name, and the verdicts each covers.
FAIL_ON = {
    "drift": {Verdict.DRIFT},
    "fail": {Verdict.FAIL},
    "env": {Verdict.ENV_ERROR, Verdict.INCONCLUSIVE},
}


def failing_verdicts(fail_on: Iterable[str] = ("drift", "fail", "env")) -> frozenset[Verdict]:
    """The verdicts that ``--fail-on`` names (``drift``, ``fail``, ``env``) fail the run."""
    return frozenset().union(*(FAIL_ON[name] for name in fail_on))


def exit_code(verdicts: Iterable[Verdict], fail_on: Iterable[str] = ("drift", "fail", "env")) -> ExitCode:
    """Exit code of a run: 1 for a DRIFT/FAIL, else 3 for ENV_ERROR/INCONCLUSIVE, else
    0; verdicts not named by ``fail_on`` do not fail the run."""
    failing = failing_verdicts(fail_on)
    seen = set(verdicts) & failing
    if seen & {Verdict.DRIFT, Verdict.FAIL}:
        return ExitCode.DEFECTS
    if seen:
        return ExitCode.ENVIRONMENT
    return ExitCode.OK
