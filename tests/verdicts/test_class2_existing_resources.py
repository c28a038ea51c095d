"""Class 2: steps that act on an existing resource.

"Click the name of the bucket", "click the logon name of the RAM user", "单击实例ID",
"find the instance and click **Manage**": the step is followed on the row of the
resource the run knows (the one the procedure made, or provisioning made), not
skipped and not done on another row.
"""

from __future__ import annotations

from verdict_helpers import act, episode, page, procedure

from docverify.execute.actions import ActionKind
from docverify.parse.model import Intent


def test_the_parser_names_the_resource_a_step_acts_on():
    steps = procedure("""
        # Resources

        1. Click the name of the bucket.
        2. Click the logon name of the RAM user.
        3. Find the instance that you want to stop and choose **More** > **Stop** in the **Actions** column.
        4. 单击目标实例ID。
        5. 找到目标密钥，在**操作**列单击**禁用**。
        6. Click the ID of the target NAT gateway.
    """).steps
    first = [step.actions[0] for step in steps]
    assert [(a.intent, a.resource, a.value) for a in first[:2]] == [
        (Intent.OPEN_RESOURCE, "bucket", "name"), (Intent.OPEN_RESOURCE, "RAM user", "name")]
    assert (first[2].intent, first[2].resource, first[2].path) == (Intent.NAVIGATE, "instance", ["More", "Stop"])
    assert (first[3].intent, first[3].resource, first[3].value) == (Intent.OPEN_RESOURCE, "实例", "id")
    assert (steps[4].actions[-1].target, steps[4].actions[-1].resource) == ("禁用", "密钥")
    assert (first[5].resource, first[5].value) == ("NAT gateway", "id")


LIST = page('''
    - main [ref=m1]:
      - table "Instances" [ref=t1]:
        - rowgroup [ref=g1]:
          - row [ref=r0]:
            - columnheader "Instance ID/Name" [ref=h1]
            - columnheader "Actions" [ref=h2]
        - rowgroup [ref=g2]:
          - row [ref=r1]:
            - cell [ref=c1]:
              - link "i-bp1seeded000000001" [ref=l1]
              - link "launch-advisor" [ref=l2]
            - cell [ref=c2]:
              - link "Manage" [ref=a1]
              - button "More" [ref=b1]
          - row [ref=r2]:
            - cell [ref=c3]:
              - link "i-bp1provisioned0002" [ref=l3]
              - link "docverify-ecs-abc123" [ref=l4]
            - cell [ref=c4]:
              - link "Manage" [ref=a2]
              - button "More" [ref=b2]
''')


def test_the_provisioned_resources_row_is_the_one_acted_on():
    context = {"ecs_instance_1_id": "i-bp1provisioned0002", "ecs_instance_1_name": "docverify-ecs-abc123"}
    ep = episode("""
        # Manage an instance

        1. Find the instance and click **Manage** in the **Actions** column.
    """, context)
    click = act(ep, LIST)
    assert (click.kind, click.ref) == (ActionKind.CLICK, "a2")


def test_click_the_id_or_the_name_of_the_resource():
    context = {"ecs_instance_1_id": "i-bp1provisioned0002"}
    ep = episode("""
        # Open an instance

        1. Click the ID of the instance.
    """, context)
    assert act(ep, LIST).ref == "l3"
    ep = episode("""
        # Open an instance

        1. 单击目标实例名称。
    """, context)
    assert act(ep, LIST).ref == "l4"


def test_without_a_known_resource_the_first_row_is_taken():
    ep = episode("""
        # Open an instance

        1. Click the name of the instance.
    """)
    assert act(ep, LIST).ref == "l2"


def test_an_empty_list_is_a_missing_prerequisite_not_drift():
    empty = page('''
        - main [ref=m1]:
          - table "Buckets" [ref=t1]:
            - rowgroup [ref=g1]:
              - row [ref=r0]:
                - columnheader "Bucket Name" [ref=h1]
          - status [ref=s1]: No data available.
    ''')
    ep = episode("""
        # Configure a bucket

        1. Click the name of the bucket.
    """)
    done = act(ep, empty)
    assert (done.kind, done.status, done.environment) == (ActionKind.DONE, "blocked", True)
    assert "prerequisite missing" in done.message


def test_a_missing_button_with_no_row_named_is_drift_whatever_the_lists_hold():
    empty = page('''
        - main [ref=m1]:
          - button "Create Bucket" [ref=b1]
          - status [ref=s1]: No data available.
    ''')
    ep = episode("""
        # Configure a bucket

        1. Click **Static Pages**.
    """)
    flag = act(ep, empty)
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.kind.value == "element_not_found"


def test_a_field_that_asks_for_an_existing_resource_gets_the_runs_one():
    from docverify_literal.rows import known_for_field

    context = {"eip_1_id": "eip-1", "eip_1_ip_address": "47.1.2.3", "nat_gateway_1_id": "ngw-1",
               "ecs_instance_1_private_ip": "172.16.0.5", "vswitch_1_id": "vsw-1"}
    assert known_for_field(context, "Select Public IP Address",
                           "Enter the EIP that is associated with the NAT gateway.") == "47.1.2.3"
    assert known_for_field(context, "选择私网IP地址", "输入需要对外提供服务的ECS实例的私网IP地址。") == "172.16.0.5"
    assert known_for_field(context, "VSwitch ID", "Enter the ID of the vSwitch.") == "vsw-1"
    assert known_for_field(context, "Description", "Enter a description for the VPC.") is None


def test_provisioning_outputs_beyond_ids_and_names_reach_the_task_context():
    from docverify.provision.meta import Requirement, close
    from docverify_terraform.stack import render_stack

    stack = render_stack(close([Requirement(type="eip")]), "sandbox", suffix="ab12cd")
    assert stack.context({"eip_1_id": "eip-1", "eip_1_ip_address": "47.1.2.3"})["eip_1_ip_address"] == "47.1.2.3"


def test_a_row_named_by_what_the_reader_wants_to_do_with_it():
    step = procedure("""
        # Events

        1. Click the plus sign to the left of the event that you want to query and click **Event Detail**.
        2. Enter the name of the bucket that you want to create and click **OK**.
    """).steps
    assert [(a.target, a.resource) for a in step[0].actions if a.target] == [("Event Detail", "event")]
    assert all(a.resource is None for a in step[1].actions)  # a resource to create is no row
