"""What a page action would do to the console, and whether this run may take it.

Two safety rules of ``docverify check`` act here, before the runner hands a policy's
action to the executor (:meth:`docverify.run.runner.Runner.execute`), the same way on
every console, the sandbox's and the real cloud's:

- a **dry run** (``check --dry-run=browse``) follows the steps and stops before the
  first action that changes the console's state;
- the **protection of what docverify did not create** (a console's
  ``protect_unowned`` option, on for ``aliyun``) refuses a destructive action on a
  resource this run neither provisioned for the procedure nor made in its earlier
  steps: docverify never releases what it did not provision.

What an action does (:func:`judge`) is read from three places, never from a word list
alone:

- the action's kind: going to a page, scrolling, typing into a field and choosing an
  option change nothing until a form is submitted;
- the page: the control's role, name and place (a dialog's OK submits the dialog; a
  list row's Release destroys; a switch outside any form acts at once; a link or a tab
  of the navigation only goes somewhere);
- the doc (the parser's intents): a step that confirms a dialog confirms; a "Create X"
  or "Modify X" that the next steps follow by filling in a form only opens that form,
  one that no form-filling follows acts by itself.

A destructive control counts as the change itself even where the console would ask
for a confirmation first: whether it asks is not known before it is clicked.

Which resource a destructive action acts on (:class:`Guard`): the list row that holds
the control; else the row acted in last (a row's menu, the dialog it opened, the
detail page its link opened); and the page itself (a detail page's address and title:
a row of a resource docverify made belongs to it). The run owns a resource when that
text shows a name or ID the procedure's provisioning output, or a name carrying the
run's suffix (what its own steps typed: ``<suffix>`` placeholders, unique names).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal
from urllib.parse import urlsplit

from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.locate import Element, normalize, similarity, within
from docverify.parse.model import Action as DocAction
from docverify.parse.model import Intent, Procedure, Step
from docverify.records import Record, optional, record

#: Controls that destroy or interrupt what they act on, by the label's first words.
#: A bare "Reset" / "重置" resets a filter bar, not a resource: only "Reset <something>".
DESTROY = re.compile(
    r"^\s*(?:force\s+)?(?:delete|remove|release|terminate|destroy|stop|shut\s*down|restart|reboot|reset\s+\S|"
    r"re-?initiali[sz]e|unbind|unassociate|disassociate|detach|unmount|uninstall|disable|deactivate|revoke|"
    r"unsubscribe|purge|drop|cancel\s+authori[sz]ation)\b"
    r"|^\s*(?:强制)?(?:删除|移除|释放|销毁|停止|关机|重启|重置\S|重新初始化|解绑|解除|卸载|禁用|停用|撤销|注销|退订|清空|"
    r"取消授权|取消关联)",
    re.I,
)
#: Controls that submit what the page or dialog holds, by the whole label.
SUBMIT = re.compile(
    r"^\s*(?:ok|okay|confirm|submit|save|apply|yes|finish|done|complete|buy\s+now|purchase\s+now|create\s+now|"
    r"pay(?:\s+now)?|place\s+order|确定|确认|提交|保存|应用|是|完成|立即购买|立即创建|立即开通|去支付|支付|下单)\s*[.!。]?\s*$",
    re.I,
)
#: Controls that change something, at once or through the form they open, by the label's first word.
CHANGE = re.compile(
    r"^\s*(?:create|add|new|buy|purchase|order|apply|allocate|assign|activate|start|run|launch|enable|turn\s+on|"
    r"bind|associate|attach|mount|authori[sz]e|grant|modify|update|change|edit|set|configure|rename|resize|scale|"
    r"upgrade|downgrade|renew|import|upload|install|restore|roll\s*back|replace|generate|publish|deploy|execute|"
    r"commit|accept|join|move|clone|migrate|register|request)\b"
    r"|^\s*(?:创建|新建|添加|增加|购买|申请|开通|分配|启动|开始|运行|启用|开启|绑定|关联|挂载|授权|修改|更新|变更|编辑|设置|"
    r"配置|重命名|扩容|升级|降配|续费|导入|上传|安装|恢复|回滚|替换|生成|发布|部署|执行|加入|移入|克隆|迁移|注册)",
    re.I,
)
#: Controls that only move about: never a change, whatever the doc says of them.
NEUTRAL = re.compile(
    r"^\s*(?:cancel|close|back|previous|next|more|search|refresh|view|details?|查看|详情|取消|关闭|返回|上一步|下一步|更多|"
    r"搜索|刷新)\s*$|^\s*(?:next|下一步)\s*[:：]",
    re.I,
)
#: Roles that show or choose a part of the page: clicking them goes somewhere, changes nothing.
VIEWING = frozenset({"tab", "treeitem", "option", "columnheader", "rowheader", "heading"})
#: Fields where Enter submits their form; a search box's Enter only searches.
TEXT_FIELDS = frozenset({"textbox", "spinbutton"})
#: Doc intents of a form being filled in.
FORM_INTENTS = frozenset({Intent.FILL, Intent.SELECT, Intent.TOGGLE, Intent.CONFIGURE})
#: Doc intents that leave the page (the form before them was not theirs).
LEAVING_INTENTS = frozenset({Intent.OPEN_CONSOLE, Intent.OPEN_URL, Intent.SELECT_REGION})
#: Doc intents of a click, whose label says what it does.
CLICK_INTENTS = frozenset({Intent.CLICK, Intent.CONFIRM, Intent.NAVIGATE, Intent.OPEN_RESOURCE, Intent.TOGGLE})
#: How much of a row or a page a message shows of the resource.
SHOWN = 80
#: From this similarity a doc's label names a control the console renamed (looser than
#: the literal policy's threshold: here it only says which doc action a click serves).
CLOSE = 0.6


class Effect(StrEnum):
    """What an action does to the console's state."""

    NONE = "none"  #: reads, goes somewhere, opens a menu, a tab or a form, types into a field
    CHANGES = "changes"  #: creates, modifies, submits, confirms
    DESTROYS = "destroys"  #: deletes, releases, stops, detaches, disables, revokes, ...


