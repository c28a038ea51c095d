"""The judges checker: two models over the evidence, both must agree."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time

import pytest
from fake_openai import FakeOpenAI, Reply, first_user

from docverify.check.checker import Evidence
from docverify.check.criteria import ExpectedEvent
from docverify.check.verdict import Finding, FindingKind
from docverify.console import ConsoleEndpoint
from docverify.execute.actions import Observation
from docverify.parse.parser import parse_text
from docverify.report.trajectory import Turn
from docverify.task import make_task
from docverify_models.judges import JudgeOptions, JudgesChecker

DOC = """\
# Give a VPC a clearer label

1. Log on to the VPC console.
2. Find the VPC and click **Edit** in the **Actions** column.
3. Enter docverify-vpc-renamed in the **Name** field and click **OK**.
"""


def judge(votes: dict[str, str]):
    """Judges that answer per model name: votes maps model -> answer text."""
    return lambda body, fake: Reply(votes[body["model"]])


def yes(reason: str = "the name changed on the final page") -> str:
    return json.dumps({"success": True, "reasons": reason})


def no(reason: str = "the page still shows the old name") -> str:
    return json.dumps({"success": False, "reasons": reason})


def evidence() -> Evidence:
    task = make_task(parse_text(DOC, "docs/vpc.md").procedures[0], suffix="q1w2e3")
    turns = [
        Turn(0, "1", {"kind": "click"}, "click link 'VPC console'"),
        Turn(1, "2", {"kind": "click"}, "click button 'Edit'", thought="I AM SURE THIS WORKED"),
        Turn(2, "3", {"kind": "fill"}, "fill Name = 'docverify-vpc-renamed'"),
        Turn(3, "3", {"kind": "click"}, "click button 'OK'", ok=False, error="timeout"),
        Turn(4, None, {"kind": "done", "status": "success", "message": "CLAIMED SUCCESS"}, "done (success): CLAIMED SUCCESS"),
    ]
    final = Observation("http://sandbox/console/vpc", "VPCs", '- table "VPCs":\n  - row "vpc-1 docverify-vpc-renamed Available"')
    finding = Finding(FindingKind.LABEL_CHANGED, "docs/vpc.md", 4, "2", "Edit", "Modify")
    endpoint = ConsoleEndpoint(url="http://sandbox", api_url="", audit_url="")
    return Evidence(task, turns, endpoint, time.time() - 5, time.time(), [finding], final)


def checker(server: FakeOpenAI, **options) -> JudgesChecker:
    return JudgesChecker(JudgesChecker.Options(
        first=JudgeOptions(base_url=server.url, model="judge-a", api_key_env="NO_KEY_HERE"),
        second=JudgeOptions(base_url=server.url, model="judge-b", api_key_env="NO_KEY_HERE"), **options))


def check(chk: JudgesChecker):
    return asyncio.new_event_loop().run_until_complete(chk.check(evidence()))


def test_two_yes_is_goal_reached_and_the_reasons_are_kept():
    with FakeOpenAI(judge({"judge-a": yes(), "judge-b": yes("row shows docverify-vpc-renamed")})) as server:
        result = check(checker(server))
    assert result.goal_reached is True and result.checker == "judges"
    assert result.reason.startswith("both judges: goal reached")
    assert [e["model"] for e in result.evidence] == ["judge-a", "judge-b"]
    assert result.usage.calls == 2 and result.usage.tokens_in == 200


def test_two_no_is_goal_not_reached():
    with FakeOpenAI(judge({"judge-a": no(), "judge-b": no()})) as server:
        result = check(checker(server))
    assert result.goal_reached is False and "both judges: goal not reached" in result.reason


def test_a_disagreement_is_undecided():
    with FakeOpenAI(judge({"judge-a": yes(), "judge-b": no()})) as server:
        result = check(checker(server))
    assert result.goal_reached is None
    assert result.reason.startswith("judges disagree: judge 1 (judge-a): yes")
    assert "judge 2 (judge-b): no — the page still shows the old name" in result.reason


def test_a_judge_that_cannot_answer_makes_it_undecided_after_retries():
    with FakeOpenAI(judge({"judge-a": yes(), "judge-b": "definitely!"})) as server:
        result = check(checker(server, max_invalid=1))
    assert result.goal_reached is None and "no answer" in result.reason
    assert result.usage.invalid_outputs == 2
    assert len([r for r in server.requests if r["model"] == "judge-b"]) == 2


def test_the_judges_see_evidence_not_the_agents_claims():
    with FakeOpenAI(judge({"judge-a": yes(), "judge-b": yes()})) as server:
        check(checker(server))
    prompt = first_user(server.requests[0])
    assert "CLAIMED SUCCESS" not in prompt and "I AM SURE" not in prompt
    assert "- [step 3] click button 'OK' -> failed: timeout" in prompt
    assert "step 2: label changed: doc: Edit; console: Modify" in prompt
    assert 'row "vpc-1 docverify-vpc-renamed Available"' in prompt
    assert "(no audit log available)" in prompt  # this endpoint has none


def test_judges_apply_only_where_there_are_no_audit_criteria():
    task = evidence().task
    chk = JudgesChecker()
    assert chk.applies(task)
    task.criteria = [ExpectedEvent("ModifyVpcAttribute", "Vpc")]
    assert not chk.applies(task)


@pytest.mark.browser
@pytest.mark.slow
def test_a_procedure_without_criteria_is_judged_in_a_real_run(tmp_path, chromium):
    """`docverify check` with checkers actiontrail,judges: the bucket procedure has
    criteria (audit log decides), the search one has none (the judges do, reading the
    audit events of its window)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "search.md").write_text(textwrap.dedent("""\
        # Look up the VPCs of a region

        1. Log on to the VPC console.
        2. In the left-side navigation pane, click **VPCs**.
        3. In the top navigation bar, select the region.
        """))
    with FakeOpenAI(judge({"judge-a": yes("the VPC list is shown"), "judge-b": yes("the page lists VPCs")})) as server:
        args = [sys.executable, "-m", "docverify", "check", "docs", "--output", "out", "--report", "json",
                "--browser-path", str(chromium.path), "--no-store", "-O", "checker.use=actiontrail,judges",
                "-O", f"checker.judges.first.base_url={server.url}", "-O", "checker.judges.first.model=judge-a",
                "-O", f"checker.judges.second.base_url={server.url}", "-O", "checker.judges.second.model=judge-b"]
        done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=240,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        prompts = [first_user(body) for body in server.requests]
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out" / "docverify.json").read_text())["results"][0]
    assert result["verdict"] == "PASS" and result["check"]["checker"] == "judges"
    assert result["usage"]["calls"] == 2  # judging goes on the procedure's bill
    assert len(prompts) == 2 and "(no audit log available)" not in prompts[0]  # the sandbox has one
    assert "- [step 2] click link 'VPCs' -> ok" in prompts[0]


