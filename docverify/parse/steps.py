"""One list item (and what hangs off it) -> a `Step`.

A step's blocks are read in order:

- the first paragraph is the step's `text`; every paragraph contributes
  labels, menu paths, placeholders and actions (`intents.py`), except note
  segments (`notes.py`), which become `Step.notes`, and a bold-only paragraph
  (a group title such as AWS's "**ACLs enabled**");
- a paragraph starting "You can also ..." / "Alternatively" / "您也可以" is
  an `Alternative` with one step;
- a nested ordered list gives sub-steps numbered ``<parent>.<n>``;
- a bullet list gives `Alternative`s when the step says "one of the
  following" (以下任一方式), when its items start "Method 1"/"方式一", or when
  every item holds its own ordered list (conditional branches). An ordered
  list right after such a bullet list, inside the same step, belongs to the
  last alternative (Alibaba writes "Method 2: ...", then the method's steps
  one level up). Alternative steps are numbered ``<parent><letter>.<n>``:
  ``4b.1`` is the first step of the second way to do step 4. Other bullet
  items of the form "**Label**: text" are `Field`s;
- a table gives `Field`s (`fields.py`), and a CONFIGURE action if the text
  named none;
- a block quote is a note (Azure ``> [!NOTE]`` sets the kind);
- code is scanned for placeholders only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it.tree import SyntaxTreeNode

from docverify.parse.fields import field_from_bullet, fields_from_sideways_table, fields_from_table
from docverify.parse.inline import is_bold_only, plain, render_inline
from docverify.parse.intents import extract_actions
from docverify.parse.labels import labels, menu_paths, unique
from docverify.parse.model import Action, Alternative, Field, Intent, Note, Step
from docverify.parse.notes import docfx_kind, split_notes
from docverify.parse.placeholders import find_placeholders
from docverify.parse.source import Source

_OPTIONAL = re.compile(r"^\s*(?:\(optional\)|optional:|（可选）|\(可选\)|可选：|可选:)\s*", re.IGNORECASE)
#: A step that applies only in a case: "If this is the first time you use ..., click **Create**",
#: "如果是首次使用...": the policy takes it when the page offers what it names.
_CONDITIONAL = re.compile(r"^\s*(?:(?:if|in\s+case)\b|如果|若|假如|如需|首次)", re.IGNORECASE)
_ALT_TRIGGER = re.compile(
    r"\bone\s+of\s+the\s+following\b|\beither\s+of\s+the\s+following\b|\bfollowing\s+(?:methods|ways)\b"
    r"|\bany\s+of\s+the\s+following\s+(?:methods|ways)\b|以下(?:任一|任意一?种?|其中一种|几种)?(?:方式|方法)|任选(?:其)?一|之一",
    re.IGNORECASE,
)
_ALT_ITEM = re.compile(r"^(?:method|option|approach|way)\s*\d+\b|^(?:方式|方法)[一二三四五六七八九十\d]+", re.IGNORECASE)
_ALSO = re.compile(r"^(?:you\s+can\s+also\b|alternatively\b|or,?\s+you\s+can\b|您也可以|也可以|或者)", re.IGNORECASE)
#: A sentence that says what the reader could do, not what to do: "After the listener
#: stops, you can click **Start** to start it again." (its controls are named, not clicked).
_ASIDE = re.compile(r"\b(?:you|users?)\s+(?:can|may|could)\b(?!\s+(?:also|now)\b)|您可以|你可以|用户可以|可以(?:再|重新)", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?。！？]*(?:[.!?](?=\s|$)|[。！？]|$)")


def _without_asides(marked: str) -> str:
    """``marked`` with its aside sentences blanked out (same length, line breaks kept,
    so the actions left keep their lines)."""
    if not _ASIDE.search(marked):
        return marked
    out = []
    for match in _SENTENCE.finditer(marked):
        sentence = match.group(0)
        out.append(re.sub(r"[^\n]", " ", sentence) if _ASIDE.search(sentence) else sentence)
    return "".join(out)


_TITLE_SPLIT = re.compile(r"^(.{1,80}?)(?:\s*[:：]\s+|\s+[–—-]\s+)(.+)$", re.S)


@dataclass
class _StepState:
    has_text: bool = False
    alternatives_trigger: bool = False
    after_alternatives: bool = False
    waiting_note: Note | None = None
    placeholder_text: list[str] = field(default_factory=list)


class StepBuilder:
    def __init__(self, source: Source) -> None:
        self.source = source

    def build(self, item: SyntaxTreeNode, number: str) -> Step:
        line, end_line = self.source.line(item), self.source.end_line(item)
        return self.from_blocks(item.children, number, line, end_line)

    def from_blocks(self, blocks: list[SyntaxTreeNode], number: str, line: int, end_line: int) -> Step:
        step = Step(number=number, line=line, end_line=end_line, text="", intent=Intent.FREE_TEXT)
        state = _StepState()
        for block in blocks:
            self.add_block(step, state, block)
        self.finish(step, state)
        return step

    def new_state(self, step: Step) -> _StepState:
        """State for adding blocks to an already built step (interleaved content)."""
        return _StepState(has_text=True, alternatives_trigger=bool(_ALT_TRIGGER.search(step.text)))

    def finish(self, step: Step, state: _StepState) -> None:
        step.labels = unique(step.labels)
        step.intent = step.actions[0].intent if step.actions else Intent.FREE_TEXT
        texts = state.placeholder_text + [f.value for f in step.fields if f.value]
        step.placeholders = unique(step.placeholders + find_placeholders("\n".join(texts)))
        state.placeholder_text = []

    # -- blocks ------------------------------------------------------------
    def add_block(self, step: Step, state: _StepState, block: SyntaxTreeNode) -> None:
        kind = block.type
        if kind == "paragraph":
            self._paragraph(step, state, block)
        elif kind == "ordered_list":
            self._ordered_list(step, state, block)
            return
        elif kind == "bullet_list":
            self._bullet_list(step, state, block)
            return
        elif kind == "table":
            self._table(step, state, block)
        elif kind == "blockquote":
            self._blockquote(step, block)
        elif kind in ("code_block", "fence"):
            state.placeholder_text.append(block.content)
        elif kind == "html_block" and "docverify" in block.content:
            self.source.warn(self.source.line(block), "docverify annotation inside a list item is ignored")
        state.after_alternatives = False

    def _paragraph(self, step: Step, state: _StepState, block: SyntaxTreeNode) -> None:
        first_line = self.source.line(block)
        main, segments = split_notes(self.source.inline_tokens(block), first_line)
        marked = render_inline(main)
        text = plain(marked)
        if state.waiting_note is not None and text:
            state.waiting_note.text, state.waiting_note = text, None
            text = ""
        for segment in segments:
            note = Note(segment.kind, segment.text, segment.line)
            step.notes.append(note)
            state.waiting_note = None if note.text else note
        if not text:
            return
        if not state.has_text:
            state.has_text = True
            optional = _OPTIONAL.match(text)
            step.optional = bool(optional)
            step.conditional = bool(_CONDITIONAL.match(text[optional.end():] if optional else text))
            step.text = text
        elif is_bold_only(marked):
            return  # a group title between items, not a UI label
        elif _ALSO.match(text):
            alternative = Alternative(title=text, line=first_line)
            alternative.steps.append(self.from_blocks([block], f"{step.number}{_letter(len(step.alternatives))}.1", first_line, self.source.end_line(block)))
            step.alternatives.append(alternative)
            return
        if _ALT_TRIGGER.search(text):
            state.alternatives_trigger = True
        self._inline_content(step, state, marked, first_line)

    def _inline_content(self, step: Step, state: _StepState, marked: str, first_line: int) -> None:
        step.labels.extend(labels(marked))
        step.menu_paths.extend(path for path in menu_paths(marked) if path not in step.menu_paths)
        state.placeholder_text.append(plain(marked))
        actions = extract_actions(marked if _ALSO.match(plain(marked)) else _without_asides(marked), first_line)
        step.actions.extend(actions)
        step.fields.extend(_inline_fields(actions))

    def _ordered_list(self, step: Step, state: _StepState, block: SyntaxTreeNode) -> None:
        if state.after_alternatives and step.alternatives:
            alternative = step.alternatives[-1]
            prefix = f"{step.number}{_letter(len(step.alternatives) - 1)}"
            alternative.steps = [self.build(item, f"{prefix}.{index}") for index, item in enumerate(block.children, 1)]
        else:
            offset = len(step.substeps)
            step.substeps.extend(
                self.build(item, f"{step.number}.{offset + index}") for index, item in enumerate(block.children, 1)
            )
        state.after_alternatives = False

    def _bullet_list(self, step: Step, state: _StepState, block: SyntaxTreeNode) -> None:
        items = block.children
        if state.waiting_note is not None:
            state.waiting_note.text = " ".join(filter(None, (self._item_text(item) for item in items)))
            state.waiting_note = None
            return
        if self._are_alternatives(state, items):
            for item in items:
                step.alternatives.append(self._alternative(step, item))
            state.after_alternatives = True
            return
        for item in items:
            paragraph = next((child for child in item.children if child.type == "paragraph"), None)
            if paragraph is None:
                continue
            found = field_from_bullet(self.source.marked(paragraph), self.source.line(paragraph))
            if found is not None:
                step.fields.append(found)
                step.labels.append(found.name)
        state.after_alternatives = False

    def _are_alternatives(self, state: _StepState, items: list[SyntaxTreeNode]) -> bool:
        if not items:
            return False
        if state.alternatives_trigger:
            return True
        first_texts = [self._item_text(item, first_only=True) for item in items]
        if any(_ALT_ITEM.match(text) for text in first_texts):
            return True
        return len(items) > 1 and all(any(c.type == "ordered_list" for c in item.children) for item in items)

    def _own_text(self, paragraph: SyntaxTreeNode) -> str:
        """A paragraph's text without its note segments."""
        main, _ = split_notes(self.source.inline_tokens(paragraph), self.source.line(paragraph))
        return plain(render_inline(main))

    def _item_text(self, item: SyntaxTreeNode, first_only: bool = False) -> str:
        texts = []
        for child in item.children:
            if child.type == "paragraph":
                texts.append(self._own_text(child))
                if first_only:
                    break
        return " ".join(texts)

    def _alternative(self, step: Step, item: SyntaxTreeNode) -> Alternative:
        prefix = f"{step.number}{_letter(len(step.alternatives))}"
        paragraphs = [child for child in item.children if child.type == "paragraph"]
        lists = [child for child in item.children if child.type == "ordered_list"]
        line = self.source.line(item)
        title = self._own_text(paragraphs[0]) if paragraphs else ""
        alternative = Alternative(title=title, line=line)
        split = None if _ALT_ITEM.match(title) else _TITLE_SPLIT.match(title)
        if split:  # "**Autogenerated password** – The user gets ...": a short name, then what it does
            alternative.title = split[1].strip()
        if lists:
            alternative.steps = [self.build(sub, f"{prefix}.{index}") for index, sub in enumerate(lists[0].children, 1)]
        elif len(paragraphs) > 1 and (_ALT_ITEM.match(title) or title.endswith((":", "："))):
            # "Method 1: ..." then the method's own paragraphs
            alternative.steps = [
                self.from_blocks([para], f"{prefix}.{index}", self.source.line(para), self.source.end_line(para))
                for index, para in enumerate(paragraphs[1:], 1)
            ]
        else:
            alternative.steps = [self.from_blocks(item.children, f"{prefix}.1", line, self.source.end_line(item))]
        return alternative

    def _table(self, step: Step, state: _StepState, block: SyntaxTreeNode) -> None:
        table = self.source.table(block)
        if table is None:
            return
        found = fields_from_table(table, self.source.render_cell)
        if not found and any(action.intent is Intent.CONFIGURE for action in step.actions):
            found = fields_from_sideways_table(table, self.source.render_cell)  # the step announced it
        if not found:
            return
        step.fields.extend(found)
        # a value the reader substitutes ("[Default]vpc-bp1opxu1zkhn00g****") is no field value
        state.placeholder_text.extend(plain(self.source.render_cell(cell)) for row in table.rows for cell in row.cells)
        if not any(action.intent is Intent.CONFIGURE for action in step.actions):
            step.actions.append(Action(Intent.CONFIGURE, self.source.line(block)))

    def _blockquote(self, step: Step, block: SyntaxTreeNode) -> None:
        note = self.blockquote_note(block)
        if note is not None:
            step.notes.append(note)

    def blockquote_note(self, block: SyntaxTreeNode) -> Note | None:
        texts: list[str] = []
        kind = "note"
        for child in block.children:
            if child.type != "paragraph":
                continue
            text = plain(self.source.marked(child))
            if not texts:
                docfx = docfx_kind(text)
                if docfx:
                    kind, text = docfx[0], docfx[1].strip()
            if text:
                texts.append(text)
        if not texts and kind == "note":
            return None
        return Note(kind, " ".join(texts), self.source.line(block))


def _letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def _inline_fields(actions: list[Action]) -> list[Field]:
    """FILL/SELECT actions on a named field are also fields ("enter docs_db in the **Database Name** field")."""
    return [
        Field(name=action.target, line=action.line, value=action.value, example=action.example,
              described=action.described)
        for action in actions
        if action.intent in (Intent.FILL, Intent.SELECT) and action.target
    ]
