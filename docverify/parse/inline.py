"""Inline Markdown -> "marked text": plain text with emphasis kept as sentinel marks.

Block structure comes from markdown-it tokens; inside a paragraph, table cell or
heading the interesting things are which words are bold (UI labels), italic or
code (typed values) and which are links (console URLs). Rather than walking
token lists everywhere, `render_inline` turns inline tokens into one string in
which those spans are wrapped in control characters that never occur in
rendered text (they are stripped from the input). The rule tables in
`labels.py`, `intents.py` and `fields.py` are regular expressions over this
string, and `plain()` removes the marks for human-readable output.

Markdown backslash escapes and entities are already resolved by markdown-it, so
``\\>``, ``\\.`` and ``\\(`` come out as ``>``, ``.`` and ``(``. Soft and hard line
breaks stay as ``\\n`` so that a match can be mapped back to its source line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from markdown_it import MarkdownIt
from markdown_it.token import Token

BOLD_OPEN, BOLD_CLOSE = "\x02", "\x03"
LINK_OPEN, LINK_URL, LINK_CLOSE = "\x04", "\x01", "\x05"
EM_OPEN, EM_CLOSE = "\x06", "\x07"
CODE_OPEN, CODE_CLOSE = "\x0e", "\x0f"

_MARKS = BOLD_OPEN + BOLD_CLOSE + LINK_OPEN + LINK_CLOSE + EM_OPEN + EM_CLOSE + CODE_OPEN + CODE_CLOSE
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_URL_PART = re.compile(LINK_URL + "[^" + LINK_CLOSE + "]*")
_STRIP_MARKS = str.maketrans("", "", _MARKS)
_SPACES = re.compile(r"\s+")

#: HTML tags that are markup, not placeholders such as ``<your-name>``.
_HTML_TAGS = frozenset(
    "a abbr b br code del details div em font h1 h2 h3 h4 h5 h6 hr i img ins kbd li "
    "ol p pre s section small span strong sub summary sup table tbody td th thead tr u ul".split()
)
_TAG_NAME = re.compile(r"</?\s*([A-Za-z][\w\-.]*)")
_BREAK_TAG = re.compile(r"<\s*/?\s*br\s*/?\s*>", re.IGNORECASE)
_PLACEHOLDER_TAG = re.compile(r"<[A-Za-z][\w\-. ]{0,60}>")

#: "**label**" left as text by the inline parser (no marks inside, one line).
_LEFT_BOLD = re.compile(r"(?<!\*)\*\*(?=[^\s*])([^*\n" + _MARKS + r"]{1,80}?)(?<=\S)\*\*(?!\*)")
#: Stands for an escaped asterisk while bold marks are sought (control characters never reach here).
_ESCAPED_STAR = "\x10"
#: Stands for "**" in Chinese text, out of CommonMark's reach (see parse_inline), and its pairs.
_STRONG = "\ue011"  # a private-use character: control characters are cleaned out of text
_CJK_TEXT = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
#: “label” and 「label」 name UI elements in Chinese (and some English) docs.
_QUOTED_LABEL = re.compile(r"([“「『])([^”」』\x02\x03\n]{1,60})([”」』])")


def clean(text: str) -> str:
    """Drop control characters (they are reserved for marks)."""
    return _CONTROL.sub("", text) if _CONTROL.search(text) else text


def parse_inline(md: MarkdownIt, content: str, env: dict) -> list[Token]:
    """Inline tokens of `content` (the parser runs with the core inline rule off).

    In Chinese text CommonMark's flanking rules mispair ``**``: "在**系统配置（选填）**页面
    ...单击**下一步**" has a closing ``**`` after full-width punctuation and before a
    letter, which CommonMark will not close. There every ``**`` is kept out of
    CommonMark's hands (``_STRONG``) and paired by :func:`render_inline` instead, in
    order, as Chinese writers (and the console's docs renderer) mean them."""
    strong = "**" in content and _CJK_TEXT.search(content) is not None
    if strong:
        content = content.replace("**", _STRONG)
    tokens: list[Token] = []
    md.inline.parse(content, md, env, tokens)
    return _paired_strong(tokens) if strong else tokens


def _paired_strong(tokens: list[Token]) -> list[Token]:
    """``tokens`` with each pair of ``_STRONG`` marks in text made a ``strong_open`` /
    ``strong_close`` pair, in order (an odd last one stays ``**``), so that notes
    ("**说明：**") and labels read as CommonMark's own bold does."""
    marks = sum(token.content.count(_STRONG) for token in tokens if token.type == "text")
    usable = marks - marks % 2
    out: list[Token] = []
    opened, seen = False, 0
    for token in tokens:
        if token.type != "text" or _STRONG not in token.content:
            if token.type == "code_inline" and _STRONG in token.content:
                token.content = token.content.replace(_STRONG, "**")
            out.append(token)
            continue
        pieces = token.content.split(_STRONG)
        for index, piece in enumerate(pieces):
            if piece:
                out.append(Token("text", "", 0, content=piece))
            if index < len(pieces) - 1:
                seen += 1
                if seen > usable:
                    out.append(Token("text", "", 0, content="**"))
                else:
                    out.append(Token("strong_close" if opened else "strong_open", "strong", -1 if opened else 1,
                                     markup="**"))
                    opened = not opened
    return out


def render_inline(tokens: Iterable[Token]) -> str:
    """Marked text of a flat inline token list."""
    out: list[str] = []
    hrefs: list[str] = []
    bold = 0  #: open bold spans: an icon inside one ("**![More](...)**") is already a label
    for token in tokens:
        kind = token.type
        if kind == "text_special" and token.content == "*":
            out.append(_ESCAPED_STAR)  # "\*" is a literal asterisk, never half of a bold mark
        elif kind in ("text", "text_special"):
            out.append(clean(token.content))
        elif kind in ("softbreak", "hardbreak"):
            out.append("\n")
        elif kind == "strong_open":
            bold += 1
            out.append(BOLD_OPEN)
        elif kind == "strong_close":
            bold -= 1
            out.append(BOLD_CLOSE)
        elif kind == "em_open":
            out.append(EM_OPEN)
        elif kind == "em_close":
            out.append(EM_CLOSE)
        elif kind == "code_inline":
            out.append(CODE_OPEN + clean(token.content) + CODE_CLOSE)
        elif kind == "link_open":
            hrefs.append(clean(str(token.attrs.get("href", ""))))
            out.append(LINK_OPEN)
        elif kind == "link_close":
            href = hrefs.pop() if hrefs else ""
            out.append(LINK_URL + href.replace(LINK_CLOSE, "") + LINK_CLOSE)
        elif kind == "image":
            alt = clean(token.content).strip()
            if alt:  # an icon named in a step ("click the ![Edit](...) icon") is a label
                out.append(alt if bold > 0 else BOLD_OPEN + alt + BOLD_CLOSE)
        elif kind == "html_inline":
            out.append(_render_html(token.content))
    marked = "".join(out)
    if "**" in marked:
        # CommonMark does not close "**预删除周期（天）**为": full-width punctuation before the
        # closing "**" and a letter after it; a writer (and the console's own renderer) means bold
        marked = _LEFT_BOLD.sub(lambda m: BOLD_OPEN + m[1] + BOLD_CLOSE, marked)
    marked = marked.replace(_ESCAPED_STAR, "*")
    if "“" in marked or "「" in marked or "『" in marked:
        marked = _QUOTED_LABEL.sub(lambda m: m[1] + BOLD_OPEN + m[2] + BOLD_CLOSE + m[3], marked)
    return marked


def _render_html(html: str) -> str:
    if _BREAK_TAG.fullmatch(html.strip()):
        return "\n"
    name = _TAG_NAME.match(html)
    if name and name[1].lower() not in _HTML_TAGS and _PLACEHOLDER_TAG.fullmatch(html):
        return clean(html)  # <your-name>, <InstanceId>: a placeholder, not markup
    return ""


def plain(marked: str) -> str:
    """Readable text: marks and link URLs removed, whitespace collapsed."""
    if LINK_URL in marked:
        marked = _URL_PART.sub("", marked)
    return _SPACES.sub(" ", marked.translate(_STRIP_MARKS)).strip()


def strip_marks(marked: str) -> str:
    """Like `plain` but keeps line breaks (for line arithmetic)."""
    if LINK_URL in marked:
        marked = _URL_PART.sub("", marked)
    return marked.translate(_STRIP_MARKS)


def bold_spans(marked: str) -> list[tuple[int, str]]:
    """(offset, text) of each bold span; nested marks inside are removed."""
    spans = []
    for match in _BOLD.finditer(marked):
        text = plain(match[1])
        if text:
            spans.append((match.start(), text))
    return spans


_BOLD = re.compile(BOLD_OPEN + "([^" + BOLD_OPEN + BOLD_CLOSE + "]*)" + BOLD_CLOSE)


_BOLD_ONLY = re.compile("^" + BOLD_OPEN + "[^" + BOLD_OPEN + BOLD_CLOSE + "]+" + BOLD_CLOSE + r"[\s:：.]*$")


def is_bold_only(marked: str) -> bool:
    """True for a paragraph that is one bold span ("**To create a bucket**")."""
    return bool(_BOLD_ONLY.match(marked.strip()))


def line_of(marked: str, offset: int, first_line: int) -> int:
    """Source line of `offset` in text that starts on `first_line`."""
    return first_line + marked.count("\n", 0, offset)
