"""The safety rules before every page action (docverify/execute/guard.py), on hand-written
accessibility snapshots and parsed docs (no browser): what an action does to the console
(a dry run stops before the first change) and whose resource a destructive one acts on
(the protection refuses what the run did not create). End to end on the sandbox:
tests/check/test_dry_run.py and tests/check/test_protection.py."""

from __future__ import annotations

import textwrap

import pytest

from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.guard import Effect, Guard, Stopped, followed_before, judge, owned_outputs
from docverify.parse.parser import parse_text

SUFFIX = "k3x9q2"


def procedure(markdown: str):
    document = parse_text(textwrap.dedent(markdown), "docs/doc.md")
    assert document.procedures, document.diagnostics
    return document.procedures[0]


def page(snapshot: str, url: str = "http://console.test/console/vpc/eip") -> Observation:
    return Observation(url, "Console", textwrap.dedent(snapshot).strip("\n"))


def click(ref: str, step: str | None = None, kind: ActionKind = ActionKind.CLICK, **more) -> Action:
    return Action(kind, ref=ref, step=step, target=f"element {ref}", **more)


CREATE_AND_FILL = """\
    # Create a bucket

    1. Log on to the OSS console.
    2. Click **Create Bucket**.
    3. In the Create Bucket panel, enter `logs-<suffix>` in the **Bucket Name** field.
    4. Click **OK**.
"""
CREATE_ALONE = """\
    # Create the default VPC

    1. Log on to the VPC console.
    2. Click **Create Default VPC**.
    3. Check that the VPC appears in the list.
"""
LIST = page('''
    - navigation "Object Storage Service navigation" [ref=e1]:
      - link "Buckets" [ref=e2]
      - link "Delete Protection" [ref=e3]
    - main [ref=e4]:
      - heading "Buckets" [level=1] [ref=e5]
      - button "Create Bucket" [ref=e6]
      - button "Create Default VPC" [ref=e7]
      - tab "Overview" [ref=e8]
      - search [ref=e9]:
        - searchbox "Bucket Name" [ref=e10]
      - textbox "Description" [ref=e11]
      - button "Reset" [ref=e12]
      - button "Next: Networking" [ref=e13]
''')
DIALOG = page('''
    - main [ref=e1]:
      - heading "Buckets" [level=1] [ref=e2]
    - dialog "Create Bucket" [ref=e3]:
      - textbox "Bucket Name" [ref=e4]
      - checkbox "Versioning" [ref=e5]
      - button "OK" [ref=e6]
      - button "Cancel" [ref=e7]
''')


def test_going_somewhere_and_filling_in_change_nothing():
    doc = procedure(CREATE_AND_FILL)
    for action in (Action(ActionKind.GOTO, value="/console/oss"), click("e2", "1"), click("e8"),
                   Action(ActionKind.FILL, ref="e11", value="x"), Action(ActionKind.SELECT, ref="e11", value="y"),
                   Action(ActionKind.SCROLL, value="down"), click("e12"), click("e13"),
                   click("e10", kind=ActionKind.PRESS, value="Enter")):
        assert judge(action, LIST, doc).effect is Effect.NONE, action
    assert judge(click("e3"), LIST, doc).effect is Effect.NONE  # a link of the navigation only goes somewhere
    # Enter in a form's text field submits it; a form's own check box is its input
    assert judge(click("e11", kind=ActionKind.PRESS, value="Enter"), LIST, doc).effect is Effect.CHANGES
    assert judge(click("e5", "3", kind=ActionKind.CHECK), DIALOG, doc).effect is Effect.NONE
    assert judge(click("e7", "4"), DIALOG, doc).effect is Effect.NONE  # Cancel


def test_a_control_that_opens_the_form_the_next_steps_fill_changes_nothing_one_alone_acts():
    opens = judge(click("e6", "2"), LIST, procedure(CREATE_AND_FILL))
    assert opens.effect is Effect.NONE
    acts = judge(click("e7", "2"), LIST, procedure(CREATE_ALONE))
    assert acts.effect is Effect.CHANGES and acts.why == "acts by itself: no step after it fills in a form"
    assert acts.line == 4 and acts.step is not None and acts.step.number == "2"


