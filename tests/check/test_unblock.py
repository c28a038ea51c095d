"""Provisioning on demand: the literal policy finds the list it must act on empty, a
provisioner with ``on_blocked`` creates what is missing, the report goes into the
policy's context, the page reloads, and the procedure goes on from the blocked step."""

from __future__ import annotations

import asyncio
import textwrap
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from docverify.check.verdict import Verdict
from docverify.cost import Usage
from docverify.parse.parser import parse_text
from docverify.provision import Provisioned, Provisioner
from docverify.run.runner import RunLimits, Runner, Stages
from docverify.task import make_task
from docverify_actiontrail.checker import ActionTrailChecker
from docverify_literal.policy import LiteralPolicy
from docverify_playwright.executor import PlaywrightExecutor
from docverify_sandbox.client import SandboxClient
from docverify_sandbox.console import SandboxConsole

pytestmark = pytest.mark.browser

RELEASE_AN_EIP = """\
    # Release an EIP

    <!-- docverify:
    id: release-eip
    expect:
      - {event: ReleaseEipAddress, service: Vpc}
    -->

    1. Log on to the Elastic IP Address console.
    2. Find the EIP and choose **More** > **Release** in the **Actions** column.
    3. In the message that appears, click **OK**.
"""


@dataclass
class Report:
    text: str
    context: dict[str, str] = field(default_factory=dict)
    usage: Usage = field(default_factory=lambda: Usage(calls=1, tokens_in=900, tokens_out=40, cost_usd=0.002))


class OnDemand(Provisioner):
    """Creates nothing up front; on_blocked allocates an EIP through the API."""

    name = "on-demand"

    def __init__(self, create: bool = True) -> None:
        super().__init__()
        self.create = create
        self.calls: list[str] = []

    @contextmanager
    def provision(self, task, endpoint):  # as if a model had written a template for it first
        yield Provisioned(usage=Usage(calls=2, tokens_in=2400, tokens_out=300, cost_usd=0.01))

    async def on_blocked(self, task, endpoint, message, page):
        self.calls.append(message)
        if not self.create:
            return None
        name = f"unblocked-{task.context['suffix']}"
        api = SandboxClient(endpoint.url, endpoint.extra["access_key_id"], endpoint.extra["access_key_secret"])
        made = await asyncio.to_thread(api.call, "AllocateEipAddress", "2016-04-28",
                                       {"RegionId": "cn-hangzhou", "Name": name})
        return Report(f"created eip {name} ({made['AllocationId']})", {"eip-id": made["AllocationId"]})


def run(provisioner, tmp_path):
    task = make_task(parse_text(textwrap.dedent(RELEASE_AN_EIP), "docs/release.md").procedures[0], suffix="u1b2c3")
    stages = Stages(provisioner, PlaywrightExecutor(), LiteralPolicy(), [ActionTrailChecker()])
    with SandboxConsole(SandboxConsole.Options(latency_ms=0)).start() as endpoint:
        runner = Runner(stages, endpoint, artifacts=tmp_path / "artifacts", limits=RunLimits())
        (result,) = asyncio.run(runner.run([task], 1))
    return result


def test_what_was_missing_is_created_and_the_procedure_goes_on(tmp_path, chromium):
    provisioner = OnDemand()
    result = run(provisioner, tmp_path)
    assert len(provisioner.calls) == 1 and "prerequisite missing at step 2" in provisioner.calls[0]
    assert result.verdict is Verdict.PASS, result.reason  # the EIP it allocated was released as the doc says
    kinds = [t.action.get("kind") for t in result.turns]
    assert "provision" in kinds
    provision = result.turns[kinds.index("provision")]
    assert provision.description.startswith("provisioned what was missing: created eip unblocked-u1b2c3 (eip-")
    assert result.turns[kinds.index("provision") + 1].description.startswith("goto ")  # the page reloaded
    assert result.context["eip-id"].startswith("eip-")
    # the procedure's bill: the templates written before it, and deciding what to create when it was blocked
    usage = result.usage
    assert (usage.calls, usage.tokens_in, usage.tokens_out) == (3, 3300, 340)
    assert usage.cost_usd == pytest.approx(0.012)


def test_without_anything_created_it_stays_an_environment_error(tmp_path, chromium):
    result = run(OnDemand(create=False), tmp_path)
    assert result.verdict is Verdict.ENV_ERROR and "prerequisite missing" in result.reason
