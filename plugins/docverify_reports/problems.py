"""The doc lines a run found wrong, as every reporter lists them.

A :class:`Problem` points at one line of one document: a drift finding (on its
step's line), or — for a procedure that did not pass and has no drift finding to
point at — the procedure's own heading line with its verdict and reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docverify.check.verdict import Verdict
from docverify.report.trajectory import ProcedureResult

#: verdicts whose problems are doc or agent defects; the others are the environment's
DEFECTS = frozenset({Verdict.DRIFT, Verdict.FAIL})


@dataclass(frozen=True)
class Problem:
    """Something wrong on one doc line."""

    verdict: Verdict  #: the procedure's verdict
    procedure: str  #: the procedure id
    path: str
    line: int
    kind: str  #: a finding kind ("label_changed") or the verdict ("FAIL")
    message: str  #: a finding's message ("step 3: ..."), or "VERDICT: why"
    follows: str | None = None  #: "path:line" of the finding this one only follows from (listed after it)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"


def problems(result: ProcedureResult) -> list[Problem]:
    """The problems of one result, in doc order: none for a PASS; each drift
    finding, a finding that only follows from another right after that one
    (``follows``); and the procedure line itself when the verdict is not DRIFT
    (FAIL, ENV_ERROR, INCONCLUSIVE) or a DRIFT has no drift finding to show."""
    if result.verdict is Verdict.PASS:
        return []
    drift = sorted(result.drift, key=lambda finding: (finding.path, finding.line))
    found: list[Problem] = []
    for root in (finding for finding in drift if not finding.consequence_of):
        found.append(Problem(result.verdict, result.id, root.path, root.line, root.kind.value, root.message))
        found += [Problem(result.verdict, result.id, f.path, f.line, f.kind.value, f.message, f.consequence_of)
                  for f in drift if f.consequence_of == root.where]
    placed = {(p.path, p.line, p.message) for p in found}
    found += [Problem(result.verdict, result.id, f.path, f.line, f.kind.value, f.message, f.consequence_of)
              for f in drift if (f.path, f.line, f.message) not in placed]
    if result.verdict is not Verdict.DRIFT or not found:
        message = f"{result.verdict.value}: {why(result)}" if why(result) else result.verdict.value
        found.insert(0, Problem(result.verdict, result.id, result.path, result.line, result.verdict.value, message))
    return found


def why(result: ProcedureResult) -> str:
    """One reason for a verdict: the environment error of an ENV_ERROR, else the reason."""
    if result.verdict is Verdict.ENV_ERROR and result.env_error:
        return result.env_error
    return result.reason


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` with every run of whitespace (newlines included) made one space,
    cut to ``limit`` characters with an ellipsis."""
    flat = re.sub(r"\s+", " ", text).strip()
    if limit is not None and len(flat) > limit:
        return flat[: max(limit - 1, 0)].rstrip() + "…"
    return flat


def duration(seconds: float) -> str:
    """``seconds`` for people: "0.4s", "12.3s", "2m05s", "1h02m"."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
