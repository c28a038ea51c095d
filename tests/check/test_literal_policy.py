"""The literal policy, turn by turn, on hand-written accessibility snapshots (no browser)."""

from __future__ import annotations

import asyncio
import textwrap

import pytest

from docverify.check.verdict import FindingKind
from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.follow import Delegate
from docverify.parse.parser import parse_text
from docverify.report.trajectory import StepStatus
from docverify.task import make_task
from docverify_literal.policy import LiteralPolicy


def episode(markdown: str):
    document = parse_text(textwrap.dedent(markdown), "doc.md")
    assert document.procedures, document.diagnostics
    task = make_task(document.procedures[0], suffix="abc123", default_region="cn-hangzhou")
    return LiteralPolicy().start(task)


def page(snapshot: str, error: str | None = None) -> Observation:
    return Observation("http://console.test/x", "Console", textwrap.dedent(snapshot).strip("\n"), error)


LOOP = asyncio.new_event_loop()  # one loop, as in a run: the episode is an async generator


def act(ep, observation: Observation) -> Action:
    return LOOP.run_until_complete(ep.next_action(observation))


HOME = page('''
    - banner [ref=e1]:
      - link "OSS console" [ref=e2]
      - link "ECS console" [ref=e3]
    - main [ref=e4]:
      - heading "Console" [level=1] [ref=e5]
''')

BUCKETS = page('''
    - navigation "Object Storage Service navigation" [ref=e10]:
      - link "Buckets" [ref=e11]
    - main [ref=e12]:
      - button "Create Bucket" [ref=e13]
''')

CREATE = page('''
    - main [ref=e12]:
      - dialog "Create Bucket" [ref=e20]:
        - textbox "Bucket Name" [ref=e21]
        - status "Region" [ref=e22]: China (Hangzhou)
        - group "Storage Class" [ref=e23]:
          - radio "Standard" [checked] [ref=e24]
          - radio "IA" [ref=e25]
        - group "ACL" [ref=e26]:
          - radio "Private" [checked] [ref=e27]
          - radio "Public Read" [ref=e28]
        - combobox "Encryption Method" [ref=e29]:
          - option "None" [selected]
          - option "OSS-Managed"
        - switch "Versioning" [ref=e30]
        - button "OK" [ref=e31]
        - button "Cancel" [ref=e32]
''')

BUCKET_DOC = """
    # Create a bucket

    1. Log on to the OSS console.
    2. In the left-side navigation pane, click **Buckets**. Click **Create Bucket**.
    3. Configure the parameters described in the following table.

        |Parameter|Value|Description|
        |---|---|---|
        |**Bucket Name**|`docs-<suffix>`|Unique name.|
        |**Region**|China \\(Hangzhou\\)|Shown only.|
        |**Storage Class**|**IA**|The class.|
        |**Access Control List \\(ACL\\)**|**Public Read**|Who reads.|
        |**Encryption Method**|**OSS-Managed**|Server side.|

    4. Turn on **Versioning**.
    5. Click **OK**.
"""


def test_follows_a_procedure_and_flags_a_renamed_field():
    ep = episode(BUCKET_DOC)
    first = act(ep, HOME)
    assert (first.kind, first.ref, first.step) == (ActionKind.CLICK, "e2", "1")
    assert act(ep, BUCKETS).ref == "e11"
    assert act(ep, BUCKETS).ref == "e13"
    fill = act(ep, CREATE)
    assert (fill.kind, fill.ref, fill.value) == (ActionKind.FILL, "e21", "docs-abc123")
    radio = act(ep, CREATE)
    assert (radio.kind, radio.ref) == (ActionKind.CHECK, "e25")  # Region is shown, not entered
    flag = act(ep, CREATE)
    assert flag.kind is ActionKind.FLAG_STEP
    assert flag.finding.kind is FindingKind.LABEL_CHANGED
    assert (flag.finding.expected, flag.finding.observed) == ("Access Control List (ACL)", "ACL")
    assert flag.finding.line == 13  # the table row's own line
    assert act(ep, CREATE).ref == "e28"
    select = act(ep, CREATE)
    assert (select.kind, select.ref, select.value) == (ActionKind.SELECT, "e29", "OSS-Managed")
    toggle = act(ep, CREATE)
    assert (toggle.kind, toggle.ref) == (ActionKind.CHECK, "e30")
    assert act(ep, CREATE).ref == "e31"
    done = act(ep, BUCKETS)
    assert (done.kind, done.status) == (ActionKind.DONE, "success")
    assert ep.step_status["3"] is StepStatus.FOLLOWED


