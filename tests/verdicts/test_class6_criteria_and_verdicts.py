"""Class 6: wrong or guessed success criteria and verdicts.

"Modify the name of a security group" is ModifySecurityGroupAttribute, not the
instance's; a goal not reached after steps that could not be followed literally (a
CLI command) is INCONCLUSIVE, not FAIL; a doc for another cloud's console is not
applicable (skipped with a reason), never drift.
"""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner
from verdict_helpers import procedure

from docverify.check.criteria import match_text
from docverify.check.verdict import Finding, FindingKind, Verdict, decide
from docverify.cli import cli
from docverify.errors import ExitCode


@pytest.mark.parametrize(("title", "product", "event"), [
    ("Modify the name of a security group", "ecs", "ModifySecurityGroupAttribute"),
    ("修改安全组名称", "ecs", "ModifySecurityGroupAttribute"),
    ("Change the name of an instance", "ecs", "ModifyInstanceAttribute"),
    ("Reset the password of an ECS instance", None, "ModifyInstanceAttribute"),
    ("Modify a security group rule", "ecs", "ModifySecurityGroupRule"),
    ("Modify the bandwidth of an EIP", "eip", "ModifyEipAddressAttribute"),
    ("Change the description of a vSwitch", "vpc", "ModifyVSwitchAttribute"),
    ("Create a vServer group", "slb", "CreateVServerGroup"),
    ("Stop a listener", "slb", "StopLoadBalancerListener"),
    ("停止监听", "slb", "StopLoadBalancerListener"),
    ("Quickly add rules for common ports", "ecs", "AuthorizeSecurityGroup"),
    ("Disable a CMK", "kms", "DisableKey"),
    ("开启日志记录", "actiontrail", "StartLogging"),
    ("Remove permissions from a RAM user", "ram", "DetachPolicyFromUser"),
    ("Modify the description of a key", "kms", "UpdateKeyDescription"),
])
def test_the_event_of_a_modification_is_the_modified_resources(title, product, event):
    assert [rule.event for rule in match_text(title, product)] == [event]


def test_a_goal_not_reached_after_unfollowable_steps_is_inconclusive():
    cli_step = Finding(FindingKind.NOT_VERIFIABLE, "doc.md", 5, "2", "Run aliyun ecs StopInstance", "no action")
    assert decide([cli_step], goal_reached=False) is Verdict.INCONCLUSIVE
    assert decide([], goal_reached=False) is Verdict.FAIL
    assert decide([cli_step], goal_reached=True) is Verdict.PASS


def test_the_cloud_a_doc_is_for():
    aws = procedure("""
        # Create a bucket

        1. Sign in to the AWS Management Console and open the Amazon S3 console at https://console.aws.amazon.com/s3/.
        2. Choose **Create bucket**.
    """)
    azure = procedure("""
        # Create a VNet

        1. Sign in to the [Azure portal](https://portal.azure.com).
        2. Select **Create a resource**.
    """)
    alibaba = procedure("""
        # Create a bucket

        1. Log on to the [OSS console](https://oss.console.aliyun.com/).
        2. Click **Create Bucket**.
    """)
    assert (aws.cloud, azure.cloud, alibaba.cloud) == ("aws", "azure", "alibaba")


def test_a_doc_for_another_clouds_console_is_not_applicable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s3.md").write_text(textwrap.dedent("""
        # Create a bucket

        1. Sign in to the AWS Management Console and open the Amazon S3 console at https://console.aws.amazon.com/s3/.
        2. Choose **Create bucket**.
    """))
    result = CliRunner().invoke(cli, ["check", "s3.md", "--no-store"])
    assert result.exit_code == ExitCode.NO_PROCEDURES, result.output
    assert "not applicable: written for the AWS console; this run checks Alibaba Cloud's" in result.output
