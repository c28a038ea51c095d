"""Procedures that go on from the one before: "Step 2: Complete the settings in the
Networking step" after "Step 1: ...", "步骤二：创建监听" after "步骤一：...".

A doc split into numbered parts starts each part where the part before ended (inside the
wizard the first part opened, on the page it left). Such a part, run alone, starts on the
console's home page, and its first step cannot be found: a false DRIFT. The parser
records what each part continues (``Procedure.continues``); ``docverify check`` runs the
parts before it first, in the same browser and account (:func:`with_lead_in`), and
judges only the part's own steps. When a part before does not get through, the part is
not judged (ENV_ERROR: the page it needs was never reached), never DRIFT.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from docverify.parse.model import Procedure, Step

_EN = re.compile(r"^\s*(?:\(optional\)\s*)?(?:step|part)\s+(\d{1,2})\s*[:：.\-–—]", re.I)
_ZH = re.compile(r"^\s*(?:[(（]\s*可选\s*[)）]\s*|可选[:：]?\s*)?步骤\s*([一二三四五六七八九十]{1,3}|\d{1,2})\s*[:：.、]")
_ZH_DIGITS = {c: i for i, c in enumerate("一二三四五六七八九", 1)}

#: Step numbers of the parts run before a procedure start with this (``p1.3``: step 3
#: of the first part before); a doc's own step numbers never do.
LEAD = "p"


def part_number(title: str) -> int | None:
    """The number of a doc's part from its heading ("Step 3: ...", "（可选）步骤三：..."), or None."""
    if found := _EN.match(title):
        return int(found[1])
    if found := _ZH.match(title):
        text = found[1]
        if text.isdigit():
            return int(text)
        if text == "十":
            return 10
        if text.startswith("十"):  # 十一 .. 十九
            return 10 + _ZH_DIGITS.get(text[1:], 0)
        return _ZH_DIGITS.get(text)
    return None


def link_parts(procedures: Sequence[Procedure]) -> None:
    """Set ``continues`` on each numbered part after the first: the id of the nearest
    part before it in the document with a lower number."""
    seen: list[tuple[int, Procedure]] = []
    for procedure in procedures:
        number = part_number(procedure.title)
        if number is None:
            continue
        if number > 1:
            before = next((p for n, p in reversed(seen) if n < number), None)
            if before is not None:
                procedure.continues = before.id
        seen.append((number, procedure))


def lead_in(procedure: Procedure, by_id: Callable[[str], Procedure | None], limit: int = 12) -> list[Procedure]:
    """The parts ``procedure`` goes on from, the first first."""
    chain: list[Procedure] = []
    current = procedure
    while current.continues and len(chain) < limit:
        before = by_id(current.continues)
        if before is None or before is procedure or before in chain:
            break
        chain.append(before)
        current = before
    return list(reversed(chain))


def with_lead_in(procedure: Procedure, chain: Sequence[Procedure]) -> Procedure:
    """``procedure`` with the steps of the parts before it in front, numbered ``p1.…``,
    ``p2.…`` so that what they do is told apart from the part's own steps."""
    if not chain:
        return procedure
    steps = [_renumbered(step, f"{LEAD}{index}.") for index, part in enumerate(chain, 1) for step in part.steps]
    return replace(procedure, steps=steps + list(procedure.steps), lead_in=[part.id for part in chain])


def is_lead_step(number: str) -> bool:
    """Whether a step number is one of the parts run before the procedure."""
    return number.startswith(LEAD)


def lead_part(number: str) -> int | None:
    """Which part run before the procedure (1 = the first) a step number is of, or None."""
    found = _LEAD_NUMBER.match(number)
    return int(found[1]) if found else None


def own_steps(procedure: Procedure) -> Procedure:
    """``procedure`` without the steps of the parts run before it."""
    if not procedure.lead_in:
        return procedure
    return replace(procedure, steps=[step for step in procedure.steps if not is_lead_step(step.number)])


def as_written(text: str) -> str:
    """``text`` with "step p2.4" put back as the doc numbers it, "step 4" (in its own part)."""
    return re.sub(rf"\bstep {LEAD}\d+\.", "step ", text)


_LEAD_NUMBER = re.compile(rf"^{LEAD}(\d+)\.")


def _renumbered(step: Step, prefix: str) -> Step:
    return replace(
        step,
        number=prefix + step.number,
        substeps=[_renumbered(sub, prefix) for sub in step.substeps],
        alternatives=[replace(alt, steps=[_renumbered(sub, prefix) for sub in alt.steps]) for alt in step.alternatives],
    )