def test_the_dialogs_ok_submits_it_on_the_doc_line_of_the_step():
    judged = judge(click("e6", "4"), DIALOG, procedure(CREATE_AND_FILL))
    assert judged.effect is Effect.CHANGES and judged.why == "submits the dialog 'Create Bucket'"
    assert judged.line == 6


ROW_MENU = page('''
    - main [ref=e1]:
      - heading "Elastic IP Addresses" [level=1] [ref=e2]
      - table "Elastic IP Addresses" [ref=e3]:
        - rowgroup [ref=e4]:
          - row [ref=e5]:
            - columnheader "Instance ID/Name" [ref=e6]
        - rowgroup [ref=e7]:
          - row [ref=e8]:
            - cell [ref=e9]:
              - link "eip-bp1foreign000000001" [ref=e10]
              - link "team-eip" [ref=e11]
            - cell "Available" [ref=e12]
            - cell [ref=e13]:
              - button "More" [ref=e14]
              - menu "More" [ref=e15]:
                - menuitem "Release" [ref=e16]
                - menuitem "Modify Bandwidth" [ref=e17]
          - row [ref=e18]:
            - cell [ref=e19]:
              - link "eip-bp1made00000000002" [ref=e20]
              - link "docverify-eip-k3x9q2" [ref=e21]
            - cell [ref=e22]:
              - button "Unbind" [ref=e23]
''')
RELEASE = """\
    # Release an EIP

    1. Log on to the Elastic IP Address console.
    2. Find the EIP and choose **More** > **Release** in the **Actions** column.
    3. In the message that appears, click **OK**.
"""


def test_a_rows_release_destroys_whatever_follows_it():
    doc = procedure(RELEASE)
    judged = judge(click("e16", "2"), ROW_MENU, doc)
    assert judged.effect is Effect.DESTROYS and judged.why == "a destructive control" and judged.line == 4
    assert judge(click("e14", "2"), ROW_MENU, doc).effect is Effect.NONE  # opening the row's menu
    assert judge(click("e23"), ROW_MENU, doc).effect is Effect.DESTROYS
    confirm = page('''
        - dialog "Release EIP" [ref=e1]:
          - paragraph "The EIP is released at once." [ref=e2]
          - button "OK" [ref=e3]
    ''')
    assert judge(click("e3", "3"), confirm, doc).why == "confirms the dialog 'Release EIP'"
    assert judge(click("e3", "3"), confirm, doc).effect is Effect.DESTROYS


def test_labels_in_chinese_and_labels_that_only_look_destructive():
    doc = procedure("""\
        # 创建Bucket

        1. 登录OSS管理控制台。
        2. 单击**创建Bucket**。
        3. 在**Bucket名称**中输入`logs`。
        4. 单击**确定**。
    """)
    snapshot = page('''
        - main [ref=e1]:
          - button "创建Bucket" [ref=e2]
          - button "重置" [ref=e3]
          - button "重置实例密码" [ref=e4]
          - dialog "创建Bucket" [ref=e5]:
            - button "确定" [ref=e6]
    ''')
    assert judge(click("e2", "2"), snapshot, doc).effect is Effect.NONE
    assert judge(click("e3"), snapshot, doc).effect is Effect.NONE  # the filter bar's reset
    assert judge(click("e4"), snapshot, doc).effect is Effect.DESTROYS
    assert judge(click("e6", "4"), snapshot, doc).effect is Effect.CHANGES


SWITCH = page('''
    - main [ref=e1]:
      - heading "logs-bucket" [level=1] [ref=e2]
      - switch "Versioning" [checked] [ref=e3]
      - switch "Logging" [ref=e4]
''')


def test_a_switch_outside_a_form_acts_unless_the_doc_saves_it_later():
    alone = procedure("""\
        # Turn versioning off

        1. Log on to the OSS console.
        2. Turn off **Versioning**.
    """)
    off = judge(click("e3", "2", kind=ActionKind.UNCHECK), SWITCH, alone)
    assert off.effect is Effect.DESTROYS and off.why == "turns 'Versioning' off, outside any form (at once)"
    assert judge(click("e4", "2", kind=ActionKind.CHECK), SWITCH, alone).effect is Effect.CHANGES
    saved = procedure("""\
        # Turn logging on

        1. Log on to the OSS console.
        2. Turn on **Logging**.
        3. Click **Save**.
    """)
    assert judge(click("e4", "2", kind=ActionKind.CHECK), SWITCH, saved).effect is Effect.NONE


