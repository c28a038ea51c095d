"""The runner with a FakePolicy (queued actions) against the real sandbox and Chromium."""

from __future__ import annotations

import asyncio
import os
import signal
import textwrap
from pathlib import Path

import pytest

from docverify.execute.actions import Action, ActionKind, Observation
from docverify.check.checker import Checker, Evidence
from docverify.execute.policy import Episode, Policy
from docverify.run.runner import RunLimits, Runner, Stages
from docverify.parse.parser import parse_text
from docverify.check.criteria import ExpectedEvent
from docverify.task import make_task
from docverify.report.trajectory import CheckResult, StepStatus
from docverify.check.verdict import Finding, FindingKind, Verdict
from docverify_none import NoneProvisioner
from docverify_playwright.executor import PlaywrightExecutor
from docverify_sandbox.console import SandboxConsole

pytestmark = pytest.mark.browser

DOC = """\
    # {title}

    1. Log on to the OSS console.
    2. Click **Create Bucket**.
"""


class FakeEpisode(Episode):
    def __init__(self, script):
        super().__init__()
        self.script = list(script)
        self.seen: list[Observation] = []

    async def next_action(self, observation):
        self.seen.append(observation)
        step = self.script.pop(0) if self.script else Action(ActionKind.DONE, status="success")
        return step(observation) if callable(step) else step


class FakePolicy(Policy):
    """Replays queued actions per procedure title (callables get the observation)."""

    name = "fake"

    def __init__(self, scripts):
        super().__init__()
        self.scripts = scripts
        self.episodes = {}

    def start(self, task):
        episode = FakeEpisode(self.scripts[task.procedure.title])
        self.episodes[task.procedure.title] = episode
        return episode


class FakeChecker(Checker):
    name = "fake"

    def __init__(self, answer):
        super().__init__()
        self.answer = answer

    def applies(self, task):
        return bool(task.criteria)

    async def check(self, evidence: Evidence) -> CheckResult:
        return CheckResult("fake", self.answer, f"fake says {self.answer}")


def task(title: str, criteria=True):
    procedure = parse_text(textwrap.dedent(DOC.format(title=title)), "doc.md").procedures[0]
    made = make_task(procedure, suffix="t0")
    made.criteria = [ExpectedEvent("PutBucket", "Oss")] if criteria else []
    return made


def ref_of(name):
    def pick(observation: Observation) -> Action:
        element = next(e for e in observation.elements if e.name == name and e.ref)
        return Action(ActionKind.CLICK, ref=element.ref, target=name, step="1")
    return pick


def run(tasks, scripts, *, answer=True, limits=None, jobs=1, tmp_path=Path("/tmp")):
    policy = FakePolicy(scripts)
    executor = PlaywrightExecutor(PlaywrightExecutor.Options(trace="on-failure"))
    stages = Stages(NoneProvisioner(), executor, policy, [FakeChecker(answer)])
    with SandboxConsole(SandboxConsole.Options(latency_ms=0)).start() as endpoint:
        runner = Runner(stages, endpoint, artifacts=tmp_path / "artifacts", limits=limits or RunLimits(),
                        output=tmp_path)
        results = asyncio.run(runner.run(tasks, jobs))
    return {r.title: r for r in results}, policy


def test_verdicts_from_turns_findings_and_checker(tmp_path, chromium):
    finding = Finding(FindingKind.ELEMENT_NOT_FOUND, "doc.md", 4, "2", "Create Bucket", "no such control")
    scripts = {
        "clicks": [ref_of("OSS console")],
        "drifts": [ref_of("OSS console"), Action(ActionKind.FLAG_STEP, finding=finding, step="2"),
                   Action(ActionKind.DONE, status="blocked", message="step 2")],
        "loops": [Action(ActionKind.SCROLL, value="down", step="1")] * 10,
        "no criteria": [],
        "unready": [Action(ActionKind.DONE, status="blocked", message="prerequisite missing", environment=True)],
    }
    tasks = [task("clicks"), task("drifts"), task("loops"), task("no criteria", criteria=False), task("unready")]
    results, policy = run(tasks, scripts, limits=RunLimits(max_steps=5, screenshots=True), tmp_path=tmp_path)
    clicks = results["clicks"]
    assert clicks.verdict is Verdict.PASS
    assert clicks.turns[0].ok and clicks.turns[0].url.endswith("/console/oss/bucket")
    assert (tmp_path / clicks.turns[0].screenshot_after).stat().st_size > 1000  # a real PNG
    assert clicks.turns[0].screenshot_before == "artifacts/doc_clicks/turn-000.png"
    assert policy.episodes["clicks"].seen[0].url.endswith("/console")  # sessions start signed in, at home
    drifts = results["drifts"]
    assert drifts.verdict is Verdict.DRIFT and drifts.findings == [finding]
    assert [s.status for s in drifts.steps] == [StepStatus.FOLLOWED, StepStatus.DRIFTED]
    assert drifts.artifacts["trace"] == "artifacts/doc_drifts.trace.zip" and (tmp_path / "artifacts/doc_drifts.trace.zip").exists()
    assert "trace" not in clicks.artifacts  # traces are kept for failures only
    loops = results["loops"]
    assert loops.verdict is Verdict.INCONCLUSIVE and "step budget" in loops.reason and len(loops.turns) == 5
    assert results["no criteria"].verdict is Verdict.INCONCLUSIVE
    assert "expect:" in results["no criteria"].reason
    unready = results["unready"]
    assert unready.verdict is Verdict.ENV_ERROR and unready.reason == "prerequisite missing"
    assert unready.check is None  # nothing to check when the environment was not ready