@dataclass(frozen=True)
class Judgement:
    """:func:`judge`'s answer: the effect, why (for the report), and the doc action the
    page action serves (its line is where the report points)."""

    effect: Effect
    why: str = ""
    doc: DocAction | None = None
    step: Step | None = None

    @property
    def line(self) -> int | None:
        if self.doc is not None:
            return self.doc.line
        return self.step.line if self.step is not None else None


@record
class Stopped(Record):
    """An action docverify did not take, and why the procedure ended before it: a dry
    run stops before the first action that changes the console's state
    (``by: dry_run``); the protection of resources docverify did not create refuses a
    destructive action on one of them (``by: protection``)."""

    by: Literal["dry_run", "protection"]
    action: str  #: the action as the trajectory describes it: "click button 'OK'"
    effect: str  #: what it would have done: "submits the dialog 'Create Group'"
    step: str | None = optional()  #: the doc step it served
    line: int | None = optional()  #: the doc line of that step's action
    resource: str | None = optional()  #: what it would have acted on (the protection's)


def judge(action: Action, observation: Observation, procedure: Procedure | None = None) -> Judgement:
    """What ``action``, about to be applied to the page of ``observation``, would do to the
    console's state (see the module docs); ``procedure``: the doc it follows, whose
    intents tell a control that opens a form from one that acts."""
    step = _step(procedure, action.step)
    if not action.kind.touches_page or action.kind in (ActionKind.GOTO, ActionKind.BACK, ActionKind.SCROLL,
                                                       ActionKind.WAIT_FOR, ActionKind.FILL, ActionKind.SELECT):
        return Judgement(Effect.NONE, step=step)
    element = element_of(observation, action.ref)
    if element is None:  # nothing to act on: the executor says so, nothing changes
        return Judgement(Effect.NONE, step=step)
    doc = _served(step, element)
    if action.kind is ActionKind.PRESS:
        if (action.value or "").lower() in ("enter", "return") and element.role in TEXT_FIELDS \
                and not element.inside("search"):
            return Judgement(Effect.CHANGES, f"Enter in '{element.name or element.role}' submits its form", doc, step)
        return Judgement(Effect.NONE, doc=doc, step=step)
    if element.role in ("switch", "checkbox", "radio") or action.kind in (ActionKind.CHECK, ActionKind.UNCHECK):
        return _toggle(action, element, procedure, step, doc)
    return _click(element, observation, procedure, step, doc)


def _toggle(action: Action, element: Element, procedure: Procedure | None, step: Step | None,
            doc: DocAction | None) -> Judgement:
    """A check box, a radio button or a switch: a form's input, except a switch outside
    any form that nothing submits later: that one acts at once."""
    if element.role != "switch" or _in_form(element) or _submits_later(procedure, step, doc):
        return Judgement(Effect.NONE, doc=doc, step=step)
    off = action.kind is ActionKind.UNCHECK or (action.kind is ActionKind.CLICK and element.checked)
    name = element.name or "a switch"
    if off:
        return Judgement(Effect.DESTROYS, f"turns '{name}' off, outside any form (at once)", doc, step)
    return Judgement(Effect.CHANGES, f"turns '{name}' on, outside any form (at once)", doc, step)


