"""Each parser feature on a small inline Markdown document."""

from __future__ import annotations

import textwrap

from docverify.parse.model import Intent, Severity
from docverify.parse.parser import parse_text


def parse(markdown: str, path: str = "docs/Create a bucket.md"):
    return parse_text(textwrap.dedent(markdown).lstrip("\n"), path)


def only_procedure(markdown: str):
    document = parse(markdown)
    assert not document.errors, document.errors
    assert len(document.procedures) == 1, [p.id for p in document.procedures]
    return document.procedures[0]


# -- procedures -------------------------------------------------------------


def test_procedure_under_a_heading_has_id_title_span_and_headings() -> None:
    procedure = only_procedure(
        """
        # Buckets

        ## Create a bucket

        1. Log on to the [OSS console](https://oss.console.aliyun.com/).
        2. Click **Create Bucket**.
        """
    )
    assert procedure.id == "create-a-bucket#create-a-bucket"
    assert procedure.title == "Create a bucket"
    assert procedure.headings == ["Buckets", "Create a bucket"]
    assert (procedure.line, procedure.end_line) == (3, 6)
    assert [s.number for s in procedure.steps] == ["1", "2"]
    assert procedure.product == "OSS"
    assert procedure.language == "en"


def test_list_without_heading_takes_the_document_title_from_front_matter() -> None:
    procedure = only_procedure(
        """
        ---
        title: Rotate keys
        ---
        1. Click **Rotate**.
        """
    )
    assert procedure.title == "Rotate keys"
    assert procedure.line == 4


def test_bold_to_line_titles_a_procedure_and_ids_get_suffixes() -> None:
    document = parse(
        """
        # Groups

        **To create a group**

        1. Choose **Create group**.

        **To create a group**

        1. Choose **New**.
        """
    )
    assert [p.id for p in document.procedures] == [
        "create-a-bucket#to-create-a-group",
        "create-a-bucket#to-create-a-group-2",
    ]
    assert [p.line for p in document.procedures] == [3, 7]


def test_unindented_note_between_items_does_not_split_the_procedure() -> None:
    procedure = only_procedure(
        """
        ## Create a bucket

        1. Choose **Create bucket**\\.

        **Important**
        Bucket names are global\\.

        1. For **Region**, choose **US East**\\.
        1. Choose **Save**\\.
        """
    )
    assert [s.number for s in procedure.steps] == ["1", "2", "3"]
    assert [(n.kind, n.text, n.line) for n in procedure.steps[0].notes] == [
        ("important", "Bucket names are global.", 5)
    ]
    assert procedure.steps[1].actions[0].value == "US East"


def test_lazy_note_inside_an_item_is_cut_out_of_the_step_text() -> None:
    procedure = only_procedure(
        """
        ## Steps

        1. Choose **Advanced settings**\\.
        **Note**
        You can enable it only once\\.
        1. Choose **Enable**\\.
        """
    )
    first = procedure.steps[0]
    assert first.text == "Choose Advanced settings."
    assert first.labels == ["Advanced settings"]
    assert [(n.kind, n.line) for n in first.notes] == [("note", 4)]
    assert len(procedure.steps) == 2


def test_notes_in_all_three_spellings_never_become_steps_or_labels() -> None:
    procedure = only_procedure(
        """
        ## Configure

        > [!NOTE]
        > Basic IPs have no zones.

        1. Click **OK**.

            **Note:** The **Save** button is disabled until then.

        2. 单击**确定**。

            **说明：** 可以一次创建多个用户。
        """
    )
    assert [(n.kind, n.text) for n in procedure.notes] == [("note", "Basic IPs have no zones.")]
    assert [n.kind for n in procedure.steps[0].notes] == ["note"]
    assert procedure.steps[0].labels == ["OK"]
    assert [n.text for n in procedure.steps[1].notes] == ["可以一次创建多个用户。"]
    assert len(procedure.steps) == 2


def test_note_marker_alone_takes_the_following_list_as_its_text() -> None:
    procedure = only_procedure(
        """
        1. Click **Quick Add**.

            **Note:**

            -   Select the ports you need.
            -   0.0.0.0/0 allows everyone.
        """
    )
    assert [(n.kind, n.text) for n in procedure.steps[0].notes] == [
        ("note", "Select the ports you need. 0.0.0.0/0 allows everyone.")
    ]


