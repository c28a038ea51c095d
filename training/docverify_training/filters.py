"""Step-level quality filters: which successful attempts become training data.

An attempt is kept when it reached its goal and none of these holds (checked in this
order; the first that holds is the reason it was dropped, and each reason is counted):

- ``not successful``: the goal was not reached (the audit log says so), or ENV_ERROR;
- ``no hand-over``: recorded for a ``hybrid`` student (its hand-overs only), the
  attempt handed no step over: nothing in it for the student to learn;
- ``invalid output``: the teacher's model gave an answer that failed the schema;
- ``unreadable answer``: a recorded answer that the student's loop would not read back
  as the teacher's action (a ref not on the page, a value the schema refuses);
- ``unseen element``: the teacher acted on an element the student's prompt did not
  show (the page was cut to the student's observation budget): an example that would
  teach the student to name elements it cannot see;
- ``failed action``: an action the console answered with an error;
- ``loop``: the same action (kind, element, value) more than ``max_repeats`` times in
  a row, or on the same page more than ``max_repeats + 1`` times in all;
- ``redundant turns``: more turns than ``turns_per_step`` per doc step plus ``slack``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

REASONS = ("not successful", "no hand-over", "invalid output", "unreadable answer", "unseen element", "failed action", "loop",
           "redundant turns")


@dataclass(frozen=True)
class Filters:
    max_repeats: int = 2
    turns_per_step: float = 2.0
    slack: int = 4


def _key(action: dict[str, Any]) -> tuple:
    return (action.get("kind"), action.get("ref") or action.get("target"), action.get("value"))


def drop_reason(turns: list[Any], *, success: bool, steps: int, invalid_outputs: int = 0, unreadable: int = 0,
                unseen: int = 0, filters: Filters = Filters(), hand_overs: bool = False) -> str | None:
    """Why this attempt is not kept (one of :data:`REASONS`), or None to keep it.
    ``turns``: recorded turns (``action`` dicts, ``outcome``, ``url``)."""
    if not success:
        return "not successful"
    if hand_overs and not turns:
        return "no hand-over"
    if invalid_outputs:
        return "invalid output"
    if unreadable:
        return "unreadable answer"
    if unseen:
        return "unseen element"
    if any(turn.outcome == "failed" for turn in turns):
        return "failed action"
    run, last = 0, None
    for turn in turns:
        key = _key(turn.action)
        run = run + 1 if key == last else 1
        last = key
        if run > filters.max_repeats:
            return "loop"
    seen = Counter((turn.url, _key(turn.action)) for turn in turns)
    if seen and max(seen.values()) > filters.max_repeats + 1:
        return "loop"
    if len(turns) > filters.turns_per_step * max(steps, 1) + filters.slack:
        return "redundant turns"
    return None