def test_a_close_label_is_followed_and_flagged():
    ep = episode("""
        # Create an instance

        1. Click **Create Instance**.
    """)
    renamed = page('- button "Create ECS Instance" [ref=e5]\n- button "Refresh" [ref=e6]')
    flag = act(ep, renamed)
    assert flag.finding.kind is FindingKind.LABEL_CHANGED
    assert flag.finding.message == "step 1: label changed: doc: Create Instance; console: Create ECS Instance"
    assert act(ep, renamed).ref == "e5"


def test_a_missing_label_is_element_not_found_with_the_nearest_names_and_stops():
    ep = episode("""
        # Bind

        1. Click **Bind Resource**.
        2. Click **OK**.
    """)
    shown = page('- button "Connect to Instance" [ref=e5]\n- button "Release" [ref=e6]')
    flag = act(ep, shown)
    assert flag.finding.kind is FindingKind.ELEMENT_NOT_FOUND
    assert "Connect to Instance" in flag.finding.candidates
    done = act(ep, shown)
    assert (done.kind, done.status) == (ActionKind.DONE, "blocked")
    assert "Bind Resource" in done.message


def test_a_moved_menu_is_flagged_and_followed():
    ep = episode("""
        # Security groups

        1. In the left-side navigation pane, choose **Network & Security** \\> **Security Groups**.
    """)
    nav = page('''
        - navigation "ECS" [ref=e1]:
          - button "Network" [expanded] [ref=e2]
          - link "Security Groups" [ref=e3]
    ''')
    flag = act(ep, nav)
    assert flag.finding.kind is FindingKind.MENU_MOVED
    assert flag.finding.expected == "Network & Security > Security Groups"
    assert act(ep, nav).ref == "e3"


def test_a_group_title_that_is_shown_but_not_clickable_is_no_finding():
    ep = episode("""
        # Security groups

        1. In the left-side navigation pane, choose **Network & Security** \\> **Security Groups**.
    """)
    nav = page('''
        - navigation "ECS" [ref=e1]:
          - heading "Network & Security" [level=3] [ref=e2]
          - link "Security Groups" [ref=e3]
    ''')
    assert act(ep, nav).ref == "e3"


def test_an_error_shown_after_submit_is_a_missing_step_or_rejected_value():
    ep = episode("""
        # Create a key

        1. Click **Create Key**.
    """)
    assert act(ep, page('- button "Create Key" [ref=e1]')).ref == "e1"
    after = page('''
        - dialog "Create Key" [ref=e2]:
          - alert [ref=e3]: KMS Instance ID is required.
          - button "OK" [ref=e4]
    ''')
    flag = act(ep, after)
    assert flag.finding.kind is FindingKind.MISSING_STEP
    assert flag.finding.observed == "KMS Instance ID is required."


def test_an_error_in_a_full_page_form_after_submit_is_found_too():
    """A create page (no dialog): the error sits in an unnamed main and form."""
    ep = episode("""
        # Create a VPC

        1. Click **OK**.
    """)
    assert act(ep, page('''
        - main [ref=e1]:
          - form [ref=e2]:
            - button "OK" [ref=e3]
    ''')).ref == "e3"
    flag = act(ep, page('''
        - main [ref=e1]:
          - form [ref=e2]:
            - alert [ref=e4]: "InvalidCidrBlock.Malformed: The CIDR block is invalid."
            - button "OK" [ref=e3]
    '''))
    assert flag.finding.kind is FindingKind.VALUE_REJECTED
    assert flag.finding.observed == "InvalidCidrBlock.Malformed: The CIDR block is invalid."