def test_substeps_are_numbered_with_the_parent() -> None:
    procedure = only_procedure(
        """
        1.  Go to the Security Groups page.

            1.  Log on to the [ECS console](https://ecs.console.aliyun.com).

            2.  In the top navigation bar, select a region.

        2.  Click **Create Security Group**.
        """
    )
    first = procedure.steps[0]
    assert [s.number for s in first.substeps] == ["1.1", "1.2"]
    assert first.substeps[0].intent is Intent.OPEN_CONSOLE
    assert first.substeps[1].intent is Intent.SELECT_REGION
    assert [s.number for s in procedure.all_steps()] == ["1", "1.1", "1.2", "2"]


def test_tabs_are_separate_procedures_nested_under_the_title() -> None:
    document = parse(
        """
        # Create a public IP

        # [**Standard SKU**](#tab/standard)

        1. Select **Standard**.

        # [**Basic SKU**](#tab/basic)

        1. Select **Basic**.

        ---

        ## Next steps
        """
    )
    assert [p.title for p in document.procedures] == ["Standard SKU", "Basic SKU"]
    assert document.procedures[1].headings == ["Create a public IP", "Basic SKU"]
    assert document.title == "Create a public IP"


def test_generic_heading_defers_to_the_heading_above() -> None:
    procedure = only_procedure(
        """
        # 创建存储空间

        ## 操作步骤

        1.  登录[OSS管理控制台](https://oss.console.aliyun.com/)。
        """
    )
    assert procedure.title == "创建存储空间"
    assert procedure.language == "zh"
    assert procedure.product == "OSS"


def test_prerequisite_section_and_sentences() -> None:
    document = parse(
        """
        # Associate an EIP

        An ECS instance is created. For more information, see the guide.

        ## Prerequisites

        -   A NAT gateway is created.

        ## Associate

        1. Click **Associate**.
        """
    )
    assert len(document.procedures) == 1
    assert document.procedures[0].prerequisites == ["An ECS instance is created.", "A NAT gateway is created."]


def test_a_paragraph_led_by_a_bold_prerequisites_heading() -> None:
    """Alibaba Cloud's "**Prerequisites:** ..." paragraph: every sentence after the lead,
    whether or not it reads as a precondition on its own."""
    document = parse(
        """
        # Create an SNAT entry

        SNAT entries let instances reach the Internet.

        **Prerequisites:** An EIP \\(EIP\\) is associated with the gateway `nat-<suffix>`. See [Associate an EIP]().

        **Note:** An SNAT entry is free of charge.

        ## Procedure

        1. Click **Create SNAT Entry**.
        """
    )
    assert document.procedures[0].prerequisites == ["An EIP (EIP) is associated with the gateway nat-<suffix>.",
                                                    "See Associate an EIP."]


def test_ordered_list_in_a_prerequisite_section_is_not_a_procedure() -> None:
    document = parse(
        """
        ## Preparations

        1. Create an account.

        ## Step 1: Create an instance

        1. Click **Create Instance**.
        """
    )
    assert [p.title for p in document.procedures] == ["Step 1: Create an instance"]
    assert document.procedures[0].prerequisites == ["Create an account."]


def test_optional_steps() -> None:
    procedure = only_procedure(
        """
        1. \\(Optional\\) Under **Tags**, choose **Add tag**\\.
        2. （可选）单击**标签**。
        """
    )
    assert [s.optional for s in procedure.steps] == [True, True]


# -- labels, paths, intents ----------------------------------------------------


def test_menu_paths_escaped_plain_and_comma_forms() -> None:
    procedure = only_procedure(
        """
        1. In the left-side navigation pane, choose **Network & Security** \\> **Security Groups**.
        2. Choose **Create a resource** > **Networking** > **Virtual network**.
        3. Select the instance and choose **Actions**, **Release**.
        4. Choose **Small**, **Medium**, or **Large**.
        """
    )
    steps = procedure.steps
    assert steps[0].menu_paths == [["Network & Security", "Security Groups"]]
    assert steps[0].actions[0].intent is Intent.NAVIGATE
    assert steps[0].actions[0].path == ["Network & Security", "Security Groups"]
    assert steps[1].menu_paths == [["Create a resource", "Networking", "Virtual network"]]
    assert steps[2].menu_paths == [["Actions", "Release"]]
    assert steps[2].intent is Intent.NAVIGATE
    assert steps[3].menu_paths == []


