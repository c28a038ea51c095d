"""The protection of what docverify did not create (a console's ``protect_unowned``), on
the sandbox with it turned on and the literal policy: a destructive action on a resource
the run neither provisioned nor made in an earlier step is refused before it is taken
(ENV_ERROR, nothing released: the sandbox's API still lists it); what the procedure's
provisioning made, and what its own earlier steps made, is released as the doc says.
Off, the sandbox's default, the same doc releases what it finds."""

from __future__ import annotations

import asyncio
import textwrap
from contextlib import contextmanager

import pytest

from docverify.check.verdict import Verdict
from docverify.parse.parser import parse_text
from docverify.provision import Provisioned, Provisioner
from docverify.run.runner import RunLimits, Runner, Stages
from docverify.task import make_task
from docverify_actiontrail.checker import ActionTrailChecker
from docverify_literal.policy import LiteralPolicy
from docverify_playwright.executor import PlaywrightExecutor
from docverify_sandbox.client import SandboxClient
from docverify_sandbox.console import SandboxConsole
from docverify_sandbox.server import build_app, running

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VPC = "2016-04-28"
SUFFIX = "p7r0t3"
RELEASE = """\
    # Release an EIP

    <!-- docverify:
    id: release-eip
    {requires}expect:
      - {{event: ReleaseEipAddress, service: Vpc}}
    -->

    1. Log on to the Elastic IP Address console.
    2. Find the EIP and choose **More** > **Release** in the **Actions** column.
    3. In the message that appears, click **OK**.
"""
CREATE_THEN_RELEASE = """\
    # Try out an EIP

    <!-- docverify:
    id: try-eip
    expect:
      - {event: AllocateEipAddress, service: Vpc}
    -->

    1. Log on to the [Elastic IP Address console](https://vpc.console.aliyun.com/eip).
    2. On the **Elastic IP Addresses** page, click **Apply for EIP**.
    3. On the page that appears, set the following parameters.

       |Parameter|Value|
       |:--------|:----|
       |**Billing Method**|**Pay-As-You-Go**|
       |**Bandwidth value**|5|
       |**Name**|`docverify-eip-<suffix>`|

    4. Click **Buy Now**.
    5. On the **Elastic IP Addresses** page, find the EIP `docverify-eip-<suffix>` and choose **More** > **Release** in the **Actions** column.
    6. In the message that appears, click **OK**.
"""


class Allocates(Provisioner):
    """Provisions an EIP for the procedure through the sandbox's API: its outputs are what
    the run owns (a name without the run's suffix: owned by its ID)."""

    name = "allocates"

    def __init__(self) -> None:
        super().__init__()
        self.made: str | None = None

    @contextmanager
    def provision(self, task, endpoint):
        made = api(endpoint).call("AllocateEipAddress", VPC, {"RegionId": "cn-hangzhou", "Name": "provisioned-eip"})
        self.made = made["AllocationId"]
        yield Provisioned(outputs={"eip_1_id": self.made, "eip_1_name": "provisioned-eip", "region": "cn-hangzhou"},
                          resources=[f"eip {self.made}"])


class Nothing(Provisioner):
    name = "nothing"

    @contextmanager
    def provision(self, task, endpoint):
        yield Provisioned()


def api(endpoint) -> SandboxClient:
    return SandboxClient(endpoint.url, endpoint.extra["access_key_id"], endpoint.extra["access_key_secret"])


def eips(endpoint) -> dict[str, str]:
    """The account's EIPs: id -> name."""
    listed = api(endpoint).call("DescribeEipAddresses", VPC, {"RegionId": "cn-hangzhou"})
    return {e["AllocationId"]: e.get("Name", "") for e in listed["EipAddresses"]["EipAddress"]}


def events(store, endpoint, name: str) -> int:
    """How many times the account's audit log shows ``name``."""
    with store.lock:
        return store.conn.execute("SELECT count(*) FROM events WHERE account_id=? AND event_name=?",
                                  (endpoint.extra["account_id"], name)).fetchone()[0]


