"""The accuracy set (benchmark/accuracy): its truth files are well-formed and name real doc
lines, every procedure they describe is one the parser finds, and the scorer counts as
documented (a consequence is not counted; a kind listed under `also` is right)."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

from docverify.parse.parser import parse_file

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "benchmark" / "accuracy"


def scorer():
    spec = importlib.util.spec_from_file_location("accuracy", ROOT / "benchmark" / "accuracy.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("accuracy", module)  # dataclasses look their module up
    spec.loader.exec_module(sys.modules["accuracy"])
    return sys.modules["accuracy"]


def test_the_set_is_what_the_issue_asks_for():
    truth = scorer().load_truth(SET)
    assert len(truth) >= 40
    assert Counter(t.language for t in truth)["zh"] * 4 >= len(truth)  # a quarter in Chinese
    assert len({t.product for t in truth}) == 12  # every sandbox product
    assert all(t.verdicts[t.written_for] == "PASS" and not t.findings[t.written_for] for t in truth)


def test_every_truth_entry_is_a_procedure_the_parser_finds_on_its_line():
    truth = scorer().load_truth(SET)
    for entry in truth:
        document = parse_file(SET / "docs" / entry.file)
        found = {(p.line, p.title) for p in document.procedures}
        assert any(line == entry.line for line, _ in found), (entry.file, entry.line, found)
        text = (SET / "docs" / entry.file).read_text(encoding="utf-8").splitlines()
        for release, findings in entry.findings.items():
            for finding in findings:
                assert text[int(finding["line"]) - 1].strip(), (entry.file, release, finding)  # a line of the doc


def test_the_scorer_counts_lines_kinds_and_consequences():
    module = scorer()
    entry = module.Expected(file="a.md", heading="H", line=1, language="en", product="OSS", written_for="2021-06",
                            writer="t", events=[{"service": "Oss", "event": "PutBucket"}],
                            verdicts={"2021-06": "PASS", "2026-03": "DRIFT"},
                            findings={"2021-06": [], "2026-03": [{"line": 5, "kind": "missing_step", "also": ["label_changed"]},
                                                                  {"line": 9, "kind": "menu_moved"}]})
    result = {"verdict": "DRIFT", "criteria": [{"service": "Oss", "event": "PutBucket"}], "findings": [
        {"line": 5, "kind": "label_changed"},  # right line, an accepted kind
        {"line": 7, "kind": "element_not_found", "consequence_of": "a.md:5"},  # not counted
        {"line": 8, "kind": "element_not_found"},  # a line the truth does not name
        {"line": 9, "kind": "not_verifiable"},  # no drift finding
    ]}
    tally = module.score([entry], {0: result}, "2026-03")
    assert (tally.predicted_lines, tally.predicted_line_hits, tally.predicted_kind_hits) == (2, 1, 1)
    assert (tally.truth_lines, tally.truth_line_found, tally.truth_kind_found) == (2, 1, 1)
    assert tally.consequences == 1 and tally.confusion[("DRIFT", "DRIFT")] == 1
    own = module.score([entry], {0: {"verdict": "DRIFT", "findings": [], "criteria": []}}, "2021-06")
    assert own.own_release["DRIFT"] == 1  # a false DRIFT at the doc's own release
    figures = module.figures(tally)
    assert figures["line_precision"] == "0.50 (1/2)" and figures["kind_recall"] == "0.50 (1/2)"