def test_the_row_a_step_acts_on_ends_at_the_resource_s_own_name() -> None:
    procedure = only_procedure(
        """
        1. Find the ENI `mgmt-eni-1` and click **Unbind** in the **Actions** column.
        2. Find the instance named `web` and click **Stop**.
        3. Find the security group "sg-1", and click **Delete**.
        4. Find the disk that you want to resize and click **Resize**.
        """
    )
    assert [step.actions[0].resource for step in procedure.steps] == ["ENI", "instance", "security group", "disk"]


def test_chinese_labels_paths_and_quotes() -> None:
    procedure = only_procedure(
        """
        1.  使用阿里云账号登录[RAM控制台](https://ram.console.aliyun.com/)。
        2.  在左侧导航栏，选择**人员管理** \\> **用户**。
        3.  在用户页面，单击“创建用户”。
        4.  在弹出的对话框中，单击「确定」。
        5.  在顶部菜单栏左上角处，选择地域。
        """
    )
    steps = procedure.steps
    assert steps[0].actions[0].intent is Intent.OPEN_CONSOLE
    assert steps[0].actions[0].target == "RAM控制台"
    assert procedure.product == "RAM"
    assert steps[1].menu_paths == [["人员管理", "用户"]]
    assert steps[2].labels == ["创建用户"]
    assert steps[2].text == "在用户页面，单击“创建用户”。"
    assert (steps[2].intent, steps[2].actions[0].target) == (Intent.CLICK, "创建用户")
    assert (steps[3].intent, steps[3].actions[0].target) == (Intent.CONFIRM, "确定")
    assert steps[4].intent is Intent.SELECT_REGION


def test_escapes_are_removed_from_text() -> None:
    procedure = only_procedure(
        """
        1. Sign in to the AWS Management Console and open the Amazon S3 console at [https://console\\.aws\\.amazon\\.com/s3/](https://console.aws.amazon.com/s3/)\\.
        """
    )
    step = procedure.steps[0]
    assert step.text == (
        "Sign in to the AWS Management Console and open the Amazon S3 console at https://console.aws.amazon.com/s3/."
    )
    assert [(a.intent, a.target, a.url) for a in step.actions] == [
        (Intent.OPEN_CONSOLE, "Amazon S3 console", "https://console.aws.amazon.com/s3/")
    ]
    assert procedure.product == "S3"


def test_intent_rule_table_covers_each_intent() -> None:
    procedure = only_procedure(
        """
        1. Open [the pricing page](https://example.com/pricing).
        2. In the top navigation bar, select a region.
        3. Click **Create Bucket**.
        4. In the left navigation pane, choose **Buckets**.
        5. Enter docs_db in the **Database Name** field.
        6. For **Storage Class**, select **Standard**.
        7. Turn on **Versioning**.
        8. Select the **Enable logging** check box.
        9. In the message that appears, click **OK**.
        10. Configure the parameters described in the following table.
        11. Check that the bucket appears in the list.
        12. Wait a few minutes.
        13. Select **Standard** from **Storage Class**.
        14. In the search box, enter **Public IP address**.
        """
    )
    got = [(s.intent, s.actions[0].target if s.actions else None) for s in procedure.steps]
    assert got == [
        (Intent.OPEN_URL, "the pricing page"),
        (Intent.SELECT_REGION, None),
        (Intent.CLICK, "Create Bucket"),
        (Intent.NAVIGATE, "Buckets"),
        (Intent.FILL, "Database Name"),
        (Intent.SELECT, "Storage Class"),
        (Intent.TOGGLE, "Versioning"),
        (Intent.TOGGLE, "Enable logging"),
        (Intent.CONFIRM, "OK"),
        (Intent.CONFIGURE, None),
        (Intent.VERIFY, None),
        (Intent.FREE_TEXT, None),
        (Intent.SELECT, "Storage Class"),
        (Intent.FILL, "search box"),
    ]
    assert procedure.steps[4].actions[0].value == "docs_db"
    assert procedure.steps[6].actions[0].value == "on"
    assert procedure.steps[13].actions[0].value == "Public IP address"


