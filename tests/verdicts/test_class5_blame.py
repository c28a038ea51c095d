"""Class 5: blame on the right step.

A field the doc names but the page lacks is a finding on the field's own line at
once (not skipped, the step marked followed, and the error surfacing at "Click
OK"); a value the console now requires is missing where the doc fills that form;
a wizard page the console added is missing before the doc's "Next:" step.
"""

from __future__ import annotations

from verdict_helpers import act, episode, page

from docverify.check.verdict import FindingKind
from docverify.execute.actions import ActionKind, Observation

FORM = page('''
    - dialog "Create VPC" [ref=e1]:
      - textbox "VPC Name" [ref=e2]
      - textbox "IPv4 CIDR Block" [ref=e3]
      - button "OK" [ref=e4]
''')


def test_a_named_field_the_page_lacks_is_a_finding_on_its_own_line_at_once():
    ep = episode("""
        # Create a VPC

        1. Configure the parameters described in the following table.

            |Parameter|Description|
            |---|---|
            |**Resource Group**|Select a resource group.|
            |**Tags**|Optional. Add tags to the VPC.|
            |**IPv4 CIDR Block**|Enter `10.0.0.0/8`.|

        2. Click **OK**.
    """)
    first = act(ep, FORM)
    assert (first.kind, first.finding.kind, first.finding.line) == (ActionKind.FLAG_STEP, FindingKind.ELEMENT_NOT_FOUND, 8)
    second = act(ep, FORM)
    assert (second.finding.kind, second.finding.line) == (FindingKind.ELEMENT_NOT_FOUND, 9)
    fill = act(ep, FORM)
    assert (fill.kind, fill.ref, fill.value) == (ActionKind.FILL, "e3", "10.0.0.0/8")
    assert act(ep, FORM).ref == "e4"


def test_a_field_shown_only_under_a_condition_is_not_drift():
    ep = episode("""
        # Create a VPC

        1. Configure the parameters described in the following table.

            |Parameter|Description|
            |---|---|
            |**IPv6 CIDR Block**|This parameter is displayed only if you enable IPv6.|
            |**IPv4 CIDR Block**|Enter `10.0.0.0/8`.|
    """)
    flag = act(ep, FORM)
    assert flag.finding.kind is FindingKind.NOT_VERIFIABLE
    assert act(ep, FORM).kind is ActionKind.FILL


def test_a_now_required_value_is_missing_where_the_doc_fills_the_form():
    ep = episode("""
        # Create a VPC

        1. Configure the parameters described in the following table.

            |Parameter|Description|
            |---|---|
            |**IPv4 CIDR Block**|Enter `10.0.0.0/8`.|

        2. Click **OK**.
    """)
    assert act(ep, FORM).kind is ActionKind.FILL
    assert act(ep, FORM).ref == "e4"
    refused = Observation(FORM.url, FORM.title, FORM.snapshot + '\n  - alert "VPC Name is required." [ref=e9]')
    flag = act(ep, refused)
    assert (flag.finding.kind, flag.finding.step, flag.finding.line) == (FindingKind.MISSING_STEP, "1", 4)


def test_a_wizard_page_added_before_the_docs_next_page_is_a_missing_step_and_followed():
    basic = page('- main [ref=e1]:\n  - button "Next: Image and Storage" [ref=e2]')
    image = page('- main [ref=e1]:\n  - button "Next: Networking" [ref=e3]', url="http://console.test/y")
    ep = episode("""
        # Create an instance

        1. Click **Next: Networking**.
    """)
    assert act(ep, basic).ref == "e2"  # the page the console added is taken...
    flag = act(ep, image)  # ...and the doc's next page is behind it: the doc lacks a step
    assert (flag.finding.kind, flag.finding.line) == (FindingKind.MISSING_STEP, 4)
    assert act(ep, image).ref == "e3"


def test_a_wizard_page_the_console_no_longer_has_is_not_found_after_one_page():
    basic = page('- main [ref=e1]:\n  - button "Next: Networking" [ref=e2]')
    networking = page('- main [ref=e1]:\n  - button "Next: System Configurations" [ref=e3]', url="http://console.test/y")
    ep = episode("""
        # Create an instance

        1. Click **Next: Image and Storage**.
    """)
    assert act(ep, basic).ref == "e2"
    flag = act(ep, networking)
    assert (flag.finding.kind, flag.finding.line) == (FindingKind.ELEMENT_NOT_FOUND, 4)


def test_fields_that_moved_to_the_wizards_new_page_are_filled_there_not_reported():
    basic = page('''
        - main [ref=e1]:
          - combobox "Zone" [ref=e2]:
            - option "Zone H" [selected]
          - button "Next: Image and Storage" [ref=e3]
    ''')
    image = page('''
        - main [ref=e1]:
          - textbox "Image" [ref=e4]
          - button "Next: Networking" [ref=e5]
    ''', url="http://console.test/y")
    ep = episode("""
        # Create an instance

        1. Configure the parameters described in the following table, and then click **Next: Networking**.

            |Parameter|Description|
            |---|---|
            |**Zone**|Select **Zone H**.|
            |**Image**|Enter `ubuntu_22`.|
    """)
    assert act(ep, basic).ref == "e3"  # Image is not here: the new page is taken
    fill = act(ep, image)
    assert (fill.ref, fill.value) == ("e4", "ubuntu_22")  # the doc's row, on the page it moved to
    flag = act(ep, image)
    assert flag.finding.kind is FindingKind.MISSING_STEP
    assert act(ep, image).ref == "e5"


def test_a_confirmation_the_console_no_longer_asks_for_is_an_extra_step():
    ep = episode("""
        # Modify a VPC

        1. Click **OK**.
        2. In the **Confirm Changes** dialog box, click **OK**.
        3. Click **Refresh**.
    """)
    form = page('- dialog "Edit VPC" [ref=d1]:\n  - button "OK" [ref=e1]')
    listing = page('- main [ref=m1]:\n  - button "Refresh" [ref=e2]')
    assert act(ep, form).ref == "e1"
    flag = act(ep, listing)  # no dialog asks: the doc's step 2 is one the console no longer needs
    assert (flag.finding.kind, flag.finding.line) == (FindingKind.EXTRA_STEP, 5)
    assert act(ep, listing).ref == "e2"  # and the procedure goes on


def test_a_dialog_left_open_is_blamed_on_the_method_taken_not_the_last_line():
    """Method 1 ends without "click OK"; Method 2 (not taken) is the doc's last text:
    the missing step is on Method 1's line."""
    ep = episode("""
        # Rules

        1. Use one of the following methods to add rules:

            - Method 1: Quick add

                Click **Quick Add**.

            - Method 2: Add a rule

                1. Click **Add Rule**.
                2. Click **Save**.
    """)
    first = act(ep, page('''
        - main [ref=m1]:
          - button "Quick Add" [ref=q1]
          - button "Add Rule" [ref=a1]
    '''))
    assert (first.kind, first.ref) == (ActionKind.CLICK, "q1")
    flag = act(ep, page('''
        - dialog "Quick Add" [ref=d1]:
          - textbox "Authorization Object" [ref=t1]: 10.0.0.1
          - button "OK" [ref=b1]
          - button "Cancel" [ref=b2]
    '''))
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.kind is FindingKind.MISSING_STEP
    assert (flag.finding.line, flag.finding.step) == (8, "1a.1"), flag.finding  # "Click **Quick Add**."
