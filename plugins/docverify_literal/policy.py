"""The ``literal`` policy: follow the parsed steps exactly as written, no model.

For each doc step it turns the parser's actions into page actions: open the named
console, select the region, click the bold label, follow the menu path, fill the
table's values into the named fields, select options, toggle switches, confirm
dialogs. Labels are looked up in the accessibility snapshot
(:func:`docverify.execute.locate.locate`): exact, then normalized, then close. A close match
is followed *and* flagged (``label_changed``); no match is flagged
(``element_not_found``, with the nearest names). A step it cannot interpret is
flagged ``not_verifiable`` (not a defect).

A following policy (:mod:`docverify.execute.follow`): an episode started with a
:class:`~docverify.execute.follow.Delegate` asks it where a step cannot be followed
as written, has no literal action, or a page action failed; without one, the
episode flags the step and, when the rest depends on it, gives up. The ``hybrid``
policy's delegate hands such a step to a model instead.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from urllib.parse import urlsplit

from pydantic import Field as Option

from docverify.check.verdict import Finding, FindingKind
from docverify.console import origin
from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.follow import Delegate, FollowingPolicy, Stuck
from docverify.execute.locate import (
    CLICKABLE,
    CLOSE_THRESHOLD,
    Element,
    Located,
    MatchKind,
    children,
    is_chinese,
    locate,
    locate_words,
    normalize,
    similarity,
    within,
)
from docverify.execute.policy import Episode
from docverify.parse.fields import example_in_text
from docverify.parse.model import Action as DocAction
from docverify.parse.model import Field, Intent, Step
from docverify.report.trajectory import StepStatus
from docverify.task import PLACEHOLDER, Task
from docverify_literal.rows import CONTEXT_KEY, known_for_field, resource_link, resource_row

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
REQUIRED = re.compile(r"required|mandatory|not supplied|is missing|must be (?:specified|set|provided)|cannot be empty|is empty|"
                      r"不能为空|必填|不能为空|缺少", re.I)
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
                         r"\b(?:in|on|from)\s+the\s+(?:[\w-]+\s+){0,3}list\b|"  # "In the VPC list, click ..."
                         r"操作列|找到|目标实例|列表中", re.I)
#: A field description that tells the reader to choose ("Select a VPC."), naming no value.
CHOOSE = re.compile(r"^\s*(?:select|choose|选择)", re.I)
#: Field names that are names: a doc that gives no value still needs one typed.
NAME_FIELD = re.compile(r"(?:\bname|名称)\s*$", re.I)
#: A number and its unit, "2 Mbps", "40 GiB", "5 Mbit/s": a number field takes the number.
NUMBER_WITH_UNIT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[A-Za-z%][A-Za-z/%]*\s*$")
#: A listed choice that is a way to fill a field, not its value: "Select Existing EIPs", "Purchase EIPs", "使用已有".
WAY = re.compile(r"(?:select|choose|use|purchase|buy|create|add|specify|enter|import|upload)\s"
                 r"|(?:选择|使用|购买|创建|新建|指定|输入|导入|上传)\S", re.I)
#: A step that names the console's side menu.
NAVIGATION_PANE = re.compile(r"navigation\s+(?:pane|bar|menu|panel|tree)|导航栏|导航窗格", re.I)
#: A wizard's button to its next page, named for that page ("Next: Networking", "下一步：网络和安全组").
WIZARD_NEXT = re.compile(r"^\s*(?:next|下一步)\s*[:：]\s*\S", re.I)
#: Words that stay whole in an abbreviation ("Elastic IP Address" is EIP).
ABBREVIATED = frozenset({"ip", "db", "os", "ssl", "dns", "cdn", "api", "ecs", "vpc", "nat", "ram"})
#: Fields that take the reader's SSH public key.
PUBLIC_KEY_FIELD = re.compile(r"public\s*key|公钥", re.I)
#: A field description that says the field shows only in some cases.
CONDITIONAL_FIELD = re.compile(
    r"\bonly\s+(?:when|if|after|for|in)\b|\b(?:is|are)\s+(?:displayed|shown|available|required)\s+only\b"
    r"|\b(?:appears?|displayed|shown)\s+(?:when|if|after)\b|\bif\s+you\s+(?:select|set|choose|enable|turn\s+on)\b"
    r"|仅当|仅在|只有|仅适用|时显示|时才|如果(?:您)?(?:选择|设置|开启)",
    re.I,
)
#: Page-level words that are labels of the page itself, not of a control.
CONFIRM_DEFAULTS = ("OK", "Confirm", "确定")
#: Buttons that confirm a dialog, best first; and those that dismiss one.
CONFIRM_WORDS = ("OK", "Confirm", "Continue", "Yes", "确定", "确认", "继续")
CANCEL = re.compile(r"^\s*(?:cancel|close|no|back|取消|关闭|否|返回)\s*$", re.I)

#: "Wait until the status of the EIP changes to In Use", "wait for the instance to become Running"
_WAIT = re.compile(r"\bwait\s+(?:until|for)\b(?P<rest>.*)", re.IGNORECASE | re.DOTALL)


def awaited_state(step: Step) -> str | None:
    """The state a "wait until ... X" step waits for: the last of its labels
    (bold or code words) in the sentence after "wait until"; None when it waits for none."""
    match = _WAIT.search(step.text)
    if match is None:
        return None
    rest = match.group("rest")
    sentence = re.split(r"(?<=[.!?])\s", rest, maxsplit=1)[0]
    found = [(sentence.rfind(label), label) for label in step.labels if label and label in sentence]
    return max(found)[1] if found else None


class LiteralPolicy(FollowingPolicy):
    """Follows the doc's steps as written; flags every place where the console differs."""

    name = "literal"

    class Options(FollowingPolicy.Options):
        close_threshold: float = Option(0.8, ge=0.5, le=1.0, description="similarity from which a renamed label counts as the same control")
        skip_optional: bool = Option(True, description="skip steps marked (Optional)")

    def start(self, task: Task, delegate: Delegate | None = None) -> "LiteralEpisode":
        return LiteralEpisode(task, self.options, delegate)