def test_inline_value_becomes_a_field() -> None:
    procedure = only_procedure("1. Enter docs_db in the **Database Name** field.\n")
    field = procedure.steps[0].fields[0]
    assert (field.name, field.value, field.line) == ("Database Name", "docs_db", 1)


def test_several_actions_in_one_step_keep_their_order_and_lines() -> None:
    procedure = only_procedure(
        """
        1. In the left-side navigation pane, click **Buckets**.
           On the Buckets page, click **Create Bucket**.
        """
    )
    actions = procedure.steps[0].actions
    assert [(a.intent, a.target, a.line) for a in actions] == [
        (Intent.NAVIGATE, "Buckets", 1),
        (Intent.CLICK, "Create Bucket", 2),
    ]


def test_chinese_checkbox_and_column_click() -> None:
    procedure = only_procedure(
        """
        1.  在确认订单页面，选中**我已阅读并同意服务协议**，然后单击**立即开通**。
        2.  返回实例页面，单击目标实例**操作**列下的**创建监听**。
        """
    )
    first, second = procedure.steps
    assert [(a.intent, a.target) for a in first.actions] == [
        (Intent.TOGGLE, "我已阅读并同意服务协议"),
        (Intent.CLICK, "立即开通"),
    ]
    # "返回实例页面": the page named in plain words first, then the row's column click
    assert [(a.intent, a.target) for a in second.actions] == [(Intent.NAVIGATE, "实例"), (Intent.CLICK, "创建监听")]


# -- alternatives -------------------------------------------------------------


def test_methods_as_bullets_are_alternatives_and_the_next_list_is_the_last_method() -> None:
    procedure = only_procedure(
        """
        1.  Find the security group.
        2.  Use one of the following methods to add rules:

            -   Method 1: Quickly add rules

                Click **Quick Add**.

            -   Method 2: Manually add rules

                Perform the following steps:

            1.  Click **Add Rule**.
            2.  Click **Save**.
        """
    )
    step = procedure.steps[1]
    assert step.substeps == []
    assert [(a.title, a.line, [s.number for s in a.steps]) for a in step.alternatives] == [
        ("Method 1: Quickly add rules", 4, ["2a.1"]),
        ("Method 2: Manually add rules", 8, ["2b.1", "2b.2"]),
    ]
    assert step.alternatives[0].steps[0].actions[0].target == "Quick Add"
    assert step.alternatives[1].steps[1].actions[0].target == "Save"


def test_one_of_the_following_and_you_can_also() -> None:
    procedure = only_procedure(
        """
        1. For **Source**, do one of the following:
           + Choose **Custom** and enter a CIDR block.
           + **Anywhere** – allows all traffic.
        2. Click **Buckets**.

           You can also click **Overview**.
        """
    )
    first, second = procedure.steps
    assert [a.title for a in first.alternatives] == ["Choose Custom and enter a CIDR block.", "Anywhere"]
    assert first.alternatives[1].steps[0].number == "1b.1"
    assert [a.title for a in second.alternatives] == ["You can also click Overview."]
    assert second.actions[0].target == "Buckets"
    assert [a.target for a in second.alternatives[0].steps[0].actions] == ["Overview"]


# -- tables -----------------------------------------------------------------


def test_multi_line_cells_are_rebuilt_from_the_source_lines() -> None:
    procedure = only_procedure(
        """
        1.  Set the parameters.

            |Parameter|Required|Description|
            |---------|--------|-----------|
            |**Storage Class**|Yes|Select the storage class.     -   **Standard**: frequent access.
            -   **IA**: infrequent access.

        **Note:** IA has a minimum storage period.

            -   **Archive**: rarely accessed. |
            |**Versioning**|No|Select whether to enable versioning.|

        2.  Click **OK**.
        """
    )
    configure, ok = procedure.steps
    assert [(f.name, f.line, f.required, f.options) for f in configure.fields] == [
        ("Storage Class", 5, True, ["Standard", "IA", "Archive"]),
        ("Versioning", 11, False, []),
    ]
    assert configure.intent is Intent.CONFIGURE
    assert "minimum storage period" in configure.fields[0].description
    assert ok.line == 13 and ok.actions[0].target == "OK"
    assert configure.notes == []  # the note belongs to the cell, not the step