def _click(element: Element, observation: Observation, procedure: Procedure | None, step: Step | None,
           doc: DocAction | None) -> Judgement:
    name = element.name.strip()
    if element.inside("navigation") or element.inside("banner") or element.role in VIEWING:
        return Judgement(Effect.NONE, doc=doc, step=step)
    if NEUTRAL.search(name):
        return Judgement(Effect.NONE, doc=doc, step=step)
    if DESTROY.search(name):
        return Judgement(Effect.DESTROYS, "a destructive control", doc, step)
    dialog = dialog_of(observation, element)
    confirms = doc is not None and doc.intent is Intent.CONFIRM and _names(doc, name)
    if dialog is not None and (SUBMIT.search(name) or CHANGE.search(name) or confirms):
        title = dialog.name or "a dialog"
        if DESTROY.search(title):
            return Judgement(Effect.DESTROYS, f"confirms the dialog '{title}'", doc, step)
        return Judgement(Effect.CHANGES, f"submits the dialog '{title}'", doc, step)
    if SUBMIT.search(name):
        return Judgement(Effect.CHANGES, "submits the page's form", doc, step)
    if confirms:
        return Judgement(Effect.CHANGES, "the doc's step confirms with it", doc, step)
    if CHANGE.search(name):
        if _fills_form_later(procedure, step, doc):
            return Judgement(Effect.NONE, doc=doc, step=step)  # it opens the form the next steps fill in
        return Judgement(Effect.CHANGES, "acts by itself: no step after it fills in a form", doc, step)
    return Judgement(Effect.NONE, doc=doc, step=step)


# -- the page ----------------------------------------------------------------------------


def element_of(observation: Observation, ref: str | None) -> Element | None:
    """The element of the snapshot with that ref, or None."""
    if not ref:
        return None
    return next((e for e in observation.elements if e.ref == ref), None)


def _in_form(element: Element) -> bool:
    return element.in_dialog or element.inside("form")


def dialog_of(observation: Observation, element: Element) -> Element | None:
    """The innermost dialog that holds ``element``, or None."""
    dialogs = [e for e in observation.elements if e.role in ("dialog", "alertdialog") and e.ref
               and e.ref in element.parents]
    return max(dialogs, key=lambda d: element.parents.index(d.ref or ""), default=None)


def row_of(observation: Observation, element: Element) -> Element | None:
    """The list row (not a header row) that holds ``element``, or None."""
    rows = [e for e in observation.elements if e.role == "row" and e.ref and e.ref in element.parents]
    row = max(rows, key=lambda r: element.parents.index(r.ref or ""), default=None)
    if row is None or any(e.role == "columnheader" for e in observation.elements if within(e, row)):
        return None
    return row


def row_names(observation: Observation, row: Element) -> list[str]:
    """What a row shows: its own name, else its cells' and links' names, in order."""
    if row.name.strip():
        return [row.name.strip()]
    shown = [(e.name or (e.text if e.role == "text" else "")).strip() for e in observation.elements
             if within(e, row) and e.role in ("cell", "gridcell", "link", "text", "generic")]
    return list(dict.fromkeys(name for name in shown if name))


def page_context(observation: Observation) -> tuple[str, str]:
    """The page as a resource's own page shows it: its address (the path and a hash
    route, no query: a search typed into the list is no resource of the page) and its
    top headings."""
    parts = urlsplit(observation.url)
    address = parts.path + ("#" + parts.fragment.split("?", 1)[0] if parts.fragment else "")
    headings = [e.name for e in observation.elements
                if e.role == "heading" and "level=1" in e.attributes and e.name and not e.in_dialog]
    return address, " · ".join(headings)


# -- the doc -----------------------------------------------------------------------------


def _step(procedure: Procedure | None, number: str | None) -> Step | None:
    if procedure is None or not number:
        return None
    return next((s for s in procedure.all_steps() if s.number == number), None)


def _labels(act: DocAction) -> list[str]:
    return [label for label in (*act.path, act.target) if label]


def _names(act: DocAction, name: str) -> bool:
    """Whether the doc action names the control ``name``: exactly, or closely (renamed)."""
    wanted = normalize(name)
    return any(normalize(label) == wanted or similarity(label, name) >= CLOSE for label in _labels(act))


