"""Find a doc's UI label among a page's accessible elements.

The executor observes a page as an accessibility snapshot (Playwright's
``aria_snapshot(mode="ai")``): one line per element with its role, accessible name
and a stable ``ref``. :func:`locate` looks a label up in three tiers, and says which
tier matched, because that is the difference between PASS and DRIFT:

1. exact — the accessible name is the doc's label;
2. normalized — equal after case, width, whitespace and punctuation are normalized
   ("Network & Security" = "network and security"); Chinese labels also ignore
   spaces next to Chinese characters ("创建 Bucket" = "创建Bucket") and a trailing
   API value in parentheses ("私有（private）" = "私有");
3. close — similar enough to be the same control renamed ("Create Instance" ->
   "Create ECS Instance", "创建实例" -> "创建ECS实例": in Chinese every character is a
   word); the caller follows it and records a finding.

No match returns the nearest names, for an "element not found" finding.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum


class MatchKind(StrEnum):
    EXACT = "exact"
    NORMALIZED = "normalized"
    CLOSE = "close"


@dataclass(frozen=True)
class Element:
    """One line of an accessibility snapshot."""

    role: str
    name: str
    ref: str | None  #: "e12": the handle to act on (``aria-ref=e12``)
    ancestors: tuple[str, ...] = ()  #: enclosing roles, outermost first
    attributes: tuple[str, ...] = ()  #: "checked", "selected", "disabled", "level=1"...
    containers: tuple[tuple[str, str], ...] = ()  #: named ancestors as (role, name), outermost first
    text: str = ""  #: the text after the name: a field's current value ("textbox "CIDR": 10.0.0.0/8")
    parents: tuple[str, ...] = ()  #: refs of the enclosing elements that have one, outermost first

    @property
    def in_dialog(self) -> bool:
        return "dialog" in self.ancestors or "alertdialog" in self.ancestors

    @property
    def checked(self) -> bool:
        return "checked" in self.attributes or "checked=true" in self.attributes

    def inside(self, role: str, name: str | None = None) -> bool:
        """Whether an enclosing element has ``role`` (and ``name``, when given; an
        unnamed ``main`` or ``form`` encloses all the same)."""
        if name is None:
            return role in self.ancestors
        return (role, name) in self.containers


def within(element: Element, container: Element) -> bool:
    """Whether ``element`` sits inside ``container`` (by ref: unnamed groups count too)."""
    return container.ref is not None and container.ref in element.parents


def children(elements: Sequence[Element], parent: Element) -> list[Element]:
    """The elements inside ``parent`` (matched by its role and name)."""
    return [e for e in elements if (parent.role, parent.name) in e.containers]


@dataclass(frozen=True)
class Located:
    """The outcome of a lookup: the element (if any), how it matched, the nearest names."""

    element: Element | None
    kind: MatchKind | None
    nearest: tuple[str, ...] = ()


#: Roles that fit an intent, in order of preference.
CLICKABLE = ("button", "link", "menuitem", "tab", "treeitem", "option", "radio", "checkbox", "switch", "cell")
FILLABLE = ("textbox", "searchbox", "spinbutton", "combobox")
SELECTABLE = ("combobox", "listbox", "radio", "option", "tab", "button")
TOGGLEABLE = ("checkbox", "switch", "radio", "button")

#: Similarity (0..1) from which a differently worded name counts as the same control.
CLOSE_THRESHOLD = 0.8

_LINE = re.compile(
    r'^(?P<indent>\s*)- (?P<role>[a-zA-Z]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?(?P<attrs>(?: \[[^\]]*\])*):?(?: (?P<text>.*))?$'
)
_ATTR = re.compile(r"\[([^\]]*)\]")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
#: Chinese and Japanese characters (unified ideographs, extensions, compatibility forms, kana).
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_CHARS}]")
#: a space next to a Chinese character: Chinese text has none between words, and
#: consoles and docs differ in the spaces they put around Latin words ("创建 Bucket").
_CJK_SPACE = re.compile(f"(?<=[{_CJK_CHARS}]) | (?=[{_CJK_CHARS}])")
#: a trailing API value in parentheses, as Chinese docs annotate an option
#: ("私有（private）", "公共读（public-read）"): lower-case, as API values are.
_API_VALUE_NOTE = re.compile(r"\s*\(\s*[a-z0-9][a-z0-9._/-]*\s*\)\s*$")


def parse_snapshot(snapshot: str) -> list[Element]:
    """Elements of an ``aria_snapshot(mode="ai")`` text, in document order."""
    elements: list[Element] = []
    stack: list[tuple[int, str, str, str | None]] = []  # (indent, role, name, ref) of open ancestors
    for line in snapshot.splitlines():
        match = _LINE.match(_unquote_yaml(line))
        if match is None:
            continue
        indent = len(match["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        role = match["role"]
        attributes = tuple(_ATTR.findall(match["attrs"] or ""))
        ref = next((a[4:] for a in attributes if a.startswith("ref=")), None)
        name = _unescape(match["name"]) if match["name"] is not None else ""
        text = (match["text"] or "").strip()
        if len(text) >= 2 and text[0] == text[-1] == '"':  # YAML quotes a text with ": " in it
            text = _unescape(text[1:-1])
        elif text.startswith(("- ", '"')):
            text = ""
        if role != "text" and not name and text:
            name = text
        elements.append(
            Element(role, name, ref, tuple(r for _, r, _, _ in stack),
                    tuple(a for a in attributes if not a.startswith("ref=")),
                    tuple((r, n) for _, r, n, _ in stack if n), text,
                    tuple(f for _, _, _, f in stack if f))
        )
        stack.append((indent, role, name, ref))
    return elements


_QUOTED = re.compile(r"^(?P<indent>\s*)- '(?P<body>(?:[^']|'')*)'(?P<colon>:?)(?P<rest>.*)$")


def _unquote_yaml(line: str) -> str:
    """A snapshot line whose entry YAML had to quote (a name with ": ") in plain form:
    ``- 'button "Next: Storage" [ref=e9]'`` -> ``- button "Next: Storage" [ref=e9]``."""
    match = _QUOTED.match(line)
    if match is None:
        return line
    return f"{match['indent']}- {match['body'].replace(chr(39) * 2, chr(39))}{match['colon']}{match['rest']}"


def normalize(label: str) -> str:
    """Case-, width-, whitespace- and punctuation-insensitive form of a label. A
    Chinese label also loses the spaces next to its Chinese characters and a trailing
    API value in parentheses (labels without Chinese characters keep both)."""
    text = unicodedata.normalize("NFKC", label)
    chinese = _CJK.search(text) is not None
    if chinese:
        bare = _API_VALUE_NOTE.sub("", text)
        if _CJK.search(bare):
            text = bare
    text = text.casefold().replace("&", " and ")
    text = " ".join(_NON_WORD.sub(" ", text).split())
    return _CJK_SPACE.sub("", text) if chinese else text


def is_chinese(label: str) -> bool:
    """Whether ``label`` has Chinese (or Japanese) characters."""
    return _CJK.search(label) is not None


def similarity(a: str, b: str) -> float:
    """How alike two labels are (0..1) once normalized; a label whose words all
    appear, in order, in the other counts as close too ("Create Instance" in
    "Create ECS Instance"), and so does a parenthesised short form ("Access
    Control List (ACL)" and "ACL")."""
    return _score(normalize(a), _short_forms(a), normalize(b), b)


def _short_forms(label: str) -> frozenset[str]:
    if "(" not in label and "（" not in label:
        return frozenset()
    return frozenset(normalize(form) for form in _forms(label)) - {""}


def _score(wanted: str, wanted_forms: frozenset[str], name: str, raw_name: str) -> float:
    score = _similarity(wanted, name)
    if score < CLOSE_THRESHOLD and (wanted_forms or "(" in raw_name or "（" in raw_name):
        if (wanted_forms or {wanted}) & (_short_forms(raw_name) or {name}):
            return CLOSE_THRESHOLD
    return score


def _forms(label: str) -> list[str]:
    """A label, its text outside parentheses, and each parenthesised part."""
    inside = re.findall(r"[(（]([^()（）]+)[)）]", label)
    outside = re.sub(r"\s*[(（][^()（）]*[)）]\s*", " ", label).strip()
    return [label, outside, *inside]


def _similarity(left: str, right: str) -> float:
    if not left or not right:
        return 0.0
    ratio = difflib.SequenceMatcher(None, left, right, autojunk=False).ratio()
    short, long = sorted((_words(left), _words(right)), key=len)
    if len(short) >= 2 and len(long) - len(short) <= 2 and _in_order(short, long):
        ratio = max(ratio, CLOSE_THRESHOLD)
    return ratio


def locate(label: str, elements: Sequence[Element], roles: Collection[str] | None = None, *,
           threshold: float = CLOSE_THRESHOLD) -> Located:
    """Find ``label`` among ``elements`` (restricted to ``roles`` when given; the
    order of ``roles`` is the preference). Elements in an open dialog win over the
    page behind it, then document order."""
    pool = [e for e in elements if e.name and (roles is None or e.role in roles)]
    if not pool:
        return Located(None, None)
    rank = {role: index for index, role in enumerate(roles or ())}

    def best(found: list[tuple[int, Element]]) -> Element:
        return min(found, key=lambda item: (not item[1].in_dialog, rank.get(item[1].role, len(rank)), item[0]))[1]

    wanted = label.strip()
    exact = [(i, e) for i, e in enumerate(pool) if e.name.strip() == wanted]
    if exact:
        return Located(best(exact), MatchKind.EXACT)
    wanted = normalize(label)
    names = [normalize(e.name) for e in pool]
    same = [(i, e) for i, e in enumerate(pool) if names[i] == wanted]
    if same:
        return Located(best(same), MatchKind.NORMALIZED)
    forms = _short_forms(label)
    scored = sorted(((_score(wanted, forms, names[i], e.name), i, e) for i, e in enumerate(pool)),
                    key=lambda t: (-t[0], t[1]))
    nearest = tuple(dict.fromkeys(e.name for _, _, e in scored[:5]))[:3]
    top = [(i, e) for score, i, e in scored if score >= threshold and score == scored[0][0]]
    if top:
        return Located(best(top), MatchKind.CLOSE, nearest)
    return Located(None, None, nearest)


_CJK_WORDS = re.compile(f"[{_CJK_CHARS}]|[^\\s{_CJK_CHARS}]+")


def _words(text: str) -> list[str]:
    """The words of a normalized label: Chinese has no spaces, so each Chinese
    character is a word, and so is each run of other letters ("创建ecs实例" ->
    创, 建, ecs, 实, 例)."""
    return _CJK_WORDS.findall(text) if _CJK.search(text) else text.split()


def _in_order(needles: list[str], haystack: list[str]) -> bool:
    position = 0
    for word in needles:
        try:
            position = haystack.index(word, position) + 1
        except ValueError:
            return False
    return True


def _unescape(name: str) -> str:
    return re.sub(r"\\(.)", r"\1", name)
