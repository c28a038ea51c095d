"""Notes, warnings and tips: recognised so they never become steps or labels.

Three spellings occur in real docs:

- Alibaba Cloud: ``**Note:** text`` / ``**说明：** text`` at the start of a line,
  or ``**Note:**`` alone followed by a list;
- AWS: ``**Important**`` alone on a line, the text on the next line, often at
  column 0 in the middle of a list item (so it is a lazy continuation of the
  item's paragraph and must be cut out of it);
- Azure (DocFX): a block quote starting ``> [!NOTE]``.

`split_notes` cuts note segments out of a paragraph's inline tokens at any line
start, so the step text keeps only what precedes the first note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it.token import Token

from docverify.parse.inline import plain, render_inline

_KINDS = {
    "note": "note",
    "notes": "note",
    "important": "important",
    "warning": "warning",
    "tip": "tip",
    "caution": "caution",
    "danger": "danger",
    "notice": "caution",
    "attention": "caution",
    "说明": "note",
    "注意": "caution",
    "警告": "warning",
    "重要": "important",
    "提示": "tip",
    "危险": "danger",
    "注意事项": "caution",
}
_MARKER = re.compile(r"^\s*(" + "|".join(_KINDS) + r")\s*[:：]?\s*$", re.IGNORECASE)
_DOCFX = re.compile(r"^\s*\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*", re.IGNORECASE)
_LEADING_COLON = re.compile(r"^[\s:：]+")


@dataclass
class NoteSegment:
    kind: str
    line: int
    tokens: list[Token] = field(default_factory=list)

    @property
    def text(self) -> str:
        return _LEADING_COLON.sub("", plain(render_inline(self.tokens)))


def marker_kind(text: str) -> str | None:
    """The note kind if `text` is a note marker word ("Note:", "说明"), else None."""
    match = _MARKER.match(text)
    return _KINDS[match[1].lower()] if match else None


def split_notes(tokens: list[Token], first_line: int) -> tuple[list[Token], list[NoteSegment]]:
    """Split a paragraph's inline tokens into its own text and its note segments."""
    main: list[Token] = []
    notes: list[NoteSegment] = []
    current = main
    line = first_line
    at_line_start = True
    index = 0
    count = len(tokens)
    while index < count:
        token = tokens[index]
        kind = token.type
        if (
            at_line_start
            and kind == "strong_open"
            and index + 2 < count
            and tokens[index + 1].type == "text"
            and tokens[index + 2].type == "strong_close"
        ):
            note_kind = marker_kind(tokens[index + 1].content)
            if note_kind:
                segment = NoteSegment(note_kind, line)
                notes.append(segment)
                current = segment.tokens
                index += 3
                at_line_start = False
                continue
        if kind in ("softbreak", "hardbreak"):
            line += 1
            at_line_start = True
        elif not (kind == "text" and not token.content.strip()):
            at_line_start = False
        current.append(token)
        index += 1
    return main, notes


def docfx_kind(marked_first_line: str) -> tuple[str, str] | None:
    """("note", rest) for a block quote starting ``[!NOTE]``; None otherwise."""
    match = _DOCFX.match(marked_first_line)
    if not match:
        return None
    return match[1].lower(), marked_first_line[match.end() :]
