"""Markdown how-to documents -> procedures (the "parse" stage of docs/architecture.md).

Entry points live in `docverify.spec.parser`: `parse_text`, `parse_file`,
`parse_paths` and `discover`. The data they return is in `docverify.spec.model`.
"""

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
