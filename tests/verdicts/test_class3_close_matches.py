"""Class 3: close matches that follow the wrong element.

"EIP console" is not "ECS console", "Instance Status" is not "Instance Settings",
"NAT Gateway" (a menu item) is not "NAT Gateway console" (a product link), "创建" is
not "创建云盘". A close match must read as the same control renamed, be unambiguous,
and sit where the step points; otherwise it is a finding with candidates.
"""

from __future__ import annotations

import pytest
from verdict_helpers import act, episode, page

from docverify.check.verdict import FindingKind
from docverify.execute.actions import ActionKind
from docverify.execute.locate import locate, parse_snapshot, renamed


@pytest.mark.parametrize(("doc", "console"), [
    ("Create Instance", "Create ECS Instance"), ("Create EIP", "Apply for EIP"),
    ("Bind Resource", "Associate with Resource"), ("Create Trail", "Create Trail Now"),
    ("SSH Key Pairs", "Key Pairs"), ("Listening Port", "Listener Port"), ("Event Detail Query", "Event Query"),
    ("Logon Credentials", "Logon Credential"), ("Add Rule", "Add Security Group Rule"), ("创建实例", "创建ECS实例"),
    ("Change Release Protection Setting", "Enable Release Protection"), ("修改释放保护设置", "开启释放保护"),
])
def test_renamed_controls(doc, console):
    assert renamed(doc, console)


@pytest.mark.parametrize(("doc", "console"), [
    ("EIP console", "ECS console"), ("Instance Status", "Instance Settings"), ("NAT Gateway", "NAT Gateway console"),
    ("创建", "创建云盘"), ("Create", "Create Disk"), ("Network & Security", "Security Groups"),
    ("Create Instance", "Delete Snapshot"), ("Start", "Stop"), ("Modify Instance", "Delete Instance"),
    ("Enable Release Protection", "Disable Release Protection"),
])
def test_different_controls(doc, console):
    assert not renamed(doc, console)


def test_several_candidates_are_no_match_but_a_finding_with_candidates():
    elements = parse_snapshot('''
- main [ref=e1]:
  - button "创建云盘" [ref=e2]
  - button "创建快照" [ref=e3]
  - button "Add Bucket Rule" [ref=e4]
  - button "Add Bucket Policy" [ref=e5]
''')
    assert locate("创建", elements).element is None
    found = locate("Add Bucket", elements)
    assert found.element is None and found.ambiguous and set(found.nearest) == {"Add Bucket Rule", "Add Bucket Policy"}
    ep = episode("""
        # Add

        1. Click **Add Bucket**.
    """)
    flag = act(ep, page('- main [ref=e1]:\n  - button "Add Bucket Rule" [ref=e4]\n  - button "Add Bucket Policy" [ref=e5]'))
    assert flag.finding.kind is FindingKind.ELEMENT_NOT_FOUND
    assert "several controls could be it" in flag.finding.observed


def test_the_part_of_the_page_the_step_names_decides_between_candidates():
    snapshot = page('''
        - main [ref=m1]:
          - link "Add Rules" [ref=e1]
          - region "Security Group Rules" [ref=e2]:
            - tablist [ref=e3]:
              - tab "Inbound" [ref=e4]
            - button "Add Security Group Rule" [ref=e5]
    ''')
    ep = episode("""
        # Rules

        1. On the **Inbound** tab, click **Add Rule**.
    """)
    flag = act(ep, snapshot)
    assert (flag.finding.kind, flag.finding.observed) == (FindingKind.LABEL_CHANGED, "Add Security Group Rule")
    assert act(ep, snapshot).ref == "e5"


def test_a_console_link_is_never_another_products():
    home = page('''
        - banner [ref=e1]:
          - navigation "Products" [ref=e2]:
            - link "ECS console" [ref=e3]
            - link "Elastic IP Address console" [ref=e4]
    ''')
    ep = episode("""
        # EIP

        1. Log on to the EIP console.
    """)
    click = act(ep, home)  # the product the doc abbreviates, not the one that looks alike
    assert (click.kind, click.ref) == (ActionKind.CLICK, "e4")
    ep = episode("""
        # RDS

        1. Log on to the RDS console.
    """)
    flag = act(ep, home)
    assert flag.finding.kind is FindingKind.ELEMENT_NOT_FOUND


def test_a_menu_item_is_not_a_product_link_in_the_top_bar():
    nav = page('''
        - banner [ref=e1]:
          - navigation "Products" [ref=e2]:
            - link "NAT Gateway console" [ref=e3]
        - navigation "VPC navigation" [ref=e4]:
          - link "VPCs" [ref=e5]
          - link "Internet NAT Gateway" [ref=e6]
    ''')
    ep = episode("""
        # NAT

        1. In the left-side navigation pane, click **NAT Gateway**.
    """)
    flag = act(ep, nav)
    assert (flag.finding.kind, flag.finding.observed) == (FindingKind.LABEL_CHANGED, "Internet NAT Gateway")
    assert act(ep, nav).ref == "e6"


def test_the_section_a_step_names_must_be_there_and_decides_between_exact_matches():
    bucket = page('''
        - main [ref=m1]:
          - region "Cross-Origin Resource Sharing (CORS)" [ref=r1]:
            - heading "Cross-Origin Resource Sharing (CORS)" [level=2] [ref=h1]
            - button "Create Rule" [ref=b1]
          - region "Lifecycle" [ref=r2]:
            - heading "Lifecycle" [level=2] [ref=h2]
            - button "Create Rule" [ref=b2]
    ''')
    ep = episode("""
        # Lifecycle

        1. In the **Lifecycle** section, click **Create Rule**.
    """)
    assert act(ep, bucket).ref == "b2"  # the Lifecycle section's, not the first on the page
    ep = episode("""
        # Lifecycle

        1. In the **Object Expiry** section, click **Create Rule**.
    """)
    flag = act(ep, bucket)
    assert (flag.finding.kind, flag.finding.expected) == (FindingKind.ELEMENT_NOT_FOUND, "Object Expiry")


