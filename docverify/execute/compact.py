"""A page snapshot cut to a model's budget, keeping what the current step needs.

A model policy sees the page as an accessibility snapshot (one line per element). A
console page is larger than a small model's budget for it, and the page's first lines
are the console's own chrome (the product menu, the region and language switches), so
cutting a page at its budget, top down, leaves out the very table row or dialog button a
step acts on: the model is asked to act on an element it was never shown.

:func:`compact_snapshot` keeps whole pages whole. A page over budget keeps the lines that
can be acted on (those with a ref), headings and alerts, chosen in this order until the
budget is spent, and shows them in page order:

1. an open dialog and alerts (what the console asks or says right now);
2. the elements that share words with the ``focus``: texts in order of importance (the
   step being followed, then the next ones), each word weighing more the earlier its text
   and the fewer elements of the page have it ("console" on every product link says little,
   "Trails" on one link says much): the step's labels, its resource's table row;
3. the main content, then side navigation, then the console's header and footer.

A table row and a drop-down list with its options go in whole or not at all, so a row's
"More" button is never shown without the row it belongs to.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

#: characters of a page's text per token (the budgets are in tokens)
CHARS_PER_TOKEN = 3.5
#: how much a focus text's words weigh, by its place: the current step, the next, the one after
FOCUS_WEIGHTS = (1.0, 0.7, 0.5, 0.35)

_ROLE = re.compile(r"^(?P<indent>\s*)- '?(?P<role>[a-zA-Z]+)\b")
_REF = re.compile(r"\[ref=([^\]]+)\]")
_ATTRS = re.compile(r"\[[^\]]*\]")
_LATIN = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")

#: landmarks, ranked: the main content first, the console's chrome last
_AREA_RANK = {"main": 0, "navigation": 1, "complementary": 1, "banner": 2, "contentinfo": 2}
_DIALOG = ("dialog", "alertdialog")
#: elements kept whole with what they hold (a row with its cells and buttons, a list with its options)
_UNIT = ("row", "combobox", "listbox", "radiogroup")

#: containers: a line of one says something only when it has a name (else its indent says it all)
_CONTAINER = frozenset("generic group list listitem rowgroup cell region search form none presentation".split())

#: words a step says that name no element: instructions, function words, roles
_STOP = frozenset("""
a an the and or of to in on at by for from with into onto as is are be this that these those it its
you your we our want wish need can may must should then next after before when if which who what where
click choose select find go open log enter specify set configure fill type check uncheck turn switch
page pane tab dialog box section area field button link list menu column row table icon top bottom left
right side navigation bar following above below new desired required optional corresponding see
cell columnheader generic heading listitem option textbox combobox checkbox radio img text group status
""".split())


@dataclass
class _Unit:
    """Lines shown together or not at all, and what ranks them."""

    lines: list[int] = field(default_factory=list)
    size: int = 0
    area: int = 0
    urgent: bool = False
    words: set[str] = field(default_factory=set)
    score: float = 0.0


def terms(text: str) -> set[str]:
    """The words of ``text`` that can name an element: Latin words and numbers, case-folded,
    less :data:`_STOP`; Chinese text (written without spaces) by its pairs of characters."""
    text = unicodedata.normalize("NFKC", text).casefold()
    found = {w for w in _LATIN.findall(text) if w not in _STOP and not _CJK_RUN.fullmatch(w)
             and (len(w) > 1 or w.isdigit())}
    for run in _CJK_RUN.findall(text):
        found.update(run[i:i + 2] for i in range(max(len(run) - 1, 1)))
    return found


def shown_refs(text: str) -> list[str]:
    """The refs a (compacted) snapshot shows, in page order."""
    return _REF.findall(text)


def compact_snapshot(snapshot: str, tokens: int, focus: str | Sequence[str] = ()) -> str:
    """The page within ``tokens``: whole (less link targets) when it fits, else the lines
    ranked as the module says, in page order, then a count of the rest."""
    budget = int(tokens * CHARS_PER_TOKEN)
    # link targets are noise to a model (the link's name says where it goes)
    lines = [line for line in snapshot.splitlines() if not line.lstrip().startswith("- /url:")]
    if sum(len(line) + 1 for line in lines) <= budget:
        return "\n".join(lines)
    chosen: set[int] = set()
    used = 0
    units = _units(lines)
    _score(units, [focus] if isinstance(focus, str) else list(focus))
    for unit in sorted(units, key=lambda u: (not u.urgent, -u.score, u.area, u.lines[0])):
        if used + unit.size > budget:
            continue  # a smaller unit further down may still fit
        chosen.update(unit.lines)
        used += unit.size
    text = "\n".join(lines[i] for i in sorted(chosen))
    return text + f"\n… ({len(lines) - len(chosen)} more lines not shown)"


def _units(lines: list[str]) -> list[_Unit]:
    """The lines that can be shown (refs, headings, alerts, a list's options), grouped into
    units, each with its area and whether it is in a dialog or an alert."""
    units: list[_Unit] = []
    stack: list[tuple[int, str, _Unit | None]] = []  # the open ancestors: indent, role, the unit they started
    for index, line in enumerate(lines):
        match = _ROLE.match(line)
        indent = len(match["indent"]) if match else len(line) - len(line.lstrip())
        role = match["role"] if match else ""
        while stack and stack[-1][0] >= indent:
            stack.pop()
        roles = [r for _, r, _ in stack] + [role]
        unit = next((u for _, _, u in stack if u is not None), None)
        starts = False
        if unit is None and (role in _UNIT or "[ref=" in line or role in ("heading", "alert")):
            landmarks = [_AREA_RANK[r] for r in roles if r in _AREA_RANK]
            unit = _Unit(area=landmarks[0] if landmarks else 0)  # the outermost landmark: a menu in the header is chrome
            units.append(unit)
            starts = role in _UNIT
        stack.append((indent, role, unit if starts else None))
        content = _ATTRS.sub("", line[match.end():] if match else line).strip(" :")
        if unit is None or not _showable(line, role, content, roles):
            continue
        unit.lines.append(index)
        unit.size += len(line) + 1
        unit.urgent |= any(r in _DIALOG or r == "alert" for r in roles)
        unit.words |= terms(content)
    return [unit for unit in units if unit.lines]


def _score(units: list[_Unit], focus: list[str]) -> None:
    """Each unit's score: the weights of the focus words it has, each divided by the number
    of units that have it."""
    weights: dict[str, float] = {}
    for place, text in enumerate(focus):
        weight = FOCUS_WEIGHTS[min(place, len(FOCUS_WEIGHTS) - 1)]
        for term in terms(text):
            weights[term] = max(weights.get(term, 0.0), weight)
    spread = Counter(term for unit in units for term in unit.words & weights.keys())
    for unit in units:
        unit.score = sum(weights[term] / spread[term] for term in unit.words & weights.keys())


def _showable(line: str, role: str, content: str, roles: list[str]) -> bool:
    """Whether a line is worth its place: an element that can be acted on (a ref), less
    nameless containers; a heading, an alert, an option of a list."""
    if role in ("heading", "alert", "option") or "alert" in roles:
        return True
    return "[ref=" in line and (bool(content) or role not in _CONTAINER or role in _UNIT)
