"""A whole check without Chromium or the sandbox: the run's wiring, through fake plugins
registered like a third party's (tests/fake_plugins.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import fake_plugins
import pytest

from docverify.check.verdict import FindingKind, Verdict
from docverify.config import load_config
from docverify.parse.parser import parse_file
from docverify.plugins import load_plugins
from docverify.run.check import CheckOptions, CheckRun, EarlyStart
from docverify.task import make_task

DOC = """\
    # Create a bucket

    1. In the left-side navigation pane, click **Buckets**.
    2. On the Buckets page, click **Create Bucket**.
    3. Set **Bucket Name** to `docs-<suffix>`.
    4. Click **OK**.
"""

SITE = {
    "/": ("Overview", [("link", "Buckets", "/buckets"), ("link", "Instances", "/instances")]),
    "/buckets": ("Buckets", [("button", "Create Bucket", "/create")]),
    "/create": ("Create Bucket", [("textbox", "Bucket Name", None), ("button", "OK", "/done")]),
    "/done": ("Buckets", [("row", "docs-t0 Standard", None)]),
}


@pytest.fixture
def site(monkeypatch):
    def use(pages):
        monkeypatch.setattr(fake_plugins, "SITE", pages)
    use(SITE)
    return use


def run(tmp_path: Path, text: str = DOC):
    doc = tmp_path / "docs" / "bucket.md"
    doc.parent.mkdir(exist_ok=True)
    doc.write_text(textwrap.dedent(text), encoding="utf-8")
    plugins = load_plugins(extra=[fake_plugins])
    config = load_config(cwd=tmp_path, environ={}, overrides={
        "console.use": "fake-console", "executor.use": "fake-browser", "checker.use": "fake-goal",
        "reporter.use": "json"})
    task = make_task(parse_file(doc).procedures[0], suffix="t0")
    with EarlyStart(config, plugins) as early:
        summary = CheckRun(config, plugins, CheckOptions(output=tmp_path / "out"), [], early=early).run([task])
    [result] = summary.results
    return result


def test_a_doc_that_matches_the_console_passes(tmp_path, site):
    result = run(tmp_path)
    assert result.verdict is Verdict.PASS, result.reason
    assert [t.description for t in result.turns if t.action.get("kind") != "done"] == [
        "click link 'Buckets'", "click button 'Create Bucket'", "fill Bucket Name = 'docs-t0'", "click button 'OK'"]
    assert result.check.checker == "fake-goal" and result.goal_reached


def test_a_renamed_button_is_drift_on_the_docs_line(tmp_path, site):
    site({**SITE, "/buckets": ("Buckets", [("button", "New Bucket", "/create")])})
    result = run(tmp_path)
    assert result.verdict is Verdict.DRIFT, result.reason
    [finding, *_] = result.findings
    assert (Path(finding.path).name, finding.line, finding.step) == ("bucket.md", 4, "2")
    assert finding.kind in (FindingKind.LABEL_CHANGED, FindingKind.ELEMENT_NOT_FOUND)
    assert "Create Bucket" in finding.message


def test_a_goal_not_reached_is_fail_not_pass(tmp_path, site):
    site({**SITE, "/create": ("Create Bucket", [("textbox", "Bucket Name", None), ("button", "OK", "/create")])})
    result = run(tmp_path)
    assert result.verdict is Verdict.FAIL and result.goal_reached is False, result.reason
