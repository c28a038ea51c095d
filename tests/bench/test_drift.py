"""The drift benchmark's scorer (`docverify bench drift`) on fixtures with known answers."""

import json

import pytest
import yaml
from click.testing import CliRunner

from docverify.cli import cli
from docverify_bench.drift import Expected, figures, load_truth, score
from docverify_bench.tasks import BenchError


def entry(**overrides) -> Expected:
    values = dict(file="a.md", heading="H", line=1, language="en", product="OSS", written_for="2021-06", writer="t",
                  events=[{"service": "Oss", "event": "PutBucket"}], verdicts={"2021-06": "PASS", "2026-03": "DRIFT"},
                  findings={"2021-06": [], "2026-03": [{"line": 5, "kind": "missing_step", "also": ["label_changed"]},
                                                       {"line": 9, "kind": "menu_moved"}]})
    return Expected(**{**values, **overrides})


def test_the_scorer_counts_lines_kinds_and_consequences():
    result = {"verdict": "DRIFT", "criteria": [{"service": "Oss", "event": "PutBucket"}], "findings": [
        {"line": 5, "kind": "label_changed"},  # right line, an accepted kind
        {"line": 7, "kind": "element_not_found", "consequence_of": "a.md:5"},  # noise: not counted
        {"line": 8, "kind": "element_not_found"},  # a line the truth does not name
        {"line": 9, "kind": "not_verifiable"},  # no drift finding
    ]}
    tally = score([entry()], {0: result}, "2026-03")
    assert (tally.predicted_lines, tally.predicted_line_hits, tally.predicted_kind_hits) == (2, 1, 1)
    assert (tally.truth_lines, tally.truth_line_found, tally.truth_kind_found) == (2, 1, 1)
    assert tally.consequences == 1 and tally.confusion[("DRIFT", "DRIFT")] == 1
    assert tally.misses == ["2026-03 a.md:9: ['menu_moved'] not reported (DRIFT)"]
    own = score([entry()], {0: {"verdict": "DRIFT", "findings": [], "criteria": []}}, "2021-06")
    assert own.own_release["DRIFT"] == 1  # a false DRIFT at the doc's own release
    numbers = figures(tally)
    assert numbers["line_precision"] == {"value": 0.5, "part": 1, "whole": 2}
    assert numbers["kind_recall"]["value"] == 0.5 and numbers["drift_precision"]["value"] == 1.0


def test_procedure_level_precision_recall_and_untouched_docs():
    touched = entry()
    untouched = entry(file="b.md", verdicts={"2021-06": "PASS", "2026-03": "PASS"},
                      findings={"2021-06": [], "2026-03": []})
    missed = entry(file="c.md")
    got = {0: {"verdict": "DRIFT", "findings": []}, 1: {"verdict": "DRIFT", "findings": []},
           2: {"verdict": "PASS", "findings": []}}
    numbers = figures(score([touched, untouched, missed], got, "2026-03"))
    # DRIFT said twice, right once (the untouched doc is a false DRIFT); two expected, one found
    assert numbers["drift_precision"] == {"value": 0.5, "part": 1, "whole": 2}
    assert numbers["drift_recall"] == {"value": 0.5, "part": 1, "whole": 2}
    assert numbers["false_drift_untouched"] == {"value": 1.0, "part": 1, "whole": 1}
    # no doc was written for 2026-03: no own-release figure
    assert numbers["false_drift_own_release"]["value"] is None


def write_set(folder, truth):
    (folder / "docs" / "oss").mkdir(parents=True)
    (folder / "docs" / "oss" / "a.md").write_text("# Create a bucket\n\n1. Click **Create Bucket**.\n2. Click **OK**.\n")
    (folder / "truth").mkdir()
    (folder / "truth" / "t.yaml").write_text(yaml.safe_dump({"writer": "t", "procedures": truth}))


TRUTH = {"file": "oss/a.md", "heading": "Create a bucket", "line": 1, "product": "OSS", "written_for": "2021-06",
         "expected": {"2021-06": {"verdict": "PASS"},
                      "2026-03": {"verdict": "DRIFT", "findings": [{"line": 3, "kind": "label_changed"}]}}}


def test_bench_drift_scores_kept_runs(tmp_path):
    folder = tmp_path / "set"
    write_set(folder, [TRUTH])
    runs = tmp_path / "runs"
    for release, verdict, findings in (("2021-06", "PASS", []),
                                       ("2026-03", "DRIFT", [{"line": 3, "kind": "label_changed"}])):
        (runs / release).mkdir(parents=True)
        result = {"path": str(folder / "docs" / "oss" / "a.md"), "line": 1, "title": "Create a bucket",
                  "verdict": verdict, "findings": findings, "criteria": [], "reason": ""}
        (runs / release / "docverify.json").write_text(json.dumps({"results": [result], "duration_s": 3.0}))
    out = tmp_path / "report" / "drift.md"
    done = CliRunner().invoke(cli, ["bench", "drift", "--docs", str(folder), "--from-runs", str(runs),
                                    "--out", str(out)])
    assert done.exit_code == 0, done.output
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["2026-03"]["drift_recall"]["value"] == 1.0 and data["2026-03"]["kind_precision"]["value"] == 1.0
    assert data["2021-06"]["false_drift_own_release"] == {"value": 0.0, "part": 0, "whole": 1}
    assert "| drift recall | — | 1.00 (1/1) | 1.00 (1/1) |" in out.read_text()
    assert (tmp_path / "report" / "drift-drift.png").read_bytes()[:4] == b"\x89PNG"
    missing = CliRunner().invoke(cli, ["bench", "drift", "--docs", str(folder), "--from-runs", str(tmp_path / "none")])
    assert missing.exit_code != 0 and "no run kept for 2021-06" in missing.output


def test_a_malformed_truth_entry_is_named(tmp_path):
    write_set(tmp_path, [{**TRUTH, "expected": {"2021-06": {"verdict": "PASS"},
                                                "2026-03": {"verdict": "DRIFT", "findings": [{"line": 3, "kind": "typo"}]}}}])
    with pytest.raises(BenchError, match=r"t.yaml: procedure 1: 2026-03 finding kind 'typo'"):
        load_truth(tmp_path)
    write_set(tmp_path / "other", [{**TRUTH, "file": "oss/missing.md"}])
    with pytest.raises(BenchError, match="no such doc"):
        load_truth(tmp_path / "other")