class FakeAuditLog:
    """An audit log as a checker reads it (docverify.check.checker.AuditReader)."""

    def __init__(self, events=None, error=None):
        self.found = events or []
        self.error = error
        self.asked = []

    async def events(self, start, end, name=None):
        self.asked.append((start, end, name))
        if self.error:
            raise self.error
        return self.found


def test_the_judges_weigh_the_audit_events_a_configured_checker_reads():
    from dataclasses import replace

    audit = FakeAuditLog([{"eventName": "ModifyVpcAttribute", "serviceName": "Vpc", "resourceName": "vpc-1"},
                          {"eventName": "DeleteVpc", "serviceName": "Vpc", "errorCode": "Forbidden"}])
    with FakeOpenAI(judge({"judge-a": yes(), "judge-b": yes()})) as server:
        seen = evidence()
        asyncio.new_event_loop().run_until_complete(checker(server).check(replace(seen, audit=audit)))
    prompt = first_user(server.requests[0])
    assert "Vpc:ModifyVpcAttribute vpc-1" in prompt and "Vpc:DeleteVpc (error Forbidden)" in prompt
    [(start, end, name)] = audit.asked
    assert name is None and start < seen.started and end > seen.finished  # the whole execution window


def test_an_audit_log_that_fails_leaves_the_judges_the_page():
    from dataclasses import replace

    with FakeOpenAI(judge({"judge-a": yes(), "judge-b": yes()})) as server:
        result = asyncio.new_event_loop().run_until_complete(
            checker(server).check(replace(evidence(), audit=FakeAuditLog(error=OSError("unreachable")))))
    assert result.goal_reached is True
    assert "(no audit log available)" in first_user(server.requests[0])