def test_group_rows_values_and_row_spans() -> None:
    procedure = only_procedure(
        """
        1. Enter or select this information:

            | Setting | Value |
            | ------- | ----- |
            | **PROJECT DETAILS** | |
            | Subscription | Select your subscription. |
            | Resource group | Select **Create new**, enter *myResourceGroup*, then select **OK**. |
            | **INSTANCE DETAILS** | |
            | Idle timeout | Leave the default of **4**. |
            | DNS name label | Leave the value blank. |
            | IP version | Select IPv4 |
            | Name | Enter *myVm1*. |
        2. Review the step table.

            |Step|Parameter|Example|Description|
            |----|---------|-------|-----------|
            |**Basic**|**Billing Method**|Pay-As-You-Go|How you pay.|
            |**Region**|China \\(Hangzhou\\)|Where it runs.|
        """
    )
    fields = procedure.steps[0].fields
    assert [(f.name, f.group, f.value) for f in fields] == [
        ("Subscription", "PROJECT DETAILS", None),
        ("Resource group", "PROJECT DETAILS", "myResourceGroup"),
        ("Idle timeout", "INSTANCE DETAILS", "4"),
        ("DNS name label", "INSTANCE DETAILS", ""),
        ("IP version", "INSTANCE DETAILS", "IPv4"),
        ("Name", "INSTANCE DETAILS", "myVm1"),
    ]
    assert procedure.steps[0].intent is Intent.CONFIGURE
    spans = procedure.steps[1].fields
    assert [(f.name, f.group, f.value) for f in spans] == [
        ("Billing Method", "Basic", "Pay-As-You-Go"),
        ("Region", "Basic", "China (Hangzhou)"),
    ]


def test_table_that_is_not_a_parameter_table_gives_no_fields() -> None:
    procedure = only_procedure(
        """
        1. Select the rule direction.

            |Network type|Rule direction|
            |------------|--------------|
            |VPC|Inbound|
        """
    )
    # the table's rows are not fields; the sentence names one list, in the doc's own words
    assert [(f.name, f.value, f.described) for f in procedure.steps[0].fields] == [("rule direction", None, True)]


def test_broken_tables_are_diagnosed_not_raised() -> None:
    document = parse(
        """
        1. Set:

            |Parameter|Description|
            |---|---|---|
            |A|x|

            |Parameter|Required|Description|
            |---|---|---|
            |Name|starts here
            and never closes
        """
    )
    messages = [d.message for d in document.diagnostics]
    assert any("delimiter row" in m for m in messages)
    assert any("never closed" in m for m in messages)
    assert document.procedures


# -- placeholders -------------------------------------------------------------


def test_placeholders_on_steps_and_procedure() -> None:
    procedure = only_procedure(
        """
        1. Enter `<your-name>` and {bucket-name}.
        2. Set YOUR_BUCKET to i-bp67acfmxazb4p\\*\\*\\*\\* and note the AccessKey ID \\*\\*\\*\\*.
        3. Run:

           ```
           ossutil ls oss://<your-name>/<InstanceId>
           ```
        """
    )
    assert procedure.steps[0].placeholders == ["<your-name>", "{bucket-name}"]
    assert procedure.steps[1].placeholders == ["YOUR_BUCKET", "i-bp67acfmxazb4p****", "AccessKey ID ****"]
    assert procedure.steps[2].placeholders == ["<your-name>", "<InstanceId>"]
    assert procedure.placeholders == [
        "<your-name>",
        "{bucket-name}",
        "YOUR_BUCKET",
        "i-bp67acfmxazb4p****",
        "AccessKey ID ****",
        "<InstanceId>",
    ]


# -- front matter ---------------------------------------------------------------