def test_a_value_not_among_the_options_is_rejected():
    ep = episode("""
        # ACL

        1. Select **Public Read/Write** from **ACL**.
    """)
    flag = act(ep, page('''
        - group "ACL" [ref=e1]:
          - radio "Private" [checked] [ref=e2]
          - radio "Public Read" [ref=e3]
    '''))
    assert flag.finding.kind is FindingKind.VALUE_REJECTED
    assert flag.finding.candidates == ["Private", "Public Read"]


def test_a_failed_action_stops_the_episode():
    ep = episode("""
        # Two clicks

        1. Click **Start**.
        2. Click **OK**.
    """)
    assert act(ep, page('- button "Start" [ref=e1]')).ref == "e1"
    done = act(ep, page('- button "OK" [ref=e2]', error="Timeout 5000ms exceeded"))
    assert (done.kind, done.status) == (ActionKind.DONE, "blocked")
    assert "Timeout" in done.message


def test_free_text_and_verify_steps_are_not_verifiable_not_drift():
    ep = episode("""
        # Think

        1. Decide which bucket you need.
        2. Check that the bucket appears in the list.
    """)
    empty = page('- main [ref=e1]')
    first, second = act(ep, empty), act(ep, empty)
    assert first.finding.kind is FindingKind.NOT_VERIFIABLE
    assert second.finding.kind is FindingKind.NOT_VERIFIABLE
    assert not first.finding.kind.is_drift
    assert act(ep, empty).status == "success"


def test_passwords_are_typed_as_secrets():
    ep = episode("""
        # Reset

        1. Enter `Sandbox-Passw0rd` in the **Logon Password** field.
    """)
    fill = act(ep, page('- textbox "Logon Password" [ref=e1]'))
    assert fill.secret and fill.value == "Sandbox-Passw0rd"
    assert "Sandbox-Passw0rd" not in fill.describe() and fill.to_dict()["value"] == "••••••"


@pytest.mark.parametrize("step", [
    "Find the instance and click **Start** in the **Actions** column.",
    "In the instance list, click **web-01**.",  # a row the doc names, in a list that is empty
    "在实例列表中，单击**web-01**。",
])
def test_an_element_missing_from_an_empty_list_is_a_missing_prerequisite_not_drift(step):
    ep = episode(f"""
        # Start an instance

        1. {step}
    """)
    empty = page('''
        - main [ref=e1]:
          - table "Instances" [ref=e2]:
            - row [ref=e3]:
              - columnheader "Instance ID/Name" [ref=e4]
          - status [ref=e5]: No data available.
    ''')
    done = act(ep, empty)
    assert (done.kind, done.status, done.environment) == (ActionKind.DONE, "blocked", True)
    assert "prerequisite missing" in done.message and "requires:" in done.message


def test_console_names_in_chinese_and_with_console_suffixes():
    ep = episode("""
        # 创建存储空间

        1. 登录OSS管理控制台。
    """)
    found = act(ep, page('- link "OSS console" [ref=e7]\n- link "Object Storage Service" [ref=e8]'))
    assert (found.kind, found.ref) == (ActionKind.CLICK, "e7")
    ep = episode("""
        # SLB

        1. Log on to the Server Load Balancer console.
    """)
    found = act(ep, page('- link "SLB console" [ref=e7]\n- link "Server Load Balancer" [ref=e8]'))
    assert (found.kind, found.ref) == (ActionKind.CLICK, "e8")  # the product name: no finding


def test_a_name_the_doc_leaves_blank_is_generated():
    ep = episode("""
        # Key pair

        1. Configure the parameters.

            |Parameter|Description|
            |---|---|
            |**Key Pair Name**|Enter a name.|

        2. Click **OK**.
    """)
    fill = act(ep, page('- textbox "Key Pair Name" [ref=e1]\n- button "OK" [ref=e2]'))
    assert (fill.kind, fill.value) == (ActionKind.FILL, "docverify-key-pair-name-abc123")