def test_a_dry_run_stops_before_the_first_change_with_its_step_and_line():
    doc = procedure(CREATE_AND_FILL)
    guard = Guard(doc, dry_run=True, suffix=SUFFIX)
    assert guard.before(click("e6", "2"), LIST) is None
    stopped = guard.before(click("e6", "4"), DIALOG)
    assert stopped is not None and stopped.by == "dry_run"
    assert (stopped.step, stopped.line, stopped.action) == ("4", 6, "click element e6")
    assert stopped.effect == "submits the dialog 'Create Bucket'" and stopped.resource is None


def test_the_protection_refuses_what_the_run_did_not_create():
    guard = Guard(procedure(RELEASE), protect=True, suffix=SUFFIX, setting="console.aliyun.protect_unowned")
    stopped = guard.before(click("e16", "2"), ROW_MENU)
    assert stopped is not None and stopped.by == "protection"
    assert stopped.resource == "the list row 'eip-bp1foreign000000001 · team-eip · Available'"
    reason = guard.refusal(stopped, "docs/doc.md")
    assert reason.startswith("refused at step 2 (docs/doc.md:4): click element e16 (a destructive control) acts on "
                             "the list row 'eip-bp1foreign000000001")
    assert "which docverify did not create" in reason and "`requires:`" in reason
    assert "[console.aliyun] protect_unowned = false (-O console.aliyun.protect_unowned=false)" in reason
    # what the procedure's own steps made carries the run's suffix: its Unbind is taken
    assert guard.before(click("e23", "2"), ROW_MENU) is None
    # what provisioning made for the procedure, by its ID
    provisioned = Guard(procedure(RELEASE), protect=True, suffix=SUFFIX,
                        owned=owned_outputs({"eip_1_id": "eip-bp1foreign000000001", "eip_1_region": "cn-hangzhou"}))
    assert provisioned.before(click("e16", "2"), ROW_MENU) is None
    # the protection is the console's option: off, nothing is refused; nor is what only changes
    assert Guard(procedure(RELEASE), suffix=SUFFIX).before(click("e16", "2"), ROW_MENU) is None
    assert guard.before(click("e17", "2"), ROW_MENU) is None


def test_a_destructive_control_off_the_list_acts_on_the_row_acted_in_before_and_the_page():
    doc = procedure("""\
        # Delete a bucket

        1. Log on to the OSS console.
        2. Click the name of the bucket.
        3. On the bucket details page, click **Delete Bucket**.
    """)
    listing = page('''
        - main [ref=e1]:
          - table "Buckets" [ref=e2]:
            - row [ref=e3]:
              - cell [ref=e4]:
                - link "team-logs" [ref=e5]
    ''', "http://console.test/console/oss/bucket")
    detail = page('''
        - main [ref=e1]:
          - heading "team-logs" [level=1] [ref=e2]
          - button "Delete Bucket" [ref=e3]
    ''', "http://console.test/console/oss/bucket/team-logs?tab=overview")
    guard = Guard(doc, protect=True, suffix=SUFFIX)
    assert guard.before(click("e5", "2"), listing) is None
    stopped = guard.before(click("e3", "3"), detail)
    assert stopped is not None and stopped.resource == "the list row 'team-logs' (acted in before)"
    # a page reached without a row: the page itself is the resource
    alone = Guard(doc, protect=True, suffix=SUFFIX).before(click("e3", "3"), detail)
    assert alone is not None and alone.resource == "the resource of the page 'team-logs' (/console/oss/bucket/team-logs)"
    # a child on the page of a resource the run made belongs to it (a rule of its security group)
    owned = Guard(doc, protect=True, suffix=SUFFIX, owned=["sg-bp1made0000001"])
    rules = page('''
        - main [ref=e1]:
          - heading "web-sg" [level=1] [ref=e2]
          - table "Rules" [ref=e3]:
            - row [ref=e4]:
              - cell "8080/8080" [ref=e5]
              - cell [ref=e6]:
                - button "Delete" [ref=e7]
    ''', "http://console.test/console/ecs/security_group/sg-bp1made0000001")
    assert owned.before(click("e7", "3"), rules) is None
    # a search typed into the address is no resource of the page
    searched = page(rules.snapshot, f"http://console.test/console/ecs/security_group?q=web-{SUFFIX}")
    assert Guard(doc, protect=True, suffix=SUFFIX).before(click("e7", "3"), searched) is not None


