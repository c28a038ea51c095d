"""Each procedure in an account of its own (``console.sandbox.accounts =
"per-task"``, the default): procedures run in parallel (``--jobs``) or one after
another never see each other's resources, as a benchmark's tasks must not."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify_sandbox.client import SandboxApiError, SandboxClient
from docverify_sandbox.console import SandboxConsole
from docverify_sandbox.seed import seed_resources
from docverify_sandbox.state import DEFAULT_ACCOUNTS, Store

ECS = "2014-05-26"


REGION = {"RegionId": "cn-hangzhou"}


def instances(client: SandboxClient) -> list[dict]:
    return client.call("DescribeInstances", ECS, REGION)["Instances"]["Instance"]


def events(client: SandboxClient) -> list[str]:
    return [event["eventName"] for event in client.call("LookupEvents", "2020-07-06", REGION)["Events"]]


def test_a_task_account_is_new_seeded_private_and_removed_afterwards():
    console = SandboxConsole(SandboxConsole.Options(latency_ms=0))
    with console.start() as endpoint:
        with console.task_account(endpoint, "a") as first, console.task_account(endpoint, "b") as second:
            ids = {first.extra["account_id"], second.extra["account_id"], DEFAULT_ACCOUNTS[0].account_id}
            assert len(ids) == 3
            assert first.login.user != endpoint.login.user and first.url == endpoint.url
            a = SandboxClient(first.url, first.extra["access_key_id"], first.extra["access_key_secret"])
            b = SandboxClient(second.url, second.extra["access_key_id"], second.extra["access_key_secret"])
            # seeded like the default tenants, with ids of their own
            assert [i["InstanceName"] for i in instances(a)] == ["launch-advisor-20210101"]
            a.call("StopInstance", ECS, {**REGION, "InstanceId": instances(a)[0]["InstanceId"]})
            assert instances(a)[0]["InstanceId"] != instances(b)[0]["InstanceId"]
            assert instances(b)[0]["Status"] == "Running"  # b does not see what a did
            assert "StopInstance" in events(a)
            assert "StopInstance" not in events(b)  # nor its audit log
        with pytest.raises(SandboxApiError):  # gone with the task: keys, resources and events
            instances(a)
        home = SandboxClient(endpoint.url, DEFAULT_ACCOUNTS[0].admin_access_key_id,
                             DEFAULT_ACCOUNTS[0].admin_access_key_secret)
        assert instances(home)[0]["Status"] == "Running"


def test_shared_accounts_and_a_served_sandbox_use_the_first_tenant():
    console = SandboxConsole(SandboxConsole.Options(latency_ms=0, accounts="shared"))
    with console.start() as endpoint, console.task_account(endpoint, "a") as used:
        assert used is endpoint


def test_a_reset_task_account_returns_to_its_seeded_state():
    store = Store()
    try:
        acct = store.new_account(seed_resources)
        store.conn.execute("DELETE FROM resources WHERE account_id=? AND product='vpc'", (acct.account_id,))
        store.reset(acct.account_id, seed_resources)
        products = {row[0] for row in store.conn.execute(
            "SELECT DISTINCT product FROM resources WHERE account_id=?", (acct.account_id,))}
        assert {"vpc", "ecs", "ram"} <= products
        store.remove_account(acct.account_id)
        assert store.account(acct.account_id) is None
        assert not store.conn.execute("SELECT 1 FROM resources WHERE account_id=?", (acct.account_id,)).fetchone()
    finally:
        store.close()


STOP = """
    # Stop the launch advisor ({name})

    <!-- docverify:
    id: stop-{name}
    expect:
      - {{service: Ecs, event: StopInstance}}
    -->

    1. Log on to the [ECS console](https://ecs.console.aliyun.com).
    2. In the left-side navigation pane, choose **Instances & Images** > **Instances**.
    3. Find the instance `launch-advisor-20210101` and, in the **Actions** column, choose **More** > **Instance Status and Lifecycle** > **Stop**.
    4. In the **Stop Instance** dialog box, click **OK**.
"""


@pytest.mark.browser
@pytest.mark.parametrize("accounts, verdicts", [
    ("per-task", ["PASS", "PASS", "PASS"]),
    ("shared", None),  # the first stops the one instance; the others find it stopped or stopping
])
def test_procedures_in_parallel_do_not_act_on_each_others_resources(tmp_path, accounts, verdicts):
    doc = tmp_path / "stop.md"
    doc.write_text("\n".join(textwrap.dedent(STOP.format(name=name)) for name in ("a", "b", "c")))
    result = CliRunner().invoke(cli, ["check", str(doc), "--jobs", "3", "--no-store", "--report", "json",
                                      "--output", str(tmp_path / "out"), "-O", "console.sandbox.latency_ms=0",
                                      "-O", f"console.sandbox.accounts={accounts}"])
    report = json.loads((tmp_path / "out" / "docverify.json").read_text())
    got = [r["verdict"] for r in sorted(report["results"], key=lambda r: r["id"])]
    if verdicts is not None:
        assert got == verdicts, result.output
    else:
        assert got.count("PASS") < 3, result.output


def test_an_account_an_interrupted_run_left_in_a_kept_state_is_skipped(tmp_path):
    first = Store(tmp_path / "sandbox.db")
    left = first.new_account(seed_resources)  # never removed: the run was killed
    first.close()
    second = Store(tmp_path / "sandbox.db")
    try:
        fresh = second.new_account(seed_resources)
        assert fresh.account_id != left.account_id and fresh.alias != left.alias
    finally:
        second.close()
