"""The language between a policy and an executor: observations in, actions out.

Each turn the executor shows the policy an :class:`Observation` of the page; the
policy answers with one :class:`Action`. Elements are addressed by the ``ref`` of
the accessibility snapshot (``aria_snapshot(mode="ai")``), so a model policy and
the literal policy speak the same language.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

from docverify.check.verdict import Finding
from docverify.execute.locate import Element, parse_snapshot


class ActionKind(StrEnum):
    CLICK = "click"  #: ref
    FILL = "fill"  #: ref, value
    SELECT = "select"  #: ref (a combobox/listbox), value (the option's label)
    CHECK = "check"  #: ref (checkbox, radio, switch)
    UNCHECK = "uncheck"  #: ref
    PRESS = "press"  #: value (a key, "Enter"); ref optional
    GOTO = "goto"  #: value (a URL, absolute or relative to the console)
    SCROLL = "scroll"  #: value "up" | "down"; ref optional (scroll it into view)
    WAIT_FOR = "wait_for"  #: value (text that must appear)
    BACK = "back"
    FLAG_STEP = "flag_step"  #: finding: the doc and the console disagree here
    DONE = "done"  #: status "success" | "blocked", message

    @property
    def touches_page(self) -> bool:
        """Whether the executor applies it (flag_step and done are bookkeeping)."""
        return self not in (ActionKind.FLAG_STEP, ActionKind.DONE)


#: The kinds that need an element ref.
NEEDS_REF = {ActionKind.CLICK, ActionKind.FILL, ActionKind.SELECT, ActionKind.CHECK, ActionKind.UNCHECK}
#: The kinds that need a value.
NEEDS_VALUE = {ActionKind.FILL, ActionKind.SELECT, ActionKind.PRESS, ActionKind.GOTO, ActionKind.WAIT_FOR}


@dataclass
class Action:
    """One thing the policy asks the executor to do.

    ``target`` describes the element for humans ("button 'Create Bucket'"); ``step``
    is the doc step the action serves ("3", "3.2"); ``secret`` marks a value that
    reports must mask (a password the doc asks to type).
    """

    kind: ActionKind
    ref: str | None = None
    value: str | None = None
    target: str | None = None
    step: str | None = None
    thought: str | None = None
    finding: Finding | None = None  #: for FLAG_STEP
    status: str | None = None  #: for DONE: "success" or "blocked"
    message: str | None = None  #: for DONE
    secret: bool = False
    environment: bool = False  #: for DONE blocked: the environment is not ready (a prerequisite is missing)
    by: str | None = None  #: who chose it, where a policy mixes deciders ("model" in the hybrid policy)

    def __post_init__(self) -> None:
        self.kind = ActionKind(self.kind)
        if self.kind in NEEDS_REF and not self.ref:
            raise ValueError(f"a {self.kind.value} action needs an element ref")
        if self.kind in NEEDS_VALUE and self.value is None:
            raise ValueError(f"a {self.kind.value} action needs a value")
        if self.kind is ActionKind.FLAG_STEP and self.finding is None:
            raise ValueError("a flag_step action needs a finding")
        if self.kind is ActionKind.DONE and self.status not in ("success", "blocked"):
            raise ValueError('a done action needs status "success" or "blocked"')

    def describe(self) -> str:
        """One line for progress displays and reports; secrets masked."""
        value = "••••••" if self.secret else self.value
        match self.kind:
            case ActionKind.FILL | ActionKind.SELECT:
                return f"{self.kind.value} {self.target or self.ref} = {value!r}"
            case ActionKind.GOTO | ActionKind.PRESS | ActionKind.WAIT_FOR | ActionKind.SCROLL:
                return f"{self.kind.value} {value}"
            case ActionKind.FLAG_STEP:
                return f"flag: {self.finding.message}" if self.finding else "flag"
            case ActionKind.DONE:
                return f"done ({self.status}){': ' + self.message if self.message else ''}"
            case _:
                return f"{self.kind.value} {self.target or self.ref or ''}".strip()

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if v not in (None, False)}
        data["kind"] = self.kind.value
        if self.secret and self.value is not None:
            data["value"] = "••••••"
        if self.finding is not None:
            data["finding"] = self.finding.to_dict()
        return data


@dataclass
class Observation:
    """What the policy sees of the page after an action."""

    url: str
    title: str
    snapshot: str  #: aria_snapshot(mode="ai") of the page
    error: str | None = None  #: the last action's error, if it failed
    screenshot: bytes | None = field(default=None, repr=False)
    #: the accessible name of the modal dialog that covers the page ("" unnamed; None: no modal dialog is open)
    modal: str | None = None

    @cached_property
    def elements(self) -> list[Element]:
        return parse_snapshot(self.snapshot)

    @cached_property
    def covered(self) -> frozenset[str]:
        """The refs an open modal dialog covers: every element outside it, which the
        page does not let a click or a keystroke reach (empty when no modal dialog is
        open, or when the snapshot shows no dialog by that name to tell its inside by)."""
        if self.modal is None:
            return frozenset()
        dialogs = [e for e in self.elements if e.role in ("dialog", "alertdialog") and e.ref]
        named = [e for e in dialogs if " ".join(e.name.split()) == " ".join(self.modal.split())]
        if named:
            dialog = named[-1]  # the topmost: a dialog opened from a dialog comes later in the page
        elif len(dialogs) == 1:
            dialog = dialogs[0]  # the name computed two ways may differ; one dialog is that one
        else:
            return frozenset()
        return frozenset(e.ref for e in self.elements
                         if e.ref and e.ref != dialog.ref and dialog.ref not in e.parents)

    def digest(self) -> dict[str, Any]:
        """What a trajectory keeps of it: no snapshot text, no screenshot bytes."""
        return {"url": self.url, "title": self.title, "error": self.error, "elements": len(self.elements)}


@dataclass
class ActionResult:
    """How applying an action went."""

    ok: bool
    error: str | None = None
    seconds: float = 0.0  #: time spent in the browser and the console
