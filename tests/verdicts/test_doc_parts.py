"""Docs in numbered parts: "Step 2: ..." goes on from where "Step 1: ..." ended.

Run alone, such a part starts on the console's home page and its first control is not
there: a false DRIFT (20 of the corpus's 2021-06 non-PASS were such parts). The parser
links each part to the one before it, ``check`` runs the parts before it first in the
same browser, and only the part's own steps are judged; a part before it that does not
get through makes it ENV_ERROR (not judged), never DRIFT.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner
from verdict_helpers import procedure as one_procedure

from docverify.check.verdict import Finding, FindingKind
from docverify.cli import cli
from docverify.execute.actions import Action, ActionKind
from docverify.parse.parser import parse_text
from docverify.parse.sequence import lead_in, part_number, with_lead_in
from docverify.report.trajectory import Turn
from docverify.run.runner import Outcome, Runner
from docverify.task import make_task


@pytest.mark.parametrize(("title", "number"), [
    ("Step 2: Complete the settings in the Networking step", 2), ("Step 3: (Optional) Complete the settings", 3),
    ("(Optional) Step 5: Resolve domain names", 5), ("步骤1：完成基础配置", 1), ("（可选）步骤3：完成系统配置", 3),
    ("步骤二：创建监听", 2), ("步骤十二：收尾", 12), ("操作步骤", None), ("Procedure", None), ("Steps to follow", None),
])
def test_the_number_of_a_part_from_its_heading(title, number):
    assert part_number(title) == number


PARTS = """
    # Create an instance

    ## Step 1: Open the wizard

    1. Click **Create Instance**.

    ## Step 2: Networking

    1. Select **VPC**.
    2. Click **Next**.

    ## Step 3: (Optional) Grouping

    1. Enter a tag.

    ## Step 5: Confirm the order

    1. Click **Create Instance**.
"""


def test_each_part_goes_on_from_the_one_before():
    document = parse_text(textwrap.dedent(PARTS), "wizard.md")
    by_id = {p.id: p for p in document.procedures}
    assert [(p.title.split(":")[0], p.continues) for p in document.procedures] == [
        ("Step 1", None), ("Step 2", "wizard#step-1-open-the-wizard"), ("Step 3", "wizard#step-2-networking"),
        ("Step 5", "wizard#step-3-optional-grouping")]
    last = document.procedures[-1]
    chain = lead_in(last, by_id.get)
    assert [p.title.split(":")[0] for p in chain] == ["Step 1", "Step 2", "Step 3"]
    combined = with_lead_in(last, chain)
    assert [s.number for s in combined.all_steps()] == ["p1.1", "p2.1", "p2.2", "p3.1", "1"]
    assert combined.lead_in == [p.id for p in chain]
    # the part's own success criteria, not the first part's "Create Instance"
    assert make_task(combined).criteria == make_task(last).criteria


def test_a_procedure_without_numbered_parts_goes_on_from_nothing():
    single = one_procedure("""
        # Procedure

        1. Click **Create Bucket**.
    """)
    assert single.continues is None and lead_in(single, lambda _id: None) == []


def _finding(step: str, kind: FindingKind = FindingKind.ELEMENT_NOT_FOUND) -> Finding:
    return Finding(kind=kind, path="wizard.md", line=6, step=step, expected="Create Instance",
                   observed="no such control on the page")


def test_a_part_before_that_drifts_makes_this_one_not_judged():
    document = parse_text(textwrap.dedent(PARTS), "wizard.md")
    by_id = {p.id: p for p in document.procedures}
    second = document.procedures[1]
    task = make_task(with_lead_in(second, lead_in(second, by_id.get)))
    outcome = Outcome(started=0.0, findings=[_finding("p1.1")],
                      done=Action(ActionKind.DONE, status="blocked", message="stuck"))
    outcome.turns = [Turn(0, "p1.1", {}, "flag")]
    why = Runner.lead_in_failed(task, outcome)
    assert why is not None and "wizard#step-1-open-the-wizard" in why and "wizard.md:6" in why
    # a part before that drifted but went on: this part's own steps were reached and are judged
    through = Outcome(started=0.0, findings=[_finding("p1.1", FindingKind.LABEL_CHANGED), _finding("1")])
    through.turns = [Turn(0, "p1.1", {}, "click"), Turn(1, "1", {}, "flag")]
    assert Runner.lead_in_failed(task, through) is None


CREATE_BUCKET = """\
    # Buckets

    ## Step 1: Open the bucket form

    1. Log on to the OSS console.
    2. In the left-side navigation pane, click **Buckets**.
    3. Click **{button}**.

    ## Step 2: Configure the bucket

    1. Configure the following parameters.

        |Parameter|Value|
        |---|---|
        |**Bucket Name**|`docverify-parts-<suffix>`|

    2. Click **OK**.
