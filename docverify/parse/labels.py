"""UI labels and menu paths in marked text (see `inline.py`).

A label is a bold span (``**Create Bucket**``), a quoted span (“创建”, 「确定」)
or an icon's alt text. A menu path is two or more labels joined by ``>``
(written ``\\>`` in Alibaba Cloud docs, or plain), ``→`` or ``»``:
``**Network & Security** > **Security Groups**``. AWS writes paths with
commas after a verb: ``choose **Actions**, **Release**``; the comma form counts
only when it is not a list of options (no "and"/"or" after the last comma).
"""

from __future__ import annotations

import re

from docverify.parse.inline import BOLD_CLOSE, BOLD_OPEN, bold_spans, plain

_LABEL = BOLD_OPEN + "[^" + BOLD_OPEN + BOLD_CLOSE + "]+" + BOLD_CLOSE
_ARROW = r"\s*(?:>|→|»|›|＞)\s*"
ARROW_PATH = re.compile(_LABEL + "(?:" + _ARROW + _LABEL + ")+")
COMMA_PATH = re.compile(
    r"(?:\b(?:choose|select|click)\s+(?:the\s+)?)(" + _LABEL + r"(?:\s*,\s*" + _LABEL + r")+)(?!\s*,?\s*(?:and|or)\b)",
    re.IGNORECASE,
)
_LABEL_TEXT = re.compile(BOLD_OPEN + "([^" + BOLD_OPEN + BOLD_CLOSE + "]+)" + BOLD_CLOSE)

#: Bold words that mark a note or a heading-like lead-in, never a UI label.
NOTE_WORDS = re.compile(
    r"^(?:notes?|important|warning|tip|caution|danger|notice|attention|example|"
    r"说明|注意|警告|重要|提示|危险|注意事项)\s*[:：]?$",
    re.IGNORECASE,
)


def path_labels(marked_path: str) -> list[str]:
    """The labels of a matched path, in order."""
    return [text for text in (plain(m) for m in _LABEL_TEXT.findall(marked_path)) if text]


def menu_paths(marked: str) -> list[list[str]]:
    """Every menu path in the text, in order of appearance."""
    found: list[tuple[int, list[str]]] = []
    taken: list[tuple[int, int]] = []
    for match in ARROW_PATH.finditer(marked):
        found.append((match.start(), path_labels(match[0])))
        taken.append(match.span())
    for match in COMMA_PATH.finditer(marked):
        start, end = match.span(1)
        if any(start < t_end and t_start < end for t_start, t_end in taken):
            continue
        found.append((start, path_labels(match[1])))
    found.sort(key=lambda item: item[0])
    return [path for _, path in found if len(path) > 1]


def labels(marked: str) -> list[str]:
    """Every UI label named in the text, in order, without note markers."""
    return [text for _, text in bold_spans(marked) if not NOTE_WORDS.match(text)]


def unique(items: list[str]) -> list[str]:
    """Items deduplicated, first occurrence kept."""
    return list(dict.fromkeys(items))
