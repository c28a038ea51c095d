"""The runner's own logic without Chromium: verdicts from turns, findings and the checker,
budgets, failed actions, a page that times out, screenshots kept and dropped, a
finding's element outlined, traces kept for failures. The console, the executor and the
checker are the fakes of tests/fake_plugins.py; the policy replays queued actions.

What needs the real browser (a browser that crashes, the executor's screenshots and
boxes) stays in tests/check/test_runner.py."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import fake_plugins
import pytest
from fake_plugins import URL, AnswerChecker, FakeExecutor, FakeSession, ScriptedPolicy, box, click

from docverify.check.criteria import ExpectedEvent
from docverify.check.verdict import Finding, FindingKind, Verdict
from docverify.console import ConsoleEndpoint
from docverify.errors import EnvironmentProblem
from docverify.execute.actions import Action, ActionKind
from docverify.parse.parser import parse_text
from docverify.report.trajectory import StepStatus
from docverify.run.runner import RunLimits, Runner, Stages
from docverify.task import make_task
from docverify_none import NoneProvisioner

DOC = """\
    # {title}

    1. Log on to the OSS console.
    2. Click **Create Bucket**.
"""

TIMED_OUT = ("step 1: click link 'OSS console' timed out after 2 s, and again after 6 s "
             "(the page it opened did not load)")

SITE = {
    "/": ("Console", [("link", "OSS console", "/oss/bucket"), ("link", "Slow console", EnvironmentProblem(TIMED_OUT)),
                      ("link", "Broken console", RuntimeError("a plugin's bug"))]),
    "/oss/bucket": ("Buckets", [("link", "Overview", "/"), ("button", "Create Bucket", "/oss/create")]),
    "/oss/create": ("Create Bucket", [("textbox", "Bucket Name", None), ("button", "OK", "/oss/bucket")]),
}

ENDPOINT = ConsoleEndpoint(url=URL, api_url="", audit_url="", home=URL + "/")


@pytest.fixture(autouse=True)
def site(monkeypatch):
    monkeypatch.setattr(fake_plugins, "SITE", SITE)


def task(title: str, criteria=True):
    procedure = parse_text(textwrap.dedent(DOC.format(title=title)), "doc.md").procedures[0]
    made = make_task(procedure, suffix="t0")
    made.criteria = [ExpectedEvent("PutBucket", "Oss")] if criteria else []
    return made


def run(tasks, scripts, *, answers=None, limits=None, jobs=1, tmp_path: Path):
    policy = ScriptedPolicy(scripts)
    executor = FakeExecutor(FakeExecutor.Options(trace=True))
    stages = Stages(NoneProvisioner(), executor, policy, [AnswerChecker(answers)])
    runner = Runner(stages, ENDPOINT, artifacts=tmp_path / "artifacts", limits=limits or RunLimits(), output=tmp_path)
    results = asyncio.run(runner.run(tasks, jobs))
    return {r.title: r for r in results}, policy


def picture(path: str, values: dict[str, str] | None = None) -> bytes:
    """The fake screenshot of ``path`` (with ``values`` filled in)."""
    session = FakeSession()
    session.path, session.values = path, dict(values or {})
    return session.picture()


def test_verdicts_from_turns_findings_and_checker(tmp_path):
    finding = Finding(FindingKind.ELEMENT_NOT_FOUND, "doc.md", 4, "2", "Create Bucket", "no such control")
    scripts = {
        "clicks": [click("OSS console")],
        "drifts": [click("OSS console"), Action(ActionKind.FLAG_STEP, finding=finding, step="2"),
                   Action(ActionKind.DONE, status="blocked", message="step 2")],
        "loops": [Action(ActionKind.SCROLL, value="down", step="1")] * 10,
        "no criteria": [],
        "unready": [Action(ActionKind.DONE, status="blocked", message="prerequisite missing", environment=True)],
    }
    tasks = [task("clicks"), task("drifts"), task("loops"), task("no criteria", criteria=False), task("unready")]
    results, policy = run(tasks, scripts, limits=RunLimits(max_steps=5, screenshots=True), tmp_path=tmp_path)
    assert len(results) == 5
    clicks = results["clicks"]
    assert clicks.verdict is Verdict.PASS
    assert clicks.turns[0].ok and clicks.turns[0].url == URL + "/oss/bucket"
    assert clicks.turns[0].screenshot_before == "artifacts/doc_clicks/turn-000.png"
    assert (tmp_path / clicks.turns[0].screenshot_before).read_bytes() == picture("/")
    assert (tmp_path / clicks.turns[0].screenshot_after).read_bytes() == picture("/oss/bucket")
    assert policy.episodes["clicks"].seen[0].url == URL + "/"  # sessions start at the console's home
    drifts = results["drifts"]
    assert drifts.verdict is Verdict.DRIFT and drifts.findings == [finding]
    assert [s.status for s in drifts.steps] == [StepStatus.FOLLOWED, StepStatus.DRIFTED]
    assert drifts.artifacts["trace"] == "artifacts/doc_drifts.trace.zip"
    assert (tmp_path / "artifacts/doc_drifts.trace.zip").read_bytes() == b"trace of doc#drifts"
    assert "trace" not in clicks.artifacts  # traces are kept for failures only
    loops = results["loops"]
    assert loops.verdict is Verdict.INCONCLUSIVE and "step budget" in loops.reason and len(loops.turns) == 5
    assert results["no criteria"].verdict is Verdict.INCONCLUSIVE
    assert "expect:" in results["no criteria"].reason
    unready = results["unready"]
    assert unready.verdict is Verdict.ENV_ERROR and unready.reason == "prerequisite missing"
    assert unready.check is None  # nothing to check when the environment was not ready


def test_goal_not_reached_without_drift_is_fail(tmp_path):
    results, _ = run([task("fails")], {"fails": [click("OSS console")]}, answers={"fails": False}, tmp_path=tmp_path)
    assert results["fails"].verdict is Verdict.FAIL and results["fails"].reason == "fake says False"


def test_a_model_that_ends_before_the_docs_last_step_is_no_failure_of_the_doc(tmp_path):
    """A model that answers done before it took the doc's last step leaves the goal unreached
    by its own giving up: INCONCLUSIVE, saying so. A model that took every step and missed
    the goal, and a follower that ended early, still FAIL."""
    def by_model(pick):
        return lambda observation: Action(**{**pick(observation).__dict__, "by": "model"})

    said_done = Action(ActionKind.DONE, status="success", message="every step is done", by="model")
    scripts = {"model gives up": [by_model(click("OSS console")), said_done],
               "model takes every step": [by_model(click("OSS console")), by_model(click("Create Bucket", step="2")),
                                          said_done],
               "follower ends early": [click("OSS console")]}
    results, _ = run([task(name) for name in scripts], scripts, answers=dict.fromkeys(scripts, False),
                     tmp_path=tmp_path)
    early = results["model gives up"]
    assert early.verdict is Verdict.INCONCLUSIVE
    assert early.reason == ("fake says False; the model ended the procedure (every step is done) before step 2, "
                            "which it never took: a goal the doc's last steps were not taken for is no failure of "
                            "the doc")
    assert [s.status for s in early.steps] == [StepStatus.FOLLOWED, StepStatus.NOT_REACHED]
    assert results["model takes every step"].verdict is Verdict.FAIL
    assert results["follower ends early"].verdict is Verdict.FAIL


def test_a_failed_action_is_recorded_not_raised(tmp_path):
    scripts = {"bad ref": [Action(ActionKind.CLICK, ref="e99999", step="1"),
                           lambda obs: Action(ActionKind.DONE, status="blocked", message=obs.error)]}
    results, policy = run([task("bad ref")], scripts, answers={"bad ref": False}, tmp_path=tmp_path)
    turn = results["bad ref"].turns[0]
    assert not turn.ok and turn.error == "no element e99999 on the page"
    assert policy.episodes["bad ref"].seen[1].error == turn.error


def test_a_page_that_times_out_is_that_procedures_env_error_and_the_run_goes_on(tmp_path):
    """The executor gives up on an action that keeps timing out (EnvironmentProblem): the
    turns so far stay, the reason is the executor's, nothing is judged; a plugin's bug is
    INCONCLUSIVE; the next procedure runs either way."""
    scripts = {"times out": [click("Slow console")], "breaks": [click("Broken console")],
               "after": [click("OSS console")]}
    results, _ = run([task("times out"), task("breaks"), task("after")], scripts, tmp_path=tmp_path)
    timed_out = results["times out"]
    assert timed_out.verdict is Verdict.ENV_ERROR and timed_out.reason == TIMED_OUT
    assert timed_out.check is None and not timed_out.findings
    [turn] = timed_out.turns
    assert turn.description == "click link 'Slow console'" and not turn.ok and turn.error == TIMED_OUT
    broken = results["breaks"]
    assert broken.verdict is Verdict.INCONCLUSIVE
    assert broken.reason.startswith("internal error: RuntimeError: a plugin's bug")
    assert results["after"].verdict is Verdict.PASS, results["after"].reason


# -- screenshots: kept for failures, one file per picture, a finding's element boxed --------


def test_a_finding_names_its_page_and_boxes_the_nearest_candidate_a_pass_keeps_nothing(tmp_path):
    flagged = Finding(FindingKind.ELEMENT_NOT_FOUND, "doc.md", 4, "2", "Create Bucket Now", "no such button",
                      ["Create Bucket"])
    scripts = {
        "drifts": [click("OSS console"), Action(ActionKind.WAIT_FOR, value="Buckets", step="1"),
                   Action(ActionKind.FLAG_STEP, finding=flagged, step="2")],
        "passes": [click("OSS console")],
    }
    limits = RunLimits(screenshots=True, pass_screenshots=False, screenshot_type="jpeg")
    results, _ = run([task(title) for title in scripts], scripts, limits=limits, tmp_path=tmp_path)
    drifts, passes = results["drifts"], results["passes"]
    assert (drifts.verdict, passes.verdict) == (Verdict.DRIFT, Verdict.PASS)

    opened, waited = drifts.turns[0], drifts.turns[1]
    assert opened.screenshot_after == "artifacts/doc_drifts/turn-001.jpg"
    assert (tmp_path / opened.screenshot_after).read_bytes() == picture("/oss/bucket")
    # waiting for text already shown changes nothing on screen: the same picture, no second file
    assert waited.ok and waited.screenshot_after == opened.screenshot_after
    assert not (tmp_path / "artifacts/doc_drifts/turn-002.jpg").exists()

    [finding] = drifts.findings
    assert finding.screenshot == waited.screenshot_after  # the page the policy flagged it on
    assert finding.box == box(2)  # "Create Bucket", the nearest candidate: the page's second element
    assert "box" not in drifts.turns[2].action["finding"]  # the policy's claim stays as it was made

    assert passes.turns and passes.turns[0].screenshot_after is None
    assert not (tmp_path / "artifacts/doc_passes").exists()


def test_a_pass_keeps_its_screenshots_when_asked(tmp_path):
    results, _ = run([task("passes")], {"passes": [click("OSS console")]},
                     limits=RunLimits(screenshots=True, pass_screenshots=True), tmp_path=tmp_path)
    [turn] = results["passes"].turns
    assert turn.screenshot_before == "artifacts/doc_passes/turn-000.png"  # PNG unless asked for JPEG
    assert (tmp_path / turn.screenshot_after).read_bytes() == picture("/oss/bucket")


def test_a_provisioning_cancelled_while_it_is_entered_is_still_left():
    """Ctrl-C while the provisioner's thread is creating: the procedure waits for the
    thread, then destroys what it created, before the cancellation goes on (else the
    thread's resources outlive the run, destroyed, if ever, when the console is gone)."""
    import threading

    from docverify.run.runner import in_thread

    creating, events = threading.Event(), []

    class Slow:
        def __enter__(self):
            creating.set()
            threading.Event().wait(0.3)
            events.append("created")
            return "resources"

        def __exit__(self, *error):
            events.append("destroyed" if error[0] is asyncio.CancelledError else f"left {error}")
            return False

    async def procedure():
        async with in_thread(Slow()):
            events.append("ran")

    async def main():
        task = asyncio.create_task(procedure())
        await asyncio.to_thread(creating.wait)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert events == ["created", "destroyed"]
