"""Class 7: parser and annotations.

A procedure whose annotation cannot be read never runs (exit 2, file and line
named) — not even with ``--dry-run``; an annotation before the first procedure
sets the file's defaults; ``requires: [vpc]`` is shorthand for ``{type: vpc}``; a
misspelt key is an error, never a silently lost criterion; bold targets are kept;
a URL does not swallow the sentence's period.
"""

from __future__ import annotations

import textwrap

from click.testing import CliRunner
from verdict_helpers import procedure

from docverify.check.criteria import expected_events
from docverify.cli import cli
from docverify.errors import ExitCode
from docverify.parse.parser import parse_text

BROKEN = """\
    # Delete a bucket

    <!-- docverify:
    skip: "destroys production data"
    expect: [{event: DeleteBucket, service: Oss}
    -->
    ## Procedure

    1. Log on to the OSS console.
    2. Click **Delete Bucket**.
"""


def test_a_procedure_whose_annotation_cannot_be_read_never_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "delete.md").write_text(textwrap.dedent(BROKEN))
    for extra in (["--dry-run"], []):
        result = CliRunner().invoke(cli, ["check", "delete.md", "--no-store", *extra])
        assert result.exit_code == ExitCode.USAGE, result.output
        assert "delete.md:" in result.output and "not valid YAML" in result.output
        assert "nothing was run" in result.output


def test_an_annotation_before_the_first_procedure_sets_the_files_defaults():
    document = parse_text(textwrap.dedent("""
        # Buckets

        Intro.

        <!-- docverify:
        product: OSS
        expect: [Oss:PutBucket]
        -->
        ## Prerequisites

        An account.

        ## Create a bucket

        1. Click **Create Bucket**.
    """), "buckets.md")
    assert not [d for d in document.diagnostics if "not followed by a procedure" in d.message]
    [created] = document.procedures
    assert created.product == "OSS"
    assert [e.describe() for e in expected_events(created)] == ["Oss:PutBucket"]


def test_bare_names_are_shorthand_and_a_misspelt_key_is_an_error():
    document = parse_text(textwrap.dedent("""
        <!-- docverify:
        requires: [vpc, {type: vswitch, count: 1}]
        -->
        # Create an instance

        1. Click **Create Instance**.
    """), "a.md")
    assert document.procedures[0].annotation.requires == [{"type": "vpc"}, {"type": "vswitch", "count": 1}]
    typo = parse_text(textwrap.dedent("""
        <!-- docverify:
        expect:
          - {evnt: PutBucket}
        -->
        # Create a bucket

        1. Click **Create Bucket**.
    """), "b.md")
    [error] = typo.errors
    assert error.line == 3 and "unknown key 'evnt'" in error.message  # the `expect:` line


def test_bold_targets_are_kept():
    steps = procedure("""
        # Fields

        1. Enter a name in the **Instance Name** field.
        2. Specify **Instance Name**.
        3. 在**实例名称**文本框中，输入实例名称。
        4. 单击**Static Pages**右侧的**设置**。
        5. 在**计划删除密钥**对话框，设置**预删除周期（天）**为`7`。
    """).steps
    assert [(a.intent.value, a.target, a.value) for step in steps for a in step.actions] == [
        ("fill", "Instance Name", None), ("fill", "Instance Name", None), ("fill", "实例名称", None),
        ("click", "设置", None), ("select", "预删除周期（天）", "7")]


def test_a_url_does_not_end_with_the_sentences_period():
    [step] = procedure("""
        # Open

        1. Open https://oss.console.aliyun.com/overview.
    """).steps
    assert step.actions[0].url == "https://oss.console.aliyun.com/overview"


def test_chinese_bold_is_paired_as_the_writer_means_it():
    """CommonMark leaves "**系统配置（选填）**页面" unclosed (full-width punctuation before the
    closing marks, a letter after): the labels would be lost."""
    [step] = procedure("""
        # 创建实例

        1. 在**系统配置（选填）**页面，单击**下一步：分组设置**。

            **说明：** 可以稍后修改。
    """).steps
    assert step.labels == ["系统配置（选填）", "下一步：分组设置"]
    assert [note.text for note in step.notes] == ["可以稍后修改。"]


def test_what_the_reader_could_do_is_not_a_step():
    steps = procedure("""
        # Stop a listener

        1. Click **Stop**.

            After the listener stops, you can click **Start** to start it again.

        2. 单击**停止**。

            监听停止后，您可以单击**启动**重新启动该监听。
    """).steps
    assert [[a.target for a in step.actions] for step in steps] == [["Stop"], ["停止"]]


def test_a_switch_in_a_description_and_a_drop_down_list_first():
    steps = procedure("""
        # Settings

        1. Configure the following parameters.

            |Parameter|Description|
            |---|---|
            |**Release Protection**|Turn on the switch.|
            |**Public IP**|Clear the check box.|
            |**公钥**|粘贴本地公钥文件（例如`~/.ssh/id_rsa.pub`）中的全部内容。|

        2. From the **Principal** drop-down list, select the RAM user.
    """).steps
    assert [(f.name, f.value) for f in steps[0].fields] == [("Release Protection", "on"), ("Public IP", "off"), ("公钥", None)]
    assert [(a.intent.value, a.target, a.value) for a in steps[1].actions] == [("select", "Principal", None)]
