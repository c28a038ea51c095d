"""The model's answer: a Thought and exactly one Action, as JSON, validated.

The schema is flat (one object, optional fields) because small models follow flat
schemas far better than nested or ``oneOf`` ones; :func:`to_action` then checks
what the schema cannot say: which fields each action needs, that a ref exists on
the current page, that a step number is one of the doc's. Every rejection says
what to fix, and the agent shows it to the model on the retry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from docverify.check.verdict import Finding, FindingKind
from docverify.engines import parse_json
from docverify.execute.actions import NEEDS_REF, NEEDS_VALUE, Action, ActionKind, Observation
from docverify.execute.locate import Element, label_words, parse_snapshot
from docverify.parse.model import Step
from docverify.task import Task

ACTIONS = [kind.value for kind in ActionKind]
FINDINGS = [kind.value for kind in FindingKind]
#: How an answer ``done`` may end the episode (or a hybrid's hand-over).
DONE_STATUSES = ("success", "blocked")
#: A run of one short piece of text eight times or more ("2.2.2.2.2.2.2.2."): a small model's
#: decoding stuck in a loop, not what a doc or a console says.
LOOPING = re.compile(r"(.{1,8}?)\1{7,}", re.S)

_TOGGLES = frozenset({"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"})
#: The roles (WAI-ARIA widgets) each action can act on: a constrained decoder is offered
#: only those elements' refs for it. Anything the page marks as clickable (``cursor=pointer``)
#: can be clicked too; a disabled element cannot be acted on.
TARGET_ROLES: dict[ActionKind, frozenset[str]] = {
    ActionKind.CLICK: frozenset({"button", "link", "menuitem", "tab", "treeitem", "option", "combobox"}) | _TOGGLES,
    ActionKind.FILL: frozenset({"textbox", "searchbox", "spinbutton", "combobox"}),
    ActionKind.SELECT: frozenset({"combobox", "listbox"}),
    ActionKind.CHECK: _TOGGLES,
    ActionKind.UNCHECK: _TOGGLES,
}
#: the roles some action can act on: a control
CONTROL_ROLES = frozenset().union(*TARGET_ROLES.values())


class InvalidAnswer(ValueError):
    """The model's answer cannot be used; the message says why, for the retry."""


def action_schema(max_text: int = 400, *, steps: Sequence[str] = ()) -> dict[str, Any]:
    """JSON schema of one agent turn. With ``steps`` (the doc's numbers) the step is an
    enum. ``max_text`` bounds the free-text fields: grammar engines compile a length
    bound into the grammar, and a long one makes decoding slow."""
    text = {"type": "string", "maxLength": max_text}
    short = {"type": "string", "maxLength": min(200, max_text)}
    step: dict[str, Any] = {"type": "string", "enum": list(steps)} if steps else {"type": "string", "maxLength": 8}
    return {
        "type": "object",
        "description": "Your thought, then exactly one action.",
        "properties": {
            "thought": {**text, "description": "progress so far and the current sub-goal"},
            "action": {"type": "string", "enum": ACTIONS},
            "ref": {"type": "string", "maxLength": 16, "description": "element ref from the page, e.g. e12"},
            "value": {**short, "description": "text to type, option to select, key, URL or text to wait for"},
            "step": {**step, "description": "the doc step this action serves, e.g. 3"},
            "finding": {"type": "string", "enum": FINDINGS, "description": "for flag_step: what differs"},
            "expected": {**short, "description": "for flag_step: what the doc says"},
            "observed": {**short, "description": "for flag_step: what the console shows"},
            "status": {"type": "string", "enum": list(DONE_STATUSES), "description": "for done"},
            "message": {**short, "description": "for done: why"},
        },
        "required": ["thought", "action"],
        "additionalProperties": False,
    }


#: Whether an action on an element is not to be offered (the agent loop's scope rule refuses
#: it, or it just changed nothing on this page).
Refuse = Callable[[ActionKind, Element], bool]


def targets(page: str, refuse: Refuse | None = None) -> dict[ActionKind, list[str]]:
    """The refs ``page`` (a snapshot, as a prompt shows it) offers each action that acts on
    an element, in page order: :data:`TARGET_ROLES`, less those ``refuse`` says the
    answer would be refused for (a decoder that could name them would, and at
    temperature 0 again on the retry)."""
    elements = [e for e in parse_snapshot(page) if e.ref and "disabled" not in e.attributes]
    return {kind: [e.ref for e in elements if e.ref and (e.role in roles or (
                kind is ActionKind.CLICK and "cursor=pointer" in e.attributes)) and not (refuse and refuse(kind, e))]
            for kind, roles in TARGET_ROLES.items()}


