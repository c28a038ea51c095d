"""Helpers shared by the parser tests."""

from __future__ import annotations

from collections.abc import Iterator

from docverify.parse.model import Document, Procedure, Step


def all_lines(document: Document) -> Iterator[int]:
    """Every line number the document's procedures carry."""
    for procedure in document.procedures:
        yield from procedure_lines(procedure)


def procedure_lines(procedure: Procedure) -> Iterator[int]:
    yield procedure.line
    yield procedure.end_line
    yield from (note.line for note in procedure.notes)
    for step in procedure.all_steps():
        yield from step_lines(step)


def step_lines(step: Step) -> Iterator[int]:
    yield step.line
    yield step.end_line
    yield from (action.line for action in step.actions)
    yield from (field.line for field in step.fields)
    yield from (note.line for note in step.notes)
    yield from (alternative.line for alternative in step.alternatives)
