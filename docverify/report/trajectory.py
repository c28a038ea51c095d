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
from docverify.execute.guard import Stopped
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
    dry_run: bool | None = optional()  #: True: a dry run (``check --dry-run=browse``), which changes nothing
    #: the action not taken that ended the procedure: a dry run's first change, a refused destructive action
    stopped: Stopped | None = optional()

    _seconds = field_serializer("duration_s", "browser_s", "setup_s", "check_s")(_rounded_seconds)

    @property
    def drift(self) -> list[Finding]:
        return [f for f in self.findings if f.kind.is_drift]

    @property
    def not_verifiable(self) -> list[Finding]:
        return [f for f in self.findings if f.kind is FindingKind.NOT_VERIFIABLE]


@record
class ShardInfo(Record):
    """Which part of a sharded run this run is (``--shard INDEX/COUNT``), and what the
    whole run selected, so that ``docverify merge`` can tell what is missing and refuse
    the shards of another run (:mod:`docverify.run.shard`)."""

    index: int  #: 1-based
    count: int
    balance: str  #: how the procedures were split: "hash" or "store" (durations in the results store)
    #: every procedure selected before sharding, as ``PATH#ID`` (the path relative to ``root``), in run order
    selected: list[str]
    assigned: list[str]  #: the keys of the procedures this shard was given, in run order
    selected_digest: str  #: sha256 of the sorted ``selected`` keys: the same selection on every shard
    plan_digest: str  #: sha256 of every selected key with its shard: the same split on every shard
    root: str  #: the working folder the keys' paths are relative to
    commit: str | None = optional()  #: the git commit checked out in ``root``, when it is a git checkout


@record
class MergedShard(Record):
    """One shard folder that ``docverify merge`` read."""

    source: str  #: the folder (or file) it came from
    run_id: str
    index: int | None = None  #: None: a run without ``--shard`` (merged with ``--force``)
    results: int = 0


@record
class MergeInfo(Record):
    """How a merged run was put together, and what it lacks."""

    count: int | None  #: the shard count (None when no folder held a shard)
    shards: list[MergedShard] = field(default_factory=list)
    missing_shards: list[int] = field(default_factory=list)  #: shard indexes no folder held
    missing: list[str] = field(default_factory=list)  #: ``PATH#ID`` keys selected but without a result
    forced: list[str] = field(default_factory=list)  #: the mismatches ``--force`` let through

    @property
    def complete(self) -> bool:
        return not self.missing_shards and not self.missing

    def describe(self) -> str:
        """One line: what is missing ("" when nothing is)."""
        parts = [f"shard{'s' if len(self.missing_shards) > 1 else ''} "
                 f"{', '.join(f'{index}/{self.count}' for index in self.missing_shards)} missing"] \
            if self.missing_shards else []
        if self.missing:
            parts.append(f"{len(self.missing)} procedure{'s' if len(self.missing) != 1 else ''} without a result")
        return "incomplete: " + "; ".join(parts) if parts else ""


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
    shard: ShardInfo | None = optional()  #: this run's part of a sharded run (``--shard``)
    merged: MergeInfo | None = optional()  #: the shards ``docverify merge`` put together, and what is missing
    dry_run: bool | None = optional()  #: True: a dry run (``check --dry-run=browse``): nothing that changes state was done
    results: list[ProcedureResult] = field(default_factory=list)

    def verdicts_counted(self) -> list[Verdict]:
        """The results' verdicts as the exit code counts them: a dry run that stopped before
        its first change with nothing wrong on the way (INCONCLUSIVE, as it verified no goal)
        did what it was asked, and counts as a pass."""
        return [Verdict.PASS if result.verdict is Verdict.INCONCLUSIVE and result.stopped is not None
                and result.stopped.by == "dry_run" else result.verdict for result in self.results]

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