def variant_schema(max_text: int, *, targets: Mapping[ActionKind, Sequence[str]],
                   steps: Sequence[str], done: Sequence[str] = DONE_STATUSES) -> dict[str, Any]:
    """The same answer as one ``anyOf`` branch per action, each with exactly the
    fields that action needs: for grammar-constrained decoders, where a small model
    then cannot produce a click without a ref or a done without a status. An action
    that acts on an element names one of its ``targets`` (none: no such branch), so a
    small model cannot click a column header or type into a button; a done, one of
    the ``done`` statuses."""
    base = action_schema(max_text, steps=steps)["properties"]

    def branch(kind: ActionKind, *fields: str) -> dict[str, Any]:
        # the action first: the grammar then knows the branch after a few tokens (thought
        # first made llama.cpp weigh every branch through the whole thought: ~10x slower)
        props = {"action": {"type": "string", "const": kind.value}, "thought": base["thought"],
                 **{name: base[name] for name in fields}}
        if "ref" in fields:
            props["ref"] = {"type": "string", "enum": list(targets[kind]), "description": base["ref"]["description"]}
        return {"type": "object", "properties": props, "required": ["action", "thought", *fields],
                "additionalProperties": False}

    step = ("step",) if steps else ()
    on_elements = [branch(ActionKind.CLICK, "ref", *step), branch(ActionKind.FILL, "ref", "value", *step),
                   branch(ActionKind.SELECT, "ref", "value", *step), branch(ActionKind.CHECK, "ref", *step),
                   branch(ActionKind.UNCHECK, "ref", *step)]
    branches = [b for b in on_elements if b["properties"]["ref"]["enum"]]
    scroll = branch(ActionKind.SCROLL, *step)
    scroll["properties"]["value"] = {"type": "string", "enum": ["up", "down"]}
    scroll["required"].append("value")
    ending = branch(ActionKind.DONE, "status", "message")
    ending["properties"]["status"] = {**base["status"], "enum": list(done)}
    branches += [branch(ActionKind.PRESS, "value", *step), branch(ActionKind.GOTO, "value", *step), scroll,
                 branch(ActionKind.WAIT_FOR, "value", *step), branch(ActionKind.BACK, *step),
                 branch(ActionKind.FLAG_STEP, *(step or ("step",)), "finding", "expected", "observed"), ending]
    return {"description": "Your thought, then exactly one action.", "anyOf": branches}


#: tokens a character of a bounded text field may take, at most in practice (a CJK character
#: is often two or three of a byte-level vocabulary's tokens; a repeated "2." one a character)
TOKENS_PER_CHAR = 3
#: tokens of JSON syntax, keys and enum values an answer may add to its texts
SYNTAX_TOKENS = 96


def answer_bound(schema: Mapping[str, Any]) -> int:
    """How many tokens the longest answer ``schema`` allows can take: every bounded text
    field of its longest branch at its bound. A grammar-constrained decoder cut off by
    its token cap leaves JSON that can never be valid, and at temperature 0 the retry is
    cut at the same place, so its cap must be at least this."""
    branches = schema.get("anyOf") or [schema]

    def length(branch: Mapping[str, Any]) -> int:
        texts = sum(int(prop.get("maxLength", 0)) for prop in (branch.get("properties") or {}).values())
        return texts * TOKENS_PER_CHAR + SYNTAX_TOKENS

    return max(length(branch) for branch in branches)


def answer_cap(engine: Any, schema: Mapping[str, Any], tokens: int) -> int:
    """The token cap of an answer in ``schema`` from ``engine``: ``tokens`` (the policy's
    max_answer_tokens), raised for a grammar-constrained decoder to the longest answer the
    schema allows (:func:`answer_bound`)."""
    return max(tokens, answer_bound(schema)) if engine.constrained else tokens


def answer_schema(engine: Any, *, page: str, steps: Sequence[str], refuse: Refuse | None = None,
                  done: Sequence[str] = DONE_STATUSES) -> dict[str, Any]:
    """The schema a turn's answer is asked in: for a grammar-constrained ``engine`` one
    branch per action, with the refs of the elements on ``page`` (as the prompt shows it)
    that the action fits and ``refuse`` allows, the doc's ``steps`` and the ``done``
    statuses the turn may end with, as enums (it cannot name an element or a step that
    is not there), else the plain schema within the engine's text bound."""
    if not engine.constrained:
        return action_schema(engine.max_text)
    return variant_schema(engine.max_text, targets=targets(page, refuse), steps=steps, done=done)


