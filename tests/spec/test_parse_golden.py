"""Hand-written expectations for real documents (tests/spec/golden/*.yaml).

Each YAML file names a corpus document and lists every procedure it must
yield, in order, with selected steps. Only the keys written in a golden file
are compared, so a golden states what a reader of the doc knows to be true
(line numbers checked with ``grep -n``), not a dump of parser output:

- procedure: ``id``, ``title``, ``product``, ``line``, ``end_line``,
  ``step_count`` (top-level steps), ``prerequisites_include``, ``notes``
  (kinds), ``placeholders``;
- step (found by ``number``, sub-steps and alternative steps included):
  ``line``, ``intent``, ``actions`` (intents in order), ``target``/``value``/
  ``url`` (of the first action), ``labels``, ``menu_paths``, ``fields``
  (the step's whole field list; each entry's written keys are compared),
  ``notes`` (kinds), ``substeps`` (count), ``alternatives`` (title, line,
  step numbers), ``optional``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from docverify.parse.model import Procedure, Step
from docverify.parse.parser import parse_file

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_FILES = sorted(GOLDEN.glob("*.yaml"))


def test_goldens_cover_every_format() -> None:
    documents = [yaml.safe_load(path.read_text(encoding="utf-8"))["document"] for path in GOLDEN_FILES]
    assert len(documents) >= 10
    assert sum("alibaba" in d and "/en/" in d for d in documents) >= 3
    assert sum("alibaba" in d and "/zh/" in d for d in documents) >= 2
    assert sum(d.startswith("aws_") for d in documents) >= 2
    assert sum(d.startswith("azure_") for d in documents) >= 1


@pytest.mark.parametrize("golden_path", GOLDEN_FILES, ids=[path.stem for path in GOLDEN_FILES])
def test_golden(golden_path: Path, real_docs: Path) -> None:
    golden = yaml.safe_load(golden_path.read_text(encoding="utf-8"))
    document = parse_file(real_docs / golden["document"])
    assert not document.errors, document.errors
    if "title" in golden:
        assert document.title == golden["title"]
    expected = golden["procedures"]
    assert [p.id for p in document.procedures] == [p["id"] for p in expected]
    for procedure, want in zip(document.procedures, expected):
        _check_procedure(procedure, want)


def _check_procedure(procedure: Procedure, want: dict) -> None:
    where = procedure.id
    for key in ("title", "product", "line", "end_line", "placeholders"):
        if key in want:
            assert getattr(procedure, key) == want[key], f"{where}: {key}"
    if "step_count" in want:
        assert len(procedure.steps) == want["step_count"], f"{where}: step count"
    for text in want.get("prerequisites_include", []):
        assert text in procedure.prerequisites, f"{where}: prerequisite {text!r} missing from {procedure.prerequisites}"
    if "notes" in want:
        assert [n.kind for n in procedure.notes] == want["notes"], f"{where}: notes"
    steps = {step.number: step for step in procedure.all_steps()}
    for step_want in want.get("steps", []):
        number = str(step_want["number"])
        assert number in steps, f"{where}: no step {number}; have {sorted(steps)}"
        _check_step(steps[number], step_want, f"{where} step {number}")


def _check_step(step: Step, want: dict, where: str) -> None:
    for key in ("line", "labels", "menu_paths", "optional"):
        if key in want:
            assert getattr(step, key) == want[key], f"{where}: {key}"
    if "intent" in want:
        assert step.intent.value == want["intent"], f"{where}: intent"
    if "actions" in want:
        assert [a.intent.value for a in step.actions] == want["actions"], f"{where}: actions"
    for key in ("target", "value", "url"):
        if key in want:
            assert step.actions, f"{where}: no action"
            assert getattr(step.actions[0], key) == want[key], f"{where}: first action {key}"
    if "notes" in want:
        assert [n.kind for n in step.notes] == want["notes"], f"{where}: notes"
    if "substeps" in want:
        assert len(step.substeps) == want["substeps"], f"{where}: substeps"
    if "fields" in want:
        assert len(step.fields) == len(want["fields"]), f"{where}: fields {[f.name for f in step.fields]}"
        for got, field_want in zip(step.fields, want["fields"]):
            for key, value in field_want.items():
                assert getattr(got, key) == value, f"{where}: field {got.name!r} {key}"
    if "alternatives" in want:
        got = [{"title": a.title, "line": a.line, "steps": [s.number for s in a.steps]} for a in step.alternatives]
        assert len(got) == len(want["alternatives"]), f"{where}: alternatives {got}"
        for alternative, alt_want in zip(got, want["alternatives"]):
            for key, value in alt_want.items():
                assert alternative[key] == value, f"{where}: alternative {key}"