def _served(step: Step | None, element: Element) -> DocAction | None:
    """The doc action of ``step`` that a click on ``element`` serves: the one naming
    it (exactly, else closely), else the step's first click; None without a step."""
    if step is None:
        return None
    clicks = [a for a in step.actions if a.intent in CLICK_INTENTS]
    wanted = normalize(element.name)
    named = next((a for a in step.actions for label in _labels(a) if normalize(label) == wanted), None)
    if named is not None:
        return named
    close = next((a for a in clicks if _names(a, element.name)), None)
    return close or (clicks[0] if clicks else (step.actions[0] if step.actions else None))


def _after(procedure: Procedure | None, step: Step | None, doc: DocAction | None) -> Iterable[DocAction | Step]:
    """What the doc asks after ``doc`` of ``step``, in order: the step's later actions,
    its parameter table (a :class:`Step`: fields to fill in), then every later step's
    actions and table."""
    if procedure is None or step is None:
        return
    steps = procedure.all_steps()
    index = next((i for i, s in enumerate(steps) if s is step), None)
    if index is None:
        return
    later = step.actions[step.actions.index(doc) + 1:] if doc is not None and doc in step.actions else []
    yield from later
    if step.fields:
        yield step
    for following in steps[index + 1:]:
        yield from following.actions
        if following.fields:
            yield following


def _acts(act: DocAction) -> bool:
    """Whether a doc action clicks something that changes state, or leaves the page."""
    if act.intent in LEAVING_INTENTS or act.intent is Intent.CONFIRM:
        return True
    return act.intent in CLICK_INTENTS and any(SUBMIT.search(label) or CHANGE.search(label) or DESTROY.search(label)
                                               for label in _labels(act)[-1:])


def _fills_form_later(procedure: Procedure | None, step: Step | None, doc: DocAction | None) -> bool:
    """Whether the doc fills in a form after ``doc`` before anything else acts: the
    control opened that form ("Click **Create VPC**." and then "Configure the
    following parameters.")."""
    for item in _after(procedure, step, doc):
        if isinstance(item, Step) or item.intent in FORM_INTENTS:
            return True
        if _acts(item):
            return False
    return False


def _submits_later(procedure: Procedure | None, step: Step | None, doc: DocAction | None) -> bool:
    """Whether the doc submits something after ``doc`` before it leaves the page: what
    ``doc`` set is part of the form submitted then."""
    for item in _after(procedure, step, doc):
        if isinstance(item, Step):
            continue
        if item.intent in LEAVING_INTENTS:
            return False
        if _acts(item):
            return True
    return False


# -- one procedure's rules ----------------------------------------------------------------


@dataclass
class Focus:
    """The list row acted in last: the resource a row's menu, the dialog it opened or
    the detail page its link opened is about."""

    names: list[str]


