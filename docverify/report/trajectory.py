"""What a run records: turns, per-step outcomes, check results, procedure results.

Plain data, JSON-ready through ``to_dict``; reporters and the results store read
nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from docverify.cost import Usage
from docverify.check.verdict import Finding, FindingKind, Verdict


@dataclass
class Turn:
    """One policy decision and what applying it did."""

    index: int
    step: str | None  #: the doc step it served
    action: dict[str, Any]  #: Action.to_dict(): secrets already masked
    description: str
    ok: bool = True
    error: str | None = None
    url: str = ""  #: the page after the action
    title: str = ""
    browser_s: float = 0.0  #: executor time: browser + console
    policy_s: float = 0.0  #: time the policy took to decide
    screenshot_before: str | None = None  #: file name under the run's artifacts
    screenshot_after: str | None = None
    thought: str | None = None
    by: str | None = None  #: "model" when a model chose it (hybrid policy); None: the policy's own way

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


class StepStatus(StrEnum):
    FOLLOWED = "followed"  #: done as written
    DRIFTED = "drifted"  #: a drift finding on this step
    NOT_VERIFIABLE = "not_verifiable"  #: nothing to do literally (free text)
    NOT_REACHED = "not_reached"  #: the run stopped before it
    SKIPPED = "skipped"  #: optional or an alternative not taken


@dataclass
class StepOutcome:
    """A doc step and how following it went, on its own line."""

    number: str
    line: int
    text: str
    status: StepStatus
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number, "line": self.line, "text": self.text, "status": self.status.value,
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass
class CheckResult:
    """A checker's answer: goal reached (True/False) or undecided (None), and why."""

    checker: str
    goal_reached: bool | None
    reason: str
    evidence: list[dict[str, Any]] = field(default_factory=list)  #: e.g. matching audit events
    usage: Usage | None = None  #: model calls the check made (judges)

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k != "usage"}
        if self.usage is not None:
            data["usage"] = self.usage.to_dict()
        return data


@dataclass
class ProcedureResult:
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
    resumed_from: str | None = None  #: the run this result was taken over from (--resume)

    @property
    def drift(self) -> list[Finding]:
        return [f for f in self.findings if f.kind.is_drift]

    @property
    def not_verifiable(self) -> list[Finding]:
        return [f for f in self.findings if f.kind is FindingKind.NOT_VERIFIABLE]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "title": self.title, "path": self.path, "line": self.line,
            "verdict": self.verdict.value, "reason": self.reason,
            "goal_reached": self.goal_reached, "env_error": self.env_error,
            "findings": [f.to_dict() for f in self.findings],
            "steps": [s.to_dict() for s in self.steps],
            "turns": [t.to_dict() for t in self.turns],
            "check": self.check.to_dict() if self.check else None,
            "criteria": self.criteria, "context": self.context,
            "started_at": self.started_at, "duration_s": round(self.duration_s, 3),
            "browser_s": round(self.browser_s, 3), "setup_s": round(self.setup_s, 3),
            "check_s": round(self.check_s, 3),
            "artifacts": self.artifacts, "usage": self.usage.to_dict(),
            **({"resumed_from": self.resumed_from} if self.resumed_from else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ProcedureResult":
        """Back from ``to_dict`` (the results store keeps JSON)."""
        findings = [_finding(f) for f in data.get("findings", [])]
        steps = [
            StepOutcome(s["number"], s["line"], s["text"], StepStatus(s["status"]), [_finding(f) for f in s["findings"]])
            for s in data.get("steps", [])
        ]
        turns = [Turn(**{"step": None, **t}) for t in data.get("turns", [])]
        check = None
        if data.get("check"):
            check = CheckResult(**{**data["check"], "usage": Usage.from_dict(data["check"]["usage"])
                                   if data["check"].get("usage") else None})
        return cls(
            id=data["id"], title=data["title"], path=data["path"], line=data["line"],
            verdict=Verdict(data["verdict"]), reason=data.get("reason", ""), findings=findings, steps=steps,
            turns=turns, check=check, goal_reached=data.get("goal_reached"), env_error=data.get("env_error"),
            started_at=data.get("started_at", ""), duration_s=data.get("duration_s", 0.0),
            browser_s=data.get("browser_s", 0.0), setup_s=data.get("setup_s", 0.0), check_s=data.get("check_s", 0.0),
            artifacts=data.get("artifacts", {}), context=data.get("context", {}), criteria=data.get("criteria", []),
            usage=Usage.from_dict(data.get("usage")), resumed_from=data.get("resumed_from"),
        )


def _finding(data: dict[str, Any]) -> Finding:
    return Finding(**{**data, "kind": FindingKind(data["kind"])})


@dataclass
class RunSummary:
    """The whole run, as reporters see it at the end."""

    run_id: str
    started_at: str
    results: list[ProcedureResult]
    duration_s: float
    console: str  #: the console's URL and release, for the report header
    policy: str
    resumed: int = 0  #: results taken over from an interrupted run
    interrupted: bool = False
    output_dir: str | None = None
    changed_since: str | None = None  #: the git ref of ``--changed-since`` (reports favour the changed lines)
    stopped: str | None = None  #: why procedures were left unrun (``--maxfail``), when they were
    #: run-level seconds: startup (imports, configuration, plugins, parsing), prepare (policy and
    #: checkers), console (started or reached), browser (launched, signed in), procedures, close
    timings: dict[str, float] = field(default_factory=dict)

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "started_at": self.started_at, "duration_s": round(self.duration_s, 3),
            "console": self.console, "policy": self.policy, "resumed": self.resumed,
            "interrupted": self.interrupted, "counts": self.counts(), "usage": self.usage().to_dict(),
            **({"stopped": self.stopped} if self.stopped else {}),
            "timings": {key: round(value, 3) for key, value in self.timings.items()},
            **({"changed_since": self.changed_since} if self.changed_since else {}),
            "results": [r.to_dict() for r in self.results],
        }
