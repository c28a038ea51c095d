"""Accounts that start empty (``console.sandbox.resources = "empty"``): a new
account, where every prerequisite of a procedure must be provisioned."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from docverify_sandbox.cli import sandbox
from docverify_sandbox.client import SandboxClient
from docverify_sandbox.console import SandboxConsole
from docverify_sandbox.state import DEFAULT_ACCOUNTS, Store

VPC, ECS, RAM = "2016-04-28", "2014-05-26", "2015-05-01"


def counts(client: SandboxClient) -> dict[str, int]:
    region = {"RegionId": "cn-hangzhou"}
    return {
        "vpcs": client.call("DescribeVpcs", VPC, region)["TotalCount"],
        "security_groups": len(client.call("DescribeSecurityGroups", ECS, region)["SecurityGroups"]["SecurityGroup"]),
        "instances": len(client.call("DescribeInstances", ECS, region)["Instances"]["Instance"]),
        "users": len(client.call("ListUsers", RAM)["Users"]["User"]),
    }


@pytest.mark.parametrize("resources, expected", [
    ("seeded", {"vpcs": 1, "security_groups": 1, "instances": 1, "users": 2}),
    ("empty", {"vpcs": 0, "security_groups": 0, "instances": 0, "users": 2}),
])
def test_accounts_start_seeded_or_empty_and_reset_to_it(resources, expected):
    account = DEFAULT_ACCOUNTS[0]
    options = SandboxConsole.Options(latency_ms=0, resources=resources)
    with SandboxConsole(options).start() as endpoint:
        admin = SandboxClient(endpoint.url, account.admin_access_key_id, account.admin_access_key_secret)
        assert counts(admin) == expected  # the administrator signs in and calls the API either way
        admin.call("CreateVpc", VPC, {"RegionId": "cn-hangzhou", "CidrBlock": "10.0.0.0/8", "VpcName": "extra"})
        SandboxClient(endpoint.url, account.access_key_id, account.access_key_secret).call("ResetAccount", "sandbox")
        assert counts(admin) == expected


def test_an_unknown_start_is_refused_naming_the_setting():
    with pytest.raises(Exception, match="resources"):
        SandboxConsole.Options(resources="full")


def test_reset_of_a_kept_state_to_empty(tmp_path):
    runner = CliRunner()
    result = runner.invoke(sandbox, ["reset", "--data", str(tmp_path), "--resources", "empty"])
    assert result.exit_code == 0, result.output
    store = Store(tmp_path / "sandbox.db")
    try:
        rows = store.conn.execute("SELECT DISTINCT product FROM resources WHERE account_id=?",
                                  (DEFAULT_ACCOUNTS[0].account_id,)).fetchall()
    finally:
        store.close()
    assert [row[0] for row in rows] == ["ram"]
    refused = runner.invoke(sandbox, ["reset", "--url", "http://127.0.0.1:9", "--resources", "empty"])
    assert "--resources applies to --data only" in str(refused.exception)
