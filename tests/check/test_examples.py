"""The example docs, checked end to end against the embedded sandbox console.

- every procedure of ``examples/docs`` (written for the sandbox's current release)
  PASSes, unless its annotation skips it with a reason;
- every procedure of ``examples/drifted`` (written for the 2021-06 release) is DRIFT
  against 2026-03, with the finding kind its annotation names (``x-drift``) on the
  doc line it names (``x-line``), for a change the release changelog lists
  (``x-changelog: "<product>: <old> -> <new>"``).

Each folder is checked once (module fixtures) through the CLI, with the JSON report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from docverify.check.verdict import FindingKind
from docverify.cli import cli
from docverify.parse.model import Procedure
from docverify.parse.parser import parse_paths

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOCS = EXAMPLES / "docs"
DRIFTED = EXAMPLES / "drifted"
#: The release the drifted examples are checked against (their changelog entries end there).
DRIFT_RELEASE = "2026-03"
#: CLI options shared by both runs: no run store, and an environment that cannot move the console.
COMMON = ["--no-store", "--jobs", "2", "--report", "json"]
CLEAN_ENV = {"DOCVERIFY_CONSOLE": None, "DOCVERIFY_POLICY": None, "DOCVERIFY_CONSOLE__SANDBOX__RELEASE": None,
             "DOCVERIFY_CONFIG": None, "DOCVERIFY_JOBS": None}


def procedures(folder: Path) -> list[Procedure]:
    documents = parse_paths([folder])
    found = [procedure for document in documents for procedure in document.procedures]
    assert found, f"no procedures in {folder}"
    return found


def skipped(procedure: Procedure) -> bool:
    return procedure.annotation is not None and bool(procedure.annotation.skip)


def extra(procedure: Procedure, key: str):
    annotation = procedure.annotation
    return None if annotation is None else annotation.extra.get(key)


def check(folder: Path, output: Path, browser, *options: str) -> dict:
    """``docverify check FOLDER`` through the CLI, with the browser the ``chromium`` fixture found;
    the JSON report it wrote, plus the exit code and output."""
    args = ["check", str(folder), *COMMON, "--output", str(output), "--browser-path", str(browser.path), *options]
    result = CliRunner().invoke(cli, args, env=CLEAN_ENV, catch_exceptions=False)
    report = output / "docverify.json"
    assert report.exists(), f"docverify {' '.join(args)} wrote no report (exit {result.exit_code}):\n{result.output}"
    data = json.loads(report.read_text(encoding="utf-8"))
    data["exit_code"] = result.exit_code
    data["output"] = result.output
    return data


def summary(result: dict) -> str:
    findings = "; ".join(f"{f['kind']}@{f['line']}: {f['expected']} -> {f['observed']}" for f in result["findings"])
    return f"{result['id']}: {result['verdict']} ({result['reason']}) findings: {findings or 'none'}"


@pytest.fixture(scope="module")
def docs_run(chromium, tmp_path_factory) -> dict:
    return check(DOCS, tmp_path_factory.mktemp("docs"), chromium)


@pytest.fixture(scope="module")
def drifted_run(chromium, tmp_path_factory) -> dict:
    return check(DRIFTED, tmp_path_factory.mktemp("drifted"), chromium, "--set", f"console.sandbox.release={DRIFT_RELEASE}")


@pytest.fixture(scope="module")
def changelog() -> set[str]:
    result = CliRunner().invoke(cli, ["sandbox", "changelog", "--from", "2021-06", "--to", DRIFT_RELEASE, "--json"])
    assert result.exit_code == 0, result.output
    return {f"{c['product']}: {c['old']} -> {c['new']}" for c in json.loads(result.output)}


def test_example_docs_are_annotated():
    """Cheap checks first: enough procedures and products, each with success criteria; a skip says why."""
    runnable = [p for p in procedures(DOCS) if not skipped(p)]
    assert len(runnable) >= 12, [p.id for p in runnable]
    assert len({p.product for p in runnable}) >= 6, sorted({str(p.product) for p in runnable})
    for procedure in procedures(DOCS):
        assert procedure.annotation is not None and procedure.annotation.expect, f"{procedure.id}: no expect:"
        if skipped(procedure):
            assert isinstance(procedure.annotation.skip, str) and procedure.annotation.skip.strip(), (
                f"{procedure.id}: a skipped example says why")


def test_drifted_examples_are_annotated(changelog):
    found = procedures(DRIFTED)
    assert len(found) >= 8
    kinds = {kind.value for kind in FindingKind if kind.is_drift}
    for procedure in found:
        assert not skipped(procedure), procedure.id
        assert extra(procedure, "x-drift") in kinds, f"{procedure.id}: x-drift must be one of {sorted(kinds)}"
        assert extra(procedure, "x-changelog") in changelog, f"{procedure.id}: x-changelog is not a changelog entry"
        line = extra(procedure, "x-line")
        assert isinstance(line, int) and procedure.line <= line <= procedure.end_line, f"{procedure.id}: x-line"
    entries = [extra(procedure, "x-changelog") for procedure in found]
    assert len(set(entries)) == len(entries), "each drifted example drifts for a different changelog entry"


def test_example_docs_pass(docs_run):
    results = {r["id"]: r for r in docs_run["results"]}
    expected = {p.id for p in procedures(DOCS) if not skipped(p)}
    assert set(results) == expected
    failing = [summary(r) for r in results.values() if r["verdict"] != "PASS"]
    assert not failing, "\n".join(failing)
    assert docs_run["exit_code"] == 0, docs_run["output"]


def test_drifted_examples_drift_where_annotated(drifted_run):
    results = {r["id"]: r for r in drifted_run["results"]}
    found = procedures(DRIFTED)
    assert set(results) == {p.id for p in found}
    wrong = []
    for procedure in found:
        result = results[procedure.id]
        kind, line = extra(procedure, "x-drift"), extra(procedure, "x-line")
        hit = any(f["kind"] == kind and f["line"] == line for f in result["findings"])
        if result["verdict"] != "DRIFT" or not hit:
            wrong.append(f"expected {kind} at {procedure.path}:{line}; got {summary(result)}")
    assert not wrong, "\n".join(wrong)
    assert drifted_run["exit_code"] == 1