def test_only_names_and_ids_of_the_outputs_are_owned():
    outputs = {"vpc_1_id": "vpc-bp1abc", "vpc_1_name": "web-vpc-k3x9q2", "vpc_1_cidr_block": "10.0.0.0/8",
               "region": "cn-hangzhou", "eip_1_ip_address": "47.1.2.3"}
    assert owned_outputs(outputs) == ["vpc-bp1abc", "web-vpc-k3x9q2"]


@pytest.mark.parametrize("stop, expected", [
    ("4", "steps 1-3 followed as written"),
    ("2", "step 1 followed as written"),
    ("1", "it is the first step"),
    ("6", "steps 1-3, 5 followed as written; step 4 skipped"),
    (None, "steps 1-3, 5-6 followed as written; step 4 skipped"),
])
def test_what_was_followed_before_the_stop(stop, expected):
    statuses = [("1", "followed"), ("2", "followed"), ("3", "followed"), ("4", "skipped"), ("5", "followed"),
                ("6", "followed")]
    assert followed_before(statuses, stop) == expected


def test_the_reason_of_a_dry_run_says_where_it_stopped_or_why_it_ended():
    from docverify.report.trajectory import StepOutcome, StepStatus
    from docverify.run.runner import Outcome, Runner
    from docverify.task import make_task

    task = make_task(procedure(CREATE_AND_FILL), suffix=SUFFIX)
    steps = [StepOutcome(s.number, s.line, s.text,
                         StepStatus.FOLLOWED if int(s.number) < 4 else StepStatus.NOT_REACHED)
             for s in task.procedure.steps]
    stopped = Guard(task.procedure, dry_run=True).before(click("e6", "4"), DIALOG)
    reason = Runner.dry_run_reason(task, Outcome(stopped=stopped), steps)
    assert reason == ("dry run: stopped before step 4 at docs/doc.md:6 (click element e6: submits the dialog "
                      "'Create Bucket'); steps 1-3 followed as written")
    # stopped in a part of the doc run first ("Step 1: ..." before "Step 2: ..."): numbered as that part writes it
    task.procedure.lead_in = ["create-a-bucket"]
    lead = Stopped("dry_run", "click button 'OK'", "submits the page's form", "p1.4", 6)
    assert Runner.dry_run_reason(task, Outcome(stopped=lead), []) == (
        "dry run: stopped before step 4 at docs/doc.md:6 (click button 'OK': submits the page's form) in the part "
        "it goes on from, 'create-a-bucket'; its own steps were not reached")
    # nothing changed state on the way: every step followed, and no audit log read
    done = Action(ActionKind.DONE, status="success", message="every step followed")
    assert Runner.dry_run_reason(task, Outcome(done=done), steps).startswith(
        "dry run: every step followed as written, and none changes the console's state")


def test_a_control_the_doc_confirms_with_changes_state_another_in_that_step_does_not():
    doc = procedure("""\
        # Enable the feature

        1. Log on to the OSS console.
        2. In the message that appears, click **Continue**.
    """)
    snapshot = page('''
        - main [ref=e1]:
          - button "Continue" [ref=e2]
          - link "logs-bucket" [ref=e3]
    ''')
    judged = judge(click("e2", "2"), snapshot, doc)
    assert judged.effect is Effect.CHANGES and judged.why == "the doc's step confirms with it" and judged.line == 4
    assert judge(click("e3", "2"), snapshot, doc).effect is Effect.NONE
