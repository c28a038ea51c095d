"""The document's top-level blocks -> `Procedure`s.

A procedure is an ordered list of steps in a section. How the blocks are read:

- **Sections.** Headings open sections; the heading stack gives
  `Procedure.headings`. A tab heading (Azure ``# [**Standard SKU**](#tab/...)``,
  AWS ``#### [ Console ]``) is nested one level under the heading before it
  whatever its ``#`` count, and a thematic break (``---``), which ends a tab
  group in both formats, closes it. So each tab is its own section and **each
  tab's list is its own procedure** (titled "Standard SKU"): tabs are
  different ways to reach different results, each runnable on its own.
- **Titles.** A procedure is titled by a bold "To ..." line right before its
  list (AWS ``**To create a bucket**``), else by its section heading, else by
  the document title, else by the file name. Generic headings ("Procedure",
  "操作步骤", "Console") defer to the heading above them.
- **One procedure, many lists.** Ordered lists in the same section are one
  procedure even when paragraphs, notes, images, code, tables or bullet lists
  sit between them (AWS puts ``**Important**`` at column 0 inside its lists,
  which ends the Markdown list); numbering continues. The blocks in between
  are read as part of the last step before them. Only a heading, a thematic
  break, a "To ..." title, an annotation comment or a paragraph such as
  "To stop an instance, follow these steps:" starts a new procedure.
- **Methods.** "Method 1: ..." as headings gives separate procedures; as
  bullets inside a step it gives `Step.alternatives` (`steps.py`).
- **Prerequisites and notes.** Prerequisite sections (`prerequisites.py`)
  never hold procedures; their items, and precondition sentences before a
  list, become `Procedure.prerequisites` of the procedures after them in the
  enclosing section. Notes before a list, and after its last step, are
  `Procedure.notes`.
- **Annotations** (`annotations.py`): a ``<!-- docverify: ... -->`` comment
  before the first heading is document level; one right before a heading
  belongs to the first procedure in that heading's section; one right before
  a "To ..." title or a list belongs to that procedure; one elsewhere before
  any procedure is document level, after one it is ignored with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it.tree import SyntaxTreeNode

from docverify.parse.annotations import ParsedAnnotation, combine, is_annotation_comment, parse_comment
from docverify.parse.inline import LINK_URL, is_bold_only, plain, render_inline
from docverify.parse.model import Note, Procedure, Step
from docverify.parse.notes import split_notes
from docverify.parse.prerequisites import (
    is_prerequisite_heading,
    led_prerequisites,
    looks_like_prerequisite,
    prerequisite_sentences,
)
from docverify.parse.source import Source
from docverify.parse.steps import StepBuilder

_HEADING_ATTRS = re.compile(r"\s*\{#[^}]*\}\s*$")
_AWS_TAB = re.compile(r"^\[\s*(.+?)\s*\]$")
_TO_TITLE = re.compile(r"^to\s+\S", re.IGNORECASE)
_INTRO = re.compile(
    r"^(?:(?P<goal>to\s+[^,]{3,100}),\s*)?(?:please\s+)?(?:perform|follow|complete|do|use)\s+(?:the\s+)?(?:following|these)\s+"
    r"(?:steps|operations|procedure)|(?:完成|执行|按照?|参考)以下(?:操作|步骤)",
    re.IGNORECASE,
)
_GENERIC = re.compile(
    r"^(?:procedures?|steps?|procedure\s+steps|instructions|how\s+to|console|using\s+the\s+console|"
    r"aws\s+management\s+console|操作步骤|步骤|操作流程|操作方法|控制台)$",
    re.IGNORECASE,
)


@dataclass
class _Heading:
    level: int
    title: str
    line: int
    tab: bool = False
    prerequisite: bool = False
    prerequisites: list[str] = field(default_factory=list)


@dataclass
class _Building:
    procedure: Procedure
    last_number: int
    buffer: list[SyntaxTreeNode] = field(default_factory=list)


@dataclass
class Assembled:
    """What the walk found: procedures (with their own annotations) and document defaults."""

    procedures: list[tuple[Procedure, ParsedAnnotation | None]] = field(default_factory=list)
    document_annotation: ParsedAnnotation | None = None
    title: str | None = None


class ProcedureAssembler:
    def __init__(self, source: Source, fallback_title: str) -> None:
        self.source = source
        self.steps = StepBuilder(source)
        self.fallback_title = fallback_title
        self.result = Assembled()
        self.headings: list[_Heading] = []
        self.building: _Building | None = None
        self.building_annotation: ParsedAnnotation | None = None
        self.pending_title: tuple[str, int] | None = None
        self.section_notes: list[Note] = []
        self.waiting_note: Note | None = None
        self.document_prerequisites: list[str] = []
        # annotation waiting for its procedure
        self.annotation: ParsedAnnotation | None = None
        self.annotation_fresh = False
        self.annotation_scope: int | None = None
        self.seen_heading = False
        self.prerequisite_lead = False  # the last block was a bold "**Prerequisites**" line

    # -- entry point ---------------------------------------------------------
    def run(self, root: SyntaxTreeNode) -> Assembled:
        for block in root.children:
            if block.type == "html_block" and is_annotation_comment(block.content):
                self._annotation_comment(block)
                continue
            if self.annotation is not None and self.annotation_fresh:
                self._place_annotation(block)
            handler = getattr(self, f"_on_{block.type}", None)
            if handler is not None:
                handler(block)
            elif self.building is not None:
                self.building.buffer.append(block)
        self._close()
        if self.annotation is not None:
            self._unplaced_annotation()
        return self.result

    # -- blocks --------------------------------------------------------------
    def _on_heading(self, block: SyntaxTreeNode) -> None:
        self._close()
        marked = self.source.marked(block)
        title = _HEADING_ATTRS.sub("", plain(marked))
        level = int(block.tag[1:]) if block.tag[1:].isdigit() else 1
        tab_title = _tab_title(marked, title)
        if tab_title is not None:
            parent = next((h.level for h in reversed(self.headings) if not h.tab), 0)
            level, title = max(level, parent + 1), tab_title
        if self.annotation is not None:
            if self.annotation_scope is None:  # the annotation was right before this heading
                self.annotation_scope = level
            elif level <= self.annotation_scope:  # its section ended without a procedure
                self._unplaced_annotation()
        while self.headings and self.headings[-1].level >= level:
            self.headings.pop()
        prerequisite = is_prerequisite_heading(title) or any(h.prerequisite for h in self.headings)
        self.headings.append(_Heading(level, title, self.source.line(block), tab=tab_title is not None, prerequisite=prerequisite))
        if self.result.title is None and tab_title is None and title:
            self.result.title = title
        self.seen_heading = True
        self.pending_title = None
        self.section_notes = []
        self.waiting_note = None

    def _on_hr(self, block: SyntaxTreeNode) -> None:
        self._close()
        while self.headings and self.headings[-1].tab:
            self.headings.pop()
        self.pending_title = None

    def _on_html_block(self, block: SyntaxTreeNode) -> None:
        content = block.content
        if content.lstrip().startswith("<!--") and "-->" not in content:
            self.source.warn(self.source.line(block), "HTML comment is never closed with '-->'; the rest of the file is hidden")
        if self.building is not None:
            self.building.buffer.append(block)

    def _on_paragraph(self, block: SyntaxTreeNode) -> None:
        raw = block.children[0].content if block.children else ""
        if self._in_prerequisites():
            text = plain(self.source.marked(block))
            if text:
                self._prerequisite_target().append(text)
            return
        self.prerequisite_lead = False
        if raw.startswith(("**", "__")):
            marked = self.source.marked(block)
            text = plain(marked)
            if is_bold_only(marked) and _TO_TITLE.match(text):
                self._close()
                self.pending_title = (text.rstrip(":："), self.source.line(block))
                return
            if is_bold_only(marked) and is_prerequisite_heading(text.rstrip(":：")) and self.building is None:
                self.prerequisite_lead = True  # "**Requirements**" followed by a list
                return
        if self.building is not None:
            intro = _INTRO.search(raw)
            if intro and intro.start() == 0:
                self._close()
                goal = intro.group("goal")
                self.pending_title = (plain(goal), self.source.line(block)) if goal else ("", self.source.line(block))
                return
            self.building.buffer.append(block)
            return
        self._preamble_paragraph(block, raw)

    def _on_ordered_list(self, block: SyntaxTreeNode) -> None:
        if self._in_prerequisites():
            target = self._prerequisite_target()
            for item in block.children:
                text = self._first_text(item)
                if text:
                    target.append(text)
            return
        if self.building is None:
            self._open(block)
        else:
            self._flush_buffer()
        building = self.building
        assert building is not None
        start = _start_number(block)
        number = max(building.last_number + 1, start)
        for item in block.children:
            building.procedure.steps.append(self.steps.build(item, str(number)))
            building.last_number = number
            number += 1

    def _on_bullet_list(self, block: SyntaxTreeNode) -> None:
        lead, self.prerequisite_lead = self.prerequisite_lead, False
        if self._in_prerequisites() or (lead and self.building is None):
            target = self._prerequisite_target() if not lead else self._section_prerequisites()
            for item in block.children:
                text = self._first_text(item)
                if text:
                    target.append(text)
            return
        if self.building is not None:
            self.building.buffer.append(block)
        elif self.waiting_note is not None:
            self.waiting_note.text = " ".join(filter(None, (self._first_text(item) for item in block.children)))
            self.waiting_note = None

    def _on_blockquote(self, block: SyntaxTreeNode) -> None:
        if self.building is not None:
            self.building.buffer.append(block)
            return
        note = self.steps.blockquote_note(block)
        if note is not None and not self._in_prerequisites():
            self.section_notes.append(note)

    # -- annotations ---------------------------------------------------------
    def _annotation_comment(self, block: SyntaxTreeNode) -> None:
        parsed, problems = parse_comment(block.content, self.source.line(block), self.source.path)
        self.source.diagnostics.extend(problems)
        if parsed is None:
            return
        if not self.seen_heading:
            self.result.document_annotation = combine(self.result.document_annotation, parsed)
            return
        self._close()
        if self.annotation is not None:
            self.source.warn(self.annotation.annotation.line, "docverify annotation is not followed by a procedure; ignored")
        self.annotation, self.annotation_fresh, self.annotation_scope = parsed, True, None

    def _unplaced_annotation(self) -> None:
        """An annotation whose section ended without a procedure: before the file's
        first procedure it gives the file's defaults (as one before the first heading
        does); after one, it belongs to nothing."""
        assert self.annotation is not None
        if not self.result.procedures and self.building is None:
            self.result.document_annotation = combine(self.result.document_annotation, self.annotation)
        else:
            self.source.warn(self.annotation.annotation.line, "docverify annotation is not followed by a procedure; ignored")
        self.annotation = None

    def _place_annotation(self, block: SyntaxTreeNode) -> None:
        """Decide what the annotation just seen belongs to, from the block after it."""
        assert self.annotation is not None
        self.annotation_fresh = False
        if block.type == "heading":
            return  # scoped to that heading's section by _on_heading
        if block.type == "ordered_list" or (block.type == "paragraph" and _looks_like_title(block)):
            return  # taken by the procedure that starts here
        if not self.result.procedures and self.building is None:
            self.result.document_annotation = combine(self.result.document_annotation, self.annotation)
        else:
            self.source.warn(self.annotation.annotation.line, "docverify annotation is not right before a procedure; ignored")
        self.annotation = None

    # -- procedures ----------------------------------------------------------
    def _open(self, block: SyntaxTreeNode) -> None:
        first_line = self.source.line(block)
        title, line = self._title(first_line)
        procedure = Procedure(
            id="",
            title=title,
            path=self.source.path,
            line=line,
            end_line=first_line,
            headings=[h.title for h in self.headings],
            prerequisites=self._prerequisites(),
            notes=list(self.section_notes),
        )
        self.section_notes = []
        self.building = _Building(procedure, last_number=0)
        self.building_annotation, self.annotation = self.annotation, None
        self.pending_title = None

    def _title(self, first_line: int) -> tuple[str, int]:
        if self.pending_title is not None and self.pending_title[0]:
            return self.pending_title
        line = self.pending_title[1] if self.pending_title is not None else None
        for heading in reversed(self.headings):
            if heading.title and not _GENERIC.match(heading.title):
                return heading.title, line or self.headings[-1].line
        if self.headings:
            line = line or self.headings[-1].line
        return self.result.title or self.fallback_title, line or first_line

    def _prerequisites(self) -> list[str]:
        found = list(self.document_prerequisites)
        for heading in self.headings:
            found.extend(heading.prerequisites)
        return list(dict.fromkeys(found))

    def _flush_buffer(self) -> None:
        """Blocks between two lists of one procedure belong to its last step."""
        building = self.building
        assert building is not None
        if not building.buffer:
            return
        step = building.procedure.steps[-1]
        state = self.steps.new_state(step)
        for block in building.buffer:
            self.steps.add_block(step, state, block)
        self.steps.finish(step, state)
        step.end_line = max(step.end_line, max(self.source.end_line(b) for b in building.buffer))
        building.buffer = []

    def _close(self) -> None:
        building = self.building
        if building is None:
            return
        procedure = building.procedure
        for block in building.buffer:  # trailing notes after the last step
            if block.type == "paragraph":
                _, segments = split_notes(self.source.inline_tokens(block), self.source.line(block))
                procedure.notes.extend(Note(s.kind, s.text, s.line) for s in segments if s.text)
            elif block.type == "blockquote":
                note = self.steps.blockquote_note(block)
                if note is not None:
                    procedure.notes.append(note)
        procedure.end_line = max(_last_line(procedure.steps), procedure.line)
        self.result.procedures.append((procedure, self.building_annotation))
        self.building = None
        self.building_annotation = None

    # -- helpers -------------------------------------------------------------
    def _in_prerequisites(self) -> bool:
        return bool(self.headings) and self.headings[-1].prerequisite

    def _prerequisite_target(self) -> list[str]:
        """Where a prerequisite section's items go: the section enclosing it."""
        for heading in reversed(self.headings):
            if not heading.prerequisite:
                return heading.prerequisites
        return self.document_prerequisites

    def _section_prerequisites(self) -> list[str]:
        return self.headings[-1].prerequisites if self.headings else self.document_prerequisites

    def _preamble_paragraph(self, block: SyntaxTreeNode, raw: str) -> None:
        if raw.startswith(("**", "__")):  # "**Prerequisites:** An EIP is associated with ..."
            led = led_prerequisites(raw, plain(self.source.marked(block)))
            if led:
                self._section_prerequisites().extend(led)
                return
        if "**" in raw or "__" in raw or "[!" in raw:
            tokens = self.source.inline_tokens(block)
            main, segments = split_notes(tokens, self.source.line(block))
            for segment in segments:
                note = Note(segment.kind, segment.text, segment.line)
                self.section_notes.append(note)
                self.waiting_note = None if note.text else note
            if segments and not plain(render_inline(main)):
                return
            text = plain(render_inline(main))
        elif looks_like_prerequisite(raw):
            text = plain(self.source.marked(block))
        else:
            return
        if self.waiting_note is not None and text:
            self.waiting_note.text, self.waiting_note = text, None
            return
        if text and looks_like_prerequisite(text):
            self._section_prerequisites().extend(prerequisite_sentences(text))

    def _first_text(self, item: SyntaxTreeNode) -> str:
        for child in item.children:
            if child.type == "paragraph":
                return plain(self.source.marked(child))
        return ""


def _tab_title(marked: str, title: str) -> str | None:
    if LINK_URL + "#tab/" in marked:
        return title
    match = _AWS_TAB.match(title)
    return match[1] if match else None


def _looks_like_title(block: SyntaxTreeNode) -> bool:
    raw = block.children[0].content if block.children else ""
    return bool(re.match(r"^(?:\*\*|__)to\s", raw, re.IGNORECASE))


def _start_number(block: SyntaxTreeNode) -> int:
    try:
        return int(block.attrs.get("start", 1))
    except (TypeError, ValueError):
        return 1


def _last_line(steps: list[Step]) -> int:
    return max((step.end_line for step in steps), default=0)
