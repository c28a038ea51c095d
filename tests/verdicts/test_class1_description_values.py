"""Class 1: parameter tables without a "Value" column.

Alibaba's usual tables are ``Parameter | Description``: the value is in the
description ("Select **X**.", "Enter `x`.", "Set it to ...", 选择/输入...). Those
values are read, applied, and a PASS means the console's audit event carries them.
"""

from __future__ import annotations

from verdict_helpers import act, episode, page, procedure

from docverify.check.verdict import FindingKind
from docverify.execute.actions import ActionKind
from docverify.parse.fields import value_from_description
from docverify.parse.inline import BOLD_CLOSE as B_
from docverify.parse.inline import BOLD_OPEN as B
from docverify.parse.inline import CODE_CLOSE as C_
from docverify.parse.inline import CODE_OPEN as C


def test_orders_in_a_description_give_the_value():
    assert value_from_description(f"Select {B}IA{B_}.") == ("IA", False)
    assert value_from_description(f"Set it to {B}ecs.g6.large{B_}.") == ("ecs.g6.large", False)
    assert value_from_description(f"Optional. Enter {C}docs_db{C_}.") == ("docs_db", False)
    assert value_from_description(f"Default: {B}Zone H{B_}.") == ("Zone H", False)
    assert value_from_description(f"Only {B}Pay-As-You-Go{B_} is supported.") == ("Pay-As-You-Go", False)
    assert value_from_description("Set the value to 5 Mbit/s.") == ("5", False)
    assert value_from_description(f"选择{B}TCP{B_}。") == ("TCP", False)
    assert value_from_description(f"输入{C}web-01{C_}。") == ("web-01", False)


def test_examples_conditions_and_choices_are_not_orders():
    assert value_from_description(f"Enter a name, for example {C}web-a1{C_}.") == ("web-a1", True)
    assert value_from_description(f"输入名称，例如{C}web-a1{C_}。") == ("web-a1", True)
    assert value_from_description(f"If you select {B}Classic{B_}, the instance has no VPC.") == (None, False)
    assert value_from_description(f"You can select {B}IA{B_} to reduce costs.") == (None, False)
    assert value_from_description(f"Select {B}Standard{B_} or {B}IA{B_}.") == (None, False)
    assert value_from_description("Select the region of the bucket.") == (None, False)
    # the order wins over a later condition, and the doc's own example choice wins over both
    assert value_from_description(f"Select {B}VPC{B_}. If you select {B}Classic{B_}, ...") == ("VPC", False)
    assert value_from_description(f"Select an ACL. In this example, {B}Private{B_} is selected.") == ("Private", False)
    # a name the doc typed "in this example" is the reader's own to pick; a choice it made is the doc's
    assert value_from_description(f"本示例输入{C}billing-app{C_}。") == ("billing-app", True)
    assert value_from_description(f"In this example, enter {C}web-01{C_}.") == ("web-01", True)
    assert value_from_description(f"本示例中选择{B}专有网络{B_}。") == ("专有网络", False)


def test_a_parameter_description_table_in_english_and_chinese():
    steps = procedure("""
        # Create a bucket

        1. Configure the parameters described in the following table.

            |Parameter|Description|
            |---|---|
            |**Bucket Name**|Enter a name for the bucket, for example `examplebucket`.|
            |**Storage Class**|Select **IA**.|
            |**Versioning**|Select whether to enable versioning.|

        2. 配置以下参数。

            |参数|说明|
            |---|---|
            |**协议类型**|选择**TCP**。|
            |**端口范围**|输入`22/22`。|
    """).steps
    fields = {f.name: (f.value, f.example) for step in steps for f in step.fields}
    assert fields == {"Bucket Name": ("examplebucket", True), "Storage Class": ("IA", False),
                      "Versioning": (None, False), "协议类型": ("TCP", False), "端口范围": ("22/22", False)}


def test_a_table_of_one_settings_choices_is_not_a_form():
    steps = procedure("""
        # Billing

        1. Select a billing method.

            |Billing method|Description|
            |---|---|
            |**Subscription**|You pay before you use.|
            |**Pay-As-You-Go**|You pay after you use.|
    """).steps
    # neither choice is a field; the sentence names the list, in words, with no value to check
    assert [(f.name, f.value, f.described) for f in steps[0].fields] == [("billing method", None, True)]


FORM = page('''
    - dialog "Create Bucket" [ref=e1]:
      - textbox "Bucket Name" [ref=e2]
      - group "Storage Class" [ref=e3]:
        - radio "Standard" [checked] [ref=e4]
        - radio "IA" [ref=e5]
      - button "OK" [ref=e6]
''')


def test_the_description_values_are_applied_and_an_example_name_is_made_unique():
    ep = episode("""
        # Create a bucket

        1. Configure the parameters described in the following table.

            |Parameter|Description|
            |---|---|
            |**Bucket Name**|Enter a name, for example `examplebucket`.|
            |**Storage Class**|Select **IA**.|

        2. Click **OK**.
    """)
    fill = act(ep, FORM)
    assert (fill.kind, fill.ref, fill.value) == (ActionKind.FILL, "e2", "examplebucket-abc123")
    check = act(ep, FORM)
    assert (check.kind, check.ref) == (ActionKind.CHECK, "e5")
    assert act(ep, FORM).ref == "e6"


def test_a_value_the_console_does_not_offer_is_value_rejected_on_its_row():
    ep = episode("""
        # Create a bucket

        1. Configure the parameters described in the following table.

            |Parameter|Description|
            |---|---|
            |**Storage Class**|Select **Archive**.|
    """)
    flag = act(ep, FORM)
    assert flag.finding.kind is FindingKind.VALUE_REJECTED
    assert flag.finding.line == 8  # the row (the text starts with a blank line)


def test_a_sideways_table_the_step_announces_gives_its_fields():
    """"Click **Quick Add** to add rules as described in the following table." over
    "| Action | Port range | Authorized object |" and one row of values."""
    step = procedure("""
        # Rules

        1. Click **Quick Add** to add security group rules as described in the following table.

            |Action|Port range|Authorized object|
            |------|----------|-----------------|
            |Allow|    -   SSH 22<br>-   HTTP 80|0.0.0.0/0|
    """).steps[0]
    assert [(f.name, f.value, f.options) for f in step.fields] == [
        ("Action", "Allow", []), ("Port range", None, ["SSH 22", "HTTP 80"]), ("Authorized object", "0.0.0.0/0", [])]
