"""`--report json`: the whole run, trajectories included, readable back."""

import json

import jsonschema
import pytest
from pydantic import ValidationError
from report_samples import make_summary, sample_results

from docverify.report.trajectory import RESULTS_VERSION, ProcedureResult, RunSummary
from docverify.schemas import SCHEMA_FILES, SHIPPED
from docverify_reports.json_report import JsonReporter


def test_json_holds_the_full_run_and_reads_back(summary, tmp_path):
    [path] = JsonReporter().run_finished(summary, tmp_path)
    assert path == tmp_path / "docverify.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["run_id"] == "run-20260301-abc123"
    assert data["counts"] == {"PASS": 1, "DRIFT": 1, "FAIL": 1, "ENV_ERROR": 1, "INCONCLUSIVE": 1}
    assert [r["id"] for r in data["results"]] == [r.id for r in summary.results]
    drifted = data["results"][1]
    assert drifted["turns"][1]["error"] == "element e9 is not visible"
    assert drifted["steps"][2]["findings"][0]["observed"] == "Create, ECS: instance\nnow 100%"
    back = [ProcedureResult.from_dict(r) for r in data["results"]]
    assert back == summary.results  # every field: findings, steps, turns, check, artifacts


def test_json_keeps_non_ascii_text_readable(tmp_path):
    result = sample_results()[0]
    result.title = "创建存储空间"
    [path] = JsonReporter().run_finished(make_summary([result]), tmp_path)
    text = path.read_text(encoding="utf-8")
    assert "创建存储空间" in text
    assert text.startswith('{\n  "run_id"')


def test_json_matches_the_shipped_schema_and_reads_back_whole(summary, tmp_path):
    [path] = JsonReporter().run_finished(summary, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    schema = json.loads((SHIPPED / SCHEMA_FILES["results"]).read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    assert data["version"] == RESULTS_VERSION
    assert list(data)[-1] == "results"  # the summary first
    back = RunSummary.from_dict(data)
    assert back.results == summary.results and back.counts() == summary.counts()
    assert back.to_dict() == data


def test_the_schema_rejects_what_docverify_would_not_write(summary, tmp_path):
    [path] = JsonReporter().run_finished(summary, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    schema = json.loads((SHIPPED / SCHEMA_FILES["results"]).read_text(encoding="utf-8"))
    data["results"][1]["findings"][0]["kidn"] = "label_changed"
    with pytest.raises(jsonschema.ValidationError, match="kidn"):
        jsonschema.validate(data, schema)


def test_a_mistyped_or_unknown_key_is_an_error_naming_it(summary):
    data = summary.results[1].to_dict()
    data["findings"][0]["kidn"] = data["findings"][0].pop("kind")
    with pytest.raises(ValidationError) as error:
        ProcedureResult.from_dict(data)
    assert "findings.0.kidn" in str(error.value) and "findings.0.kind" in str(error.value)
    with pytest.raises(ValidationError, match="verdict"):
        ProcedureResult.from_dict({**summary.results[0].to_dict(), "verdict": "PASSED"})


def test_another_results_version_is_refused(summary):
    data = summary.to_dict()
    data["version"] = RESULTS_VERSION + 1
    with pytest.raises(ValueError, match="results version"):
        RunSummary.from_dict(data)
