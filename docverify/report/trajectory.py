"""What a run records: turns, per-step outcomes, check results, procedure results.

Records (:mod:`docverify.records`): ``to_dict`` gives the JSON the reports and the
results store keep, ``from_dict`` reads it back strictly. :class:`RunReport` is
``docverify.json``, whose schema ships as ``schemas/docverify.json.schema.json``.
"""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import Field, computed_field, field_serializer

from docverify.check.verdict import Finding, FindingKind, Verdict
from docverify.cost import Usage
from docverify.records import Record, optional, record, rounded

#: The version of ``docverify.json``'s layout; a reader refuses another.
RESULTS_VERSION = 1
#: Seconds are written to the millisecond.
_rounded_seconds = rounded(3)


@record
class Turn(Record):
    """One policy decision and what applying it did."""

    index: int
    step: str | None  #: the doc step it served
    action: dict[str, Any]  #: Action.to_dict(): secrets already masked
    description: str
    ok: bool = True
    error: str | None = optional()
    url: str = ""  #: the page after the action
    title: str = ""
    browser_s: float = 0.0  #: executor time: browser + console
    policy_s: float = 0.0  #: time the policy took to decide
    screenshot_before: str | None = optional()  #: file name under the run's artifacts
    screenshot_after: str | None = optional()
    thought: str | None = optional()
    by: str | None = optional()  #: "model" when a model chose it (hybrid policy); None: the policy's own way


class StepStatus(StrEnum):
    FOLLOWED = "followed"  #: done as written
    DRIFTED = "drifted"  #: a drift finding on this step
    NOT_VERIFIABLE = "not_verifiable"  #: nothing to do literally (free text)
    NOT_REACHED = "not_reached"  #: the run stopped before it
    SKIPPED = "skipped"  #: optional or an alternative not taken


@record
class StepOutcome(Record):
    """A doc step and how following it went, on its own line."""

    number: str
    line: int
    text: str
    status: StepStatus
    findings: list[Finding] = field(default_factory=list)


@record
class CheckResult(Record):
    """A checker's answer: goal reached (True/False) or undecided (None), and why."""

    checker: str
    goal_reached: bool | None
    reason: str
    evidence: list[dict[str, Any]] = field(default_factory=list)  #: e.g. matching audit events
    usage: Usage | None = optional()  #: model calls the check made (judges)


@record
class ProcedureResult(Record):
    """How one procedure ended: the verdict, findings on doc lines, the trajectory."""

    id: str
    title: str
    path: str
    line: int
    verdict: Verdict
    reason: str  #: one line: why this verdict
    findings: list[Finding] = field(default_factory=list)
    steps: list[StepOutcome] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    check: CheckResult | None = None
    goal_reached: bool | None = None
    env_error: str | None = None
    started_at: str = ""  #: ISO time, UTC
    duration_s: float = 0.0
    browser_s: float = 0.0  #: sum of the turns' executor time
    setup_s: float = 0.0  #: opening the browser context (and provisioning)
    check_s: float = 0.0  #: the checker's time (audit-log queries)
    artifacts: dict[str, str] = field(default_factory=dict)  #: kind -> file (trace, screenshots dir)
    context: dict[str, str] = field(default_factory=dict)
    criteria: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)  #: model calls, tokens, cost (deciding and judging)
    resumed_from: str | None = optional()  #: the run this result was taken over from (--resume)

    _seconds = field_serializer("duration_s", "browser_s", "setup_s", "check_s")(_rounded_seconds)

    @property
    def drift(self) -> list[Finding]:
        return [f for f in self.findings if f.kind.is_drift]

    @property
    def not_verifiable(self) -> list[Finding]:
        return [f for f in self.findings if f.kind is FindingKind.NOT_VERIFIABLE]


@record
class RunSummary(Record):
    """The whole run, as reporters see it at the end; its JSON is ``docverify.json``
    (with the verdict counts and the usage added up)."""

    #: what ``docverify.json`` adds to the fields: read back, they are recomputed
    DERIVED: ClassVar[tuple[str, ...]] = ("version", "counts", "usage")

    run_id: str
    started_at: str
    duration_s: float
    console: str  #: the console's URL and release, for the report header
    policy: str
    resumed: int = 0  #: results taken over from an interrupted run
    interrupted: bool = False
    output_dir: str | None = Field(default=None, exclude=True)  #: where the files went (not in the JSON)
    changed_since: str | None = optional()  #: the git ref of ``--changed-since`` (reports favour the changed lines)
    stopped: str | None = optional()  #: why procedures were left unrun (``--maxfail``), when they were
    #: run-level seconds: startup (imports, configuration, plugins, parsing), prepare (policy and
    #: checkers), console (started or reached), browser (launched, signed in), procedures, close
    timings: dict[str, float] = field(default_factory=dict)
    results: list[ProcedureResult] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counts = {verdict.value: 0 for verdict in Verdict}
        for result in self.results:
            counts[result.verdict.value] += 1
        return counts

    def usage(self) -> Usage:
        """Every procedure's usage added up."""
        total = Usage()
        for result in self.results:
            total.add(result.usage)
        return total

    @computed_field(alias="version")  # type: ignore[prop-decorator]
    @property
    def results_version(self) -> int:
        return RESULTS_VERSION

    @computed_field(alias="counts")  # type: ignore[prop-decorator]
    @property
    def verdict_counts(self) -> dict[str, int]:
        return self.counts()

    @computed_field(alias="usage")  # type: ignore[prop-decorator]
    @property
    def total_usage(self) -> Usage:
        return self.usage()

    _duration = field_serializer("duration_s")(_rounded_seconds)

    @field_serializer("timings")
    def _timings(self, timings: dict[str, float]) -> dict[str, float]:
        return {key: round(value, 3) for key, value in timings.items()}

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["results"] = data.pop("results")  # the summary first, for a reader of the file
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunSummary":
        """Back from ``docverify.json``: its version must be this one's; the derived keys
        are recomputed."""
        version = data.get("version", RESULTS_VERSION)
        if version != RESULTS_VERSION:
            raise ValueError(f"results version {version!r}: this docverify reads version {RESULTS_VERSION}")
        return super().from_dict({key: value for key, value in data.items() if key not in cls.DERIVED})
