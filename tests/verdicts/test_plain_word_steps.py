"""Steps real docs write in plain words, found in the corpus's 2021-06 non-PASS labels.

"Specify the principal.", "Enter an image name and description.", "Select one or more
ports.": a control named in the doc's own words, no bold label. "If this is the first
time you use ..., click **Create**": a step for one case only. "Confirm the settings or
click the edit icon": another way, not a further step. "| **Set Password** | - **Set Now**
- **Set Later** |": a parameter cell that lists the choices of the field its row names.
Each is followed as a careful reader would, and none is reported as drift when the page
has what it names.
"""

from __future__ import annotations

from verdict_helpers import act, episode, page, procedure

from docverify.execute.actions import ActionKind
from docverify.parse.model import Intent


def test_controls_named_in_plain_words_are_described_fields():
    steps = procedure("""
        # Plain words

        1. Specify the principal.
        2. Enter an image name and description.
        3. Select one or more ports.
        4. 选中一个或多个端口。
        5. Enter a name.
    """).steps
    got = [[(a.intent, a.target, a.described) for a in step.actions] for step in steps]
    assert got == [
        [(Intent.SELECT, "principal", True)],
        [(Intent.FILL, "image name", True), (Intent.FILL, "description", True)],
        [(Intent.SELECT, "ports", True)],
        [(Intent.SELECT, "端口", True)],
        [(Intent.FILL, "name", True)],
    ]
    # a doc's own words are no value to check
    assert all(f.value is None and f.described for step in steps for f in step.fields)


def test_bold_labels_are_not_plain_words():
    step = procedure("""
        # Bold

        1. Specify the **Principal** parameter.
    """).steps[0]
    assert not any(a.described for a in step.actions)


PANEL = '''
- dialog "Add Permissions" [ref=d1]:
  - combobox "Principal" [ref=c1]:
    - option "Select" [ref=o0]
    - option "alice@example" [ref=o1]
    - option "docverify-user-abc123@example" [ref=o2]
  - button "OK" [ref=b1]
'''


def test_a_list_named_in_plain_words_takes_the_runs_own_resource():
    ep = episode("""
        # Grant

        1. Specify the principal.
    """, context={"ram_user_1_name": "docverify-user-abc123"})
    pick = act(ep, page(PANEL))
    assert (pick.kind, pick.ref, pick.value) == (ActionKind.SELECT, "c1", "docverify-user-abc123@example")


def test_a_list_the_page_lacks_is_not_verifiable_not_drift():
    ep = episode("""
        # Grant

        1. Specify the grantee.
    """)
    flag = act(ep, page(PANEL))
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.kind.value == "not_verifiable", flag


def test_a_group_of_check_boxes_named_in_plain_words_gets_one_checked():
    ep = episode("""
        # Quick add

        1. Select one or more ports.
    """)
    check = act(ep, page('''
        - dialog "Quick Add" [ref=d1]:
          - group "Port Range" [ref=g1]:
            - checkbox "SSH (22)" [ref=k1]
            - checkbox "HTTP (80)" [ref=k2]
          - button "OK" [ref=b1]
    '''))
    assert (check.kind, check.ref) == (ActionKind.CHECK, "k1")


def test_a_step_for_one_case_is_skipped_when_the_page_does_not_offer_it():
    doc = """
        # NAT

        1. If this is the first time you create a NAT gateway, click **Create Service-Linked Role**.
        2. Click **Buy Now**.
    """
    steps = procedure(doc).steps
    assert steps[0].conditional and not steps[1].conditional
    ep = episode(doc)
    click = act(ep, page('''
        - main [ref=m1]:
          - button "Buy Now" [ref=b1]
    '''))
    assert (click.kind, click.ref) == (ActionKind.CLICK, "b1")  # no finding on step 1
    offered = episode(doc)
    first = act(offered, page('''
        - main [ref=m1]:
          - button "Create Service-Linked Role" [ref=s1]
          - button "Buy Now" [ref=b1]
    '''))
    assert (first.kind, first.ref) == (ActionKind.CLICK, "s1")


def test_another_way_after_or_is_not_a_further_step():
    step = procedure("""
        # Confirm

        1. Confirm the settings or click **Edit** to modify them, and then click **Create**.
    """).steps[0]
    assert [a.target for a in step.actions if a.intent is Intent.CLICK] == ["Create"]


