"""`--report json`: the whole run, trajectories included, readable back."""

import json

from docverify.report.trajectory import ProcedureResult
from docverify_reports.json_report import JsonReporter

from report_samples import make_summary, sample_results


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