class Guard:
    """One procedure's safety rules, asked before every page action (:meth:`before`).

    ``dry_run``: stop before the first action that changes state. ``protect``: refuse a
    destructive action on a resource the run does not own; ``owned``: the names and IDs
    the procedure's provisioning made (more come with :meth:`own`); ``suffix``: the
    run's name suffix, which every name the procedure's own steps typed carries;
    ``setting``: the console option that turns the protection off, for the message."""

    def __init__(self, procedure: Procedure, *, dry_run: bool = False, protect: bool = False,
                 owned: Iterable[str] = (), suffix: str = "", setting: str = "protect_unowned") -> None:
        self.procedure = procedure
        self.dry_run = dry_run
        self.protect = protect
        self.setting = setting
        self.owned: set[str] = set()
        self.own(owned)
        self.suffix = re.compile(rf"(?<![A-Za-z0-9]){re.escape(suffix)}(?![A-Za-z0-9])") if len(suffix) >= 4 else None
        self.focus: Focus | None = None

    @property
    def active(self) -> bool:
        return self.dry_run or self.protect

    def own(self, values: Iterable[str]) -> None:
        """Names and IDs of resources made for this procedure (provisioning's outputs)."""
        self.owned.update(value for value in (str(v).strip() for v in values) if len(value) >= 4)

    def before(self, action: Action, observation: Observation) -> Stopped | None:
        """Whether ``action`` may be applied to the page of ``observation``: None, or why
        not (a :class:`Stopped` the procedure ends with)."""
        if not self.active:
            return None
        judged = judge(action, observation, self.procedure)
        element = element_of(observation, action.ref)
        stopped = None
        if judged.effect is not Effect.NONE and self.dry_run:
            stopped = Stopped("dry_run", action.describe(), judged.why, action.step, judged.line)
        elif judged.effect is Effect.DESTROYS and self.protect and element is not None:
            shown, evidence = self.resource(observation, element)
            if not self.owns(evidence):
                stopped = Stopped("protection", action.describe(), judged.why, action.step, judged.line, shown)
        self.track(action, observation, element)
        return stopped

    def track(self, action: Action, observation: Observation, element: Element | None) -> None:
        """Remember the row acted in (the resource what follows is about); forget it when
        the policy goes elsewhere."""
        if action.kind in (ActionKind.GOTO, ActionKind.BACK):
            self.focus = None
            return
        if element is None:
            return
        row = row_of(observation, element)
        if row is not None:
            self.focus = Focus(row_names(observation, row))
        elif element.inside("navigation") or element.inside("banner"):
            self.focus = None

    def resource(self, observation: Observation, element: Element) -> tuple[str, str]:
        """What a destructive control acts on: how a message names it, and the text that
        shows whose it is (the row, the row acted in before, the page, the dialog)."""
        address, headings = page_context(observation)
        row = row_of(observation, element)
        texts = [address, headings]
        if row is not None:
            names = row_names(observation, row)
            shown = f"the list row '{_short(' · '.join(names))}'"
            texts += names
        elif self.focus is not None:
            shown = f"the list row '{_short(' · '.join(self.focus.names))}' (acted in before)"
            texts += self.focus.names
        else:
            shown = f"the resource of the page '{_short(headings or address)}' ({address})"
        dialog = dialog_of(observation, element)
        if dialog is not None:
            texts += [e.name for e in observation.elements if within(e, dialog) and e.name]
        return shown, "\n".join(texts)

    def owns(self, text: str) -> bool:
        """Whether ``text`` names a resource this procedure made: a provisioned name or ID,
        or a name carrying the run's suffix."""
        if self.suffix is not None and self.suffix.search(text):
            return True
        return any(value in text for value in self.owned)

    def refusal(self, stopped: Stopped, path: str) -> str:
        """The reason an ENV_ERROR gives for a refused action: what, where, and what to do."""
        where = f"step {stopped.step} ({path}:{stopped.line})" if stopped.step else f"{path}:{stopped.line}"
        console, _, option = self.setting.rpartition(".")
        table = f"[{console}] {option} = false" if console else f"{option} = false"
        return (f"refused at {where}: {stopped.action} ({stopped.effect}) acts on {stopped.resource}, which docverify "
                "did not create: neither provisioned for this procedure nor made by its earlier steps. Declare it with "
                f"`requires:` so docverify provisions it, or turn this protection off with {table} "
                f"(-O {self.setting}=false)")


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN else text[:SHOWN - 1] + "…"


def owned_outputs(outputs: dict[str, object]) -> list[str]:
    """The names and IDs among provisioning's outputs (``vpc_1_id``, ``eip_1_name``): what
    the run owns. Not every output: a region or a CIDR block names no resource."""
    return [str(value) for key, value in outputs.items()
            if isinstance(value, str) and re.search(r"(?:^|_)(?:id|name|arn)$", key)]


def followed_before(statuses: Sequence[tuple[str, str]], stop: str | None) -> str:
    """"steps 1-3 followed as written" for the steps before ``stop`` (``statuses``: each
    step's number and status, in document order); what was skipped or not verifiable is
    said too."""
    before: list[tuple[str, str]] = []
    for number, status in statuses:
        if number == stop:
            break
        before.append((number, status))
    if stop is not None and not before:
        return "it is the first step"
    runs: list[list[str]] = []
    previous_followed = False
    for number, status in before:
        if status == "followed":
            if previous_followed:
                runs[-1].append(number)
            else:
                runs.append([number])
        previous_followed = status == "followed"
    parts = []
    if runs:
        spans = [run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs]
        count = sum(len(run) for run in runs)
        parts.append(f"step{'s' if count > 1 else ''} {', '.join(spans)} followed as written")
    others: dict[str, list[str]] = {}
    for number, status in before:
        if status != "followed":
            others.setdefault(status.replace("_", " "), []).append(number)
    for status, numbers in others.items():
        parts.append(f"step{'s' if len(numbers) > 1 else ''} {', '.join(numbers)} {status}")
    return "; ".join(parts) or "no step followed"