class LiteralEpisode(Episode):
    """One procedure followed literally. Written as an async generator of actions:
    after each ``yield`` the next observation is in :attr:`observation`. It is the
    :class:`~docverify.execute.follow.Follower` its delegate sees."""

    def __init__(self, task: Task, options: LiteralPolicy.Options, delegate: Delegate | None = None) -> None:
        super().__init__()
        self.task = task
        self.options = options
        self.delegate = delegate if delegate is not None else Delegate()
        self.procedure = task.procedure
        self.observation: Observation | None = None
        self.step_status: dict[str, StepStatus] = {}
        self.typed: list[str] = []  #: values entered, for verify steps
        self._actions: AsyncIterator[Action] | None = None
        self._blocked: str | None = None
        self._environment = False  #: blocked by a missing prerequisite, not by the doc
        self._last: Action | None = None
        self._step_index = 0  #: the top-level step being followed
        self._url = ""  #: the page the last observation showed
        self._form_step: str | None = None  #: the doc step that last filled a field of the page's form
        #: fields a wizard page lacked, held until the next page shows whether they moved there
        self._deferred: list[tuple[Step, Field, Finding]] = []
        self._context_missing = False  #: the part of the page the current action names is not there
        self._acted: tuple[Step, int] | None = None  #: the step and line of the doc's last page action
        #: the step before the one being followed: the section it had the reader find
        #: ("find the **Bucket Tag** section") is where the next one's "click **Configure**" is
        self._previous: Step | None = None
        self._current: Step | None = None
        self.delegate.started(self)

    async def next_action(self, observation: Observation) -> Action:
        self.observation = observation
        self.delegate.observe(observation)
        action = await self.decide(observation)
        self.delegate.decided(action)
        return action

    def provisioned(self, report: str) -> None:
        self.delegate.provisioned(report)

    async def decide(self, observation: Observation) -> Action:
        last = self._last
        if (observation.error and last is not None and last.kind.touches_page and self.halts_on(last)
                and self.delegate.halts_on(last)):
            self._blocked = f"step {last.step}: {last.describe()} failed: {observation.error}"
            return Action(ActionKind.DONE, status="blocked", message=self._blocked)
        if self._actions is None:
            self._actions = self.follow()
        if last is not None and last.kind is ActionKind.CLICK and observation.url != self._url:
            self._form_step = None  # a new page: its form is not the one filled before
        self._url = observation.url
        try:
            self._last = await anext(self._actions)
            if self._last.kind in (ActionKind.FILL, ActionKind.SELECT, ActionKind.CHECK, ActionKind.UNCHECK):
                self._form_step = self._last.step
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
        async for action in self.flush_deferred():
            yield action
        if self.procedure.steps:
            async for action in self.unfinished_dialog(self.procedure.steps[-1]):
                yield action

    async def unfinished_dialog(self, last: Step) -> AsyncIterator[Action]:
        """A dialog still open after the doc's last step asks for a step the doc does
        not have (a confirmation the console added): flag it, then confirm it, so the
        check can still tell whether the goal is reached that way. The finding is on the
        line of the doc's last page action (the method of several it took), else at the end."""
        step, line = self._acted if self._acted is not None else (last, last.end_line)
        async for action in self.confirm_unasked(step, line, "(no step)", needs_confirm=False):
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
        if needs_confirm and self._acted is not None:  # the step whose action made the console ask lacks the step after it
            step, line = self._acted
            expected = f"(a step after step {step.number})"
        yield self.flag(step, line, FindingKind.MISSING_STEP, expected,
                        f"the console asks to confirm '{dialog.name or 'a dialog'}'", [e.name for e in buttons][:3])
        if confirm is not None:
            yield Action(ActionKind.CLICK, ref=confirm.ref, target=f"button '{confirm.name}' in '{dialog.name}'",
                         step=step.number)
            # what the console says to it: a form confirmed with fields the doc never filled
            async for action in self.after_submit(step, DocAction(Intent.CONFIRM, line, target=confirm.name)):
                yield action

    async def follow_step(self, step: Step) -> AsyncIterator[Action]:
        self._previous, self._current = self._current, step
        if step.optional and self.options.skip_optional:
            self.step_status[step.number] = StepStatus.SKIPPED
            return
        if step.conditional and not self.offered(step):
            self.step_status[step.number] = StepStatus.SKIPPED  # "If this is the first time ...": it is not
            return
        taken = False
        async for action in self.delegate.before_step(self, step):  # by default none
            taken = True
            yield action
        if taken and self._blocked:
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
            Intent.OPEN_RESOURCE: self.open_resource,
            Intent.SELECT: self.select, Intent.TOGGLE: self.toggle, Intent.CONFIGURE: self.configure,
            Intent.VERIFY: self.verify,
        }
        handler = handlers.get(act.intent)
        if handler is None:
            async for action in self.unverifiable(step, "no action the literal policy can take"):
                yield action
            return
        async for action in handler(step, act):
            if action.kind.touches_page:
                self._acted = (step, act.line)  # where the doc's last page action is, for what it makes the console ask
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
                if bare:
                    found = self.product_link(bare) or found
        if found.kind is MatchKind.CLOSE:  # another product's console ("EIP console" is not "ECS console")
            found = Located(None, None, found.nearest)
        if found.element is None:
            async for action in self.stuck_on(step, act, FindingKind.ELEMENT_NOT_FOUND, name or "the console",
                                              "no link to it on the console home page", found.nearest, fatal=True):
                yield action
            return
        async for action in self.act_on(step, act, name, found, ActionKind.CLICK):
            yield action

    def product_link(self, product: str) -> Located | None:
        """The console link of ``product`` as a doc names it: a link whose name starts
        or ends with it, as Chinese product names do ("OSS管理控制台" -> "对象存储OSS",
        "负载均衡SLB"), or whose words it abbreviates ("EIP console" -> "Elastic IP
        Address console"); the shortest of several."""
        key = normalize(product)
        if len(key) < 2:
            return None
        def names_it(name: str) -> bool:
            bare = re.sub(r"\s*(?:(?:management\s+)?console|(?:管理)?控制台)\s*$", "", normalize(name), flags=re.I)
            if is_chinese(bare):  # Chinese product names hold the short name without spaces
                return bare.startswith(key) or bare.endswith(key)
            if bare == key or bare.startswith(key + " ") or bare.endswith(" " + key):
                return True
            return product.isupper() and len(key) >= 3 and initials(bare).startswith(key)

        links = [e for e in self.elements if e.ref and e.role == "link" and e.name and names_it(e.name)]
        if not links:
            return None
        return Located(min(links, key=lambda e: len(normalize(e.name))), MatchKind.NORMALIZED)

    async def open_url(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        obs = self.observation
        url = act.url or ""
        if url.startswith("/") or (obs and url.startswith(origin(obs.url))):
            yield Action(ActionKind.GOTO, value=url, step=step.number, target=url)
        elif url.startswith(("http://", "https://")):
            # a link into the real console: the console under test opens its own page for it, if it has one
            yield Action(ActionKind.GOTO, value=url, step=step.number, target=url)
            if self.observation is not None and self.observation.error:
                yield self.flag(step, act.line, FindingKind.NOT_VERIFIABLE, url, "a page outside the console under test")
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
        if act.described and act.target:  # "Go back to the Instances page": its link, if the page has one by that name
            found = self.find(act.target, ("link", "menuitem", "tab"))
            if found.element is None or found.kind is MatchKind.CLOSE:
                yield self.flag(step, act.line, FindingKind.NOT_VERIFIABLE, act.target,
                                "no link on the page to the page the doc names in its words")
                return
            async for action in self.act_on(step, act, act.target, found, ActionKind.CLICK, expected=act.target):
                yield action
            return
        path = act.path or ([act.target] if act.target else [])
        expected = " > ".join(path)
        row = self.row_of(act)  # "find the instance and choose More > Stop": that row's More
        opened: str | None = None  #: the page the path's last click opened, when it opened one
        side_pane = bool(NAVIGATION_PANE.search(step.text))
        for index, item in enumerate(path):
            found = self.find(item, MENU_ROLES, row if index == 0 else None)
            if found.element is not None and found.element.inside("banner") and (side_pane or found.kind is MatchKind.CLOSE):
                # the top bar holds product links and account menus: "the left-side navigation pane"'s
                # item, renamed there, wins over a product link; a renamed top-bar link is never the item
                pane = locate(item, [e for e in self.elements if e.ref and not e.inside("banner")], MENU_ROLES,
                              threshold=self.options.close_threshold)
                if pane.element is not None or found.kind is MatchKind.CLOSE:
                    found = pane
            last = index == len(path) - 1
            if not last and found.kind is MatchKind.CLOSE and self.group_title(item, path[index + 1]):
                continue  # "Permissions" is a title above "Grants", not the "Add Permissions" button
            if found.element is None and opened is not None:
                # "Instances > Server Load Balancers": the doc's group is now a page of its own
                # (it opened one when clicked), and nothing in it is the doc's item
                yield self.flag(step, act.line, FindingKind.MENU_MOVED, expected,
                                f"'{path[index - 1]}' now opens a page itself; there is no '{item}' under it",
                                found.nearest)
                return
            if found.element is None:
                following = self.find(path[index + 1], MENU_ROLES) if not last else None
                if following is not None and following.element is not None:
                    shown = locate(item, self.elements, None, threshold=self.options.close_threshold)  # a title: no ref
                    if shown.element is None or shown.kind is MatchKind.CLOSE:  # the menu moved
                        yield self.flag(step, act.line, FindingKind.MENU_MOVED, expected,
                                        f"no menu '{item}'; '{path[index + 1]}' is elsewhere", found.nearest)
                    elif moved := self.moved_from(shown.element, following.element):
                        yield self.flag_moved(step, act, expected, item, path[index + 1], moved)
                    continue  # a group title that is not clickable
                if not last and self.shown(path[index + 1]):
                    # "CLB > Instances" where "Instances" is a group's title and no "CLB" is left
                    yield self.flag(step, act.line, FindingKind.MENU_MOVED, expected,
                                    f"no menu '{item}'; '{path[index + 1]}' is the title of another group", found.nearest)
                    return
                if last and index > 0 and self.section_named(item) is not None:
                    return  # "Basic Settings > Static Pages": the tab's section of that title, no menu item
                async for action in self.stuck_on(step, act, FindingKind.ELEMENT_NOT_FOUND, expected,
                                                  missing(found, f"no menu item '{item}'"), found.nearest, fatal=True):
                    yield action
                return
            if not last and "expanded" in found.element.attributes:
                following = self.find(path[index + 1], MENU_ROLES)
                if following.element is not None and (moved := self.moved_from(found.element, following.element)):
                    yield self.flag_moved(step, act, expected, item, path[index + 1], moved)
                continue  # an expanded group: nothing to click
            async for action in self.act_on(step, act, item, found, ActionKind.CLICK, expected=expected):
                yield action
            # a link that is no group opens its page: nothing of the path is under it
            opened = item if found.element.role == "link" and "expanded" not in found.element.attributes else None

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

    async def open_resource(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        """"Click the name of the bucket": the link of the row of that existing
        resource (the one this procedure made, or provisioning made, else the only
        or first one)."""
        noun = act.resource or "resource"
        row = self.row_of(act)
        link = resource_link(self.elements, row, act.value) if row is not None else None
        if link is None:
            expected = f"the {act.value or 'name'} of the {noun}"
            observed = (f"no {noun} in a list on the page" if row is None
                        else f"the {noun}'s row has no link to open it")
            async for action in self.stuck_on(step, act, FindingKind.ELEMENT_NOT_FOUND, expected, observed, fatal=True):
                yield action
            return
        yield Action(ActionKind.CLICK, ref=link.ref, target=f"link '{link.name}' ({noun})", step=step.number)

    async def click(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        label = act.target or (CONFIRM_DEFAULTS[0] if act.intent is Intent.CONFIRM else "")
        if not label:
            yield self.flag(step, act.line, FindingKind.NOT_VERIFIABLE, step.text, "no label to click")
            return
        self._context_missing = False
        if act.intent is not Intent.CONFIRM or self.open_dialog() is not None:  # (a dialog that never opened:
            async for action in self.check_context(step, act):                # an extra step, below)
                yield action
        row = self.row_of(act)
        found = self.find(label, CLICKABLE, row, step)
        if self._context_missing and found.element is not None and sum(
                1 for e in self.elements if e.ref and e.role in CLICKABLE and normalize(e.name) == normalize(found.element.name)) > 1:
            # "In the **Static Website Hosting** section, click **Configure**": which Configure, without the section?
            self._blocked = f"step {step.number}: '{label}' is on the page more than once, and the section named is not"
            return
        if found.element is None and act.intent is not Intent.CONFIRM:
            # a confirmation the console added in front of the doc's next control
            async for action in self.confirm_unasked(step, act.line, f"(a step before '{label}')"):
                yield action
            found = self.find(label, CLICKABLE, self.row_of(act), step)
        inserted = self.inserted_wizard_page(label) if found.element is None else None
        if inserted is not None:  # "Next: Networking", but the wizard may have a new page in between
            yield Action(ActionKind.CLICK, ref=inserted.ref, target=f"button '{inserted.name}'", step=step.number)
            found = self.find(label, CLICKABLE, None, step)
            if found.element is not None:  # it had: the doc lacks that page (else its own page is gone)
                moved, self._deferred = self._deferred, []
                for earlier, field, finding in moved:  # fields the doc puts on the page before: here now
                    if self.find(field.name, FIELD_ROLES).element is not None:
                        async for action in self.fill_field(earlier, field):
                            yield action
                    else:
                        self._deferred.append((earlier, field, finding))
                yield self.flag(step, act.line, FindingKind.MISSING_STEP, label,
                                f"the wizard now has a step before it: '{inserted.name}'", [inserted.name])
        async for action in self.flush_deferred():
            yield action
        if found.element is None and act.intent is Intent.CONFIRM and self.open_dialog() is None \
                and self._last is not None and self._last.kind is ActionKind.CLICK:
            # "In the Confirm Changes dialog, click OK", and the console asked nothing: a step it no longer needs
            yield self.flag(step, act.line, FindingKind.EXTRA_STEP, label, "no dialog asks for it: the console did not ask")
            return
        if found.element is None:
            async for action in self.stuck_on(step, act, FindingKind.ELEMENT_NOT_FOUND, label,
                                              missing(found, "no such control on the page"), found.nearest, fatal=True):
                yield action
            return
        async for action in self.act_on(step, act, label, found, ActionKind.CLICK):
            yield action
        async for action in self.after_submit(step, act):
            yield action

    def inserted_wizard_page(self, label: str) -> Element | None:
        """Where the doc's "Next: X" is missing but the wizard offers another "Next: Y":
        that button (the console added page Y before X), else None."""
        if not WIZARD_NEXT.match(label):
            return None
        others = [e for e in self.elements if e.ref and e.role == "button" and WIZARD_NEXT.match(e.name)
                  and normalize(e.name) != normalize(label)]
        return others[0] if len(others) == 1 else None

    async def fill(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        if not act.target and act.value:  # "Enter **Ram** in the field": the one empty box there is
            boxes = [e for e in self.elements if e.ref and e.role in ("textbox", "searchbox") and not e.text
                     and not e.inside("banner") and not e.inside("navigation")]
            if len(boxes) != 1:
                yield self.flag(step, act.line, FindingKind.NOT_VERIFIABLE, step.text,
                                f"the step names no field, and the page has {len(boxes) or 'no'} empty ones")
                return
            act = replace(act, target=boxes[0].name or "", described=True)
        field = Field(name=act.target or "", line=act.line, value=act.value, example=act.example, described=act.described)
        async for action in self.fill_fields(step, [field]):
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
            lists = ("combobox", "listbox", "group", "radiogroup")
            field = self.find_described(act.target, lists) if act.described else self.find(act.target, lists)
            if field.element is not None:
                if act.described:  # "Specify the principal.": the doc's words, not a label
                    act, field = replace(act, target=field.element.name), Located(field.element, MatchKind.EXACT)
                async for action in self.pick_any(step, act, field):
                    yield action
                return
            if act.described:
                yield self.flag(step, act.line, FindingKind.NOT_VERIFIABLE, act.target,
                                "no list on the page that the doc's words name")
                return
            if self.find(act.target, FIELD_ROLES).element is not None:  # "set **Name** to a name of your choice"
                async for action in self.fill_fields(step, [Field(act.target, act.line)]):
                    yield action
                return
        choice = act.value or act.target or ""
        found = self.find(choice, ("radio", "option", "tab", "checkbox", "menuitem", "link", "button"))
        if found.element is None and (holder := self.field_offering(choice)) is not None:
            # "select **AliyunActionTrailFullAccess**": an option of the one list that offers it
            async for action in self.fill_fields(step, [Field(holder.name, act.line, choice)]):
                yield action
            return
        if found.element is None:
            async for action in self.stuck_on(step, act, FindingKind.ELEMENT_NOT_FOUND, choice,
                                              missing(found, "no such option on the page"), found.nearest, fatal=False):
                yield action
            return
        if found.kind is MatchKind.CLOSE and found.element.role in ("radio", "option") \
                and _best(choice, [found.element.name], self.options.close_threshold) is None:
            # an option is a value, not a label: "Public Read" is not "Public Read/Write" renamed
            offered = [e.name for e in self.elements if e.role == found.element.role and e.name
                       and e.containers == found.element.containers]
            yield self.flag(step, act.line, FindingKind.VALUE_REJECTED, choice, "not among the options", offered[:5])
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
        boxes = [e for e in inner if e.role == "checkbox" and e.ref]
        if not options and boxes:  # "select one or more ports": a group of check boxes
            if not any(e.checked for e in boxes):
                yield Action(ActionKind.CHECK, ref=boxes[0].ref, target=f"{element.name}: {boxes[0].name}", step=step.number)
            return
        if not options:
            yield self.flag(step, act.line, FindingKind.VALUE_REJECTED, act.target or "", "the list offers nothing to select")
            return
        known = [value for key, value in self.task.context.items() if CONTEXT_KEY.match(key) and value]
        first = next((e for e in options if any(value in e.name for value in known)), options[0])  # the run's own
        if first.role == "radio":
            yield Action(ActionKind.CHECK, ref=first.ref, target=f"{element.name}: {first.name}", step=step.number)
        else:
            yield Action(ActionKind.SELECT, ref=element.ref, value=first.name, target=element.name, step=step.number)

    async def toggle(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        label = act.target or ""
        found = self.find(label, ("switch", "checkbox", "radio", "button"))
        if found.element is None:
            async for action in self.stuck_on(step, act, FindingKind.ELEMENT_NOT_FOUND, label,
                                              missing(found, "no such switch or check box"), found.nearest, fatal=False):
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
        state = awaited_state(step)
        if state is not None:  # "Wait until the status of the EIP changes to **In Use**"
            if state in (self.observation.snapshot if self.observation else ""):
                return
            yield Action(ActionKind.WAIT_FOR, value=state, target=f"'{state}' on the page", step=step.number)
            if self.observation is not None and not self.observation.error:
                return  # it came (a console refreshes rows on their way to another status)
        if names and any(name in (self.observation.snapshot if self.observation else "") for name in names):
            return  # what we created shows on the page
        yield self.flag(step, act.line, FindingKind.NOT_VERIFIABLE, step.text, "checked by the success criteria, not literally")

    # -- parameter tables and inline values ------------------------------------------

    async def fill_fields(self, step: Step, fields: Sequence[Field]) -> AsyncIterator[Action]:
        """The fields in order; a table's groups ("| **Subscription** |" rows, a "Step"
        column) one after the other: a group named after a choice of an earlier field
        is filled only when that choice is made ("Subscription" rows while Billing
        Method is Subscription), one named after a wizard page after its "Next: X"."""
        filled: list[Field] = []
        for group, members in itertools.groupby(fields, key=lambda field: field.group):
            members = list(members)
            if group is not None:
                mode = next((f for f in filled if f.options and _best(group, f.options, self.options.close_threshold)), None)
                if mode is not None:
                    chosen = self.current_choice(mode.name)
                    if chosen is not None and _best(group, [chosen], self.options.close_threshold) is None:
                        filled += members
                        continue  # the rows of a choice the form does not have made
                elif (page := self.wizard_page(group)) is not None:
                    yield Action(ActionKind.CLICK, ref=page.ref, target=f"button '{page.name}'", step=step.number)
            async for action in self.fill_group(step, members):
                yield action
            filled += members

    def current_choice(self, name: str) -> str | None:
        """The option or radio a list or option group named ``name`` has selected."""
        found = self.find(name, ("combobox", "listbox", "group", "radiogroup"))
        if found.element is None:
            return None
        return next((e.name for e in children(self.elements, found.element)
                     if e.role in ("option", "radio") and ("selected" in e.attributes or e.checked)), None)

    def wizard_page(self, group: str) -> Element | None:
        """The wizard's "Next: X" button to the page a table's group names ("Networking")."""
        wanted = normalize(re.sub(r"\s*[(（][^)）]*[)）]\s*$", "", group))  # "Grouping (Optional)"
        return next((e for e in self.elements if e.ref and e.role == "button" and WIZARD_NEXT.match(e.name)
                     and normalize(re.split(r"[:：]", e.name, maxsplit=1)[1]) == wanted), None)

    async def fill_group(self, step: Step, fields: Sequence[Field]) -> AsyncIterator[Action]:
        for field in fields:
            if not field.name.strip():
                continue
            if field.described:  # "Enter an image name": the page's field for those words, by its own label
                found = self.find_described(field.name, FIELD_ROLES)
                if found.element is None:
                    yield self.flag(step, field.line, FindingKind.NOT_VERIFIABLE, field.name,
                                    "no field on the page that the doc's words name")
                    continue
                field = replace(field, name=found.element.name, described=False)
            if field.value is None and not field.options:
                if NAME_FIELD.search(field.name):  # a name the doc leaves to the reader
                    async for action in self.fill_blank_name(step, field):
                        yield action
                elif PUBLIC_KEY_FIELD.search(field.name) and self.blank_text_field(field.name):
                    # "paste the contents of your public key file": a key of the run's own
                    async for action in self.fill_field(step, replace(field, value=test_public_key(self.task))):
                        yield action
                elif CHOOSE.match(field.description):  # "Select a VPC.": any real choice will do
                    async for action in self.choose_blank(step, field):
                        yield action
                elif (known := known_for_field(self.task.context, field.name, field.description)) is not None \
                        and self.blank_text_field(field.name):  # "Enter the EIP associated with ...": the run's EIP
                    async for action in self.fill_field(step, replace(field, value=known)):
                        yield action
                elif (example := self.doc_example(field.name)) is not None and self.blank_text_field(field.name):
                    # "set **Authorization Object**", and elsewhere "... Example: 192.168.0.100": the doc's own
                    async for action in self.fill_field(step, replace(field, value=example, example=True)):
                        yield action
                else:  # nothing to enter, the default stands: but the doc names the field
                    async for action in self.field_shown(step, field):
                        yield action
                continue
            async for action in self.fill_field(step, field):
                yield action

    def doc_example(self, name: str) -> str | None:
        """The example value the procedure gives for the field ``name`` anywhere (another
        method's table: "Example: 192.168.0.100", "例如192.168.0.100"), else None."""
        wanted = normalize(name)
        for other in self.procedure.all_steps():
            for field in other.fields:
                if normalize(field.name) != wanted:
                    continue
                if field.value:
                    return field.value
                if example := example_in_text(field.description):
                    return example
        return None

    def blank_text_field(self, name: str) -> bool:
        """Whether the form has an empty text field named ``name``."""
        found = self.find(name, ("textbox", "searchbox"))
        return found.element is not None and found.kind is not MatchKind.CLOSE and not found.element.text

    async def field_shown(self, step: Step, field: Field) -> AsyncIterator[Action]:
        """A field the doc names without a value to enter must still be on the page
        (as a control, or as a value the page shows); one that is not is a finding
        on its own line, at once, not a surprise at the next submit."""
        found = self.find(field.name, FIELD_ROLES)
        if found.element is not None and found.kind is not MatchKind.CLOSE:
            return
        if self.shown(field.name):
            return  # a read-only setting the page shows
        if found.element is not None:
            yield self.flag(step, field.line, FindingKind.LABEL_CHANGED, field.name, found.element.name)
            return
        async for action in self.field_missing(step, field, found.nearest):
            yield action

    async def field_missing(self, step: Step, field: Field, nearest: Sequence[str]) -> AsyncIterator[Action]:
        """A field the doc names that the page lacks: element_not_found on the field's
        own line (not fatal: the rest of the form can still be filled), unless the doc
        says it only shows under a condition."""
        if CONDITIONAL_FIELD.search(field.description):
            yield self.flag(step, field.line, FindingKind.NOT_VERIFIABLE, field.name,
                            "the doc shows it only under a condition, and the page does not show it")
            return
        finding = self.finding(step, field.line, FindingKind.ELEMENT_NOT_FOUND, f"field {field.name}",
                               "no such field on the page", nearest)
        if any(e.ref and e.role == "button" and WIZARD_NEXT.match(e.name) for e in self.elements):
            # a wizard page: the field may have moved to a page the console added after this one
            self._deferred.append((step, field, finding))
            return
        async for action in self.stuck(Stuck(step, None, finding, fatal=False)):
            yield action

    async def flush_deferred(self) -> AsyncIterator[Action]:
        """The fields a wizard page lacked that no page the console added holds: findings after all."""
        deferred, self._deferred = self._deferred, []
        for step, _, finding in deferred:
            async for action in self.stuck(Stuck(step, None, finding, fatal=False)):
                yield action

    async def fill_blank_name(self, step: Step, field: Field) -> AsyncIterator[Action]:
        found = self.find(field.name, ("textbox",))
        if found.element is None:
            async for action in self.field_shown(step, field):
                yield action
            return
        if found.kind is MatchKind.CLOSE:
            yield self.flag(step, field.line, FindingKind.LABEL_CHANGED, field.name, found.element.name)
        if found.element.text:
            return  # it holds a name already (a default the console proposes)
        value = self.task.resolve(f"<{field.name}>")
        self.typed.append(value)
        yield Action(ActionKind.FILL, ref=found.element.ref, value=value, target=field.name, step=step.number)

    async def choose_blank(self, step: Step, field: Field) -> AsyncIterator[Action]:
        """A list the doc tells to choose from without saying what: keep a real
        selection, else take the first real option."""
        found = self.find(field.name, ("combobox", "listbox", "group", "radiogroup"))
        if found.element is None:
            async for action in self.field_shown(step, field):
                yield action
            return
        act = DocAction(Intent.SELECT, field.line, target=field.name)
        async for action in self.pick_any(step, act, found):
            yield action

    async def fill_field(self, step: Step, field: Field) -> AsyncIterator[Action]:
        found = self.find(field.name, FIELD_ROLES)
        if found.element is None:
            if self.shown(field.name):
                return  # a read-only value the page shows: nothing to enter
            holder = self.field_offering(self.task.resolve(field.value)) if field.value else None
            if holder is None:
                async for action in self.field_missing(step, field, found.nearest):
                    yield action
                return
            found = Located(holder, MatchKind.CLOSE)  # the only list that offers the doc's value: renamed
        element = found.element
        if found.kind is MatchKind.CLOSE:
            yield self.flag(step, field.line, FindingKind.LABEL_CHANGED, field.name, element.name)
        if field.value is not None:
            value = self.task.resolve(field.value)
            if field.example and NAME_FIELD.search(field.name) and element.role in ("textbox", "searchbox"):
                value = self.task.unique(value)  # "for example `web-01`": one of the reader's own, unique per run
        else:
            offered = [e.name for e in children(self.elements, element) if e.role in ("option", "radio") and e.name]
            if element.role in ("combobox", "listbox") and field.options and all(WAY.match(o) for o in field.options) \
                    and not any(_best(option, offered, self.options.close_threshold) for option in field.options):
                # "- **Select Existing EIPs**: ... - **Purchase EIPs**: ...": ways to fill the list, not its values
                async for action in self.pick_any(step, DocAction(Intent.SELECT, field.line, target=field.name), found):
                    yield action
                return
            listed = self.listed_choice(element, field.options)
            if listed is None:
                return  # the doc lists the choices and the field has one of them
            value = self.task.resolve(listed)
        if element.role in ("textbox", "searchbox") and field.value is not None and not field.example \
                and (holder := self.field_offering(value)) is not None:
            # "IPv4网段: 选择**推荐网段**": a choice the console makes beside the field, not text to type into it
            element = holder
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
            if element.role == "spinbutton" and (number := NUMBER_WITH_UNIT.match(value)):
                value = number[1]  # "2 Mbps" into a number field: 2
            self.typed.append(value)
            yield Action(ActionKind.FILL, ref=element.ref, value=value, target=field.name, step=step.number, secret=secret)

    def field_offering(self, value: str) -> Element | None:
        """The one list or option group on the page that offers ``value`` among its
        choices (a field the doc names differently: "Connection Type" is now "Line
        Type", still offering "BGP (Multi-ISP)"); None when none or several do."""
        holders = []
        for element in self.elements:
            if element.role not in ("combobox", "listbox", "group", "radiogroup") or not element.name or not element.ref:
                continue
            choices = [e.name for e in children(self.elements, element) if e.role in ("option", "radio") and e.name]
            if choices and _best(value, choices, self.options.close_threshold) is not None:
                holders.append(element)
        return holders[0] if len(holders) == 1 else None

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
        if REQUIRED.search(message):
            # a value the console now requires: the doc lacks it where it fills this form
            at = self.step_numbered(self._form_step) or step
            line = at.line if at is not step else act.line
            finding = self.finding(at, line, FindingKind.MISSING_STEP, at.text, message)
        else:
            finding = self.finding(step, act.line, FindingKind.VALUE_REJECTED, step.text, message)
        async for action in self.stuck(Stuck(step, act, finding, fatal=True)):
            yield action

    def step_numbered(self, number: str | None) -> Step | None:
        return next((s for s in self.procedure.all_steps() if s.number == number), None) if number else None

    # -- shared ----------------------------------------------------------------------

    @property
    def elements(self) -> list[Element]:
        return self.observation.elements if self.observation else []

    def shown(self, label: str) -> bool:
        """Whether the form shows ``label`` (exactly or normalized), a text without a
        control of its own included: a setting shown, not entered. With a dialog open,
        only the dialog counts: a list's column header is not the form's field."""
        opened = self.open_dialog()
        elements = [e for e in self.elements if within(e, opened[0])] if opened else self.elements
        found = locate(label, elements, None, threshold=self.options.close_threshold)
        return found.element is not None and found.kind is not MatchKind.CLOSE

    def shown_labels(self, step: Step) -> list[str]:
        labels = dict.fromkeys([*step.labels, *(f.name for f in step.fields)])
        return [label for label in labels if not FORM_BUTTON.match(label) and self.shown(label)]

    def find(self, label: str, roles: Sequence[str] | None, row: Element | None = None,
             step: Step | None = None) -> Located:
        """``label`` among the elements one can act on (those with a ref); with ``row``,
        those of that list row first (a row's "Manage" is not another row's); with
        ``step``, a close match near the other controls the step names wins. A control
        the doc calls by another of its labels is no close match ("click **Event
        Detail**" is not the "Event Detail Query" link the doc's step 2 clicks by that name)."""
        actionable = [e for e in self.elements if e.ref]
        near = self.named_by(step, label) if step is not None else []
        aside = self.doc_labels - {normalize(label)}
        if row is not None:
            found = locate(label, [e for e in actionable if within(e, row)], roles,
                           threshold=self.options.close_threshold, near=near, aside=aside)
            if found.element is not None:
                return found
        return locate(label, actionable, roles, threshold=self.options.close_threshold, near=near, aside=aside)

    @functools.cached_property
    def doc_labels(self) -> frozenset[str]:
        """Every UI label the procedure names, normalized, but for the forms and dialogs
        it only names to fill ("In the **Add Security Group Rule** dialog box, configure
        ..."): the button that opens one may well have its name."""
        actions = [act for step in self.procedure.all_steps() for act in step.actions]
        forms = {normalize(act.target) for act in actions if act.intent is Intent.CONFIGURE and act.target}
        acted = {normalize(name) for act in actions if act.intent is not Intent.CONFIGURE
                 for name in (act.target, act.context, *act.path) if name}
        labels = {normalize(label) for step in self.procedure.all_steps() for label in step.labels}
        return frozenset(labels - (forms - acted))

    def section_named(self, title: str) -> Element | None:
        """The section (a region or heading) of the page with that title, exactly."""
        return next((e for e in self.elements if e.role in ("region", "heading") and e.name
                     and normalize(e.name) == normalize(title)), None)

    def find_described(self, words: str, roles: Sequence[str]) -> Located:
        """A control the doc names in its own words ("the principal", "an image name"): by
        its label first, else the one whose label has all those words."""
        found = self.find(words, roles)
        if found.element is None:
            found = locate_words(words, [e for e in self.elements if e.ref], roles)
        return found

    def offered(self, step: Step) -> bool:
        """Whether the page offers what a conditional step ("If this is the first time you
        buy one, click **Create** in the ... section") acts on: a reader whose case it is
        not sees no such control and goes on."""
        act = next((a for a in step.actions if a.path or a.target), None)
        if act is None:
            return True
        return self.find(act.path[0] if act.path else str(act.target), None).element is not None

    def named_by(self, step: Step, label: str) -> list[Element]:
        """The elements the step names besides ``label`` (exactly or normalized), every
        one of each: the part of the page it points at ("On the **Inbound** tab, ..."); when
        it names none, the section the step before had the reader find."""
        wanted = {normalize(other) for other in step.labels if normalize(other) != normalize(label)}
        named = [e for e in self.elements if e.name and normalize(e.name) in wanted]
        if named or self._previous is None or step is not self._current:
            return named
        found = {normalize(other) for other in self._previous.labels if normalize(other) != normalize(label)}
        return [e for e in self.elements if e.role in ("heading", "region") and normalize(e.name) in found]

    async def check_context(self, step: Step, act: DocAction) -> AsyncIterator[Action]:
        """The part of the page a step names ("In the **Static Pages** section, click
        ...") must be there: one renamed is label_changed, one gone element_not_found,
        on the step's line (not fatal: the control may still be found)."""
        self._context_missing = False
        if not act.context or any(e.name and normalize(e.name) == normalize(act.context) for e in self.elements):
            return
        found = locate(act.context, self.elements, None, threshold=self.options.close_threshold)
        if found.element is not None:
            if found.kind is MatchKind.CLOSE:
                yield self.flag(step, act.line, FindingKind.LABEL_CHANGED, act.context, found.element.name)
            return
        self._context_missing = True
        yield self.flag(step, act.line, FindingKind.ELEMENT_NOT_FOUND, act.context,
                        missing(found, "no such section, tab or page here"), found.nearest)

    def row_of(self, act: DocAction) -> Element | None:
        """The list row of the existing resource ``act`` acts on, if it names one."""
        if not act.resource:
            return None
        return resource_row(self.elements, act.resource, self.task.context, self.typed)

    async def act_on(self, step: Step, act: DocAction, label: str, found: Located, kind: ActionKind,
                     expected: str | None = None) -> AsyncIterator[Action]:
        element = found.element
        assert element is not None
        if found.kind is MatchKind.CLOSE:
            yield self.flag(step, act.line, FindingKind.LABEL_CHANGED, expected or label, element.name)
        if "disabled" in element.attributes and kind in (ActionKind.CLICK, ActionKind.CHECK, ActionKind.UNCHECK):
            async for action in self.disabled(step, act, element):
                yield action
            return
        yield Action(kind, ref=element.ref, target=f"{element.role} '{element.name}'", step=step.number)

    async def disabled(self, step: Step, act: DocAction, element: Element) -> AsyncIterator[Action]:
        """The doc's control is there but disabled. On an existing resource's row it
        is the resource's state ("Start" on a running instance): the environment's,
        not the doc's. Elsewhere the console wants something first that the doc does
        not say (a required field, terms to accept): a missing step."""
        if act.resource or act.intent is Intent.OPEN_RESOURCE or ROW_CONTEXT.search(step.text):
            finding = self.finding(step, act.line, FindingKind.MISSING_STEP, element.name,
                                   f"'{element.name}' is disabled for the {act.resource or 'resource'} the step acts on")
            taken = False
            async for action in self.delegate.not_ready(self, Stuck(step, act, finding, fatal=True)):
                taken = True  # a delegate that brings the resource into the step's state
                yield action
            if taken:
                return
            self._blocked = (f"prerequisite not ready at step {step.number}: '{element.name}' is disabled for the "
                             f"{act.resource or 'resource'} the step acts on (it is not in the state the step needs; "
                             "declare it with `requires:` and its status)")
            self._environment = True
            return
        observed = f"'{element.name}' is disabled: the console wants something first that the doc does not say"
        async for action in self.stuck_on(step, act, FindingKind.MISSING_STEP, element.name, observed, fatal=True):
            yield action

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
        other way; a delegate may veto, letting its model see the error and recover).
        A link to a page the console under test does not have is no failure of the doc's."""
        if failed.kind is ActionKind.WAIT_FOR:  # a state that never came: the next step tells what that means
            return False
        return not (failed.kind is ActionKind.GOTO and "://" in (failed.value or ""))

    def unverifiable(self, step: Step, reason: str) -> AsyncIterator[Action]:
        """A step with nothing literal to do (free text): the delegate's actions, by
        default :meth:`flag_unverifiable`."""
        return self.delegate.unverifiable(self, step, reason)

    async def flag_unverifiable(self, step: Step, reason: str) -> AsyncIterator[Action]:
        """Flagged ``not_verifiable``, which is no defect."""
        yield self.flag(step, step.line, FindingKind.NOT_VERIFIABLE, step.text, reason)

    def stuck(self, stuck: Stuck) -> AsyncIterator[Action]:
        """Where a step cannot be followed as written: the delegate's actions, by
        default :meth:`flag_stuck`."""
        return self.delegate.stuck(self, stuck)

    async def flag_stuck(self, stuck: Stuck) -> AsyncIterator[Action]:
        """Flag the step, and stop when the rest depends on it.

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
            self.block(f"step {stuck.step.number}: {stuck.finding.message}")

    def missing_prerequisite(self, stuck: Stuck) -> bool:
        """Whether an empty list explains ``stuck``: what :meth:`flag_stuck` ends as not ready."""
        return self.acts_on_a_row(stuck) and self.empty_list() is not None

    def block(self, reason: str) -> None:
        """End the episode blocked once the current step's actions are taken."""
        self._blocked = reason

    def stuck_on(self, step: Step, act: DocAction, kind: FindingKind, expected: str, observed: str,
                 candidates: Sequence[str] = (), *, fatal: bool) -> AsyncIterator[Action]:
        """:meth:`stuck` on ``act`` of ``step``, with a finding on the action's line."""
        return self.stuck(Stuck(step, act, self.finding(step, act.line, kind, expected, observed, candidates),
                                fatal=fatal))

    @staticmethod
    def acts_on_a_row(stuck: Stuck) -> bool:
        """Whether the missing element is one a list row would hold ("Start", "More",
        "Bind Resource" next to an item) rather than a page-level control or a menu
        ("Create EIP", a navigation path): only then can an empty list explain it."""
        if stuck.finding.kind is not FindingKind.ELEMENT_NOT_FOUND or stuck.action is None:
            return False
        intent = stuck.action.intent
        if intent is Intent.OPEN_RESOURCE or stuck.action.resource:
            return True  # the step names the existing resource it acts on
        if intent is Intent.NAVIGATE:  # a row's menu ("find the instance, choose More > Stop")
            return bool(ROW_CONTEXT.search(stuck.step.text)) or (stuck.action.path or [""])[0] in ("More", "更多")
        if intent not in (Intent.CLICK, Intent.CONFIRM, Intent.SELECT, Intent.TOGGLE):
            return False
        if not ROW_CONTEXT.search(stuck.step.text):
            return False  # a control the doc names without a row: missing from the page, whatever its lists hold
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


def test_public_key(task: Task) -> str:
    """A well-formed OpenSSH ed25519 public key, the same for a task (its run suffix
    seeds it): what a reader pastes where a doc asks for their public key."""
    import base64
    import hashlib
    import struct

    def string(data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + data

    key = hashlib.sha256(f"docverify/{task.context.get('suffix', '')}".encode()).digest()
    blob = string(b"ssh-ed25519") + string(key)
    return f"ssh-ed25519 {base64.b64encode(blob).decode()} docverify-{task.context.get('suffix', 'test')}"


def initials(name: str) -> str:
    """The letters an abbreviation takes from a name: each word's first, an
    abbreviation's whole ("elastic ip address" from "Elastic IP Address" -> "eipa")."""
    words = name.split()
    return "".join(word if len(word) <= 3 and word.isalpha() and word in ABBREVIATED else word[:1] for word in words)


def missing(found: Located, observed: str) -> str:
    """What the console shows where the doc's label is not found: nothing like it,
    or several controls that could each be it renamed (none followed)."""
    if found.ambiguous:
        return f"{observed}; several controls could be it renamed, none is followed: {', '.join(found.nearest)}"
    return observed


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


