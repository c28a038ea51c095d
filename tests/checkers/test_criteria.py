"""The built-in success-criteria map (docverify.check.criteria), over real documentation and annotations."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from docverify.check.criteria import ExpectedEvent, builtin_criteria, expected_events, match_text, product_key
from docverify.parse.model import Action, Intent, Procedure, Step
from docverify.parse.parser import parse_file, parse_text
from docverify.task import make_task

ALIBABA = "real-docs/alibaba_AlibabaCloudDocs"

#: Every procedure of the Alibaba Cloud corpus docs -> its built-in criteria. Wizard
#: fragments ("Step 3: ..."), read-only procedures and object uploads get none on purpose.
CORPUS: dict[str, dict[str, list[str]]] = {
    "actiontrail/en/Authorize RAM users to use ActionTrail.md": {
        'Authorize RAM users to use ActionTrail': ['Ram:AttachPolicyToUser'],
    },
    "actiontrail/en/View RAM operation events in the ActionTrail console.md": {
        'View RAM operation events in the ActionTrail console': [],
    },
    "db/en/MongoDB Create a replica set instance.md": {
        'Create a replica set instance': ['Dds:CreateDBInstance'],
        'View the created instance': [],
    },
    "ecs/en/Add security group rules.md": {
        'Add security group rules': ['Ecs:AuthorizeSecurityGroup'],
    },
    "ecs/en/Create a custom image from an instance.md": {
        'Create a custom image from an instance': ['Ecs:CreateImage'],
    },
    "ecs/en/Create a security group.md": {
        'Create a security group': ['Ecs:CreateSecurityGroup'],
    },
    "ecs/en/Create an SSH key pair.md": {
        'Create an SSH key pair': ['Ecs:CreateKeyPair'],
    },
    "ecs/en/Create an instance by using the wizard.md": {
        'Step 1: Complete the settings in the Basic Configurations step': [],
        'Step 2: Complete the settings in the Networking step': [],
        'Step 3: (Optional) Complete the settings in the System Configurations (Optional) step': [],
        'Step 4: (Optional) Complete the settings in the Grouping (Optional) step': [],
        'Step 5: Confirm the order': [],
    },
    "ecs/en/Enable or disable release protection for ECS instances.md": {
        'Enable release protection when you create an instance': ['Ecs:RunInstances'],
        'Change the release protection settings': ['Ecs:ModifyInstanceAttribute'],
        'Check whether release protection is enabled': [],
    },
    "ecs/en/Quick start for Linux instances.md": {
        'Step 1: Create an ECS instance': ['Ecs:RunInstances'],
        'Step 2: Add security group rules': ['Ecs:AuthorizeSecurityGroup'],
        'Step 3: Connect to the ECS instance': [],
        'Step 4: Configure Apache': [],
        'Step 5: (Optional) Resolve domain names': [],
        'Step 6: (Optional) Release the ECS instance': ['Ecs:DeleteInstance'],
        'Step 7: View bills': [],
    },
    "ecs/en/Release an instance.md": {
        'Release an instance immediately': ['Ecs:DeleteInstance'],
        'Enable automatic release': ['Ecs:ModifyInstanceAutoReleaseTime'],
        'Disable automatic release': ['Ecs:ModifyInstanceAutoReleaseTime'],
    },
    "ecs/en/Start or stop an instance.md": {
        'Start an instance': ['Ecs:StartInstance'],
        'Stop a Subscription instance': ['Ecs:StopInstance'],
        'Stop a Pay-As-You-Go instance': ['Ecs:StopInstance'],
    },
    "ecs/zh/使用向导创建实例.md": {
        '步骤1：完成基础配置': [],
        '步骤2：完成网络和安全组配置': [],
        '（可选）步骤3：完成系统配置': [],
        '（可选）步骤4：完成分组设置': [],
        '步骤5：确认订单': [],
    },
    "ecs/zh/创建安全组.md": {
        '创建安全组': ['Ecs:CreateSecurityGroup'],
    },
    "ecs/zh/添加安全组规则.md": {
        '添加安全组规则': ['Ecs:AuthorizeSecurityGroup'],
    },
    "eip/en/Apply for EIPs.md": {
        'Apply fornew EIPs': ['Vpc:AllocateEipAddress'],
        'Recover a released EIP': ['Vpc:AllocateEipAddressPro'],
        'Apply for contiguous EIPs': ['Vpc:AllocateEipSegmentAddress'],
    },
    "eip/en/Associate an EIP with an ECS instance.md": {
        'Associate an EIP with an ECS instance': ['Vpc:AssociateEipAddress'],
    },
    "nat/en/Create NAT gateways.md": {
        'Create a NAT gateway': ['Vpc:CreateNatGateway'],
        'Associate EIPs': ['Vpc:AssociateEipAddress'],
        'Disassociate EIPs': ['Vpc:UnassociateEipAddress'],
        'Modify a NAT gateway': ['Vpc:ModifyNatGatewayAttribute'],
        'Delete a NAT gateway': ['Vpc:DeleteNatGateway'],
    },
    "oss/en/Configure bucket tagging.md": {
        'Configure bucket tagging': ['Oss:PutBucketTags'],
    },
    "oss/en/Configure static website hosting.md": {
        'Configure static website hosting and disable subfolder homepage': ['Oss:PutBucketWebsite'],
        'Configure static website hosting and enable subfolder homepage': ['Oss:PutBucketWebsite'],
        'Create and upload a default homepage object': [],
        'Create and upload a default 404 page': [],
    },
    "oss/en/Create buckets.md": {
        'Create buckets': ['Oss:PutBucket'],
    },
    "oss/zh/创建存储空间.md": {
        '创建存储空间': ['Oss:PutBucket'],
    },
    "ram/en/Create a RAM role for a trusted Alibaba Cloud service.md": {
        'Create a normal service role': ['Ram:CreateRole'],
        'Create a service-linked role': ['CreateServiceLinkedRole'],
    },
    "ram/en/Create a RAM user.md": {
        'Create a RAM user': ['Ram:CreateUser'],
    },
    "ram/en/Create a user group.md": {
        'Create a user group': ['Ram:CreateGroup'],
    },
    "ram/en/Create an AccessKey pair for a RAM user.md": {
        'Create an AccessKey pair for a RAM user': ['Ram:CreateAccessKey'],
    },
    "ram/en/Grant permissions to a RAM user.md": {
        'Method 1: Grant permissions to a RAM user on the User page': ['Ram:AttachPolicyToUser'],
        'Method 2: Grant permissions to a RAM user on the Grants page': ['Ram:AttachPolicyToUser'],
    },
    "ram/zh/创建RAM用户.md": {
        '创建RAM用户': ['Ram:CreateUser'],
    },
    "slb/en/Add an HTTP listener.md": {
        'Step 1: Configure the listener': [],
        'Step 2: Configure an HTTP listener': [],
        'Step 3: Add backend servers': [],
        'Step 4: Confirm the configurations': [],
    },
    "slb/en/Create an SLB instance (old console archive).md": {
        'Create an SLB instance': ['Slb:CreateLoadBalancer'],
    },
    "slb/en/Create an SLB instance.md": {
        'Create an SLB instance': ['Slb:CreateLoadBalancer'],
    },
    "slb/zh/ALB_创建实例.md": {
        '步骤一：创建应用型负载均衡实例': ['Alb:CreateLoadBalancer'],
        '步骤二：创建监听': ['Alb:CreateListener'],  # the doc's own words say ALB: an ALB listener
        '步骤三：配置SSL证书': [],
        '步骤四：选择服务器组': [],
        '步骤五：配置审核': [],
    },
    "vpc/en/Create an ECS instance in an IPv6 VPC.md": {
        'Step 1: Create a VPC and VSwitch': ['Vpc:CreateVpc', 'Vpc:CreateVSwitch'],
        'Step 2: Create and configure an ECS instance': ['Ecs:RunInstances'],
        'Step 3: Purchase an IPv6 Internet bandwidth plan': [],
    },
    "vpc/en/Create an IPv4 and IPv6 dual-stack VPC.md": {
        'Create an IPv4 and IPv6 dual-stack VPC': ['Vpc:CreateVpc'],
    },
}


def describe(procedure: Procedure) -> list[str]:
    return [event.describe() for event in builtin_criteria(procedure)]


@pytest.mark.parametrize("path", sorted(CORPUS))
def test_corpus_procedures_get_the_expected_criteria(corpus, path):
    document = parse_file(corpus / ALIBABA / path)
    assert {p.title: describe(p) for p in document.procedures} == CORPUS[path]


def test_corpus_coverage(corpus):
    procedures = [p for path in sorted((corpus / ALIBABA).glob("*/*/*.md")) for p in parse_file(path).procedures]
    covered = [p for p in procedures if builtin_criteria(p)]
    assert (len(covered), len(procedures)) == (48, 75)
    assert all(e.source == "built-in" for p in covered for e in builtin_criteria(p))


def test_other_clouds_get_no_builtin_criteria(corpus):
    """AWS and Azure docs create buckets, VPCs and NAT gateways too: not Alibaba events."""
    paths = sorted((corpus / "real-docs").glob("aws_*/**/*.md")) + sorted((corpus / "real-docs").glob("azure_*/**/*.md"))
    procedures = [p for path in paths for p in parse_file(path).procedures]
    assert len(procedures) > 50
    assert [p.title for p in procedures if builtin_criteria(p)] == []


@pytest.mark.parametrize(
    ("title", "product", "expected"),
    [
        ("Create a bucket", None, ["Oss:PutBucket"]),
        ("Enable versioning", "oss", ["Oss:PutBucketVersioning"]),
        ("Configure ACL for a bucket", "oss", ["Oss:PutBucketAcl"]),
        ("Configure CORS rules", "oss", ["Oss:PutBucketCors"]),
        ("Configure lifecycle rules", "oss", ["Oss:PutBucketLifecycle"]),
        ("Add tags to a bucket", "oss", ["Oss:PutBucketTags"]),
        ("Delete a bucket", "oss", ["Oss:DeleteBucket"]),
        ("Create an instance", "ecs", ["Ecs:RunInstances"]),
        ("Create an instance", "mongodb", ["Dds:CreateDBInstance"]),
        ("Create an instance", "rds", ["Rds:CreateDBInstance"]),
        ("Create an instance", None, []),  # whose instance?
        # a product's name with "for" in it is no preposition between the verb and the object
        ("Release an ApsaraDB for MongoDB instance", "mongodb", ["Dds:DeleteDBInstance"]),
        ("Create an ApsaraDB RDS for MySQL instance", "rds", ["Rds:CreateDBInstance"]),
        ("Create a bucket for a website", "oss", ["Oss:PutBucket"]),
        ("Create an automatic snapshot policy for a disk", "ecs", []),  # not a snapshot
        ("删除自动快照策略", "ecs", []),
        ("Create a snapshot", "ecs", ["Ecs:CreateSnapshot"]),
        ("Create a custom image from an instance", "ecs", ["Ecs:CreateImage"]),
        ("Reset the password of an instance", "ecs", ["Ecs:ModifyInstanceAttribute"]),
        ("Add an outbound security group rule", "ecs", ["Ecs:AuthorizeSecurityGroupEgress"]),
        ("Create a vSwitch in a VPC", "vpc", ["Vpc:CreateVSwitch"]),
        ("Create a VPC and a vSwitch", "vpc", ["Vpc:CreateVpc", "Vpc:CreateVSwitch"]),
        ("Create SNAT entries for a NAT gateway", "nat", ["Vpc:CreateSnatEntry"]),
        ("Add a DNAT entry", "nat", ["Vpc:CreateForwardEntry"]),
        ("Add an HTTPS listener", "slb", ["Slb:CreateLoadBalancerHTTPSListener"]),
        ("Create a listener", "alb", ["Alb:CreateListener"]),
        ("Create a database account", "rds", ["Rds:CreateAccount"]),
        ("Create a database", "rds", ["Rds:CreateDatabase"]),
        ("Create a CMK", "kms", ["Kms:CreateKey"]),
        ("Schedule key deletion", "kms", ["Kms:ScheduleKeyDeletion"]),
        ("Create a trail", "actiontrail", ["Actiontrail:CreateTrail"]),
        ("Enable logging for a trail", "actiontrail", ["Actiontrail:StartLogging"]),
        ("Add a RAM user to a user group", "ram", ["Ram:AddUserToGroup"]),
        ("Grant permissions to a RAM role", "ram", ["Ram:AttachPolicyToRole"]),
        ("Create a custom policy", "ram", ["Ram:CreatePolicy"]),
        ("Delete a RAM user", "ram", ["Ram:DeleteUser"]),
        ("申请EIP", "eip", ["Vpc:AllocateEipAddress"]),
        ("创建NAT网关", "nat", ["Vpc:CreateNatGateway"]),
        ("创建专有网络和交换机", "vpc", ["Vpc:CreateVpc", "Vpc:CreateVSwitch"]),
        ("释放实例", "ecs", ["Ecs:DeleteInstance"]),
        ("开启版本控制", "oss", ["Oss:PutBucketVersioning"]),
        ("创建RAM角色", "ram", ["Ram:CreateRole"]),
        ("Recreate the bucket list view", "oss", []),  # "create" inside a word is no verb
        ("View the created instance", "ecs", []),
    ],
)
def test_titles(title, product, expected):
    assert [f"{r.service}:{r.event}" for r in match_text(title, product)] == expected


def doc(text: str) -> list[Procedure]:
    return parse_text(textwrap.dedent(text), "guide.md").procedures


def test_product_comes_from_the_console_when_the_procedure_names_none():
    step = Step("1", 3, 3, "Log on to the OSS console.", Intent.OPEN_CONSOLE,
                actions=[Action(Intent.OPEN_CONSOLE, 3, target="OSS console")])
    procedure = Procedure(id="p", title="Enable versioning", path="p.md", line=1, end_line=3, steps=[step])
    assert procedure.product is None and product_key(procedure) == "oss"
    assert describe(procedure) == ["Oss:PutBucketVersioning"]


def test_a_procedure_that_opens_a_console_is_matched_on_the_button_it_clicks():
    [procedure] = doc(
        """
        ## Get started

        1. Log on to the VPC console.
        2. On the VPCs page, click **Create VPC**.
        3. Click **OK**.
        """
    )
    assert describe(procedure) == ["Vpc:CreateVpc"]


def test_a_wizard_fragment_is_not_matched_on_its_buttons():
    [procedure] = doc(
        """
        ## Step 2: Networking

        1. To create a security group, click **Create Security Group**.
        2. Click **Next**.
        """
    )
    assert describe(procedure) == []


def test_annotation_expect_overrides_the_builtin_map():
    annotated, plain = doc(
        """
        # Buckets

        <!-- docverify:
          expect:
            - {event: PutBucket, service: Oss, resource: <bucket-name>}
            - {eventName: PutBucketVersioning}
        -->
        ## Create a bucket

        1. Log on to the OSS console.
        2. Click **Create Bucket**.

        ## Create a bucket again

        1. Log on to the OSS console.
        2. Click **Create Bucket**.
        """
    )
    assert expected_events(annotated) == [
        ExpectedEvent("PutBucket", "Oss", "<bucket-name>", source="annotation"),
        ExpectedEvent("PutBucketVersioning", None, None, source="annotation"),
    ]
    assert expected_events(plain) == [ExpectedEvent("PutBucket", "Oss", source="built-in")]
    assert make_task(plain, suffix="abc123").criteria == expected_events(plain)


def test_an_unknown_procedure_has_no_criteria():
    [procedure] = doc(
        """
        ## Resolve domain names

        1. Register the domain name.
        2. Point it at the public IP address of the instance.
        """
    )
    assert expected_events(procedure) == []


def test_the_map_imports_no_plugin():
    code = "import sys, docverify.check.criteria; print(sorted(m for m in sys.modules if m.startswith('docverify_')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