def run(markdown: str, provisioner: Provisioner, tmp_path, *, protect: bool = True, foreign: bool = True,
        limits: RunLimits | None = None):
    """Run the doc on a sandbox whose account already holds an EIP docverify did not create
    (``foreign``); returns the result, that EIP's id, the EIPs and ReleaseEipAddress events after."""
    task = make_task(parse_text(textwrap.dedent(markdown), "docs/eip.md").procedures[0], suffix=SUFFIX)
    stages = Stages(provisioner, PlaywrightExecutor(), LiteralPolicy(), [ActionTrailChecker()])
    app = build_app(None, None, 0, 0, "seeded")
    with running(app) as url, \
            SandboxConsole(SandboxConsole.Options(url=url, protect_unowned=protect)).start() as endpoint:
        assert endpoint.protect_unowned is protect
        theirs = api(endpoint).call("AllocateEipAddress", VPC, {"RegionId": "cn-hangzhou", "Name": "team-eip"}) \
            if foreign else None
        runner = Runner(stages, endpoint, artifacts=tmp_path / "artifacts", limits=limits or RunLimits(),
                        console="sandbox")
        (result,) = asyncio.run(runner.run([task], 1))
        released = events(app.state.sandbox.store, endpoint, "ReleaseEipAddress")
        return result, theirs and theirs["AllocationId"], eips(endpoint), released


def test_a_resource_docverify_did_not_create_is_not_released(tmp_path, chromium):
    doc = RELEASE.format(requires="")
    line = next(n for n, text in enumerate(textwrap.dedent(doc).splitlines(), 1) if text.startswith("2."))
    result, theirs, left, released = run(doc, Nothing(), tmp_path)
    assert result.verdict is Verdict.ENV_ERROR, result.reason
    assert result.stopped is not None and result.stopped.by == "protection"
    assert (result.stopped.step, result.stopped.line) == ("2", line)
    assert result.reason.startswith(f"refused at step 2 (docs/eip.md:{line}): click menuitem 'Release' (a destructive "
                                    f"control) acts on the list row '{theirs} · team-eip")
    assert "Declare it with `requires:`" in result.reason
    assert "[console.sandbox] protect_unowned = false (-O console.sandbox.protect_unowned=false)" in result.reason
    assert result.check is None  # not checked: the environment's, not the doc's
    # nothing released: the EIP is still there, and no ReleaseEipAddress was ever called
    assert theirs in left and released == 0
    assert result.turns[-1].action["kind"] == "stop" and result.turns[-1].description.startswith(
        "refused click menuitem 'Release'")


def test_without_the_protection_the_same_doc_releases_it(tmp_path, chromium):
    result, theirs, left, released = run(RELEASE.format(requires=""), Nothing(), tmp_path, protect=False)
    assert result.verdict is Verdict.PASS, result.reason
    assert theirs not in left and released == 1


def test_what_the_procedure_provisioned_is_released_and_nothing_else(tmp_path, chromium):
    provisioner = Allocates()
    requires = "requires:\n      - {type: eip, count: 1}\n    "
    result, theirs, left, released = run(RELEASE.format(requires=requires), provisioner, tmp_path)
    assert result.verdict is Verdict.PASS, result.reason
    assert provisioner.made not in left and theirs in left and released == 1


def test_what_an_earlier_step_created_is_released(tmp_path, chromium):
    # (the audit log checks the allocation, whose event names the EIP the doc typed; the
    # release's names only its ID: the sandbox's API says it is gone)
    result, theirs, left, released = run(CREATE_THEN_RELEASE, Nothing(), tmp_path)
    assert result.verdict is Verdict.PASS, result.reason
    assert [turn.description for turn in result.turns[-2:]] == ["click menuitem 'Release'", "click button 'OK'"]
    assert theirs in left and f"docverify-eip-{SUFFIX}" not in left.values() and released == 1


def test_a_dry_run_provisions_nothing_and_stops_before_the_release(tmp_path, chromium):
    # what the doc declares is not made: the list it acts on is empty, and the dry run says why it ended there
    provisioner = Allocates()
    requires = "requires:\n      - {type: eip, count: 1}\n    "
    doc = RELEASE.format(requires=requires)
    result, _, left, released = run(doc, provisioner, tmp_path, foreign=False, limits=RunLimits(dry_run=True))
    assert provisioner.made is None and left == {} and released == 0
    assert result.verdict is Verdict.INCONCLUSIVE and result.dry_run and result.stopped is None
    assert result.reason.startswith("dry run: prerequisite missing at step 2: ")
    assert result.reason.endswith("(a dry run provisions nothing: what `requires:` declares is not made); "
                                  "step 1 followed as written")
    # an account that holds one: followed up to the Release, which is not clicked
    result, theirs, left, released = run(doc, provisioner, tmp_path, limits=RunLimits(dry_run=True))
    assert result.verdict is Verdict.INCONCLUSIVE and result.stopped is not None, result.reason
    assert result.reason.startswith("dry run: stopped before step 2 at docs/eip.md:")
    assert "(click menuitem 'Release': a destructive control); step 1 followed as written" in result.reason
    assert theirs in left and released == 0 and provisioner.made is None
