"""The audit log of the real cloud: ActionTrail's delivery delay, waited for; what never came is INCONCLUSIVE.

The fake ActionTrail answers the corpus's real events (tests/corpus/actiontrail/events)
through the official client, signed with the account's AccessKey."""

from __future__ import annotations

import asyncio
import time

import pytest
from aliyun_recordings import ACCOUNT_ID, corpus_event, endpoint_of, own_env, recorded_console

from docverify.check.checker import Evidence
from docverify.check.criteria import ExpectedEvent
from docverify.check.verdict import Verdict, decide
from docverify.errors import CredentialsRejected
from docverify.parse.model import Procedure
from docverify.task import Task
from docverify_actiontrail.checker import ActionTrailChecker, AuditLog

pytest.importorskip("alibabacloud_actiontrail20200706", reason="pip install -e '.[aliyun]'")


def task(*criteria: ExpectedEvent, region: str | None = None) -> Task:
    procedure = Procedure(id="ram#create-a-group", title="Create a RAM user group", path="ram.md", line=1, end_line=9)
    made = Task(procedure, criteria=list(criteria), context={"suffix": "s1x2y3"})
    made.region = region
    return made


def check(endpoint, the_task: Task, started: float, finished: float, options=None):
    evidence = Evidence(the_task, [], endpoint, started, finished)
    return asyncio.run(ActionTrailChecker(options or ActionTrailChecker.Options()).check(evidence))


def aliyun_endpoint(site, trail, **options):
    options = {"audit_deadline_s": 3, "audit_poll_cap_s": 0.3, **options}
    return endpoint_of(recorded_console(site, trail=trail, **options), own_env())


def test_the_events_come_late_and_are_waited_for(site, trail):
    """ActionTrail has not delivered the events at the first looks: the checker keeps
    looking (backing off), finds the real CreateGroup event, and the goal is reached."""
    trail.undelivered = 3
    started = time.time()
    trail.record(corpus_event("02_ApiCall_RAM_CreateGroup"), started + 1)
    trail.record(corpus_event("03_ApiCall_RAM_DeleteGroup"), started + 1)
    endpoint = aliyun_endpoint(site, trail, audit_deadline_s=20)
    result = check(endpoint, task(ExpectedEvent("CreateGroup", "Ram")), started, started + 2)
    assert result.goal_reached is True, result.reason
    assert trail.calls == 4  # three looks found nothing yet, the fourth found it
    [event] = result.evidence
    assert event["eventId"] == "234ef3c7-8938-4bd7-bb80-11754b7bdd4c" and event["requestParameters"]["GroupName"] == "grp1"
    assert result.reason == "audit log: Ram:CreateGroup (event id 234ef3c7-8938-4bd7-bb80-11754b7bdd4c)"
    assert decide([], goal_reached=result.goal_reached) is Verdict.PASS


def test_an_event_never_delivered_by_the_deadline_is_inconclusive_not_a_failure(site, trail):
    trail.undelivered = 10_000
    started = time.time()
    trail.record(corpus_event("02_ApiCall_RAM_CreateGroup"), started + 1)
    clock = time.monotonic()
    result = check(aliyun_endpoint(site, trail, audit_deadline_s=1.5), task(ExpectedEvent("CreateGroup", "Ram")),
                   started, started + 2)
    waited = time.monotonic() - clock
    assert result.goal_reached is None
    assert result.reason.startswith("no Ram:CreateGroup event in the audit log between ")
    assert "after waiting 1.5s for the audit log to deliver it: it may not have arrived yet" in result.reason
    assert 1.5 <= waited < 6 and trail.calls >= 3  # it kept looking until the deadline, backing off
    assert decide([], goal_reached=result.goal_reached) is Verdict.INCONCLUSIVE


def test_a_failed_call_is_still_a_failure_on_the_real_cloud(site, trail):
    """A delivered event with an error code is an answer, not a delay."""
    started = time.time()
    failed = dict(corpus_event("02_ApiCall_RAM_CreateGroup"), errorCode="NoPermission",
                  errorMessage="You are not authorized to do this action.")
    trail.record(failed, started + 1)
    result = check(aliyun_endpoint(site, trail), task(ExpectedEvent("CreateGroup", "Ram")), started, started + 2)
    assert result.goal_reached is False
    assert "Ram:CreateGroup failed: NoPermission: You are not authorized" in result.reason


def test_another_accounts_event_is_not_this_ones(site, trail):
    started = time.time()
    event = corpus_event("02_ApiCall_RAM_CreateGroup")
    trail.record(dict(event, userIdentity=dict(event["userIdentity"], accountId="99999")), started + 1)
    result = check(aliyun_endpoint(site, trail, audit_deadline_s=0.5), task(ExpectedEvent("CreateGroup", "Ram")),
                   started, started + 2)
    assert result.goal_reached is None and "no Ram:CreateGroup event" in result.reason


def test_the_checkers_own_option_wins_over_the_consoles(site, trail):
    """`[checker.actiontrail] undelivered = "fail"` keeps the old answer on any console."""
    started = time.time()
    result = check(aliyun_endpoint(site, trail, audit_deadline_s=0.3), task(ExpectedEvent("CreateGroup", "Ram")),
                   started, started + 1, ActionTrailChecker.Options(undelivered="fail"))
    assert result.goal_reached is False and "after waiting" not in result.reason


def test_the_audit_log_is_the_regional_endpoint_of_the_tasks_region(site):
    """No fake: where the checker would ask, per region, on the real cloud."""
    endpoint = endpoint_of(recorded_console(site, region="cn-shanghai"), own_env())
    assert endpoint.audit_url == "https://actiontrail.{region}.aliyuncs.com"
    options = ActionTrailChecker.Options()
    assert AuditLog.connect(endpoint, options).url == "https://actiontrail.cn-shanghai.aliyuncs.com"
    assert AuditLog.connect(endpoint, options, "ap-southeast-1").url == "https://actiontrail.ap-southeast-1.aliyuncs.com"
    assert AuditLog.connect(endpoint, options).account_id == ACCOUNT_ID


def test_a_wrong_access_key_is_refused_without_showing_it(site, trail):
    endpoint = endpoint_of(recorded_console(site, trail=trail, audit_deadline_s=0.2),
                           own_env(DOCVERIFY_ALIYUN_ACCESS_KEY_SECRET="not-the-secret-of-this-key"))
    started = time.time()
    with pytest.raises(CredentialsRejected) as raised:
        check(endpoint, task(ExpectedEvent("CreateGroup", "Ram")), started, started + 1)
    assert "SignatureDoesNotMatch" in str(raised.value) and "not-the-secret-of-this-key" not in str(raised.value)
