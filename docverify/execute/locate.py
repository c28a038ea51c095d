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

A shared public helper of the core (:mod:`docverify.execute.actions` reads snapshots with it)
and of the policies that follow labels (``literal`` and those built on it).
"""

from __future__ import annotations

import difflib
import os
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
    """The outcome of a lookup: the element (if any), how it matched, the nearest names.

    ``ambiguous``: no element matched well enough to be followed, because several
    differently named controls could each be the doc's label renamed (``nearest``
    lists them); the caller reports them as candidates instead of picking one."""

    element: Element | None
    kind: MatchKind | None
    nearest: tuple[str, ...] = ()
    ambiguous: bool = False


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
    """How alike two labels are (0..1) once normalized. From ``CLOSE_THRESHOLD`` up
    they read as one control renamed (:func:`renamed`): "Create Instance" and
    "Create ECS Instance", "Create EIP" and "Apply for EIP", "Access Control List
    (ACL)" and "ACL"; below it they are different controls, however many letters
    they share ("EIP console" and "ECS console", "Instance Status" and "Instance
    Settings")."""
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
    if _renamed(_words(left), _words(right)):
        return max(ratio, CLOSE_THRESHOLD)
    return min(ratio, CLOSE_THRESHOLD - 0.01)


#: Words that say what kind of place a control leads to, not which: "NAT Gateway"
#: (a menu item) and "NAT Gateway console" (a product link) are different controls.
_PLACE_WORDS = frozenset("console consoles portal page pages tab tabs list panel dialog window".split())
_PLACE_WORDS_ZH = ("控制台", "页面", "页签", "列表", "面板", "对话框", "窗口")
#: Words that qualify rather than name: "Create Trail" -> "Create Trail Now",
#: "Instance Status" -> "Instance Status and Lifecycle", "Bind" -> "Associate with".
_FUNCTION_WORDS = frozenset("a an the and or of for to with in on at by now new".split())
#: Verbs that name the same operation, as consoles rename buttons: "Create EIP" ->
#: "Apply for EIP", "Bind Resource" -> "Associate with Resource".
_VERB_CLASSES = (
    frozenset({"create", "add", "new", "apply", "apply for", "request", "buy", "purchase",
               "创建", "新建", "添加", "申请", "购买"}),
    frozenset({"delete", "remove", "release", "删除", "移除", "释放"}),
    frozenset({"modify", "edit", "change", "update", "修改", "编辑", "更改", "变更"}),
    frozenset({"bind", "associate", "attach", "绑定", "关联"}),
    frozenset({"unbind", "disassociate", "detach", "解绑", "解除绑定", "解除关联"}),
    frozenset({"enable", "turn on", "activate", "开启", "启用"}),
    frozenset({"disable", "turn off", "deactivate", "关闭", "禁用", "停用"}),
    frozenset({"view", "show", "details", "查看", "详情"}),
)
#: A setting's generic verb and the specific ones it became: "Change Release Protection
#: Setting" -> "Enable Release Protection" (修改…设置 -> 开启…).
_SETTING_VERBS = (_VERB_CLASSES[2], _VERB_CLASSES[5] | _VERB_CLASSES[6])


def renamed(a: str, b: str) -> bool:
    """Whether labels ``a`` and ``b`` read as one control renamed: words added or
    dropped on one side only (two at most, and no more than the words they share; not
    a word that makes it another kind of place, such as "console"), spelling variants
    ("Listening Port" -> "Listener Port", "Logon Credentials" -> "Logon Credential"),
    or the leading verb swapped for one that names the same operation ("Create EIP" ->
    "Apply for EIP"; a setting's generic verb for a specific one: "Change Release
    Protection Setting" -> "Enable Release Protection"). Another noun in place of one
    is another control ("EIP console" / "ECS console", "Instance Status" / "Instance
    Settings"), and so is a one-word label grown at its end ("Create" / "Create Disk",
    "创建" / "创建云盘"; in front keeps the head: "Name" / "VPC Name"), and a label that
    gains or loses its leading verb ("Add Security Group Rule" / "Security Group Rules")."""
    return _renamed(label_words(a), label_words(b))


def _renamed(left: list[str], right: list[str]) -> bool:
    return rename_cost(left, right) is not None


def rename_cost(left: list[str], right: list[str]) -> float | None:
    """How far apart two labels' words are as one control renamed (see
    :func:`renamed`), None when they are not: a spelling variant costs ½, a
    swapped verb 1, each word added or dropped 1."""
    if not left or not right or left == right:
        return 0.0 if left and left == right else None
    chinese = any(_CJK.match(word) for word in left + right)
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    shared = added = 0
    cost = 0.0
    sides = set()  #: which label has words the other lacks: both means two different things
    suffixed = False  #: words added or dropped after the first word (not only in front of it)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        ours, theirs = left[i1:i2], right[j1:j2]
        if tag == "equal":
            shared += sum(1 for word in ours if word not in _FUNCTION_WORDS)
        elif tag == "replace":
            if len(ours) == len(theirs) and all(_spelling_variant(x, y) for x, y in zip(ours, theirs)):
                shared += len(ours)
                cost += 0.5 * len(ours)
            elif i1 == 0 and j1 == 0 and _same_verb(ours, theirs):
                cost += 1
            else:
                return None
        else:
            extra = ours or theirs
            if _names_a_place(extra, chinese):
                return None
            if (i1 == 0 and j1 == 0) and _is_verb(extra, chinese):
                return None  # "Add Security Group Rule" (a button) is not "Security Group Rules" (a tab)
            content = sum(1 for word in extra if word not in _FUNCTION_WORDS)
            if chinese:  # two Chinese characters make about one word: "专有网络" is two
                content = (content + 1) // 2
            added += content
            cost += content or 0.25
            if content:
                sides.add(tag)
                suffixed = suffixed or i1 > 0 or j1 > 0
    if shared == 0 or added > 2 or added > shared or len(sides) > 1:
        return None
    if added and suffixed:
        shorter = min(len(left), len(right))
        if shorter < (3 if chinese else 2):  # "Create" -> "Create Disk", "创建" -> "创建云盘": another head
            return None  # (words in front keep the head: "Name" -> "VPC Name", "名称" -> "专有网络名称")
    return cost


def _spelling_variant(x: str, y: str) -> bool:
    """Two spellings of one word: a plural, a tense, a typo."""
    if _CJK.match(x) or _CJK.match(y):
        return False
    prefix = len(os.path.commonprefix([x, y]))
    if prefix >= 4 and prefix >= 0.7 * min(len(x), len(y)):
        return True
    return min(len(x), len(y)) >= 4 and difflib.SequenceMatcher(None, x, y).ratio() >= 0.8


def _same_verb(ours: list[str], theirs: list[str]) -> bool:
    def verb(words: list[str]) -> str:
        while len(words) > 1 and words[-1] in _FUNCTION_WORDS:  # "associate with" -> "associate"
            words = words[:-1]
        return ("" if _CJK.match(words[0]) else " ").join(words)

    a, b = verb(ours), verb(theirs)
    generic, specific = _SETTING_VERBS
    return any(a in verbs and b in verbs for verbs in _VERB_CLASSES) \
        or (a in generic and b in specific) or (b in generic and a in specific)


#: Verbs that lead a button's label: a label with one and a label without are different controls.
_VERBS = frozenset(word for verbs in _VERB_CLASSES for word in verbs if " " not in word) | frozenset(
    "configure set manage start stop restart reboot import export upload download save submit cancel confirm "
    "connect reset renew upgrade downgrade attach detach grant revoke authorize "
    "配置 设置 管理 启动 停止 重启 导入 导出 上传 下载 保存 提交 取消 确认 连接 重置 续费 升级 授权".split())


def _is_verb(words: list[str], chinese: bool) -> bool:
    if chinese:
        return "".join(words)[:2] in _VERBS
    return bool(words) and words[0] in _VERBS


def _names_a_place(words: list[str], chinese: bool) -> bool:
    if chinese:
        joined = "".join(words)
        return any(place in joined for place in _PLACE_WORDS_ZH) or any(w in _PLACE_WORDS for w in words)
    return any(word in _PLACE_WORDS for word in words)


def locate(label: str, elements: Sequence[Element], roles: Collection[str] | None = None, *,
           threshold: float = CLOSE_THRESHOLD, near: Sequence[Element] = (),
           aside: Collection[str] = ()) -> Located:
    """Find ``label`` among ``elements`` (restricted to ``roles`` when given; the
    order of ``roles`` is the preference). Elements in an open dialog win over the
    page behind it, then document order.

    A close match must be unambiguous: among several controls that could each be
    the label renamed, the one in the part of the page the step points at wins
    (``near``: elements the step names besides the label, such as the tab in "On
    the **Inbound** tab, click **Add Rule**"), then the fewest words changed;
    a tie is no match (``ambiguous``), with the rivals as ``nearest``. A control
    whose (normalized) name is in ``aside`` is never a close match: the doc calls it by
    that name elsewhere, so it is not this label renamed ("click **Add Rule**" is not
    the "Add Rules" link the step before clicks by that name); another close one can be."""
    pool = [e for e in elements if e.name and (roles is None or e.role in roles)]
    if not pool:
        return Located(None, None)
    rank = {role: index for index, role in enumerate(roles or ())}

    def affinity(element: Element) -> int:
        return max((_shared_depth(element, other) for other in near), default=0)

    def best(found: list[tuple[int, Element]]) -> Element:
        """An open dialog first, then the part of the page the step points at (the
        "Create Rule" of the Lifecycle section, not the CORS one), then role, then order."""
        return min(found, key=lambda item: (not item[1].in_dialog, -affinity(item[1]),
                                            rank.get(item[1].role, len(rank)), item[0]))[1]

    wanted = label.strip()
    exact = [(i, e) for i, e in enumerate(pool) if e.name.strip() == wanted]
    if exact:
        return Located(best(exact), MatchKind.EXACT)
    wanted = normalize(label)
    names = [normalize(e.name) for e in pool]
    same = [(i, e) for i, e in enumerate(pool) if names[i] == wanted]
    if same:
        return Located(best(same), MatchKind.NORMALIZED)
    described = [(i, e) for i, e in enumerate(pool) if e.role in DESCRIBED_ROLES and _described(wanted, names[i])]
    if described:
        return Located(best(described), MatchKind.NORMALIZED)
    forms = _short_forms(label)
    scored = sorted(((_score(wanted, forms, names[i], e.name), i, e) for i, e in enumerate(pool)),
                    key=lambda t: (-t[0], t[1]))
    nearest = tuple(dict.fromkeys(e.name for _, _, e in scored[:5]))[:3]
    close = [(score, i, e) for score, i, e in scored if score >= threshold and names[i] not in aside]
    if not close:
        return Located(None, None, nearest)
    if any(e.in_dialog for _, _, e in close):  # an open dialog is where the step acts
        close = [item for item in close if item[2].in_dialog]
    wanted_words = _words(wanted)

    def closeness(item: tuple[float, int, Element]) -> tuple[int, float, float]:
        score, _, element = item
        cost = rename_cost(wanted_words, label_words(element.name))
        return (-affinity(element), cost if cost is not None else 9.0, -score)

    keyed = sorted(((closeness(item), item[1], item[2]) for item in close), key=lambda k: k[:2])
    top = [(i, e) for key, i, e in keyed if key == keyed[0][0]]
    rivals = {normalize(e.name) for _, e in top}
    if len(rivals) > 1:  # several controls could each be the label renamed: none is followed
        return Located(None, None, tuple(dict.fromkeys(e.name for _, e in top))[:5], ambiguous=True)
    return Located(best(top), MatchKind.CLOSE, nearest)


def locate_words(phrase: str, elements: Sequence[Element], roles: Collection[str] | None = None) -> Located:
    """The control a doc names in its own words, without a label ("Specify the
    principal.", "Select one or more ports."): the one element (by name) whose label has
    every word of the phrase, a plural or a typo aside ("ports" is "Port Range"; Chinese:
    the label contains the phrase). Several such labels, or none, find nothing: a reader
    could not tell which is meant. An open dialog is where the step acts."""
    wanted = label_words(phrase)
    if not wanted:
        return Located(None, None)
    chinese = bool(_CJK.search(phrase))
    pool = [e for e in elements if e.name and (roles is None or e.role in roles)]
    if any(e.in_dialog for e in pool):
        pool = [e for e in pool if e.in_dialog]

    def has_all(name: str) -> bool:
        if chinese:
            return normalize(phrase) in name
        words = _words(name)
        return all(any(w == x or _spelling_variant(w, x) for x in words) for w in wanted)

    found = [e for e in pool if has_all(normalize(e.name))]
    names = {normalize(e.name) for e in found}
    if len(names) != 1:
        return Located(None, None, tuple(dict.fromkeys(e.name for e in found))[:5], ambiguous=len(names) > 1)
    return Located(found[0], MatchKind.CLOSE)


def _shared_depth(element: Element, other: Element) -> int:
    """How deep the innermost container of both elements is (by ref)."""
    depth = 0
    for mine, theirs in zip(element.parents, other.parents):
        if mine != theirs:
            break
        depth += 1
    return depth


#: Controls whose accessible name may carry their help text after the label
#: ("Release Protection Prevents the instance from being released by mistake.").
DESCRIBED_ROLES = ("checkbox", "switch", "radio", "textbox", "combobox", "spinbutton", "searchbox", "group", "radiogroup")


def _described(wanted: str, name: str) -> bool:
    """Whether ``name`` is the label ``wanted`` followed by a description: at least
    three more words (two Chinese characters count as one), so that "Release
    Protection" is found in "Release Protection Prevents the instance from being
    released", but "Name" is not "Name Prefix"."""
    if not wanted or not name.startswith(wanted + " ") and not (_CJK.search(wanted) and name.startswith(wanted)):
        return False
    rest = name[len(wanted):].strip()
    if _CJK.search(rest):
        return len(rest) >= 6
    return len(rest.split()) >= 3


_CJK_WORDS = re.compile(f"[{_CJK_CHARS}]|[^\\s{_CJK_CHARS}]+")


def _words(text: str) -> list[str]:
    """The words of a normalized label: Chinese has no spaces, so each Chinese
    character is a word, and so is each run of other letters ("创建ecs实例" ->
    创, 建, ecs, 实, 例)."""
    return _CJK_WORDS.findall(text) if _CJK.search(text) else text.split()


def label_words(text: str) -> list[str]:
    """The words of any text as labels are compared (:func:`normalize`, then each Chinese
    character a word)."""
    return _words(normalize(text))


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