def to_action(text: str, observation: Observation, task: Task) -> Action:
    """The :class:`Action` in the model's ``text``; :class:`InvalidAnswer` says what is wrong."""
    try:
        data = parse_json(text)
    except (json.JSONDecodeError, ValueError):
        raise InvalidAnswer("the answer is not JSON: answer with one JSON object as the schema says") from None
    if not isinstance(data, dict):
        raise InvalidAnswer("the answer must be one JSON object, not a list or a value")
    unknown = sorted(set(data) - set(action_schema()["properties"]))
    if unknown:
        raise InvalidAnswer(f"unknown field(s) {', '.join(unknown)}: use only the schema's fields")
    name = str(data.get("action") or "").strip().lower()
    if name not in ACTIONS:
        raise InvalidAnswer(f"'action' must be one of {', '.join(ACTIONS)} (got {name or 'nothing'!r})")
    kind = ActionKind(name)
    ref = _text(data.get("ref"))
    value = _text(data.get("value"))
    step = _text(data.get("step"))
    thought = _text(data.get("thought"))
    steps = {s.number: s for s in task.procedure.all_steps()}
    if step is not None and step not in steps:
        raise InvalidAnswer(f"'step' {step!r} is not a step of this procedure (steps: {', '.join(steps) or 'none'})")
    target = None
    if kind in NEEDS_REF or (ref is not None and kind.touches_page):
        if ref is None:
            raise InvalidAnswer(f"'{name}' needs 'ref': the ref of an element on the current page")
        element = next((e for e in observation.elements if e.ref == ref), None)
        if element is None:
            raise InvalidAnswer(f"no element with ref {ref!r} on the current page: use a ref from the latest page")
        target = element_target(element)
    if kind in NEEDS_VALUE and value is None:
        raise InvalidAnswer(f"'{name}' needs 'value'")
    if kind is ActionKind.SCROLL and value not in (None, "up", "down"):
        raise InvalidAnswer("'scroll' takes value 'up' or 'down'")
    if kind is ActionKind.DONE:
        status = _text(data.get("status"))
        if status not in DONE_STATUSES:
            raise InvalidAnswer("'done' needs 'status': success or blocked")
        message = _text(data.get("message"))
        unlooped("message", message)
        return Action(kind, step=step, thought=thought, status=status, message=message)
    if kind is ActionKind.FLAG_STEP:
        finding = _text(data.get("finding"))
        if finding not in FINDINGS:
            raise InvalidAnswer(f"'flag_step' needs 'finding': one of {', '.join(FINDINGS)}")
        if step is None:
            raise InvalidAnswer("'flag_step' needs 'step': the number of the doc step that differs")
        expected, observed = _text(data.get("expected")), _text(data.get("observed"))
        if not expected or not observed:
            raise InvalidAnswer("'flag_step' needs 'expected' (what the doc says) and 'observed' (what the console shows)")
        unlooped("expected", expected)
        unlooped("observed", observed)
        grounded(FindingKind(finding), expected, observed, steps[step], observation, task)
        found = Finding(FindingKind(finding), task.procedure.path, steps[step].line, step, expected, observed)
        return Action(kind, step=step, thought=thought, finding=found)
    return Action(kind, ref=ref, value=value, target=target, step=step, thought=thought)


def unlooped(field: str, text: str | None) -> None:
    """Refuse a finding's or a verdict's text that repeats one piece over and over: it
    would reach the report as a doc defect's evidence."""
    loop = LOOPING.search(text or "")
    if loop and any(c.isalnum() for c in loop.group(1)):
        raise InvalidAnswer(f"'{field}' repeats {loop.group(1)!r} over and over: say in a few words what "
                            f"{'the console shows' if field == 'observed' else 'you mean'}")


def grounded(kind: FindingKind, expected: str, observed: str, step: Step, observation: Observation,
             task: Task) -> None:
    """Refuse a finding that the doc and the page show to be unfounded, before it reaches
    the report as a defect: one whose two sides say the same, one whose ``expected`` is
    not what its step says (a missing step excepted: the doc says nothing of it), and a
    renamed or missing label that the page shows, as the doc says it, on a control a click
    or a keystroke can reach."""
    named = label_words(expected)
    if named and named == label_words(observed):
        raise InvalidAnswer(f"'expected' and 'observed' say the same ({expected!r}): a finding is a difference, "
                            "what the doc says and what the console shows instead")
    if kind is not FindingKind.MISSING_STEP:
        said = step_words(step, task)
        if sum(word in said for word in named) * 2 < len(named):
            raise InvalidAnswer(f"'expected' must be what step {step.number} says, in its words: {expected!r} is "
                                f"not in it ({task.resolve(step.text)[:80]!r})")
    if named and kind in (FindingKind.LABEL_CHANGED, FindingKind.ELEMENT_NOT_FOUND):
        covered = observation.covered
        shown = next((e for e in observation.elements if e.ref and e.ref not in covered and "disabled" not in e.attributes
                      and e.role in CONTROL_ROLES and label_words(e.name) == named),
                     None)
        if shown is not None:
            raise InvalidAnswer(f"the page shows {element_target(shown)} (ref {shown.ref}) as step {step.number} "
                                "names it: act on it instead of flagging the step")


def step_words(step: Step, task: Task) -> set[str]:
    """Every word a doc step says: its text, its fields and its notes, placeholders resolved."""
    texts = [step.text, *(f"{f.name} {f.value or ''} {f.description or ''}" for f in step.fields),
             *(note.text for note in step.notes)]
    return {word for text in texts for word in label_words(task.resolve(text))}


def element_target(element: Element) -> str:
    """An element as an action's ``target`` names it: ``button 'OK'``."""
    return f"{element.role} '{element.name}'" if element.name else element.role


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None