def test_the_section_the_step_before_found_is_where_the_next_click_acts():
    """"Click the **Basic Settings** tab, find the **Bucket Tag** section. / Click
    **Configure** and add tags.": the Configure of that section, not the first one."""
    ep = episode("""
        # Tags

        1. Find the **Bucket Tag** section.
        2. Click **Configure** and add tags.
    """)
    settings = page('''
        - main [ref=m1]:
          - region "Access Control List (ACL)" [ref=r1]:
            - heading "Access Control List (ACL)" [level=2] [ref=h1]
            - button "Configure" [ref=b1]
          - region "Bucket Tag" [ref=r2]:
            - heading "Bucket Tag" [level=2] [ref=h2]
            - button "Configure" [ref=b2]
    ''')
    click = act(ep, settings)
    while click.kind is not ActionKind.CLICK:
        click = act(ep, settings)
    assert click.ref == "b2"


def test_a_menu_path_may_end_at_a_section_of_the_page_it_opens():
    """"choose **Basic Settings** > **Static Pages**": the tab, then its section of that title."""
    ep = episode("""
        # Website

        1. In the left-side navigation pane, choose **Basic Settings** > **Static Pages**. Click **Configure** in the **Static Pages** section.
    """)
    tab = act(ep, page('''
        - main [ref=m1]:
          - tablist [ref=l1]:
            - tab "Overview" [selected] [ref=t1]
            - tab "Basic Settings" [ref=t2]
    '''))
    assert (tab.kind, tab.ref) == (ActionKind.CLICK, "t2")
    click = act(ep, page('''
        - main [ref=m1]:
          - tablist [ref=l1]:
            - tab "Overview" [ref=t1]
            - tab "Basic Settings" [selected] [ref=t2]
          - region "Versioning" [ref=r1]:
            - heading "Versioning" [level=2] [ref=h1]
            - button "Configure" [ref=b1]
          - region "Static Pages" [ref=r2]:
            - heading "Static Pages" [level=2] [ref=h2]
            - button "Configure" [ref=b2]
    '''))
    assert (click.kind, click.ref) == (ActionKind.CLICK, "b2")


def test_a_close_match_the_doc_calls_by_its_own_name_is_not_a_rename():
    """Step 2 clicks **Event Detail Query** (the nav link); step 3's **Event Detail** is a
    row's button. With no row on the page, the link is not "Event Detail" renamed."""
    ep = episode("""
        # Events

        1. Click **Trails**.
        2. In the left-side navigation pane, click **Event Detail Query**.
        3. Click **Event Detail**.
    """)
    empty = page('''
        - navigation "ActionTrail" [ref=n1]:
          - link "Event Detail Query" [ref=l1]
          - link "Trails" [ref=l2]
        - main [ref=m1]:
          - table "Events" [ref=t1]
    ''')
    assert act(ep, empty).ref == "l2"
    assert act(ep, empty).ref == "l1"
    flag = act(ep, empty)
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.kind is FindingKind.ELEMENT_NOT_FOUND, flag
    assert "Event Detail Query" in flag.finding.candidates


def test_the_rename_after_the_one_the_doc_calls_by_its_own_name_is_followed():
    """Step 1 clicks **Add Rules** (a row's link); step 2's **Add Rule** is not that
    link renamed, but the button that took the name of the dialog it opens is: the doc
    names that dialog only to fill it, so it is no label of its own."""
    ep = episode("""
        # Add an outbound rule

        1. Find the security group and click **Add Rules** in the **Actions** column.
        2. On the **Security Group Rules** tab, click **Outbound**, and then click **Add Rule**.
        3. In the **Add Security Group Rule** dialog box, configure the following parameters.

            | Parameter | Description |
            | --------- | ----------- |
            | Priority | Enter `10`. |
    """)
    rules = page('''
        - main [ref=m1]:
          - table "Security Groups" [ref=t1]:
            - row "sg-1 Add Rules" [ref=r1]:
              - cell "sg-1" [ref=c1]
              - link "Add Rules" [ref=l1]
          - tablist "Security Group Rules" [ref=tl1]:
            - tab "Inbound" [ref=t2]
            - tab "Outbound" [ref=t3]
          - tabpanel "Outbound" [ref=p1]:
            - button "Add Security Group Rule" [ref=b1]
    ''')
    assert act(ep, rules).ref == "l1"
    assert act(ep, rules).ref == "t3"
    flag = act(ep, rules)
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.kind is FindingKind.LABEL_CHANGED, flag
    assert flag.finding.expected == "Add Rule" and flag.finding.observed == "Add Security Group Rule"
    assert act(ep, rules).ref == "b1"  # followed


def test_a_control_in_a_named_message_is_that_messages_not_the_top_bars():
    """"In the **Created** message, click **Console**": the message's link, not the
    top bar's "Console"."""
    ep = episode("""
        # Create

        1. In the **Created** message, click **Console** to view the creation progress on the Instances page.
    """)
    click = act(ep, page('''
        - banner [ref=b0]:
          - link "Console" [ref=l1]
        - main [ref=m1]:
          - region "Created" [ref=r1]:
            - heading "Created" [level=2] [ref=h1]
            - link "Console" [ref=l2]
    '''))
    assert (click.kind, click.ref) == (ActionKind.CLICK, "l2")
