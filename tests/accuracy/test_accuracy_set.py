"""The accuracy set (benchmark/accuracy): its truth files are well-formed and name real doc
lines, and every procedure they describe is one the parser finds. The scorer's tests are
in tests/bench/test_drift.py."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from docverify.parse.parser import parse_file
from docverify_bench.drift import load_truth

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "benchmark" / "accuracy"


def test_the_set_is_what_the_issue_asks_for():
    truth = load_truth(SET)
    # issue 13: at least 60 docs written for 2021 and 20 that no change touches
    assert sum(t.written_for == "2021-06" for t in truth) >= 60
    assert sum(t.untouched for t in truth) >= 20
    assert Counter(t.language for t in truth)["zh"] * 5 >= len(truth)  # a fifth in Chinese
    assert len({t.product for t in truth}) == 12  # every sandbox product
    assert all(t.verdicts[t.written_for] == "PASS" and not t.findings[t.written_for] for t in truth)


def test_every_truth_entry_is_a_procedure_the_parser_finds_on_its_line():
    truth = load_truth(SET)
    for entry in truth:
        document = parse_file(SET / "docs" / entry.file)
        found = {(p.line, p.title) for p in document.procedures}
        assert any(line == entry.line for line, _ in found), (entry.file, entry.line, found)
        text = (SET / "docs" / entry.file).read_text(encoding="utf-8").splitlines()
        for release, findings in entry.findings.items():
            for finding in findings:
                assert text[int(finding["line"]) - 1].strip(), (entry.file, release, finding)  # a line of the doc