def test_a_cell_listing_choices_names_no_field():
    fields = procedure("""
        # MongoDB

        1. Set the parameters.

            |Section|Parameter|Description|
            |:------|:--------|:----------|
            |**Basic Configuration**|**Region**|The region of the instance.|
            |**Set Password**|    -   **Set Now**<br>-   **Set Later**|The password of the root user.|
    """).steps[0].fields
    assert [(f.name, f.group, f.options, f.value) for f in fields] == [
        ("Region", "Basic Configuration", [], None),
        ("Set Password", "Basic Configuration", ["Set Now", "Set Later"], None),
    ]


def test_fields_named_in_plain_words_are_filled_by_their_own_labels():
    ep = episode("""
        # Image

        1. Enter an image name and description.
        2. Click **Create**.
    """)
    dialog = page('''
        - dialog "Create Custom Image" [ref=d1]:
          - textbox "Custom Image Name" [ref=t1]
          - textbox "Custom Image Description" [ref=t2]
          - button "Create" [ref=b1]
    ''')
    name = act(ep, dialog)
    assert (name.kind, name.ref) == (ActionKind.FILL, "t1") and name.value
    # the description is optional and the doc gives none: it is found, left as it is
    create = act(ep, dialog)
    assert (create.kind, create.ref) == (ActionKind.CLICK, "b1")


def test_words_find_one_control_or_none():
    from docverify.execute.locate import locate_words, parse_snapshot

    elements = parse_snapshot('''
- group "Port Range" [ref=g1]
- textbox "Authorization Object" [ref=t1]
- textbox "Custom Image Name" [ref=t2]
- textbox "Instance Name" [ref=t3]
- group "端口范围" [ref=g2]
''')
    assert locate_words("ports", elements).element.ref == "g1"
    assert locate_words("端口", elements).element.ref == "g2"
    assert locate_words("image name", elements).element.ref == "t2"
    both = locate_words("name", elements)  # two labels have it: a reader could not tell
    assert both.element is None and both.ambiguous
    assert locate_words("grantee", elements).element is None


def test_a_field_named_without_a_value_takes_the_docs_own_example_for_it():
    """Method 1 says "set **Authorization Object**"; Method 2's table gives "Example:
    192.168.0.100." for it: a reader types that, not nothing."""
    doc = """
        # Rules

        1. Use one of the following methods to add rules:

            - Method 1: Quick add

                Click **Quick Add** and then set **Action** and **Authorization Object**.

            - Method 2: Add a rule

                1. Set the parameters.

                    |Parameter|Description|
                    |---------|-----------|
                    |Authorization Object|You can enter a single IP address. Example: 192.168.0.100. Or a CIDR block.|
    """
    ep = episode(doc)
    dialog = page('''
        - dialog "Quick Add" [ref=d1]:
          - radiogroup "Action" [ref=g1]:
            - radio "Allow" [checked] [ref=a1]
            - radio "Forbid" [ref=a2]
          - textbox "Authorization Object" [ref=t1]
          - button "OK" [ref=b1]
    ''')
    first = act(ep, page('''
        - main [ref=m1]:
          - button "Quick Add" [ref=q1]
    '''))
    assert (first.kind, first.ref) == (ActionKind.CLICK, "q1")
    fill = act(ep, dialog)
    assert (fill.kind, fill.ref, fill.value) == (ActionKind.FILL, "t1", "192.168.0.100")
    zh = procedure("""
        # 规则

        1. 单击**快速添加**后，只需要设置**授权策略**、**授权对象**。
    """).steps[0]
    assert [a.target for a in zh.actions if a.intent is Intent.FILL] == ["授权策略", "授权对象"]


def test_a_page_named_in_plain_words_is_reached_by_its_link():
    steps = procedure("""
        # Back

        1. Go back to the Instances page and find the EcsQuickStart instance.
        2. 返回实例页面，单击目标实例**操作**列下的**创建监听**。
    """).steps
    assert [(a.intent, a.target, a.described) for a in steps[0].actions] == [(Intent.NAVIGATE, "Instances", True)]
    assert (steps[1].actions[0].intent, steps[1].actions[0].target) == (Intent.NAVIGATE, "实例")
    ep = episode("""
        # Back

        1. Go back to the Instances page and find the instance.
        2. Go back to the Snapshots page.
    """)
    nav = page('''
        - navigation "ECS" [ref=n1]:
          - link "Instances" [ref=l1]
          - link "Images" [ref=l2]
    ''')
    click = act(ep, nav)
    assert (click.kind, click.ref) == (ActionKind.CLICK, "l1")
    flag = act(ep, nav)  # no such page link: the doc's words, not a label: no drift
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.kind.value == "not_verifiable", flag