@pytest.mark.parametrize("step, control", [
    ("On the **Elastic IP Addresses** page, click **Request Custom IP**.", "a creation control, like 'Create'"),
    ("Click **Next**.", "a wizard's own button"),
    ("On the **Grants** page, click **Grant Permission**.", "a control that grants (creates a grant)"),
])
def test_a_missing_page_level_control_beside_an_empty_list_is_drift(step, control):
    """An empty list explains a missing row action, not a missing page-level control."""
    ep = episode(f"""
        # Page-level control

        1. {step}
    """)
    empty = page('''
        - main [ref=e1]:
          - table "Items" [ref=e3]:
            - row [ref=e4]:
              - columnheader "Name" [ref=e5]
          - status [ref=e6]: No data available.
    ''')
    flag = act(ep, empty)
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.kind is FindingKind.ELEMENT_NOT_FOUND, control
    assert act(ep, empty).environment is False


def test_a_field_that_holds_a_value_keeps_it_when_the_doc_only_lists_ways_to_fill_it():
    ep = episode("""
        # Create a VPC

        1. Specify the following information.

            |Parameter|Description|
            |---|---|
            |**IPv4 CIDR Block**|Use one of these methods: **Recommended CIDR Block** or **Custom CIDR Block**.|
            |**Name**|A name for the VPC.|
    """)
    name = act(ep, page('''
        - main [ref=e1]:
          - textbox "IPv4 CIDR Block" [ref=e2]: 192.168.0.0/16
          - textbox "Name" [ref=e3]
    '''))
    assert name.kind is ActionKind.FILL and name.ref == "e3"  # the CIDR block is left as it is


ECS_NAV_2026 = '''
    - navigation "Elastic Compute Service navigation" [ref=e1]:
      - group [ref=e2]:
        - generic "Network & Security" [ref=e3]
        - list [ref=e4]:
          - listitem [ref=e5]:
            - link "Key Pairs" [ref=e6]
      - group [ref=e7]:
        - generic "Network" [ref=e8]
        - list [ref=e9]:
          - listitem [ref=e10]:
            - link "Security Groups" [ref=e11]
'''


def test_a_menu_item_moved_out_of_a_group_that_still_exists_is_menu_moved_and_followed():
    ep = episode("""
        # Security groups

        1. In the left-side navigation pane, choose **Network & Security** \\> **Security Groups**.
    """)
    flag = act(ep, page(ECS_NAV_2026))
    assert flag.finding.kind is FindingKind.MENU_MOVED
    assert flag.finding.observed == "'Security Groups' is no longer under 'Network & Security'; it is under 'Network' now"
    assert flag.finding.candidates == ["Network"]
    assert act(ep, page(ECS_NAV_2026)).ref == "e11"  # and the procedure goes on


def test_a_menu_item_still_in_its_group_is_no_finding():
    ep = episode("""
        # Key pairs

        1. In the left-side navigation pane, choose **Network & Security** \\> **Key Pairs**.
    """)
    assert act(ep, page(ECS_NAV_2026)).ref == "e6"


def test_a_confirmation_added_mid_procedure_is_a_missing_step_confirmed_and_followed():
    ep = episode("""
        # Create an AccessKey

        1. Click **Create AccessKey**.
        2. Click **Download CSV File**.
    """)
    assert act(ep, page('- button "Create AccessKey" [ref=e1]')).ref == "e1"
    warning = page('''
        - main [ref=e2]:
          - dialog "Security Warning" [ref=e3]:
            - paragraph [ref=e4]: Use AccessKeys only where STS is not possible.
            - button "Cancel" [ref=e5]
            - button "Continue to use AccessKey" [ref=e6]
    ''')
    flag = act(ep, warning)
    # the step whose click made the console ask is the one the doc must follow with a new step
    assert flag.finding.kind is FindingKind.MISSING_STEP and (flag.finding.line, flag.finding.step) == (4, "1")
    assert flag.finding.observed == "the console asks to confirm 'Security Warning'"
    assert act(ep, warning).ref == "e6"  # the button that does not cancel
    assert act(ep, page('- button "Download CSV File" [ref=e7]')).ref == "e7"