"""


@pytest.mark.browser
@pytest.mark.slow
def test_check_runs_the_parts_before_a_part_first(tmp_path, chromium):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text(textwrap.dedent(CREATE_BUCKET).replace("{button}", "Create Bucket"), encoding="utf-8")
    (docs / "broken.md").write_text(textwrap.dedent(CREATE_BUCKET).replace("{button}", "Make Bucket"), encoding="utf-8")
    args = ["check", f"{docs / 'good.md'}#step-2-configure-the-bucket", str(docs / "broken.md"), "--no-store",
            "--report", "json", "--output", str(tmp_path / "out"), "--browser-path", str(chromium.path),
            "--jobs", "2", "--set", "console.sandbox.release=2021-06", "--provisioner", "none"]
    env = {"DOCVERIFY_CONSOLE": None, "DOCVERIFY_POLICY": None, "DOCVERIFY_CONSOLE__SANDBOX__RELEASE": None,
           "DOCVERIFY_CONFIG": None, "DOCVERIFY_JOBS": None}
    output = CliRunner().invoke(cli, args, env=env, catch_exceptions=False).output
    results = {r["id"]: r for r in json.loads((tmp_path / "out" / "docverify.json").read_text())["results"]}
    good = results["good#step-2-configure-the-bucket"]
    assert good["verdict"] == "PASS", output
    assert [s["number"] for s in good["steps"]] == ["1", "2"]  # its own steps only
    assert any(t["step"] == "p1.3" for t in good["turns"])  # the form was opened by step 1's part
    assert results["broken#step-1-open-the-bucket-form"]["verdict"] == "DRIFT"
    broken = results["broken#step-2-configure-the-bucket"]
    assert broken["verdict"] == "ENV_ERROR" and "broken#step-1-open-the-bucket-form" in broken["reason"], broken
    assert "broken.md:7: step 3: element not found" in broken["reason"]
    assert broken["findings"] == []


def test_the_part_named_is_the_one_it_got_stuck_in():
    document = parse_text(textwrap.dedent(PARTS), "wizard.md")
    by_id = {p.id: p for p in document.procedures}
    last = document.procedures[-1]
    task = make_task(with_lead_in(last, lead_in(last, by_id.get)))
    # part 1 drifted but went on; part 2 got stuck
    outcome = Outcome(started=0.0, findings=[_finding("p1.1", FindingKind.LABEL_CHANGED), _finding("p2.2")])
    outcome.turns = [Turn(0, "p1.1", {}, "click"), Turn(1, "p2.1", {}, "select"), Turn(2, "p2.2", {}, "flag")]
    why = Runner.lead_in_failed(task, outcome)
    assert "'wizard#step-2-networking'" in why and "step 2: element not found" in why, why


def test_a_part_after_a_skipped_part_is_skipped_too_and_dry_run_shows_what_runs_first(tmp_path):
    doc = tmp_path / "parts.md"
    doc.write_text(textwrap.dedent("""\
        # Buckets

        <!-- docverify: skip: "deletes the production bucket" -->
        ## Step 1: Delete the bucket

        1. Click **Delete Bucket**.

        ## Step 2: Confirm

        1. Click **OK**.

        ## Step 3: Check

        1. Click **Refresh**.
    """), encoding="utf-8")
    env = {"DOCVERIFY_CONSOLE": None, "DOCVERIFY_POLICY": None, "DOCVERIFY_CONFIG": None}
    result = CliRunner().invoke(cli, ["check", str(doc), "--dry-run"], env=env, catch_exceptions=False)
    assert "parts#step-2-confirm skipped: it goes on from 'Step 1: Delete the bucket'" in result.output
    assert "parts#step-3-check skipped: it goes on from 'Step 1: Delete the bucket'" in result.output
    alone = tmp_path / "alone.md"
    alone.write_text(textwrap.dedent(PARTS), encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", f"{alone}#step-2-networking", "--dry-run"], env=env,
                                catch_exceptions=False)
    assert "goes on from (run first): alone#step-1-open-the-wizard" in result.output, result.output
