"""Markdown how-to documents -> procedures (the "parse" stage of DESIGN.md)."""

from docverify.spec.model import (
    Action,
    Alternative,
    Annotation,
    Diagnostic,
    Document,
    Field,
    Intent,
    Note,
    Procedure,
    Step,
)

__all__ = [
    "Action",
    "Alternative",
    "Annotation",
    "Diagnostic",
    "Document",
    "Field",
    "Intent",
    "Note",
    "Procedure",
    "Step",
]
