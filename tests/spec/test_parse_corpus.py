"""Every real document parses cleanly and yields its procedures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus_location import real_docs_root
from tests_spec_helpers import all_lines

from docverify.parse.model import Severity
from docverify.parse.parser import parse_file, parse_paths

_ROOT = real_docs_root()
DOCUMENTS = sorted(_ROOT.rglob("*.md"))
_ORDERED_ITEM = re.compile(r"^\s*\d{1,3}[.)]\s+\S")


def _has_ordered_steps(path: Path) -> bool:
    in_fence = False
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence and _ORDERED_ITEM.match(line):
            return True
    return False


def test_corpus_has_documents(real_docs: Path) -> None:
    assert len(list(real_docs.rglob("*.md"))) >= 40


@pytest.mark.parametrize("path", DOCUMENTS, ids=[str(p.relative_to(_ROOT)) for p in DOCUMENTS])
def test_document_parses_without_errors(path: Path, real_docs: Path) -> None:
    document = parse_file(path)
    assert [d for d in document.diagnostics if d.severity is Severity.ERROR] == []
    if _has_ordered_steps(path):
        assert document.procedures, "a document with an ordered list of steps yields a procedure"
    line_count = path.read_text(encoding="utf-8").count("\n") + 1
    for line in all_lines(document):
        assert 1 <= line <= line_count
    for procedure in document.procedures:
        assert procedure.line <= procedure.end_line
        assert procedure.steps
        assert procedure.id.startswith(procedure.id.split("#")[0] + "#")
    assert len({p.id for p in document.procedures}) == len(document.procedures)


def test_parse_paths_over_the_corpus(real_docs: Path) -> None:
    documents = parse_paths([real_docs])
    assert len(documents) == len(list(real_docs.rglob("*.md")))
    assert sum(len(d.procedures) for d in documents) >= 100