def test_front_matter_values_and_bad_yaml() -> None:
    good = parse("---\ntitle: T\nms.service: virtual-network\nms.date: 2021-02-22\n---\n1. Click **OK**.\n")
    assert good.front_matter == {"title": "T", "ms.service": "virtual-network", "ms.date": "2021-02-22"}
    assert good.procedures[0].product == "virtual-network"
    assert good.procedures[0].steps[0].line == 6

    bad = parse("---\ntitle: [unclosed\n---\n1. Click **OK**.\n")
    assert [(d.severity, d.line) for d in bad.diagnostics] == [(Severity.WARNING, 2)]
    assert bad.procedures[0].steps[0].line == 4

    unterminated = parse("---\ntitle: x\n\n1. Click **OK**.\n")
    assert [(d.severity, d.line) for d in unterminated.diagnostics] == [(Severity.WARNING, 1)]
    assert unterminated.procedures


def test_two_inline_values_in_one_sentence_are_two_fills() -> None:
    procedure = only_procedure(
        "1. In the **User Account Information** section, enter docverify-user in the **Logon Name** field"
        " and Docverify User in the **Display Name** field.\n"
    )
    step = procedure.steps[0]
    assert [(a.intent, a.target, a.value) for a in step.actions] == [
        (Intent.FILL, "Logon Name", "docverify-user"),
        (Intent.FILL, "Display Name", "Docverify User"),
    ]
    assert [(f.name, f.value) for f in step.fields] == [("Logon Name", "docverify-user"), ("Display Name", "Docverify User")]


def test_select_from_a_drop_down_list_names_the_list() -> None:
    procedure = only_procedure(
        "1. Select the VPC from the **Network** drop-down list.\n2. Select cn-hangzhou from the **Region** list.\n"
    )
    first, second = (step.actions[0] for step in procedure.steps)
    assert (first.intent, first.target, first.value) == (Intent.SELECT, "Network", None)
    assert (second.intent, second.target, second.value) == (Intent.SELECT, "Region", "cn-hangzhou")


def test_second_clauses_of_two_field_sentences_are_kept():
    [procedure] = parse("""
        # Group

        1. Set **Group Name** to `grp-a` and **Display Name** to `Group A`.
        2. Select the VPC from the **VPC ID** drop-down list and a vSwitch from the **VSwitch ID** drop-down list.
        3. In the Edit VPC dialog box, enter `new desc` in the **Description** field.
        4. Click the name of the **default-sg** security group.
    """).procedures
    first, second, third, fourth = procedure.steps
    assert [(a.target, a.value) for a in first.actions] == [("Group Name", "grp-a"), ("Display Name", "Group A")]
    assert [(a.intent, a.target, a.value) for a in second.actions] == [
        (Intent.SELECT, "VPC ID", None), (Intent.SELECT, "VSwitch ID", None)]
    assert [(a.intent, a.target, a.value) for a in third.actions] == [(Intent.FILL, "Description", "new desc")]
    assert [(a.intent, a.target) for a in fourth.actions] == [(Intent.CLICK, "default-sg")]


def test_fields_named_in_a_list_are_one_fill_each_with_no_value() -> None:
    procedure = parse_text(textwrap.dedent("""\
        # Users

        1. On the Create User page, specify **Logon Name** and **Display Name** in the **User Account Information** section.
        2. In the Create Group panel, configure the **Group Name**, **Display Name**, and **Note** parameters.
        3. Configure the **Description** parameter.
        4. 在创建用户页面，输入**登录名称**和“显示名称”。
        5. 填写**名称**、**描述**及**标签**。
        6. Set **Action** to **Allow** and click **OK**.
        7. Enter **admin** in the **User** field.
    """), "users.md").procedures[0]
    fills = [[(a.intent, a.target, a.value) for a in step.actions] for step in procedure.steps]
    assert fills[0] == [(Intent.FILL, "Logon Name", None), (Intent.FILL, "Display Name", None)]
    assert fills[1] == [(Intent.FILL, name, None) for name in ("Group Name", "Display Name", "Note")]
    assert fills[2] == [(Intent.FILL, "Description", None)]
    assert fills[3] == [(Intent.FILL, "登录名称", None), (Intent.FILL, "显示名称", None)]
    assert fills[4] == [(Intent.FILL, name, None) for name in ("名称", "描述", "标签")]
    assert fills[5][0] == (Intent.SELECT, "Action", "Allow")  # a value given: not a list of fields
    assert fills[6] == [(Intent.FILL, "User", "admin")]
    assert [field.name for field in procedure.steps[0].fields] == ["Logon Name", "Display Name"]
