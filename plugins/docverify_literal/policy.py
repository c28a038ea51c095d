"""The ``literal`` policy: follow the parsed steps exactly as written, no model.

For each doc step it turns the parser's actions into page actions: open the named
console, select the region, click the bold label, follow the menu path, fill the
table's values into the named fields, select options, toggle switches, confirm
dialogs. Labels are looked up in the accessibility snapshot
(:func:`docverify.locate.locate`): exact, then normalized, then close. A close match
is followed *and* flagged (``label_changed``); no match is flagged
(``element_not_found``, with the nearest names). A step it cannot interpret is
flagged ``not_verifiable`` (not a defect).

Extension point for a hybrid policy: :meth:`LiteralEpisode.stuck` is called where a
step cannot be followed as written. By default it flags the finding and, when the
rest of the procedure depends on it, gives up; a hybrid policy overrides it to
hand that step to a model (and yields the model's actions instead).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from pydantic import Field as Option

from docverify.actions import Action, ActionKind, Observation
from docverify.console import origin
from docverify.locate import (
    CLICKABLE, CLOSE_THRESHOLD, Element, Located, MatchKind, children, is_chinese, locate, normalize, similarity,
)
from docverify.policy import Episode, Policy
from docverify.spec.model import Action as DocAction
from docverify.spec.model import Field, Intent, Step
from docverify.task import PLACEHOLDER, Task
from docverify.trajectory import StepStatus
from docverify.verdict import Finding, FindingKind

#: English names of common region ids, as region selectors show them.
REGION_NAMES = {
    "cn-hangzhou": "China (Hangzhou)", "cn-shanghai": "China (Shanghai)", "cn-beijing": "China (Beijing)",
    "cn-shenzhen": "China (Shenzhen)", "cn-huhehaote": "China (Hohhot)", "cn-qingdao": "China (Qingdao)",
    "cn-zhangjiakou": "China (Zhangjiakou)", "cn-hongkong": "China (Hong Kong)", "ap-southeast-1": "Singapore",
    "us-west-1": "US (Silicon Valley)", "us-east-1": "US (Virginia)", "eu-central-1": "Germany (Frankfurt)",
}
#: The same, as the Chinese console's region selector shows them.
REGION_NAMES_ZH = {
    "cn-hangzhou": "华东1（杭州）", "cn-shanghai": "华东2（上海）", "cn-beijing": "华北2（北京）",
    "cn-shenzhen": "华南1（深圳）", "cn-huhehaote": "华北5（呼和浩特）", "cn-qingdao": "华北1（青岛）",
    "cn-zhangjiakou": "华北3（张家口）", "cn-hongkong": "中国（香港）", "ap-southeast-1": "新加坡",
    "us-west-1": "美国（硅谷）", "us-east-1": "美国（弗吉尼亚）", "eu-central-1": "德国（法兰克福）",
}
#: The region selector's label, by the procedure's language (English last: a console
#: that does not speak the doc's language).
REGION_SELECTOR = {"zh": ("地域", "Region"), "en": ("Region",)}
#: Roles a menu path's items can have.
MENU_ROLES = ("link", "menuitem", "tab", "treeitem", "button")
#: Roles of a navigation group's title ("Network & Security" above its links).
GROUP_TITLE_ROLES = ("generic", "heading", "text", "button", "paragraph", "strong")
#: Controls a parameter table's field name can label.
FIELD_ROLES = ("textbox", "searchbox", "spinbutton", "combobox", "listbox", "group", "radiogroup", "checkbox", "switch")
#: Cell values that mean "turn it on" / "turn it off".
ON_WORDS = {"yes", "on", "enable", "enabled", "selected", "select", "true", "checked", "开启", "是", "启用", "选中", "开通"}
OFF_WORDS = {"no", "off", "disable", "disabled", "clear", "cleared", "false", "unchecked", "关闭", "否", "禁用", "不开通"}
#: Alert texts that say a required value is missing rather than wrong.
REQUIRED = re.compile(r"required|must be (?:specified|set|provided)|cannot be empty|is empty|不能为空|必填", re.I)
#: Texts of an empty list.
EMPTY = re.compile(r"^(?:no data(?: available)?|no records?(?: found)?|no items?|no results?(?: found)?|"
                   r"暂无数据|没有数据|无数据)\.?$", re.I)
#: Labels of page-level creation controls, never inside a list row.
CREATE_VERB = re.compile(r"^\s*(?:create|add|apply|request|grant|new|buy|purchase|import|upload|register|"
                         r"创建|新建|添加|申请|授权|购买|导入|上传)",
                         re.I)
#: Labels of a wizard's or a dialog's own buttons: never a list row's.
FORM_BUTTON = re.compile(r"^\s*(?:next|previous|back|ok|confirm|submit|save|cancel|close|finish|done|"
                         r"下一步|上一步|确定|确认|提交|保存|取消|关闭|完成)\s*$", re.I)
#: Step wording that points at one item of a list.
ROW_CONTEXT = re.compile(r"\b(?:find|locate)\b|actions?\s+column|next\s+to|in\s+the\s+row|corresponding|"
                         r"操作列|找到|目标实例", re.I)
#: A field description that tells the reader to choose ("Select a VPC."), naming no value.
CHOOSE = re.compile(r"^\s*(?:select|choose|选择)", re.I)
#: Field names that are names: a doc that gives no value still needs one typed.
NAME_FIELD = re.compile(r"(?:\bname|名称)\s*$", re.I)
#: Page-level words that are labels of the page itself, not of a control.
CONFIRM_DEFAULTS = ("OK", "Confirm", "确定")
#: Buttons that confirm a dialog, best first; and those that dismiss one.
CONFIRM_WORDS = ("OK", "Confirm", "Continue", "Yes", "确定", "确认", "继续")
CANCEL = re.compile(r"^\s*(?:cancel|close|no|back|取消|关闭|否|返回)\s*$", re.I)


@dataclass
class Stuck:
    """A doc action that cannot be followed as written."""

    step: Step
    action: DocAction | None
    finding: Finding
    fatal: bool  #: whether the rest of the procedure depends on it


class LiteralPolicy(Policy):
    """Follows the doc's steps as written; flags every place where the console differs."""

    name = "literal"

    class Options(Policy.Options):
        close_threshold: float = Option(0.8, ge=0.5, le=1.0, description="similarity from which a renamed label counts as the same control")
        skip_optional: bool = Option(True, description="skip steps marked (Optional)")

    def start(self, task: Task) -> "LiteralEpisode":
        return LiteralEpisode(task, self.options)