def test_goal_not_reached_without_drift_is_fail(tmp_path, chromium):
    results, _ = run([task("fails")], {"fails": [ref_of("OSS console")]}, answer=False, tmp_path=tmp_path)
    assert results["fails"].verdict is Verdict.FAIL and results["fails"].reason == "fake says False"


def test_a_failed_action_is_recorded_not_raised(tmp_path, chromium):
    scripts = {"bad ref": [Action(ActionKind.CLICK, ref="e99999", step="1"),
                           lambda obs: Action(ActionKind.DONE, status="blocked", message=obs.error)]}
    results, policy = run([task("bad ref")], scripts, answer=False, limits=RunLimits(), tmp_path=tmp_path)
    turn = results["bad ref"].turns[0]
    assert not turn.ok and turn.error
    assert policy.episodes["bad ref"].seen[1].error == turn.error


def browser_pids() -> list[int]:
    """Chromium main processes (not renderers) among this process's descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            todo.append(child)
            try:
                cmd = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"chrom" in cmd[0] and not any(arg.startswith(b"--type=") for arg in cmd):
                found.append(child)
    return found


def test_a_browser_crash_is_that_procedures_env_error_and_the_run_goes_on(tmp_path, chromium):
    def crash(observation):
        for pid in browser_pids():
            os.kill(pid, signal.SIGKILL)
        return Action(ActionKind.CLICK, ref="e1", step="1")

    scripts = {"crashes": [crash, ref_of("OSS console")], "after": [ref_of("OSS console")]}
    results, _ = run([task("crashes"), task("after")], scripts, tmp_path=tmp_path)
    assert results["crashes"].verdict is Verdict.ENV_ERROR
    assert "browser" in results["crashes"].reason
    assert results["after"].verdict is Verdict.PASS, results["after"].reason


# -- screenshots: kept for failures, one file per picture, a finding's element boxed --------


def test_a_finding_names_its_page_and_boxes_the_nearest_candidate_a_pass_keeps_nothing(tmp_path, chromium):
    flagged = Finding(FindingKind.ELEMENT_NOT_FOUND, "doc.md", 4, "2", "Create Bucket Now", "no such button",
                      ["Create Bucket"])
    scripts = {
        "drifts": [ref_of("OSS console"), Action(ActionKind.WAIT_FOR, value="Buckets", step="1"),
                   Action(ActionKind.FLAG_STEP, finding=flagged, step="2")],
        "passes": [ref_of("OSS console")],
    }
    limits = RunLimits(screenshots=True, pass_screenshots=False, screenshot_type="jpeg")
    results, _ = run([task(title) for title in scripts], scripts, limits=limits, tmp_path=tmp_path)
    drifts, passes = results["drifts"], results["passes"]
    assert (drifts.verdict, passes.verdict) == (Verdict.DRIFT, Verdict.PASS)

    opened, waited = drifts.turns[0], drifts.turns[1]
    assert opened.screenshot_after == "artifacts/doc_drifts/turn-001.jpg"
    assert (tmp_path / opened.screenshot_after).read_bytes()[:2] == b"\xff\xd8"  # JPEG
    # waiting for text already shown changes nothing on screen: the same picture, no second file
    assert waited.screenshot_after == opened.screenshot_after
    assert not (tmp_path / "artifacts/doc_drifts/turn-002.jpg").exists()

    [finding] = drifts.findings
    assert finding.screenshot == waited.screenshot_after  # the page the policy flagged it on
    box = finding.box  # "Create Bucket": the nearest candidate, a button in the page's top part
    assert box is not None and 0 < box["width"] < 0.5 and 0 < box["height"] < 0.1
    assert 0 <= box["x"] and box["x"] + box["width"] <= 1 and 0 <= box["y"] < 0.5
    assert "box" not in drifts.turns[2].action["finding"]  # the policy's claim stays as it was made

    assert passes.turns and passes.turns[0].screenshot_after is None
    assert not (tmp_path / "artifacts/doc_passes").exists()


def test_a_pass_keeps_its_screenshots_when_asked(tmp_path, chromium):
    results, _ = run([task("passes")], {"passes": [ref_of("OSS console")]},
                     limits=RunLimits(screenshots=True, pass_screenshots=True), tmp_path=tmp_path)
    [turn] = results["passes"].turns
    assert turn.screenshot_before == "artifacts/doc_passes/turn-000.png"  # PNG unless asked for JPEG
    assert (tmp_path / turn.screenshot_after).is_file()
