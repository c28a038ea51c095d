"""Sample runs for the reporter tests: real results with findings, steps, turns
and a trace artifact — the shapes a run produces."""

from __future__ import annotations

import struct
import zlib

from docverify.check.verdict import Finding, FindingKind, Verdict
from docverify.parse.model import Procedure
from docverify.report.trajectory import CheckResult, ProcedureResult, RunSummary, StepOutcome, StepStatus, Turn
from docverify.task import Task

ECS_DOC = "docs/ecs/create-instance.md"


def tiny_png() -> bytes:
    """A real 1×1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")


#: a drift finding whose message has a comma, colons, a newline and a percent sign
LABEL_CHANGED = Finding(
    kind=FindingKind.LABEL_CHANGED, path=ECS_DOC, line=14, step="3",
    expected="Create Instance", observed="Create, ECS: instance\nnow 100%", candidates=["Create ECS Instance"],
)
#: a drift finding with markup in what the console showed
SCRIPT_OBSERVED = Finding(
    kind=FindingKind.ELEMENT_NOT_FOUND, path=ECS_DOC, line=16, step="4",
    expected="Next: Networking", observed="<script>alert('x')</script>",
)
NOT_VERIFIABLE = Finding(
    kind=FindingKind.NOT_VERIFIABLE, path=ECS_DOC, line=18, step="5",
    expected="Wait a few minutes", observed="nothing to do literally",
)


def sample_results() -> list[ProcedureResult]:
    """One result per verdict, in the order a run might finish them."""
    passed = ProcedureResult(
        id="oss#create-a-bucket", title="Create a bucket", path="docs/oss/create-bucket.md", line=3,
        verdict=Verdict.PASS, reason="PutBucket found in the audit log",
        steps=[
            StepOutcome("1", 5, "Log on to the **OSS console**.", StepStatus.FOLLOWED),
            StepOutcome("2", 6, "Click **Create Bucket**.", StepStatus.FOLLOWED),
        ],
        turns=[
            Turn(1, "1", {"kind": "goto", "value": "/oss"}, "goto /oss", url="http://127.0.0.1:8765/oss",
                 title="OSS", browser_s=0.4, policy_s=0.01,
                 screenshot_before="screens/oss-1-before.png", screenshot_after="screens/oss-1-after.png"),
            Turn(2, "2", {"kind": "click", "ref": "e12", "target": "button 'Create Bucket'"},
                 "click button 'Create Bucket'", url="http://127.0.0.1:8765/oss/buckets/new",
                 screenshot_before="screens/missing.png", screenshot_after="../outside.png"),
        ],
        check=CheckResult("actiontrail", True, "PutBucket found", [{"eventName": "PutBucket"}]),
        goal_reached=True, started_at="2026-03-01T10:00:00Z", duration_s=4.2, browser_s=0.9,
    )
    drifted = ProcedureResult(
        id="ecs#create-an-instance", title="Create an instance", path=ECS_DOC, line=5,
        verdict=Verdict.DRIFT, reason="2 steps drifted",
        findings=[LABEL_CHANGED, SCRIPT_OBSERVED, NOT_VERIFIABLE],
        steps=[
            StepOutcome("1", 8, "Log on to the **ECS console**.", StepStatus.FOLLOWED),
            StepOutcome("2", 10, "In the left-side navigation pane, click **Instances**.", StepStatus.FOLLOWED),
            StepOutcome("3", 14, "Click **Create Instance**.", StepStatus.DRIFTED, [LABEL_CHANGED]),
            StepOutcome("4", 16, "Click **Next: Networking**.", StepStatus.DRIFTED, [SCRIPT_OBSERVED]),
            StepOutcome("5", 18, "Wait a few minutes.", StepStatus.NOT_VERIFIABLE, [NOT_VERIFIABLE]),
        ],
        turns=[
            Turn(1, "3", {"kind": "click", "ref": "e7"}, "click button 'Create ECS Instance'", browser_s=0.5,
                 thought="The doc says Create Instance; the page has Create ECS Instance."),
            Turn(2, "4", {"kind": "click", "ref": "e9"}, "click button 'Next'", ok=False,
                 error="element e9 is not visible", browser_s=5.0),
        ],
        check=CheckResult("actiontrail", True, "RunInstances found"), goal_reached=True,
        duration_s=31.5, artifacts={"trace": "traces/ecs-create-an-instance.zip", "screenshots": "screens"},
    )
    failed = ProcedureResult(
        id="vpc#create-a-vpc", title="Create a VPC", path="docs/vpc/create-vpc.md", line=7,
        verdict=Verdict.FAIL, reason="goal not reached: no CreateVpc event", goal_reached=False, duration_s=12.0,
    )
    env_error = ProcedureResult(
        id="rds#create-an-instance", title="Create an RDS instance", path="docs/rds/create.md", line=2,
        verdict=Verdict.ENV_ERROR, reason="the environment failed", env_error="login failed: HTTP 502",
        duration_s=1.0,
    )
    inconclusive = ProcedureResult(
        id="kms#create-a-key", title="Create a key", path="docs/kms/create-key.md", line=9,
        verdict=Verdict.INCONCLUSIVE, reason="the step budget (40) ran out", duration_s=60.0,
    )
    return [passed, drifted, failed, env_error, inconclusive]


def make_summary(results: list[ProcedureResult] | None = None) -> RunSummary:
    return RunSummary(
        run_id="run-20260301-abc123", started_at="2026-03-01T10:00:00Z",
        results=sample_results() if results is None else results, duration_s=62.3,
        console="sandbox http://127.0.0.1:8765 (release 2026-03)", policy="literal",
    )


def task_for(result: ProcedureResult) -> Task:
    return Task(Procedure(id=result.id, title=result.title, path=result.path, line=result.line, end_line=result.line + 20))