class LiteralEpisode(Episode):
    """One procedure followed literally. Written as an async generator of actions:
    after each ``yield`` the next observation is in :attr:`observation`."""

    def __init__(self, task: Task, options: LiteralPolicy.Options) -> None:
        super().__init__()
        self.task = task
        self.options = options
        self.procedure = task.procedure
        self.observation: Observation | None = None
        self.step_status: dict[str, StepStatus] = {}
        self.typed: list[str] = []  #: values entered, for verify steps
        self._actions: AsyncIterator[Action] | None = None
        self._blocked: str | None = None
        self._environment = False  #: blocked by a missing prerequisite, not by the doc
        self._last: Action | None = None
        self._step_index = 0  #: the top-level step being followed

    async def next_action(self, observation: Observation) -> Action:
        self.observation = observation
        last = self._last
        if observation.error and last is not None and last.kind.touches_page and self.halts_on(last):
            self._blocked = f"step {last.step}: {last.describe()} failed: {observation.error}"
            return Action(ActionKind.DONE, status="blocked", message=self._blocked)
        if self._actions is None:
            self._actions = self.follow()
        try:
            self._last = await anext(self._actions)
            return self._last
        except StopAsyncIteration:
            if self._blocked:
                return Action(ActionKind.DONE, status="blocked", message=self._blocked, environment=self._environment)
            return Action(ActionKind.DONE, status="success", message="every step followed")

    # -- the walk over the steps -----------------------------------------------------

    async def follow(self, start: int = 0) -> AsyncIterator[Action]:
        for index, step in enumerate(self.procedure.steps[start:], start):
            self._step_index = index
            async for action in self.follow_step(step):
                yield action
            if self._blocked:
                return
        if self.procedure.steps:
            async for action in self.unfinished_dialog(self.procedure.steps[-1]):
                yield action

    async def unfinished_dialog(self, last: Step) -> AsyncIterator[Action]:
        """A dialog still open after the doc's last step asks for a step the doc does
        not have (a confirmation the console added): flag it, then confirm it, so the
        check can still tell whether the goal is reached that way."""
        async for action in self.confirm_unasked(last, last.end_line, "(no step)", needs_confirm=False):
            yield action

    def open_dialog(self) -> tuple[Element, list[Element], Element | None] | None:
        """The topmost open dialog, its buttons and the one that confirms it (a known
        confirmation word, else the first that does not cancel), or None."""
        dialogs = [e for e in self.elements if e.role in ("dialog", "alertdialog") and e.ref]
        if not dialogs:
            return None
        dialog = dialogs[-1]
        buttons = [e for e in children(self.elements, dialog) if e.role == "button" and e.ref]
        confirm = next((e for name in CONFIRM_WORDS for e in buttons if normalize(e.name) == normalize(name)), None)
        confirm = confirm or next((e for e in buttons if e.name and not CANCEL.match(e.name)), None)
        return dialog, buttons, confirm

    async def confirm_unasked(self, step: Step, line: int, expected: str, *,
                              needs_confirm: bool = True) -> AsyncIterator[Action]:
        """A dialog the doc does not mention: flag the step the doc lacks, and confirm
        it so the procedure can go on. ``needs_confirm`` (mid-procedure, where the doc's
        own label is looked up next): only a bare confirmation that can be confirmed,
        never a form."""
        opened = self.open_dialog()
        if opened is None:
            return
        dialog, buttons, confirm = opened
        if needs_confirm and (confirm is None or any(e.role in FIELD_ROLES for e in children(self.elements, dialog))):
            return  # not a bare confirmation: a form the doc's steps fill in, or nothing to confirm with
        yield self.flag(step, line, FindingKind.MISSING_STEP, expected,
                        f"the console asks to confirm '{dialog.name or 'a dialog'}'", [e.name for e in buttons][:3])
        if confirm is not None:
            yield Action(ActionKind.CLICK, ref=confirm.ref, target=f"button '{confirm.name}' in '{dialog.name}'",
                         step=step.number)
            # what the console says to it: a form confirmed with fields the doc never filled
            async for action in self.after_submit(step, DocAction(Intent.CONFIRM, line, target=confirm.name)):
                yield action

    async def follow_step(self, step: Step) -> AsyncIterator[Action]:
        if step.optional and self.options.skip_optional:
            self.step_status[step.number] = StepStatus.SKIPPED
            return
        if step.intent is Intent.FREE_TEXT and not step.substeps and not step.alternatives and not step.fields:
            async for action in self.unverifiable(step, "no action the literal policy can take"):
                yield action
        for doc_action in step.actions:
            async for action in self.follow_action(step, doc_action):
                yield action
            if self._blocked:
                return
        if step.fields and not any(a.intent is Intent.CONFIGURE for a in step.actions):
            inline = {normalize(a.target) for a in step.actions if a.target and a.intent in (Intent.FILL, Intent.SELECT)}
            rest = [f for f in step.fields if normalize(f.name) not in inline]
            async for action in self.fill_fields(step, rest):
                yield action
        for sub in step.substeps:
            async for action in self.follow_step(sub):
                yield action
            if self._blocked:
                return
        if step.alternatives:
            # "Method 1 / Method 2" under a step: follow the first way, the others are not
            # taken; a step that did its own actions went its way already, and "You can
            # also click ..." after them is another way, not a further step
            taken = [] if step.actions else step.alternatives[:1]
            others = step.alternatives[len(taken):]
            for alternative_step in [one for alternative in taken for one in alternative.steps]:
                async for action in self.follow_step(alternative_step):
                    yield action
                if self._blocked:
                    return
            for other in others:
                for skipped in other.steps:
                    self.step_status.setdefault(skipped.number, StepStatus.SKIPPED)
        self.step_status.setdefault(step.number, StepStatus.FOLLOWED)

    async def follow_action(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        if PLACEHOLDER.search(f"{act.target} {act.value} {' '.join(act.path)}"):
            # a label or value that is a placeholder: the task context's value (a provisioned name)
            act = replace(act, target=self.task.resolve(act.target) if act.target else act.target,
                          value=self.task.resolve(act.value) if act.value else act.value,
                          path=[self.task.resolve(item) for item in act.path])
        handlers = {
            Intent.OPEN_CONSOLE: self.open_console, Intent.OPEN_URL: self.open_url,
            Intent.SELECT_REGION: self.select_region, Intent.NAVIGATE: self.navigate,
            Intent.CLICK: self.click, Intent.CONFIRM: self.click, Intent.FILL: self.fill,
            Intent.SELECT: self.select, Intent.TOGGLE: self.toggle, Intent.CONFIGURE: self.configure,
            Intent.VERIFY: self.verify,
        }
        handler = handlers.get(act.intent)
        if handler is None:
            async for action in self.unverifiable(step, "no action the literal policy can take"):
                yield action
            return
        async for action in handler(step, act):
            yield action

    # -- intents ---------------------------------------------------------------------

    async def open_console(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        name = act.target or ""
        found = self.find(name, ("link",))
        if found.kind is not MatchKind.EXACT and found.kind is not MatchKind.NORMALIZED and name:
            bare = re.sub(r"\s*(?:(?:management\s+)?console|(?:管理)?控制台)\s*$", "", name, flags=re.I)
            chinese = is_chinese(name)
            candidates = (bare, f"{bare} console") + ((f"{bare}控制台", f"{bare}管理控制台") if chinese else ())
            for candidate in dict.fromkeys(candidates):
                if candidate and candidate != name:
                    other = self.find(candidate, ("link",))
                    if other.kind in (MatchKind.EXACT, MatchKind.NORMALIZED):
                        found = other
                        break
            else:
                if chinese and bare:
                    found = self.product_link(bare) or found
        if found.element is None:
            async for action in self.stuck(Stuck(step, act, self.finding(
                    step, act.line, FindingKind.ELEMENT_NOT_FOUND, name or "the console", "no link to it on the console home page",
                    found.nearest), fatal=True)):
                yield action
            return
        async for action in self.act_on(step, act, name, found, ActionKind.CLICK):
            yield action

    def product_link(self, product: str) -> Located | None:
        """The console link of ``product`` as a Chinese doc names it ("OSS管理控制台" ->
        "OSS"): a link whose name starts or ends with it, as the console's product
        names do ("对象存储OSS", "负载均衡SLB"); the shortest of several."""
        key = normalize(product)
        if len(key) < 2:
            return None
        links = [e for e in self.elements if e.ref and e.role == "link" and e.name
                 and (normalize(e.name).startswith(key) or normalize(e.name).endswith(key))]
        if not links:
            return None
        return Located(min(links, key=lambda e: len(normalize(e.name))), MatchKind.NORMALIZED)

    async def open_url(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        obs = self.observation
        url = act.url or ""
        if url.startswith("/") or (obs and url.startswith(origin(obs.url))):
            yield Action(ActionKind.GOTO, value=url, step=step.number, target=url)
        else:
            yield self.flag(step, act.line, FindingKind.NOT_VERIFIABLE, url, "a page outside the console under test")

    async def select_region(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        names = REGION_NAMES_ZH if self.procedure.language == "zh" else REGION_NAMES
        wanted = act.value or names.get(self.task.region or "", None)
        for label in REGION_SELECTOR.get(self.procedure.language, REGION_SELECTOR["en"]):
            combo = self.find(label, ("combobox", "button", "listbox"))
            if combo.kind in (MatchKind.EXACT, MatchKind.NORMALIZED):
                break
        if combo.element is None:
            if act.value:  # the doc names a region but the page has no selector
                yield self.flag(step, act.line, FindingKind.ELEMENT_NOT_FOUND, "the region selector", "no region selector on the page", combo.nearest)
            return
        if not wanted:
            return  # "select a region": the current one will do
        options = [e.name for e in children(self.elements, combo.element) if e.role == "option"]
        current = next((e.name for e in children(self.elements, combo.element) if e.role == "option" and "selected" in e.attributes), None)
        if current and normalize(current) == normalize(wanted):
            return
        choice = _best(wanted, options, self.options.close_threshold)
        if options and choice is None:
            yield self.flag(step, act.line, FindingKind.VALUE_REJECTED, f"region {wanted}", "not offered by the region selector", options[:5])
            return
        yield Action(ActionKind.SELECT, ref=combo.element.ref, value=choice or wanted, target="Region", step=step.number)

    async def navigate(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        path = act.path or ([act.target] if act.target else [])
        expected = " > ".join(path)
        for index, item in enumerate(path):
            found = self.find(item, MENU_ROLES)
            last = index == len(path) - 1
            if not last and found.kind is MatchKind.CLOSE and self.group_title(item, path[index + 1]):
                continue  # "Permissions" is a title above "Grants", not the "Add Permissions" button
            if found.element is None:
                following = self.find(path[index + 1], MENU_ROLES) if not last else None
                if following is not None and following.element is not None:
                    shown = self.find(item, None)
                    if shown.element is None or shown.kind is MatchKind.CLOSE:  # the menu moved
                        yield self.flag(step, act.line, FindingKind.MENU_MOVED, expected,
                                        f"no menu '{item}'; '{path[index + 1]}' is elsewhere", found.nearest)
                    elif moved := self.moved_from(shown.element, following.element):
                        yield self.flag_moved(step, act, expected, item, path[index + 1], moved)
                    continue  # a group title that is not clickable
                async for action in self.stuck(Stuck(step, act, self.finding(
                        step, act.line, FindingKind.ELEMENT_NOT_FOUND, expected, f"no menu item '{item}'",
                        found.nearest), fatal=True)):
                    yield action
                return
            if not last and "expanded" in found.element.attributes:
                following = self.find(path[index + 1], MENU_ROLES)
                if following.element is not None and (moved := self.moved_from(found.element, following.element)):
                    yield self.flag_moved(step, act, expected, item, path[index + 1], moved)
                continue  # an expanded group: nothing to click
            async for action in self.act_on(step, act, item, found, ActionKind.CLICK, expected=expected):
                yield action

    def moved_from(self, title: Element, item: Element) -> list[str] | None:
        """Where a menu item shown apart from the group the doc puts it in now is:
        None when ``item`` sits in the container that holds ``title`` (or that cannot
        be told), else the titles of the group it is in now (perhaps none)."""
        if not title.parents or title.parents[-1] in item.parents:
            return None
        order = {id(e): i for i, e in enumerate(self.elements)}
        titles = [e for e in self.elements
                  if e.name and e is not item and e.role in GROUP_TITLE_ROLES and e.parents
                  and e.parents[-1] in item.parents and order[id(e)] < order[id(item)]]
        return [titles[-1].name] if titles else []

    def flag_moved(self, step: Step, act: DocAction, expected: str, group: str, item: str,
                   now_under: list[str]) -> Action:
        """A menu item found, but outside the group the doc names (the group is still there)."""
        where = f"; it is under '{now_under[0]}' now" if now_under else ""
        return self.flag(step, act.line, FindingKind.MENU_MOVED, expected,
                         f"'{item}' is no longer under '{group}'{where}", now_under)

    def group_title(self, item: str, following: str) -> bool:
        """Whether ``item`` is shown as plain text (a menu group's title) and the next
        item of the path can be clicked as it is."""
        shown = self.find(item, None)
        if shown.element is None or shown.kind is MatchKind.CLOSE:
            return False
        following_found = self.find(following, MENU_ROLES)
        return following_found.kind in (MatchKind.EXACT, MatchKind.NORMALIZED)

    async def click(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        label = act.target or (CONFIRM_DEFAULTS[0] if act.intent is Intent.CONFIRM else "")
        if not label:
            yield self.flag(step, act.line, FindingKind.NOT_VERIFIABLE, step.text, "no label to click")
            return
        found = self.find(label, CLICKABLE)
        if found.element is None and act.intent is not Intent.CONFIRM and not FORM_BUTTON.match(label):
            # a confirmation the console added in front of the doc's next control
            async for action in self.confirm_unasked(step, act.line, f"(a step before '{label}')"):
                yield action
            found = self.find(label, CLICKABLE)
        if found.element is None:
            async for action in self.stuck(Stuck(step, act, self.finding(
                    step, act.line, FindingKind.ELEMENT_NOT_FOUND, label, "no such control on the page", found.nearest),
                    fatal=True)):
                yield action
            return
        async for action in self.act_on(step, act, label, found, ActionKind.CLICK):
            yield action
        async for action in self.after_submit(step, act):
            yield action

    async def fill(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        async for action in self.fill_fields(step, [Field(name=act.target or "", line=act.line, value=act.value)]):
            yield action

    async def configure(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        if not step.fields:
            yield self.flag(step, act.line, FindingKind.NOT_VERIFIABLE, step.text, "no parameter table to follow")
            return
        async for action in self.fill_fields(step, step.fields):
            yield action

    async def select(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        if act.target and act.value:
            async for action in self.fill_fields(step, [Field(act.target, act.line, act.value)]):
                yield action
            return
        if act.target and not act.value:  # "select a VPC from the **Network** list": any option will do
            field = self.find(act.target, ("combobox", "listbox", "group", "radiogroup"))
            if field.element is not None:
                async for action in self.pick_any(step, act, field):
                    yield action
                return
        choice = act.value or act.target or ""
        found = self.find(choice, ("radio", "option", "tab", "checkbox", "menuitem", "link", "button"))
        if found.element is None:
            async for action in self.stuck(Stuck(step, act, self.finding(
                    step, act.line, FindingKind.ELEMENT_NOT_FOUND, choice, "no such option on the page", found.nearest),
                    fatal=False)):
                yield action
            return
        kind = ActionKind.CHECK if found.element.role in ("radio", "checkbox") else ActionKind.CLICK
        async for action in self.act_on(step, act, choice, found, kind):
            yield action

    async def pick_any(self, step: Step, act: DocAction, field: Located) -> AsyncIterator[Action]:
        """The doc names a list but no value: keep a real selection, else take the first real option."""
        element = field.element
        assert element is not None
        if field.kind is MatchKind.CLOSE:
            yield self.flag(step, act.line, FindingKind.LABEL_CHANGED, act.target or "", element.name)
        inner = children(self.elements, element)
        options = [e for e in inner if e.role in ("option", "radio") and e.name and not _is_placeholder(e.name)]
        if any("selected" in e.attributes or e.checked for e in options):
            return
        if not options:
            yield self.flag(step, act.line, FindingKind.VALUE_REJECTED, act.target or "", "the list offers nothing to select")
            return
        first = options[0]
        if first.role == "radio":
            yield Action(ActionKind.CHECK, ref=first.ref, target=f"{element.name}: {first.name}", step=step.number)
        else:
            yield Action(ActionKind.SELECT, ref=element.ref, value=first.name, target=element.name, step=step.number)

    async def toggle(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        label = act.target or ""
        found = self.find(label, ("switch", "checkbox", "radio", "button"))
        if found.element is None:
            async for action in self.stuck(Stuck(step, act, self.finding(
                    step, act.line, FindingKind.ELEMENT_NOT_FOUND, label, "no such switch or check box", found.nearest),
                    fatal=False)):
                yield action
            return
        off = (act.value or "on").lower() in OFF_WORDS or act.value == "off"
        if found.element.checked != (not off) or found.element.role == "button":
            kind = ActionKind.CLICK if found.element.role == "button" else (ActionKind.UNCHECK if off else ActionKind.CHECK)
            async for action in self.act_on(step, act, label, found, kind):
                yield action
        elif found.kind is MatchKind.CLOSE:
            yield self.flag(step, act.line, FindingKind.LABEL_CHANGED, label, found.element.name)

    async def verify(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        names = [value for value in self.typed if self.task.context.get("suffix", "\0") in value]
        if act.target:
            found = self.find(act.target, None)
            if found.element is not None and found.kind is not MatchKind.CLOSE:
                return
        if names and any(name in (self.observation.snapshot if self.observation else "") for name in names):
            return  # what we created shows on the page
        yield self.flag(step, act.line, FindingKind.NOT_VERIFIABLE, step.text, "checked by the success criteria, not literally")

    # -- parameter tables and inline values ------------------------------------------

    async def fill_fields(self, step: Step, fields: Sequence[Field]) -> AsyncIterator[Action]:
        for field in fields:
            if not field.name.strip():
                continue
            if field.value is None and not field.options:
                if NAME_FIELD.search(field.name):  # a name the doc leaves to the reader
                    async for action in self.fill_blank_name(step, field):
                        yield action
                elif CHOOSE.match(field.description):  # "Select a VPC.": any real choice will do
                    async for action in self.choose_blank(step, field):
                        yield action
                continue  # nothing to enter: the default stands
            async for action in self.fill_field(step, field):
                yield action

    async def fill_blank_name(self, step: Step, field: Field) -> AsyncIterator[Action]:
        found = self.find(field.name, ("textbox",))
        if found.element is None or found.kind is MatchKind.CLOSE:
            return
        value = self.task.resolve(f"<{field.name}>")
        self.typed.append(value)
        yield Action(ActionKind.FILL, ref=found.element.ref, value=value, target=field.name, step=step.number)

    async def choose_blank(self, step: Step, field: Field) -> AsyncIterator[Action]:
        """A list the doc tells to choose from without saying what: keep a real
        selection, else take the first real option (a list the page does not have,
        or shows only under another name, is left to the steps that follow)."""
        found = self.find(field.name, ("combobox", "listbox", "group", "radiogroup"))
        if found.element is None or found.kind is MatchKind.CLOSE:
            return
        act = DocAction(Intent.SELECT, field.line, target=field.name)
        async for action in self.pick_any(step, act, found):
            yield action

    async def fill_field(self, step: Step, field: Field) -> AsyncIterator[Action]:
        found = self.find(field.name, FIELD_ROLES)
        if found.element is None:
            shown = self.find(field.name, ("status", "cell", "generic", "text", "paragraph"))
            if shown.element is not None and shown.kind is not MatchKind.CLOSE:
                return  # a read-only value the page shows: nothing to enter
            async for action in self.stuck(Stuck(step, None, self.finding(
                    step, field.line, FindingKind.ELEMENT_NOT_FOUND, f"field {field.name}", "no such field on the page",
                    found.nearest), fatal=False)):
                yield action
            return
        element = found.element
        if found.kind is MatchKind.CLOSE:
            yield self.flag(step, field.line, FindingKind.LABEL_CHANGED, field.name, element.name)
        if field.value is not None:
            value = self.task.resolve(field.value)
        else:
            listed = self.listed_choice(element, field.options)
            if listed is None:
                return  # the doc lists the choices and the field has one of them
            value = self.task.resolve(listed)
        if element.role in ("group", "radiogroup"):
            async for action in self.choose_in_group(step, field, element, value):
                yield action
        elif element.role in ("combobox", "listbox"):
            options = [e.name for e in children(self.elements, element) if e.role == "option"]
            current = next((e.name for e in children(self.elements, element) if e.role == "option" and "selected" in e.attributes), None)
            if options:
                choice = _best(value, options, self.options.close_threshold)
                if choice is None:
                    yield self.flag(step, field.line, FindingKind.VALUE_REJECTED, f"{field.name}: {value}", "not among the options", options[:5])
                    return
                if choice != value and normalize(choice) != normalize(value):
                    yield self.flag(step, field.line, FindingKind.LABEL_CHANGED, value, choice)
                if current == choice:
                    return
                value = choice
            yield Action(ActionKind.SELECT, ref=element.ref, value=value, target=field.name, step=step.number)
        elif element.role in ("checkbox", "switch"):
            on = normalize(value) not in {normalize(word) for word in OFF_WORDS}
            if element.checked != on:
                yield Action(ActionKind.CHECK if on else ActionKind.UNCHECK, ref=element.ref, target=field.name, step=step.number)
        else:
            secret = bool(re.search(r"password|secret|密码", field.name, re.I))
            self.typed.append(value)
            yield Action(ActionKind.FILL, ref=element.ref, value=value, target=field.name, step=step.number, secret=secret)

    def listed_choice(self, element: Element, options: Sequence[str]) -> str | None:
        """The value to enter where the doc lists a field's choices but picks none: None
        when the field's current choice is one of them (nothing to enter, as a field the
        doc gives no value keeps its default), else the first listed that the page offers
        (else the first listed, for the page to reject)."""
        if element.role in ("checkbox", "switch"):
            listed = {normalize(option) for option in options}
            words = {normalize(word) for word in (ON_WORDS if element.checked else OFF_WORDS)}
            return None if listed & words else options[0]
        if element.role in ("textbox", "searchbox", "spinbutton") and element.text:
            return None  # a field that holds a value: the listed words name ways to fill it, not values
        inner = [e for e in children(self.elements, element) if e.role in ("option", "radio") and e.name]
        if not inner:
            return options[0]
        names = [e.name for e in inner]
        current = next((e.name for e in inner if "selected" in e.attributes or e.checked), None)
        threshold = self.options.close_threshold
        if current is not None and any(_best(option, [current], threshold) for option in options):
            return None
        return next((option for option in options if _best(option, names, threshold) is not None), options[0])

    async def choose_in_group(self, step: Step, field: Field, group: Element, value: str) -> AsyncIterator[Action]:
        radios = [e for e in children(self.elements, group) if e.role in ("radio", "checkbox", "switch")]
        names = [e.name for e in radios]
        choice = _best(value, names, self.options.close_threshold)
        if choice is None:
            yield self.flag(step, field.line, FindingKind.VALUE_REJECTED, f"{field.name}: {value}", "not among the options", names[:5])
            return
        if normalize(choice) != normalize(value):
            yield self.flag(step, field.line, FindingKind.LABEL_CHANGED, value, choice)
        radio = next(e for e in radios if e.name == choice)
        if not radio.checked:
            yield Action(ActionKind.CHECK, ref=radio.ref, target=f"{field.name}: {choice}", step=step.number)

    async def after_submit(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        """After a click, an error the page shows in a form means the doc's values or
        steps no longer satisfy the console."""
        obs = self.observation
        if obs is None:
            return
        alerts = [e for e in obs.elements if e.role == "alert" and e.name and (e.in_dialog or e.inside("form") or e.inside("main"))]
        if not alerts:
            return
        message = alerts[0].name
        kind = FindingKind.MISSING_STEP if REQUIRED.search(message) else FindingKind.VALUE_REJECTED
        async for action in self.stuck(Stuck(step, act, self.finding(step, act.line, kind, step.text, message), fatal=True)):
            yield action

    # -- shared ----------------------------------------------------------------------

    @property
    def elements(self) -> list[Element]:
        return self.observation.elements if self.observation else []

    def find(self, label: str, roles: Sequence[str] | None) -> Located:
        """``label`` among the elements one can act on (those with a ref)."""
        actionable = [e for e in self.elements if e.ref]
        return locate(label, actionable, roles, threshold=self.options.close_threshold)

    async def act_on(self, step: Step, act: DocAction, label: str, found: Located, kind: ActionKind,
                     expected: str | None = None) -> AsyncIterator[Action]:
        element = found.element
        assert element is not None
        if found.kind is MatchKind.CLOSE:
            yield self.flag(step, act.line, FindingKind.LABEL_CHANGED, expected or label, element.name)
        yield Action(kind, ref=element.ref, target=f"{element.role} '{element.name}'", step=step.number)

    def resume(self) -> bool:
        """After a missing prerequisite was provisioned: follow again from the step that
        was blocked (the steps before it brought the page there)."""
        if not self._environment:
            return False
        self._blocked, self._environment, self._last = None, False, None
        self._actions = self.follow(self._step_index)
        return True

    def halts_on(self, failed: Action) -> bool:
        """Whether a failed page action ends the episode (the literal follower has no
        other way; a hybrid policy lets its model see the error and recover)."""
        return True

    async def unverifiable(self, step: Step, reason: str) -> AsyncIterator[Action]:
        """A step with nothing literal to do (free text): flagged ``not_verifiable``,
        which is no defect. A hybrid policy overrides this to let a model do it."""
        yield self.flag(step, step.line, FindingKind.NOT_VERIFIABLE, step.text, reason)

    async def stuck(self, stuck: Stuck) -> AsyncIterator[Action]:
        """Where a step cannot be followed as written: flag it, and stop when the rest
        depends on it. A hybrid policy overrides this to let a model take the step.

        An element missing from an empty list is no doc defect: the resource the step
        acts on does not exist (a prerequisite the environment lacks), so the
        procedure ends as not ready instead of flagging drift."""
        empty = self.empty_list() if self.acts_on_a_row(stuck) else None
        if empty is not None:
            self._blocked = (f"prerequisite missing at step {stuck.step.number}: '{stuck.finding.expected}' acts on "
                             f"an existing resource, but the list on {empty} is empty (declare it with `requires:` "
                             "so it is provisioned)")
            self._environment = True
            return
        yield Action(ActionKind.FLAG_STEP, finding=stuck.finding, step=stuck.step.number)
        if stuck.fatal:
            self._blocked = f"step {stuck.step.number}: {stuck.finding.message}"

    @staticmethod
    def acts_on_a_row(stuck: Stuck) -> bool:
        """Whether the missing element is one a list row would hold ("Start", "More",
        "Bind Resource" next to an item) rather than a page-level control or a menu
        ("Create EIP", a navigation path): only then can an empty list explain it."""
        if stuck.finding.kind is not FindingKind.ELEMENT_NOT_FOUND or stuck.action is None:
            return False
        intent = stuck.action.intent
        if intent is Intent.NAVIGATE:  # a row's menu ("find the instance, choose More > Stop")
            return bool(ROW_CONTEXT.search(stuck.step.text)) or (stuck.action.path or [""])[0] in ("More", "更多")
        if intent not in (Intent.CLICK, Intent.CONFIRM, Intent.SELECT, Intent.TOGGLE):
            return False
        return not CREATE_VERB.match(stuck.finding.expected) and not FORM_BUTTON.match(stuck.finding.expected)

    def empty_list(self) -> str | None:
        """The page (URL) when it shows an empty list, else None."""
        obs = self.observation
        if obs is None:
            return None
        for element in obs.elements:
            if element.role in ("status", "cell", "paragraph", "generic", "text") and EMPTY.search(element.name or ""):
                return urlsplit(obs.url).path or "/"
        return None

    def finding(self, step: Step, line: int, kind: FindingKind, expected: str, observed: str,
                candidates: Sequence[str] = ()) -> Finding:
        return Finding(kind, self.procedure.path, line, step.number, expected, observed, list(candidates))

    def flag(self, step: Step, line: int, kind: FindingKind, expected: str, observed: str,
             candidates: Sequence[str] = ()) -> Action:
        finding = self.finding(step, line, kind, expected, observed, candidates)
        return Action(ActionKind.FLAG_STEP, finding=finding, step=step.number)


def _best(wanted: str, names: Sequence[str], threshold: float) -> str | None:
    """The option among ``names`` that is ``wanted``: exact, normalized, or the same
    but for a parenthesised short form. Options are not matched loosely: "Public
    Read" is not "Public Read/Write" (``threshold`` only admits near-identical
    spellings, above the larger of it and 0.9)."""
    if wanted in names:
        return wanted
    key = normalize(wanted)
    for name in names:
        if normalize(name) == key:
            return name
    strict = max(threshold, 0.9)
    scored = sorted(((similarity(wanted, name), name) for name in names), reverse=True)
    for score, name in scored:
        if score >= strict or (score >= CLOSE_THRESHOLD and _same_but_short_form(wanted, name)):
            return name
    return None


def _same_but_short_form(a: str, b: str) -> bool:
    parenthesised = any(paren in label for paren in ("(", "（") for label in (a, b))
    return parenthesised and difflib.SequenceMatcher(None, normalize(a), normalize(b)).ratio() < CLOSE_THRESHOLD


def _is_placeholder(name: str) -> bool:
    return bool(re.match(r"^(?:-+|select\b.*|please select.*|choose\b.*|请选择.*|none)$", name.strip(), re.I))


