"""Markdown how-to documents -> procedures (the "parse" stage of docs/architecture.md).

Entry points live in `docverify.parse.parser`: `parse_text`, `parse_file`,
`parse_paths` and `discover`. The data they return is in `docverify.parse.model`.
"""

from docverify.parse.model import (
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