def test_a_form_dialog_is_never_submitted_for_a_label_the_doc_names():
    ep = episode("""
        # Create a bucket

        1. Click **Advanced Settings**.
    """)
    flag = act(ep, page('''
        - dialog "Create Bucket" [ref=e1]:
          - textbox "Bucket Name" [ref=e2]
          - button "OK" [ref=e3]
    '''))
    assert flag.finding.kind is FindingKind.ELEMENT_NOT_FOUND and flag.finding.expected == "Advanced Settings"


def test_a_dialog_left_open_is_confirmed_and_what_the_console_says_to_it_reported():
    ep = episode("""
        # Quick add

        1. Click **Quick Add**.
    """)
    assert act(ep, page('- button "Quick Add" [ref=e1]')).ref == "e1"
    panel = page('''
        - dialog "Quick Add" [ref=e2]:
          - group "Port Range" [ref=e3]:
            - checkbox "SSH (22)" [ref=e4]
          - button "OK" [ref=e5]
          - button "Cancel" [ref=e6]
    ''')
    assert act(ep, panel).finding.kind is FindingKind.MISSING_STEP
    assert act(ep, panel).ref == "e5"
    refused = page('''
        - dialog "Quick Add" [ref=e2]:
          - group "Port Range" [ref=e3]:
            - checkbox "SSH (22)" [ref=e4]
          - alert [ref=e7]: Port Range is required.
          - button "OK" [ref=e5]
    ''')
    flag = act(ep, refused)
    assert flag.finding.kind is FindingKind.MISSING_STEP and flag.finding.observed == "Port Range is required."


class Recorder(Delegate):
    """A delegate that clicks "Associate Instance" where the doc's label is missing, lets
    a failed click go on, and keeps what it is told."""

    def __init__(self) -> None:
        self.told: list[str] = []

    def observe(self, observation: Observation) -> None:
        self.told.append(f"observe {observation.title}")

    def decided(self, action: Action) -> None:
        self.told.append(f"decided {action.kind}")

    def provisioned(self, report: str) -> None:
        self.told.append(f"provisioned {report}")

    def halts_on(self, failed: Action) -> bool:
        return False

    async def stuck(self, follower, stuck):
        yield Action(ActionKind.CLICK, ref="e5", target="button 'Associate Instance'", step=stuck.step.number)
        assert follower.observation.title == "After"  # the page the click led to
        stuck.finding.resolved_by = "delegate: clicked Associate Instance"
        yield Action(ActionKind.FLAG_STEP, finding=stuck.finding, step=stuck.step.number)

    async def unverifiable(self, follower, step, reason):
        self.told.append(f"unverifiable {step.number}")
        return
        yield


def test_a_delegate_takes_the_steps_the_literal_follower_cannot_follow():
    document = parse_text(textwrap.dedent("""
        # Bind

        1. Click **Bind Resource**.
        2. Decide which instance you need.
        3. Click **OK**.
        4. Click **Close**.
    """), "doc.md")
    delegate = Recorder()
    ep = LiteralPolicy().start(make_task(document.procedures[0], suffix="abc123"), delegate)
    ep.provisioned("created eip-1")
    shown = Observation("http://console.test/x", "Shown", '- button "Associate Instance" [ref=e5]')
    after = Observation("http://console.test/x", "After", '- button "OK" [ref=e8]\n- button "Close" [ref=e9]')
    assert act(ep, shown).ref == "e5"  # the delegate's action, not a flag that stops
    flag = act(ep, after)
    assert flag.finding.kind is FindingKind.ELEMENT_NOT_FOUND
    assert flag.finding.resolved_by == "delegate: clicked Associate Instance"
    assert act(ep, after).ref == "e8"  # step 2 went to the delegate, which did nothing; step 3 is followed
    failed = Observation("http://console.test/x", "After", after.snapshot, "Timeout 5000ms exceeded")
    assert act(ep, failed).ref == "e9"  # the delegate let the failed click go on
    assert act(ep, after).status == "success"
    assert delegate.told == [
        "provisioned created eip-1", "observe Shown", "decided click", "observe After", "decided flag_step",
        "observe After", "unverifiable 2", "decided click", "observe After", "decided click", "observe After",
        "decided done"]
