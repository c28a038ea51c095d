"""Resource META: the vocabulary, annotations, dependency closure, and inference."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from docverify.parse.parser import parse_file
from docverify.provision.meta import (
    DEPENDENCIES,
    META_TYPES,
    MetaError,
    Requirement,
    analyze,
    close,
    default_name,
    normalize_type,
    resolve_meta,
)
from docverify.task import make_task


def _procedure(tmp_path: Path, text: str, name: str = "doc.md"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    document = parse_file(path)
    assert not document.errors, document.errors
    (procedure,) = document.procedures
    return procedure


# --- vocabulary ----------------------------------------------------------------------------------


def test_every_type_has_dependencies_listed_before_it():
    assert len(META_TYPES) == len(set(META_TYPES)) == 33
    assert set(DEPENDENCIES) == set(META_TYPES)
    for meta_type, dependencies in DEPENDENCIES.items():
        for dependency in dependencies:
            assert META_TYPES.index(dependency) < META_TYPES.index(meta_type), (dependency, meta_type)


@pytest.mark.parametrize(("alias", "product", "expected"), [
    ("vpc", None, "vpc"),
    ("alicloud_vpc", None, "vpc"),
    ("ACS::VPC::VPC", None, "vpc"),
    ("ACS::ECS::Instance", None, "ecs_instance"),
    ("alicloud_instance", None, "ecs_instance"),
    ("instance", "ecs", "ecs_instance"),
    ("Instances", "rds", "rds_instance"),
    ("instance", "alb", "alb"),
    ("listener", "slb", "slb_listener"),
    ("bucket", None, "oss_bucket"),
    ("Security Group", None, "security_group"),
    ("security-group", None, "security_group"),
    ("ALIYUN::ECS::SecurityGroup", None, "security_group"),
    ("alicloud_forward_entry", None, "dnat_entry"),
    ("alicloud_db_database", None, "rds_database"),
    ("交换机", None, "vswitch"),
    ("instance", None, None),  # needs a product
    ("listener", "ecs", None),
    ("bucket_policy", None, None),
])
def test_aliases(alias, product, expected):
    assert normalize_type(alias, product) == expected


def test_generated_names_follow_each_cloud_rule():
    assert default_name("vpc", "ab12cd") == "docverify-vpc-ab12cd"
    assert default_name("vpc", "ab12cd", 2) == "docverify-vpc-ab12cd-2"
    assert default_name("rds_database", "ab12cd") == "docverify_db_ab12cd"  # RDS names allow no hyphen
    assert default_name("kms_key", "ab12cd") is None  # a key has an ID, no name


def test_every_built_in_success_event_says_what_it_creates_or_needs():
    from docverify.check.criteria import RULES
    from docverify.provision.meta import _EVENTS

    unmapped = {(r.service or "", r.event) for r in RULES} - set(_EVENTS)
    assert unmapped == {("", "CreateServiceLinkedRole")}  # a service-linked role is not a resource docverify makes


# --- closure -------------------------------------------------------------------------------------


def test_closure_adds_dependencies_once_in_order():
    result = close([Requirement(type="ecs_instance"), Requirement(type="nat_gateway")])
    assert [r.type for r in result] == ["vpc", "vswitch", "security_group", "ecs_instance", "nat_gateway"]
    vswitch = result[1]
    assert vswitch.dependencies == ["vpc"] and vswitch.count == 1  # shared by the instance and the gateway
    assert [e.text for e in result[0].evidence] == ["needed by vswitch"]
    assert result[3].dependencies == ["vswitch", "security_group"]


def test_closure_asks_for_enough_of_a_dependency():
    result = close([Requirement(type="alb_listener")])
    assert [(r.type, r.count) for r in result] == [("vpc", 1), ("vswitch", 2), ("alb", 1), ("alb_listener", 1)]


def test_closure_keeps_an_annotated_dependency():
    annotated = Requirement(type="vpc", attributes={"cidr_block": "10.0.0.0/8"}, source="annotation")
    result = close([Requirement(type="vswitch"), annotated])
    assert [r.type for r in result] == ["vpc", "vswitch"]
    assert result[0] is annotated


# --- annotations ---------------------------------------------------------------------------------

ANNOTATED = """
    ---
    product: ECS
    ---
    # Stop an instance

    <!-- docverify:
    requires:
      - type: alicloud_instance
        attributes: {status: Running}
        name: web-<suffix>
      - type: ACS::VPC::VPC
        attributes: {cidr_block: 10.0.0.0/8}
      - {type: bucket, count: 2}
    -->

    1. Log on to the ECS console.
    2. Click **Stop**.
    """


def test_annotation_types_aliases_and_closure(tmp_path):
    plan = analyze(_procedure(tmp_path, ANNOTATED))
    types = [(r.type, r.count, r.source) for r in plan.requirements]
    assert types == [
        ("vpc", 1, "annotation"), ("vswitch", 1, "inferred"), ("security_group", 1, "inferred"),
        ("ecs_instance", 1, "annotation"), ("oss_bucket", 2, "annotation"),
    ]
    instance = plan.requirements[3]
    assert instance.attributes == {"status": "Running"} and instance.name == "web-<suffix>"
    assert plan.requirements[0].attributes == {"cidr_block": "10.0.0.0/8"}
    assert plan.requirements[0].evidence[0].kind == "annotation"


def test_task_names_carry_the_run_suffix(tmp_path):
    task = make_task(_procedure(tmp_path, ANNOTATED), suffix="ab12cd")
    names = {r.type: r.name for r in resolve_meta(task)}
    assert names["ecs_instance"] == "web-ab12cd"
    assert names["vpc"] == "docverify-vpc-ab12cd"
    assert names["oss_bucket"] == "docverify-bucket-ab12cd"
    alone = {r.type: r.name for r in resolve_meta(task.procedure)}  # no suffix yet: only the annotated name, as written
    assert alone == {"vpc": None, "vswitch": None, "security_group": None, "ecs_instance": "web-<suffix>", "oss_bucket": None}


@pytest.mark.parametrize(("entry", "needle", "message"), [
    ("- type: ecs_instanse", "ecs_instanse", "unknown Resource META type 'ecs_instanse'; did you mean 'ecs_instance'?"),
    ("- type: instance", "instance", "needs the procedure's product"),
])
def test_bad_requires_names_file_line_and_valid_types(tmp_path, entry, needle, message):
    text = f"# Do it\n\n<!-- docverify:\nrequires:\n  {entry}\n-->\n\n1. Click **OK**.\n"
    path = tmp_path / "bad.md"
    path.write_text(text, encoding="utf-8")
    (procedure,) = parse_file(path).procedures
    with pytest.raises(MetaError) as raised:
        analyze(procedure)
    error = raised.value
    assert error.path == procedure.path
    assert error.line == (5 if needle else 3)  # the line holding the bad value, else the annotation's
    assert message in str(error)
    if "unknown Resource META type" in message:
        assert "valid types: vpc, vswitch, security_group" in str(error)
    assert str(error).startswith(f"{procedure.path}:{error.line}: requires[0] of ")


@pytest.mark.parametrize(("entry", "message"), [
    ("- {type: vpc, size: 3}", "item 1 has an unknown key 'size'; valid keys: type, count, attributes, name"),
    ("- {count: 1}", "item 1 needs 'type:'"),
    ("- {type: vpc, count: -1}", "'count' must be a whole number >= 0"),  # a wrong type too (issue 15)
    ("- {type: vpc, attributes: [1]}", "'attributes' must be a mapping"),
])
def test_a_requires_item_without_a_type_or_with_an_unknown_key_is_a_parse_error(tmp_path, entry, message):
    text = f"# Do it\n\n<!-- docverify:\nrequires:\n  {entry}\n-->\n\n1. Click **OK**.\n"
    path = tmp_path / "bad.md"
    path.write_text(text, encoding="utf-8")
    [error] = parse_file(path).errors  # caught before anything runs (issue 12, class 7)
    assert error.line == 4 and message in error.message


def test_count_zero_suppresses_an_inferred_type(tmp_path):
    text = """
        # Grant permissions to a RAM user

        <!-- docverify:
        product: RAM
        requires:
          - {type: ram_user, count: 0}
        -->

        1. Log on to the RAM console.
        2. Find the RAM user to which you want to grant permissions and click **Add Permissions**.
        """
    plan = analyze(_procedure(tmp_path, text))
    assert plan.requirements == []


# --- inference on written procedures ---------------------------------------------------------------


def _types(plan):
    return {r.type: r.count for r in plan.requirements}


def test_prerequisite_sentence_and_acted_on_object(tmp_path):
    text = """
        # Associate an EIP with an ECS instance

        ## Prerequisites

        An ECS instance is created.

        ## Procedure

        1. Log on to the Elastic IP Address console.
        2. On the **Elastic IP Addresses** page, find the EIP that you want to manage, and click **Bind Resource**.
        3. Click **OK**.
        """
    plan = analyze(_procedure(tmp_path, text))
    assert _types(plan) == {"vpc": 1, "vswitch": 1, "security_group": 1, "ecs_instance": 1, "eip": 1}
    instance = next(r for r in plan.requirements if r.type == "ecs_instance")
    assert instance.evidence[0].kind == "prerequisite" and instance.evidence[0].line == 5
    eip = next(r for r in plan.requirements if r.type == "eip")
    assert [e.kind for e in eip.evidence] == ["step", "criteria"] and eip.evidence[0].line == 10


@pytest.mark.parametrize("sentence, needed, absent", [
    ("The security group contains no instances and no elastic network interfaces (ENIs).",
     {"security_group"}, {"ecs_instance", "network_interface"}),
    ("An EIP is created and is not associated with any ECS instance.", {"eip"}, {"ecs_instance"}),
    ("A VPC without a vSwitch is created.", {"vpc"}, {"vswitch"}),
    ("An ECS instance and an EIP are created.", {"ecs_instance", "eip"}, set()),
    # a state the resource must be in, worded like a definition ("X is not ...")
    ("The EIP is not associated with a cloud resource.", {"eip"}, set()),
    ("The ENI is not attached to any ECS instance.", {"network_interface"}, {"ecs_instance"}),
    # one negation over a list
    ("The security group contains no ECS instances or ENIs.", {"security_group"},
     {"ecs_instance", "network_interface"}),
    ("待删除的安全组中没有ECS实例或弹性网卡。如果有，请先将它们移出安全组。", {"security_group"},
     {"ecs_instance", "network_interface"}),
    # what it says is gone: the head of the phrase, not what owns it
    ("All AccessKey pairs of the RAM user are deleted.", {"ram_user"}, {"ram_access_key"}),
    ("The RAM user's AccessKey pairs have been deleted.", {"ram_user"}, {"ram_access_key"}),
    ("RAM用户的AccessKey已删除。", {"ram_user"}, {"ram_access_key"}),
    ("已删除RAM用户的所有AccessKey。", {"ram_user"}, {"ram_access_key"}),
    ("An ECS instance is created and its cloud disks are released.", {"ecs_instance"}, {"disk"}),
    # a negation does not run on past its list
    ("The VPC has no NAT gateway, and an ECS instance is created.", {"vpc", "ecs_instance"}, {"nat_gateway"}),
])
def test_a_prerequisite_that_asks_for_an_absence_provisions_nothing_for_it(tmp_path, sentence, needed, absent):
    text = f"""
        # Look at it

        ## Prerequisites

        {sentence}

        ## Procedure

        1. Log on to the ECS console.
        2. Click **Refresh**.
        """
    plan = analyze(_procedure(tmp_path, text))
    types = set(_types(plan))
    assert needed <= types and not absent & types, types
    assert set(plan.absent) == absent, plan.absent  # said, with the sentence: `docverify plan` shows it
    assert all(evidence[0].kind == "prerequisite" for evidence in plan.absent.values())


def test_what_the_procedure_creates_is_not_required(tmp_path):
    text = """
        # Create a VPC

        1. Log on to the VPC console.
        2. In the top navigation bar, select the region where you want to create the VPC.
        3. On the **VPCs** page, click **Create VPC**.
        4. Click **OK**.
        """
    plan = analyze(_procedure(tmp_path, text))
    assert plan.requirements == []
    assert list(plan.creates) == ["vpc"]


def test_the_outputs_dependencies_are_required(tmp_path):
    text = """
        # Create a vSwitch

        1. Log on to the VPC console.
        2. Click **Create VSwitch**.
        3. Select the VPC from the **VPC** drop-down list.
        4. Click **OK**.
        """
    plan = analyze(_procedure(tmp_path, text))
    assert _types(plan) == {"vpc": 1}
    assert [e.kind for e in plan.requirements[0].evidence] == ["step", "field", "dependency"]  # text, the VPC row, the output


def test_audit_event_gives_the_state_the_procedure_needs(tmp_path):
    text = """
        ---
        product: ECS
        ---
        # Start an instance

        1. Log on to the ECS console.
        2. Find the instance to be started and choose **More** > **Start**.
        """
    plan = analyze(_procedure(tmp_path, text))
    instance = next(r for r in plan.requirements if r.type == "ecs_instance")
    assert instance.attributes == {"status": "Stopped"}


def test_cancelling_a_keys_deletion_needs_a_key_pending_deletion(tmp_path):
    text = """
        ---
        product: KMS
        ---
        # 撤销删除密钥

        1. 登录密钥管理服务控制台。
        2. 找到处于待删除状态的目标密钥，在**操作**列单击**撤销删除密钥**。
        """
    plan = analyze(_procedure(tmp_path, text))
    assert [(r.type, r.attributes) for r in plan.requirements] == [("kms_key", {"status": "PendingDeletion"})]


def test_purpose_clauses_and_definitions_are_not_requirements(tmp_path):
    text = """
        # Create an SSH key pair

        To log on to an ECS instance that is bound with an SSH key pair, you must have the private key.

        1. Log on to the ECS console.
        2. Click **Create SSH Key Pair**.
        3. Click **OK**.
        """
    plan = analyze(_procedure(tmp_path, text))
    assert plan.requirements == [] and list(plan.creates) == ["key_pair"]


def test_other_clouds_get_no_inference(tmp_path):
    text = """
        # To add an inbound rule to a security group

        1. Open the Amazon EC2 console.
        2. Select the security group that you want to update and choose **Edit inbound rules**.
        """
    assert analyze(_procedure(tmp_path, text)).requirements == []


# --- measured on the example docs ----------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]


def _plans(*paths: Path) -> dict[str, object]:
    plans = {}
    for path in paths:
        for file in sorted(path.rglob("*.md")) if path.is_dir() else [path]:
            for procedure in parse_file(file).procedures:
                plans[procedure.id] = analyze(procedure)
    return plans


@pytest.fixture(scope="module")
def example_plans():
    return _plans(REPO / "examples" / "docs", REPO / "examples" / "drifted")


@pytest.mark.parametrize(("procedure_id", "needs", "creates"), [
    ("vpc-create-vswitch", {"vpc": 1}, {"vswitch"}),  # "In the VPC list, click default-vpc"
    ("drifted-vpc-create-vpc", {}, {"vpc"}),
    ("ecs-create-instance-wizard", {"vpc": 1, "vswitch": 1, "security_group": 1}, {"ecs_instance"}),
    ("ecs-add-security-group-rule", {"vpc": 1, "security_group": 1}, set()),  # "click default-sg" in the list
    ("ecs-create-security-group", {"vpc": 1}, {"security_group"}),
    ("nat-create-internet-nat-gateway", {"vpc": 1, "vswitch": 1}, {"nat_gateway"}),
    ("rds-create-instance", {"vpc": 1, "vswitch": 1}, {"rds_instance"}),
    ("mongodb-create-replica-set", {"vpc": 1, "vswitch": 1}, {"mongodb_instance"}),
    ("drifted-alb-create", {"vpc": 1, "vswitch": 2}, {"alb"}),  # an ALB spans two zones
    ("actiontrail-create-trail", {"oss_bucket": 1}, {"actiontrail_trail"}),  # the OSS Bucket row
    ("ram-grant-permission", {"ram_user": 1}, set()),  # "Select the RAM user from the Principal list"
    ("ram-create-user", {}, {"ram_user"}),
    ("oss-create-bucket", {}, {"oss_bucket"}),  # "you must create a bucket" is the procedure itself
    ("kms-create-key", {}, {"kms_key"}),
    ("eip-apply", {}, {"eip"}),
    ("slb-create-clb-instance", {}, {"slb"}),
])
def test_examples(example_plans, procedure_id, needs, creates):
    plan = example_plans[procedure_id]
    assert _types(plan) == needs
    assert set(plan.creates) == creates


# --- measured on the real documentation corpus ---------------------------------------------------------


@pytest.fixture(scope="module")
def real_plans(request):
    from corpus_location import real_docs_root

    root = real_docs_root()
    return root, _plans(root)


ALIBABA = [
    # ECS
    ("start-or-stop-an-instance#start-an-instance", {"vpc", "vswitch", "security_group", "ecs_instance"}, set()),
    ("release-an-instance#release-an-instance-immediately", {"vpc", "vswitch", "security_group", "ecs_instance"}, set()),
    ("create-a-custom-image-from-an-instance#create-a-custom-image-from-an-instance",
     {"vpc", "vswitch", "security_group", "ecs_instance"}, {"image"}),
    ("create-a-security-group#create-a-security-group", {"vpc", "vswitch"}, {"security_group"}),  # prerequisite
    ("create-an-ssh-key-pair#create-an-ssh-key-pair", set(), {"key_pair"}),  # "to log on to an ECS instance ..."
    ("add-security-group-rules#add-security-group-rules", {"vpc", "security_group"}, set()),  # rules are no groups
    ("create-an-instance-by-using-the-wizard#step-1-complete-the-settings-in-the-basic-configurations-step",
     {"vpc", "vswitch", "security_group"}, {"ecs_instance"}),  # not the snapshot policy nor the data disk
    ("使用向导创建实例#步骤1-完成基础配置", {"vpc", "vswitch", "security_group"}, {"ecs_instance"}),
    ("使用向导创建实例#步骤2-完成网络和安全组配置", {"vpc", "vswitch", "security_group"}, {"ecs_instance"}),
    ("quick-start-for-linux-instances#step-2-add-security-group-rules",
     {"vpc", "vswitch", "security_group", "ecs_instance"}, set()),  # "Click the instance ID"
    ("enable-or-disable-release-protection-for-ecs-instances#check-whether-release-protection-is-enabled",
     {"vpc", "vswitch", "security_group", "ecs_instance"}, set()),
    ("创建安全组#创建安全组", {"vpc", "vswitch"}, {"security_group"}),  # 请确认您已经有可用的专有网络VPC和交换机
    ("添加安全组规则#添加安全组规则", {"vpc", "security_group"}, set()),  # 找到目标安全组
    # EIP, NAT
    ("associate-an-eip-with-an-ecs-instance#associate-an-eip-with-an-ecs-instance",
     {"vpc", "vswitch", "security_group", "ecs_instance", "eip"}, set()),
    ("apply-for-eips#apply-fornew-eips", set(), {"eip"}),
    ("create-nat-gateways#create-a-nat-gateway", {"vpc", "vswitch"}, {"nat_gateway"}),  # not its service-linked role
    ("create-nat-gateways#associate-eips", {"vpc", "vswitch", "nat_gateway", "eip"}, set()),
    ("create-nat-gateways#delete-a-nat-gateway", {"vpc", "vswitch", "nat_gateway"}, set()),
    # OSS
    ("configure-bucket-tagging#configure-bucket-tagging", {"oss_bucket"}, set()),
    ("create-buckets#create-buckets", set(), {"oss_bucket"}),
    ("创建存储空间#创建存储空间", set(), {"oss_bucket"}),  # the definition of a bucket names objects: not needed
    # RAM, ActionTrail
    ("create-an-accesskey-pair-for-a-ram-user#create-an-accesskey-pair-for-a-ram-user", {"ram_user"}, {"ram_access_key"}),
    ("grant-permissions-to-a-ram-user#method-1-grant-permissions-to-a-ram-user-on-the-user-page", {"ram_user"}, set()),
    ("create-a-ram-user#create-a-ram-user", set(), {"ram_user"}),
    ("authorize-ram-users-to-use-actiontrail#authorize-ram-users-to-use-actiontrail", set(), {"ram_user", "ram_policy"}),
    ("view-ram-operation-events-in-the-actiontrail-console#view-ram-operation-events-in-the-actiontrail-console",
     set(), set()),
    # SLB, ALB
    ("add-an-http-listener#step-1-configure-the-listener", {"slb"}, {"slb_listener"}),
    ("add-an-http-listener#step-3-add-backend-servers", {"slb", "vpc", "vswitch", "security_group", "ecs_instance"}, set()),
    ("create-an-slb-instance#create-an-slb-instance", set(), {"slb"}),  # "listener protocol ... are known"
    ("alb-创建实例#步骤一-创建应用型负载均衡实例", {"vpc", "vswitch"}, {"alb"}),
    ("alb-创建实例#步骤二-创建监听", {"vpc", "vswitch", "alb"}, {"alb_listener"}),  # 单击目标实例操作列下的创建监听
    # VPC, MongoDB
    ("create-an-ecs-instance-in-an-ipv6-vpc#step-1-create-a-vpc-and-vswitch", set(), {"vpc", "vswitch"}),
    ("create-an-ecs-instance-in-an-ipv6-vpc#step-2-create-and-configure-an-ecs-instance",
     {"vpc", "vswitch", "security_group"}, {"ecs_instance"}),
    ("mongodb-create-a-replica-set-instance#create-a-replica-set-instance", {"vpc", "vswitch"}, {"mongodb_instance"}),
    ("mongodb-create-a-replica-set-instance#view-the-created-instance", {"vpc", "vswitch", "mongodb_instance"}, set()),
]


@pytest.mark.parametrize(("procedure_id", "needs", "creates"), ALIBABA, ids=[c[0].split("#")[-1][:40] for c in ALIBABA])
def test_alibaba_docs(real_plans, procedure_id, needs, creates):
    _, plans = real_plans
    plan = plans[procedure_id]
    assert set(_types(plan)) == needs
    assert set(plan.creates) == creates


def test_alb_listener_needs_the_two_vswitches_of_its_load_balancer(real_plans):
    _, plans = real_plans
    assert _types(plans["alb-创建实例#步骤二-创建监听"])["vswitch"] == 2


def test_other_clouds_docs_need_nothing(real_plans):
    root, plans = real_plans
    foreign = [procedure_id for procedure_id, plan in plans.items() if plan.requirements]
    alibaba = {p.id for f in (root / "alibaba_AlibabaCloudDocs").rglob("*.md") for p in parse_file(f).procedures}
    assert set(foreign) <= alibaba, sorted(set(foreign) - alibaba)


def test_an_ipv6_gateway_the_step_acts_on_is_required(tmp_path):
    text = """
        # Purchase an IPv6 Internet bandwidth plan

        1. Log on to the VPC console.
        2. On the IPv6 Gateway page, find the IPv6 gateway and click **Manage** in the **Actions** column.
        """
    plan = analyze(_procedure(tmp_path, text))
    assert _types(plan) == {"vpc": 1, "ipv6_gateway": 1}
    gateway = next(r for r in plan.requirements if r.type == "ipv6_gateway")
    assert gateway.evidence[0].kind == "step" and gateway.evidence[0].line == 4


def test_a_resource_the_doc_names_in_a_list_is_provisioned_under_that_name(tmp_path):
    procedure = _procedure(tmp_path, """
        # Create a vSwitch

        1. In the VPC list, click **default-vpc**.
        2. On the VPC details page, click **Create VSwitch**.
    """)
    (vpc,) = [r for r in resolve_meta(procedure) if r.type == "vpc"]
    assert vpc.name == "default-vpc" and vpc.source == "inferred"
    named = make_task(procedure, suffix="ab12cd")
    assert [r.name for r in resolve_meta(named) if r.type == "vpc"] == ["default-vpc"]  # no suffix: the doc's name
    control = _procedure(tmp_path, """
        # Create a vSwitch

        1. In the VPC list, click **Manage**.
    """, "control.md")
    assert [r.name for r in resolve_meta(make_task(control, suffix="ab12cd")) if r.type == "vpc"] == \
        ["docverify-vpc-ab12cd"]  # a control's label is no name
    bucket = _procedure(tmp_path, """
        # Upload a file

        1. In the bucket list, click **site-images-01**.
    """, "bucket.md")
    names = [r.name for r in resolve_meta(make_task(bucket, suffix="ab12cd")) if r.type == "oss_bucket"]
    assert names and names[0] != "site-images-01"  # bucket names are global: never the doc's


def test_an_alb_server_group_the_prerequisites_and_steps_name_is_provisioned_in_the_shared_vpc(tmp_path):
    text = """
        # Add an HTTP listener to an ALB instance

        ## Prerequisites

        - An ALB instance is created.
        - A server group is created in the VPC of the ALB instance.

        ## Procedure

        1. Log on to the ALB console.
        2. On the **Instances** page, find the ALB instance and click **Create Listener** in the **Actions** column.
        3. On the **Server Group** step, select the server group from the **Server Group** drop-down list and click **Next**.
        """
    plan = analyze(_procedure(tmp_path, text))
    assert _types(plan) == {"vpc": 1, "vswitch": 2, "alb": 1, "alb_server_group": 1}
    group = next(r for r in plan.requirements if r.type == "alb_server_group")
    assert group.dependencies == ["vpc"] and group.evidence[0].kind == "prerequisite"


def test_creating_a_server_group_needs_its_vpc_and_deleting_one_needs_it(tmp_path):
    create = analyze(_procedure(tmp_path, """
        # Create a server group

        1. Log on to the ALB console.
        2. On the **Server Groups** page, click **Create Server Group**.
        3. Click **Create**.
        """, "create.md"))
    assert _types(create) == {"vpc": 1} and list(create.creates) == ["alb_server_group"]
    delete = analyze(_procedure(tmp_path, """
        # Delete a server group

        1. Log on to the ALB console.
        2. On the **Server Groups** page, find the server group that you want to delete and click **Delete**.
        3. Click **OK**.
        """, "delete.md"))
    assert _types(delete) == {"vpc": 1, "alb_server_group": 1}
