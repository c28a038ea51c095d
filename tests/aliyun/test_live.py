"""Against the real Alibaba Cloud: sign in, open a console, read the audit log.

Run only where a test account's credentials are set (a CI job with repository secrets,
see README "Checking against your Alibaba Cloud account"); skipped otherwise, saying
which variables are missing:

- ``DOCVERIFY_ALIYUN_LOGIN_USER`` / ``DOCVERIFY_ALIYUN_PASSWORD``: a RAM user without MFA;
- ``DOCVERIFY_ALIYUN_ACCESS_KEY_ID`` / ``_SECRET``: its AccessKey (LookupEvents);
- ``DOCVERIFY_ALIYUN_ACCOUNT_ID``; ``DOCVERIFY_ALIYUN_ROLE_ARN`` for federated sign-in;
- ``DOCVERIFY_ALIYUN_SITE`` (``international``, the default, or ``china``) and
  ``DOCVERIFY_ALIYUN_REGION`` (default ``cn-hangzhou``).

These are also the checks of what :mod:`docverify_aliyun.logon_pages` and
``consoles.yaml`` reconstruct from documentation: a failure here is where they differ
from the live site — and, for provisioning, of the cleanup's ListTagResources calls
(:mod:`docverify_aliyun.leftovers`): one VPC (free) is applied with the real
aliyun/alicloud provider (from registry.terraform.io, or ``DOCVERIFY_ALIYUN_PROVIDER_MIRROR``:
a folder filled by ``terraform providers mirror``), found by its ``docverify-run`` tag and
destroyed.

    DOCVERIFY_ALIYUN_LOGIN_USER=... pytest -m live -n 0 tests/aliyun/test_live.py
"""

from __future__ import annotations

import asyncio
import os
import time
from urllib.parse import urlsplit

import pytest

from docverify.execute.actions import Action, ActionKind
from docverify_actiontrail.checker import ActionTrailChecker, AuditLog
from docverify_aliyun.console import AliyunConsole
from docverify_playwright.executor import PlaywrightExecutor

pytestmark = [pytest.mark.live, pytest.mark.browser, pytest.mark.slow]


def require(*names: str) -> None:
    missing = [name for name in names if not os.environ.get(name)]
    if missing:
        pytest.skip(f"live test against the real Alibaba Cloud: set {', '.join(missing)} (a test account's RAM user, "
                    "docs/aliyun-ram-policy.json)")


def console(**options) -> AliyunConsole:
    return AliyunConsole(AliyunConsole.Options(site=os.environ.get("DOCVERIFY_ALIYUN_SITE", "international"),
                                               region=os.environ.get("DOCVERIFY_ALIYUN_REGION", "cn-hangzhou"),
                                               **options))


def open_ram_console(endpoint, artifacts) -> str:
    async def scenario():
        async with PlaywrightExecutor().open(endpoint, artifacts) as xrun, xrun.session("live") as session:
            start = await session.observe()
            link = next(e.ref for e in start.elements if e.role == "link" and e.name == "RAM console")
            result = await session.apply(Action(ActionKind.CLICK, ref=link))
            assert result.ok, result.error
            return (await session.observe()).url

    return asyncio.run(scenario())


def test_a_ram_user_signs_in_and_opens_the_ram_console(tmp_path, chromium):
    require("DOCVERIFY_ALIYUN_LOGIN_USER", "DOCVERIFY_ALIYUN_PASSWORD")
    with console(sign_in="password").start() as endpoint:
        url = open_ram_console(endpoint, tmp_path)
    host = urlsplit(url).hostname or ""
    assert host.startswith("ram.console.") and not host.startswith("signin."), url


def test_federated_sign_in_opens_the_ram_console(tmp_path, chromium):
    require("DOCVERIFY_ALIYUN_ACCESS_KEY_ID", "DOCVERIFY_ALIYUN_ACCESS_KEY_SECRET", "DOCVERIFY_ALIYUN_ROLE_ARN")
    with console(sign_in="federated").start() as endpoint:
        url = open_ram_console(endpoint, tmp_path)
    assert (urlsplit(url).hostname or "").startswith("ram.console."), url


def test_lookup_events_answers_for_the_accounts_region():
    pytest.importorskip("alibabacloud_actiontrail20200706", reason="pip install -e '.[aliyun]'")
    require("DOCVERIFY_ALIYUN_ACCESS_KEY_ID", "DOCVERIFY_ALIYUN_ACCESS_KEY_SECRET")
    with console(session_reuse=False).start() as endpoint:
        audit_log = AuditLog.connect(endpoint, ActionTrailChecker.Options(max_results=5))
        now = time.time()
        events = audit_log.events(None, now - 24 * 3600, now)
    assert isinstance(events, list)
    for event in events:
        assert event.get("eventId") and event.get("eventName") and event.get("eventTime")


VPC_DOC = """\
# Create a vSwitch

<!-- docverify:
id: live-vswitch
requires:
  - type: vpc
-->

1. Log on to the VPC console.
2. Click **Create vSwitch**.
"""


def eventually(check, timeout_s: float = 120.0):
    """``check()`` until it is true (the tag index follows a resource by seconds), else its last answer."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = check()
        if answer or time.monotonic() > deadline:
            return answer
        time.sleep(5)


@pytest.mark.terraform
def test_a_vpc_is_provisioned_tagged_found_by_its_tag_and_destroyed(tmp_path):
    require("DOCVERIFY_ALIYUN_ACCESS_KEY_ID", "DOCVERIFY_ALIYUN_ACCESS_KEY_SECRET")
    pytest.importorskip("python_terraform", reason="pip install -e '.[terraform]'")
    pytest.importorskip("alibabacloud_tea_openapi", reason="pip install -e '.[aliyun]'")
    from docverify.errors import EnvironmentProblem
    from docverify.parse.parser import parse_text
    from docverify.task import make_task
    from docverify_terraform.provisioner import TerraformProvisioner, tag_value

    live = console(session_reuse=False)
    task = make_task(parse_text(VPC_DOC, "docs/live-vswitch.md").procedures[0])
    made = TerraformProvisioner(TerraformProvisioner.Options(
        work_dir=str(tmp_path / "tf"), state_dir=str(tmp_path / "stacks"),
        provider_mirror=os.environ.get("DOCVERIFY_ALIYUN_PROVIDER_MIRROR") or None))
    leftovers = live.leftovers()
    run = tag_value(made.run_id)

    def tagged_vpcs() -> set[str]:
        return {left.id for left in leftovers.find(run=run) if left.kind.tag_type == "VPC" and left.tagged}

    with live.start() as endpoint:
        try:
            with made.provision(task, endpoint) as provisioned:
                vpc = provisioned.outputs["vpc_1_id"]
                assert vpc.startswith("vpc-")
                assert vpc in eventually(lambda: vpc in tagged_vpcs() and tagged_vpcs()), "not found by its tag"
        except EnvironmentProblem as problem:
            if "provider could not be installed" in str(problem):
                pytest.skip(f"no aliyun/alicloud provider here: {problem.message}")
            raise
    assert not list((tmp_path / "stacks").glob("*.json"))  # destroyed: the ledger forgot it
    assert eventually(lambda: vpc not in tagged_vpcs()), "still found by its tag after the destroy"
