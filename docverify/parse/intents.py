"""What a step asks for: an ordered rule table per language -> `Action`s.

Rules are regular expressions over marked text (`inline.py`: bold labels,
italic/code values and links are wrapped in sentinel characters). Each rule
names its intent; named groups carry the details:

- ``target``/``name``/``link``/``box``: the UI element (or console) acted on,
- ``path``/``ppath``: a menu path (``ppath`` is a plain ``A > B`` path),
- ``value``: what to enter or choose (``value_p``: a plain-text value, kept
  only when it looks literal: "docs_db", not "a name for your bucket"),
- ``url``/``bare``: a link target or bare URL, ``state``: on/off, ``verb``.

Every rule of the language's table is searched over the whole text; where two
matches overlap the rule listed first wins, and the surviving matches, sorted
by position, become the step's actions. A text with CJK characters uses the
Chinese table, any other the English one. A few fix-ups follow the table:
a generic "AWS Management Console" sign-in is dropped when a specific console
follows; a console link that names no console is an OPEN_URL; "select
**X**" is a CLICK when X reads like a button ("Create", "Next") and a SELECT
otherwise; a click on OK/确定 inside a dialog sentence is a CONFIRM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docverify.parse.inline import (
    BOLD_CLOSE,
    BOLD_OPEN,
    CODE_CLOSE,
    CODE_OPEN,
    EM_CLOSE,
    EM_OPEN,
    LINK_CLOSE,
    LINK_OPEN,
    LINK_URL,
    bold_spans,
    line_of,
    plain,
)
from docverify.parse.labels import path_labels
from docverify.parse.model import Action, Intent

_B, _BC = BOLD_OPEN, BOLD_CLOSE
_LN = f"{_B}[^{_B}{_BC}]+{_BC}"
_ARROW = r"\s*(?:>|→|»|›|＞)\s*"
_PATH = f"{_LN}(?:{_ARROW}{_LN})+"
_COMMA_PATH = rf"{_LN}(?:\s*,\s*{_LN})+(?!\s*,?\s*(?:and|or)\b)"
_QLN = f"[“「『]?{_LN}[”」』]?"  #: a label, perhaps in Chinese quotes
_PLAIN_PATH = r"[A-Za-z][\w&()'\- ]{0,40}?(?:\s+>\s+[A-Za-z][\w&()'\- ]{0,40}?)+(?=[.,;]|\s+(?:in|on|from|to)\s|$)"
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _label(name: str) -> str:
    return f"[“「『]?{_B}(?P<{name}>[^{_B}{_BC}]+){_BC}"


def _emph(name: str) -> str:
    return (
        f"(?:{_B}(?P<{name}>[^{_B}{_BC}]+){_BC}"
        f"|{EM_OPEN}(?P<{name}_i>[^{EM_OPEN}{EM_CLOSE}]+){EM_CLOSE}"
        f"|{CODE_OPEN}(?P<{name}_c>[^{CODE_OPEN}{CODE_CLOSE}]+){CODE_CLOSE})"
    )


def _value(name: str) -> str:
    """An emphasised value or a plain phrase up to the end of the clause."""
    return rf"(?:(?:the\s+)?{_emph(name)}|(?P<{name}_p>[^.,;:{_B}{LINK_OPEN}\n]{{1,80}}))"


def _token_value(name: str) -> str:
    return rf"(?:{_emph(name)}|(?P<{name}_p>[^\s{_B}{LINK_OPEN}]+))"


def _link(suffix: str = "") -> str:
    return f"{LINK_OPEN}(?P<link{suffix}>[^{LINK_OPEN}{LINK_CLOSE}{LINK_URL}]*){LINK_URL}(?P<url{suffix}>[^{LINK_CLOSE}]*){LINK_CLOSE}"


_BARE_URL = r"(?P<bare>https?://[^\s)\]>" + LINK_OPEN + r"]*[^\s)\]>.,;:!?" + LINK_OPEN + r"])"
#: A resource named in running text ("instance", "NAT gateway", "RAM user"): up to four words.
_NOUN = r"[A-Za-z][\w\-]*(?:\s+[A-Za-z][\w\-]*){0,3}?"
#: Where such a noun ends: a relative clause, a preposition, punctuation, the resource's own name
#: ("the ENI `eni-1`", "the instance named `web`").
_NOUN_END = r"(?=\s*(?:$|[.,;:!?)`(\"“" + CODE_OPEN + r"]|\s(?:that|which|whose|you|to|in|on|for|from|and|then|by|at|of|under|whom|named|called)\b))"
#: A control named in plain words, up to three lower-case words: "principal", "image name".
_PLAIN_NOUN = r"(?!(?:following|one|all|each|any|it|them|this|that|these|region|zone)\b)[a-z][a-z\-]*(?:\s(?!and\b|or\b)[a-z][a-z\-]*){0,2}"
_CONSOLE_NAME = r"(?P<name>(?:[\w&.\-]+\s+){0,5}?(?:management\s+)?(?:console|portal))\b"


@dataclass(frozen=True)
class Rule:
    intent: Intent
    needs: tuple[str, ...]  #: the rule is tried only when the lower-cased text holds one of these words
    pattern: re.Pattern

    def may_match(self, lowered: str) -> bool:
        """A cheap test before the pattern: substring checks, not a regex search."""
        return any(word in lowered for word in self.needs)


def _rules(flags: int, *table: tuple[Intent, tuple[str, ...], str]) -> tuple[Rule, ...]:
    return tuple(Rule(intent, needs, re.compile(pattern, flags)) for intent, needs, pattern in table)


#: English rules, highest priority first.
ENGLISH = _rules(
    re.IGNORECASE,
    (Intent.OPEN_CONSOLE, ("log", "sign"), r"(?<!must\s)(?<!need\sto\s)\b(?:log\s*on|log\s*in|sign\s*in)\s+to\s+(?:the\s+)?(?:" + _link() + "|" + _CONSOLE_NAME + ")"
     r"(?:\s+(?:at|from)\s+(?:" + _link("2") + "|" + _BARE_URL + "))?"),
    (Intent.OPEN_CONSOLE, ("open", "go", "navigate", "access"), r"\b(?:open|go\s+to|navigate\s+to|access)\s+(?:the\s+)?" + _CONSOLE_NAME +
     r"(?:\s+(?:at|from)\s+(?:" + _link("2") + "|" + _BARE_URL + "))?"),
    (Intent.OPEN_URL, ("open", "go", "visit", "navigate", "browse", "access"), r"\b(?:open|go\s+to|visit|navigate\s+to|browse\s+to|access)\s+(?:the\s+)?" + _link()),
    (Intent.OPEN_URL, ("http",), r"\b(?:open|go\s+to|visit|navigate\s+to|browse\s+to)\s+" + _BARE_URL),
    (Intent.NAVIGATE, ("navigation",), r"\b(?:in|from|on)\s+the\s+(?:left(?:-side|-hand)?\s+|top\s+|side\s+|main\s+)?navigation\s+"
     r"(?:pane|bar|menu|panel|tree),?\s+(?:choose|click|select|expand|go\s+to)\s+(?:the\s+)?"
     r"(?P<path>" + _PATH + "|" + _COMMA_PATH + "|" + _LN + ")"),
    (Intent.CONFIRM, ("message", "dialog", "prompt", "confirmation", "pop", "window"), r"\b(?:in|on)\s+the\s+(?:[^,.;\n" + _B + r"]{0,60}?\s)?(?:message|dialog(?:\s+box)?|prompt|confirmation(?:\s+box)?|pop-?up|window)"
     r"(?:\s+that\s+(?:appears|is\s+displayed))?,?\s+(?:click|choose|select)\s+(?:the\s+)?" + _label("target")),
    (Intent.CONFIRM, ("clicking", "choosing", "selecting"), r"\b(?:dialog(?:\s+box)?|message|note|prompt)\b[^.;\n]{0,80}?\bby\s+(?:clicking|choosing|selecting)\s+" + _label("target")),
    (Intent.CONFIGURE, ("information", "settings", "values"), r"\b(?:enter|select|configure|provide|specify|fill\s+in)\b(?:,?\s+(?:or|and)\s+(?:enter|select|choose))?"
     r"\s+(?:this|these|the\s+following)\s+(?:information|settings|values)\b"),
    # "specify **Logon Name** and **Display Name**", "configure the **A**, **B**, and **C** parameters":
    # fields named, values left to the reader (one FILL per label)
    (Intent.FILL, ("and", "parameter", "field"), r"\b(?:specify|enter|configure|set|fill\s+in|provide|type|input)\s+(?:the\s+)?(?P<fieldlist>"
     + _LN + r"(?:\s*,\s*" + _LN + r")*,?\s+and\s+" + _LN + r"(?:\s+(?:parameters|fields|boxes))?"
     + r"|" + _LN + r"\s+(?:parameter|field|box)\b)(?!\s+(?:to|as)\b)"),
    (Intent.FILL, ("for",), r"\bfor\s+(?:the\s+)?" + _label("target") + r",\s*(?:enter|type|specify|input|paste|provide)\s+" + _value("value")),
    (Intent.SELECT, ("for",), r"\bfor\s+(?:the\s+)?" + _label("target") + r",\s*(?:choose|select|pick)\s+" + _value("value")),
    (Intent.FILL, ("enter", "type", "specify", "input"), r"\b(?:in|under)\s+(?:the\s+)?" + _label("target") + r"(?:\s+(?:field|box|text\s+box))?,\s*(?:enter|type|specify|input)\s+" + _value("value")),
    # "Enter a name in the **Instance Name** field, for example `web-01`.": the field, perhaps an example value
    (Intent.FILL, ("enter", "type", "specify", "input", "provide"), r"\b(?:enter|type|input|specify|provide)\s+(?:a|an|the|your)\s+[^.,;:\n" + _B + r"]{1,40}?\s+(?:in|into|for)\s+(?:the\s+)?"
     + _label("target") + r"(?:\s+(?:field|box|text\s+box|parameter))?(?:,?\s+(?:for\s+example|such\s+as|e\.g\.)[,:]?\s+" + _emph("example") + ")?"),
    (Intent.FILL, ("box", "field"), r"\b(?:in|into)\s+the\s+(?P<box>[\w\- ]{1,30}?(?<!dialog)(?<!message)\s(?:box|field)),\s*(?:enter|type|input)\s+" + _value("value")),
    (Intent.FILL, ("enter", "type", "input", "specify", "paste"), r"\b(?:enter|type|input|specify|paste)\s+" + _token_value("value") + r"\s+(?:(?:in|into)\s+the|for(?:\s+the)?)\s+" + _label("target")
     + r"(?:\s+(?:field|box|text\s+box))?"),
    # "... in the **A** field and docs in the **B** field": the second of two fills
    (Intent.FILL, ("field", "box"), r"(?:,\s*|\band\s+)(?:" + _emph("value") + r"|(?P<value_p>[^\s" + _B + LINK_OPEN + r",.;]+(?:\s+[^\s" + _B + LINK_OPEN + r",.;]+){0,3}?))\s+(?:in|into)\s+the\s+" + _label("target")
     + r"\s+(?:field|box|text\s+box)"),
    (Intent.SELECT_REGION, ("region",), r"\b(?:select|choose|switch\s+to|change)\s+(?:the\s+)?" + _emph("value") + r"\s+region\b"),
    (Intent.SELECT_REGION, ("region",), r"\b(?:select|choose|switch\s+to)\s+(?:a|an|the|your)?\s*(?:target\s+|desired\s+|required\s+|appropriate\s+|aws\s+)?region\b"),
    (Intent.TOGGLE, ("turn", "switch", "toggle"), r"\b(?:turn|switch|toggle)\s+(?P<state>on\s+or\s+off|off\s+or\s+on|on|off)\s+(?:the\s+)?" + _label("target")),
    (Intent.TOGGLE, ("box",), r"\b(?P<state>select|clear|check|uncheck)\s+(?:the\s+)?" + _label("target") + r"\s+(?:check\s*box|checkbox)"),
    (Intent.TOGGLE, ("box",), r"\b(?P<state>select|clear|check|uncheck)\s+the\s+(?:check\s*box|checkbox)\s+(?:next\s+to|for|of)\s+" + _label("target")),
    (Intent.TOGGLE, ("enable", "disable"), r"\b(?P<state>enable|disable)\s+(?:the\s+)?" + _label("target")),
    (Intent.CONFIGURE, ("following", "below"), r"\b(?:configure|set|specify|enter|select|complete|fill\s+in|provide|modify|change)\b[^.:;\n]{0,60}?\b(?:following|below)\b"
     r"[^.:;\n]{0,30}?\b(?:parameters?|settings?|information|configurations?|fields?|options|table|items?)\b"),
    (Intent.CONFIGURE, ("following",), r"\b(?:(?:parameters?|settings?)\s+|as\s+)(?:as\s+)?(?:described|listed|shown)\s+in\s+the\s+following\s+table"),
    (Intent.CONFIGURE, ("parameters", "settings"), r"\b(?:set|configure|specify)\s+(?:the\s+)?(?:[\w\-]+\s+){0,3}?(?:parameters|settings)\b"),
    (Intent.CONFIGURE, ("configure", "set up"), r"(?:^|(?<=\n)|(?<=[.]\s))(?:configure|set\s+up)\s+(?:the\s+|a\s+|an\s+)?(?:[\w\-]+\s+){0,4}?"
     r"(?:rules?|parameters|settings|options|configurations?|policy|policies|listener)\b"),
    (Intent.NAVIGATE, (">", "→", "»", "›", "＞"), r"(?:\b(?:choose|select|click|go\s+to|navigate\s+to|open)\s+(?:the\s+)?)?(?P<path>" + _PATH + ")"),
    (Intent.NAVIGATE, (",",), r"\b(?:choose|select|click)\s+(?:the\s+)?(?P<path>" + _COMMA_PATH + ")"),
    # "Go back to the Instances page": a page named in plain words, reached by its link
    (Intent.NAVIGATE, ("back to", "return to"), r"\b(?:go\s+back|return|navigate\s+back)\s+to\s+the\s+"
     r"(?P<plain>[A-Z][\w&\-]*(?:\s+[A-Z&][\w&\-]*){0,3})\s+page\b"),
    (Intent.NAVIGATE, (">",), r"\b(?:choose|select|go\s+to|navigate\s+to)\s+(?P<ppath>" + _PLAIN_PATH + ")"),
    (Intent.SELECT, ("set",), r"\bset\s+" + _label("target") + r"\s+to\s+" + _token_value("value")),
    # "set **A** to `x` and **B** to `y`": the second of two settings
    (Intent.SELECT, ("set",), r"(?:,\s*(?:and\s+)?|\band\s+)" + _label("target") + r"\s+to\s+" + _emph("value")),
    (Intent.SELECT, ("set",), r"\bset\s+(?P<box>[A-Z][\w\-]*(?:\s[\w\-]+){0,4}?)\s+to\s+" + _emph("value")),
    (Intent.SELECT, ("select", "choose", "pick"), r"\b(?:select|choose|pick)\s+(?:the\s+)?" + _label("value") + r"\s+(?:from|in|for|under)\s+(?:the\s+)?" + _label("target")),
    (Intent.SELECT, ("drop-down", "list", "menu"), r"\b(?:select|choose|pick)\s+" + _value("value") + r"\s+(?:from|in)\s+the\s+" + _label("target")
     + r"\s+(?:drop-?down(?:\s+list|\s+menu)?|list|menu)"),
    # "... from the **A** drop-down list and a vSwitch from the **B** drop-down list": the second list
    (Intent.SELECT, ("drop-down", "list", "menu"), r"\band\s+" + _value("value") + r"\s+(?:from|in)\s+the\s+" + _label("target")
     + r"\s+(?:drop-?down(?:\s+list|\s+menu)?|list|menu)"),
    (Intent.SELECT, ("either",), r"\b(?:select|choose)\s+either\s+" + _LN + r"\s+or\s+" + _LN),
    # "From the **Principal** drop-down list, select the RAM user."
    (Intent.SELECT, ("drop-down", "list", "menu"), r"\bfrom\s+the\s+" + _label("target") + r"\s+(?:drop-?down(?:\s+list|\s+menu)?|list|menu),?\s+"
     r"(?:select|choose|pick)\s+" + _value("value")),
    (Intent.FILL, ("enter", "type", "input", "specify", "paste"), r"(?<!" + _B + r")\b(?:enter|type|input|specify|paste)\s+(?:the\s+|a\s+|an\s+)?" + _emph("value")),
    (Intent.VERIFY, ("check", "verify", "confirm", "ensure", "make sure"), r"\b(?:check|verify|confirm|ensure|make\s+sure)\s+(?:that|whether|if)\b"),
    (Intent.VERIFY, ("displayed", "shown", "listed", "appear"), r"\b(?:is|are)\s+(?:displayed|shown|listed)\b|\bappears?\s+(?:in|on)\s+the\b"),
    (Intent.CLICK, ("name", "id"), r"\bclick(?:ing)?\s+the\s+(?:name|id)\s+of\s+the\s+" + _label("target")),
    # "click the name of the bucket", "click the ID of the target instance", "click the instance ID"
    (Intent.OPEN_RESOURCE, ("name", "id"), r"\bclick(?:ing)?\s+(?:on\s+)?(?:the\s+)?(?:"
     r"(?P<part>(?:logon\s+|display\s+|user\s*)?name|id)\s+of\s+(?:the|a|an|your)\s+(?:target\s+|desired\s+|new\s+)?(?P<noun>" + _NOUN + r")"
     r"|(?:target\s+|desired\s+)?(?P<noun2>" + _NOUN + r")\s+(?P<part2>(?:logon\s+|display\s+|user\s*)?name|id))" + _NOUN_END),
    (Intent.CLICK, ("click", "choose", "select", "press", "tap"), r"\b(?P<verb>click|choose|select|press|tap)(?:ing)?\s+(?:the\s+)?(?:button\s+)?" + _label("target")),
    # controls named in plain words: "Specify the principal.", "Select one or more ports.",
    # "Enter an image name and description.", "click the target bucket"
    (Intent.SELECT, ("one or more", "at least one"), r"\b(?:select|choose|check)\s+(?:one\s+or\s+more|at\s+least\s+one)\s+(?P<plain>[a-z][a-z\-]*(?:\s[a-z][a-z\-]*){0,2}?)\s*(?:[.;]|$)"),
    (Intent.FILL, ("enter", "specify", "type"), r"(?<!" + _B + r")\b(?:enter|specify|type)\s+(?:a|an|the)\s+(?P<plainlist>" + _PLAIN_NOUN
     + r"(?:\s*,\s*(?:a\s+|an\s+|the\s+)?" + _PLAIN_NOUN + r")*,?\s+and\s+(?:a\s+|an\s+|the\s+)?" + _PLAIN_NOUN + r")\s*(?:[.;]|$)"),
    (Intent.FILL, ("enter", "type"), r"(?<!" + _B + r")\b(?:enter|type)\s+(?:a|an|the)\s+(?P<plain>" + _PLAIN_NOUN + r")\s*(?:[.;]|$)"),
    (Intent.SELECT, ("specify", "select", "choose"), r"(?<!" + _B + r")\b(?:specify|select|choose)\s+(?:the\s+|a\s+|an\s+)?(?P<plain>" + _PLAIN_NOUN + r")\s*(?:[.;]|$)"),
    (Intent.OPEN_RESOURCE, ("target", "desired"), r"\bclick(?:ing)?\s+(?:on\s+)?the\s+(?:target|desired)\s+(?P<noun>" + _NOUN + r")" + _NOUN_END),
    # catch-alls: a verb without a label
    (Intent.FILL, ("enter", "type", "input"), r"(?<!" + _B + r")(?<!to\s)\b(?:enter|type|input)\s+(?:a|an|the|your|its|their|one|up\s+to)\b"),
    (Intent.VERIFY, ("view", "review", "check", "verify", "wait"), r"(?:^|(?<=\n)|(?<=[.]\s))(?:view|review|check|verify)\b|\bwait\s+(?:until|for)\b"),
    (Intent.CLICK, ("click",), r"(?<!" + _B + r")\bclick(?:ing)?\b"),
)

#: Chinese rules, highest priority first.
CHINESE = _rules(
    re.IGNORECASE,
    (Intent.OPEN_CONSOLE, ("登录",), r"登录(?:到)?\s*(?:" + _link() + r"|(?P<name>[\w\u4e00-\u9fff]{0,20}?控制台))"),
    (Intent.OPEN_URL, ("访问", "打开", "进入", "前往"), r"(?:访问|打开|进入|前往)\s*" + _link()),
    (Intent.NAVIGATE, ("导航", "菜单栏"), r"在(?:左侧|顶部|上方)?(?:导航栏|导航窗格|菜单栏)(?:中)?[，,]?\s*(?:选择|单击|点击)\s*(?P<path>" + _PATH + "|" + _LN + ")"),
    (Intent.CONFIRM, ("对话框", "提示", "弹窗", "弹出框", "确认框"), r"(?:对话框|提示框|弹窗|弹出框|确认框|提示)(?:(?!设置|输入|选择|配置|填写|填入|完成)[^。；\n]){0,30}?(?:单击|点击)\s*" + _label("target")),
    (Intent.SELECT_REGION, ("地域", "区域"), r"选择(?:目标|所需|您的|相应的|[^，,。；\n" + _B + r"]{0,12}?的)?(?:地域|区域)(?:\s*" + _emph("value") + ")?"),
    (Intent.SELECT_REGION, ("地域", "区域"), r"选择\s*" + _emph("value") + r"\s*(?:地域|区域)"),
    (Intent.TOGGLE, ("打开", "关闭", "开启", "启用", "禁用", "停用"), r"(?P<state>打开|关闭|开启|启用|禁用|停用)\s*" + _label("target")),
    (Intent.TOGGLE, ("选中", "勾选"), r"(?P<state>选中|勾选|取消勾选|取消选中)\s*" + _label("target")),
    (Intent.CONFIGURE, ("如下", "以下", "下表", "下列", "参数"), r"(?:按|根据|参考)(?:如下|以下|下表)(?:说明|信息|参数)?(?:配置|设置|完成|填写)|(?:完成|配置|设置|填写)(?:以下|如下|下列)(?:配置|参数|信息)"
     r"|(?:配置|设置)(?:各项|相关)?参数"),
    # "输入**登录名称**和**显示名称**", "填写“A”、“B”和“C”", "设置**授权策略**、**授权对象**":
    # fields named, values left to the reader
    (Intent.FILL, ("和", "及", "与", "、"), r"(?:输入|填写|设置|配置|指定)\s*(?P<fieldlist>" + _QLN + r"(?:\s*[、，,]\s*" + _QLN
     + r")*\s*(?:和|及|以及|与|、)\s*" + _QLN + ")"),
    (Intent.FILL, ("输入", "填写"), r"在" + _label("target") + r"(?:中|框中|文本框中|输入框中)?[，,]?\s*(?:输入|填写)\s*" + _emph("value")),
    # "在**实例名称**文本框中，输入实例名称（例如`web-01`）。": the field, perhaps an example value
    (Intent.FILL, ("输入", "填写"), r"在" + _label("target") + r"(?:中|框中|文本框中|输入框中|区域)?[，,]?\s*(?:输入|填写)[^。；\n" + _B + r"]{0,30}?"
     r"(?:(?:例如|比如|如)[：:，,]?\s*" + _emph("example") + ")?"),
    # "单击**Static Pages**右侧的**设置**": the second label is the control
    (Intent.CLICK, ("右侧", "左侧", "旁边", "下方", "上方", "后面", "后的"), r"(?:单击|点击)\s*" + _LN + r"\s*(?:右侧|左侧|旁边|下方|上方|后面|后)的?\s*" + _label("target")),
    (Intent.NAVIGATE, (">", "→", "»", "›", "＞"), r"(?:选择|单击|点击|进入)?\s*(?P<path>" + _PATH + ")"),
    # "返回实例页面": a page named in plain words
    (Intent.NAVIGATE, ("返回",), r"返回(?:到)?(?P<plain>[\u4e00-\u9fffA-Za-z]{1,8}?)(?:列表)?页面?(?=[，,。；;\s]|$)"),
    (Intent.FILL, ("输入", "填写", "填入"), r"(?:输入|填写|填入)\s*" + _label("target")),
    (Intent.FILL, ("输入", "填写", "填入"), r"(?:输入|填写|填入)"),
    # "设置**预删除周期（天）**为`7`": a field and its value
    (Intent.SELECT, ("设置", "设为", "修改"), r"(?:设置|修改)\s*" + _label("target") + r"\s*(?:为|成)\s*" + _emph("value")),
    (Intent.SELECT, ("选择",), r"(?:在" + _label("target") + r"(?:中|区域|下拉列表中|列表中)?[，,]?\s*)?选择\s*" + _label("value")),
    (Intent.VERIFY, ("查看", "确认", "显示", "出现"), r"查看|确认[^，。；\n]{0,30}?(?:信息|配置|是否|状态)|(?:显示|出现)在[^。\n]{0,15}?列表"),
    (Intent.CLICK, ("单击", "点击"), r"(?:单击|点击)[^，。；\n" + _B + r"]{0,20}?" + _label("column") + r"(?:列|栏)(?:下|中)?的?\s*" + _label("target")),
    (Intent.CLICK, ("单击", "点击", "click"), r"(?:单击|点击|click)\s*(?:目标)?" + _label("target")),
    # "单击目标实例ID", "单击Bucket名称", "单击目标RAM用户的用户名": an existing resource's page
    (Intent.OPEN_RESOURCE, ("单击", "点击"), r"(?:单击|点击)\s*(?:目标|需要操作的|要操作的|待操作的|该|此)?\s*(?P<noun>[A-Za-z\u4e00-\u9fff]{1,12}?)\s*的?\s*"
     r"(?P<part>ID|id|名称|名字|用户名|登录名称?)(?![A-Za-z\u4e00-\u9fff])"),
    # "并选中一个或多个端口": a list named in plain words, any of its choices
    (Intent.SELECT, ("一个或多个", "至少一个"), r"(?:选中|选择|勾选)(?:一个或多个|至少一个)(?P<plain>[\u4e00-\u9fff]{1,8}?)(?=[，,。；;\s]|$|即可|便|后)"),
    (Intent.CLICK, ("单击", "点击"), r"单击|点击"),
)

_GENERIC_CONSOLES = re.compile(
    r"^(?:the\s+)?(?:aws\s+management\s+console|alibaba\s+cloud\s+management\s+console|management\s+console|console|阿里云控制台|控制台)$",
    re.IGNORECASE,
)
_CONSOLE_WORD = re.compile(r"console|portal|控制台", re.IGNORECASE)
_BUTTON_WORDS = frozenset(
    "add apply associate attach back buy cancel close confirm connect continue copy create delete done download edit "
    "finish go import export launch manage modify next ok open previous purchase refresh release remove restart "
    "review save search start stop submit update upload view yes activate allocate assign attach authorize "
    "configure detach disable enable grant install reboot reset retry revoke run set unbind bind change".split()
)
#: Bold text that names a field rather than a value to type in it.
_FIELD_LABEL = re.compile(r"(?:\b(?:name|description|id|password|port|address|cidr block|remarks?)|名称|描述|密码|端口|地址|备注)$", re.IGNORECASE)
_CONFIRM_LABELS = re.compile(r"^(?:ok|confirm|yes|确定|确认|是)$", re.IGNORECASE)
_DIALOG_WORDS = re.compile(r"dialog|message|prompt|pop-?up|confirmation|对话框|提示|弹窗|弹出框", re.IGNORECASE)
_NOT_LITERAL = re.compile(r"^(?:a|an|the|your|one|this|that|any|all|each|some|its|their|whether|if|how|up\s+to)\b", re.IGNORECASE)
_SECTION_CONTEXT = re.compile(
    r"\b(?:in|on)\s+the\s+" + _label("section") + r"\s+(?:section|area|step|page|panel|dialog\s+box|tab|wizard|pane|message|prompt)"
    r"|在(?:[^" + _B + r"。]{0,20})?" + _label("section2") + r"(?:区域|页面|页签|面板|对话框|配置向导|提示)",
    re.IGNORECASE,
)
_STATE = {
    "on": "on", "enable": "on", "select": "on", "check": "on", "打开": "on", "开启": "on", "启用": "on",
    "选中": "on", "勾选": "on", "off": "off", "disable": "off", "clear": "off", "uncheck": "off",
    "关闭": "off", "禁用": "off", "停用": "off", "取消勾选": "off", "取消选中": "off",
}
#: Longer paragraphs are only searched this far; steps are short.
MAX_CHARS = 4000


def rules_for(marked: str) -> tuple[Rule, ...]:
    return CHINESE if _CJK.search(marked) else ENGLISH


def extract_actions(marked: str, first_line: int) -> list[Action]:
    """The actions named in a paragraph's marked text, in order."""
    text = marked[:MAX_CHARS]
    accepted: list[tuple[int, int, Rule, re.Match]] = []
    lowered = text.lower()
    for rule in rules_for(text):
        if not rule.may_match(lowered):
            continue
        for match in rule.pattern.finditer(text):
            start, end = match.span()
            if end == start:
                continue
            if any(start < a_end and a_start < end for a_start, a_end, _, _ in accepted):
                continue
            accepted.append((start, end, rule, match))
    accepted.sort(key=lambda item: item[0])
    # "confirm the settings or click the ![Edit] icon to modify them": another way, not a further step
    accepted = [item for item in accepted if not _OR_BEFORE.search(text, max(0, item[0] - 12), item[0])]
    actions: list[Action] = []
    starts: list[int] = []
    for start, _, rule, match in accepted:
        if match.groupdict().get("fieldlist"):
            found = _field_list(rule.intent, match, text, first_line)
        elif match.groupdict().get("plainlist"):  # "Enter an image name and description."
            line = line_of(text, start, first_line)
            found = [Action(rule.intent, line, target=noun, described=True)
                     for noun in _PLAIN_ITEM.split(plain(match["plainlist"])) if noun]
        else:
            found = [_action(rule.intent, match, text, first_line)]
        actions.extend(found)
        starts.extend([start] * len(found))
    _resource_context(text, actions, starts)
    return _fix_up(actions)


_PLAIN_ITEM = re.compile(r"\s*(?:,\s*and|,|\band)\s+(?:a\s+|an\s+|the\s+)?", re.I)
#: What puts an action as an alternative to the one before it: "..., or click **X**", "或者单击".
_OR_BEFORE = re.compile(r"(?:(?<![\w-])or,?|或者|或)\s*$", re.I)
#: "find the instance that you want to stop", "locate the target bucket", "找到目标实例":
#: the step acts on one existing resource, a row of a list.
_FIND_EN = re.compile(r"\b(?:find|locate|search\s+for)\s+(?:the|a|an|your)\s+(?:target\s+|desired\s+|new\s+)?(?P<noun>" + _NOUN + ")" + _NOUN_END, re.I)
_FIND_ZH = re.compile(r"找到(?:目标|要|需要|待|您要|您需要)?(?:[^，。；,\n" + _B + r"]{0,12}?的)?(?P<noun>[A-Za-z\u4e00-\u9fff]{1,10}?)(?=[，,。；：:\s]|$|并|后|然后|所在|对应)")
#: "click the plus sign to the left of the event that you want to query and click **X**":
#: a row named by what the reader wants to do with it (not one to create)
_WANTED_EN = re.compile(r"\bthe\s+(?P<noun>(?:(?!(?:the|of|a|an)\b)[A-Za-z][\w\-]*\s+){0,2}(?!(?:the|of|a|an)\b)[A-Za-z][\w\-]*)\s+(?:that|which)\s+you\s+want\s+to\s+(?!create\b|add\b|buy\b|purchase\b|apply\b)\w+", re.I)
#: Intents that act on a row's control, once the step has named the row.
_ROW_INTENTS = (Intent.CLICK, Intent.NAVIGATE, Intent.TOGGLE, Intent.SELECT)


def _resource_context(text: str, actions: list[Action], starts: list[int]) -> None:
    """Mark the actions that follow "find the X" with the resource X they act on; an
    OPEN_RESOURCE action carries its own (its noun, and which link: name or id)."""
    for action in actions:
        if action.intent is Intent.OPEN_RESOURCE and action.resource:
            return
    pattern = _FIND_ZH if _CJK.search(text) else _FIND_EN
    found = pattern.search(text) or (None if _CJK.search(text) else _WANTED_EN.search(text))
    if found is None:
        return
    noun = re.sub(r"^(?:目标|该|此)", "", plain(found["noun"]).strip())
    if not noun or noun.lower() in ("following", "page", "section", "list", "button", "option", "tab", "icon", "column"):
        return
    for action, start in zip(actions, starts):
        if start >= found.start() and action.intent in _ROW_INTENTS and action.resource is None:
            action.resource = noun


def _field_list(intent: Intent, match: re.Match, text: str, first_line: int) -> list[Action]:
    """One action per label of a list of named fields ("**A**, **B**, and **C**"), no value."""
    start = match.start("fieldlist")
    return [
        Action(intent=intent, line=line_of(text, start + offset, first_line), target=label)
        for offset, label in bold_spans(match["fieldlist"])
    ]


def _group(groups: dict[str, str | None], *names: str) -> str | None:
    for name in names:
        for key in (name, f"{name}_i", f"{name}_c", f"{name}2"):
            value = groups.get(key)
            if value is not None:
                return value
    return None


def _action(intent: Intent, match: re.Match, text: str, first_line: int) -> Action:
    groups = match.groupdict()
    action = Action(intent=intent, line=line_of(text, match.start(), first_line))
    target = _group(groups, "target", "name", "link", "box")
    if target is not None:
        action.target = plain(target) or None
    url = _group(groups, "url", "bare")
    if url:
        action.url = url
    value = _group(groups, "value")
    example = _group(groups, "example")
    if value is not None:
        action.value = plain(value)
    elif example is not None:
        action.value, action.example = plain(example), True
    elif groups.get("value_p"):
        literal = plain(groups["value_p"])
        action.value = None if _NOT_LITERAL.match(literal) or len(literal.split()) > 3 else literal
    if groups.get("plain"):  # "Specify the principal.": the doc's words for a control
        action.target, action.described = plain(groups["plain"]), True
    if intent is Intent.OPEN_RESOURCE:
        action.resource = plain(groups.get("noun") or groups.get("noun2") or "") or None
        part = (groups.get("part") or groups.get("part2") or "").lower()
        action.value = "id" if part == "id" else "name"
        return action
    if groups.get("path"):
        action.path = path_labels(groups["path"])
        action.target = action.path[-1] if action.path else action.target
    elif groups.get("ppath"):
        action.path = [part.strip() for part in groups["ppath"].split(">") if part.strip()]
        action.target = action.path[-1] if action.path else None
    state = groups.get("state")
    if state:
        action.value = _STATE.get(state.lower())
    if intent is Intent.FILL and target is None and groups.get("value") is not None and _FIELD_LABEL.search(plain(groups["value"])):
        # "Specify **Instance Name**.": a bold label is the field, not the text to type
        action.target, action.value = plain(groups["value"]), None
    if intent is Intent.CLICK and (groups.get("verb") or "").lower() == "select" and target and not _is_button(plain(target)):
        action.intent, action.value, action.target = Intent.SELECT, plain(target), None
    if intent is Intent.CONFIGURE:
        context = None
        for found in _SECTION_CONTEXT.finditer(text, 0, match.start() + 1):
            context = found
        if context is not None:
            action.target = plain(context["section"] or context["section2"] or "")
    elif intent in (Intent.CLICK, Intent.CONFIRM, Intent.TOGGLE, Intent.SELECT, Intent.FILL):
        # "In the **Lifecycle** section, click **Create Rule**": where on the page the control is
        sentence = max(text.rfind(". ", 0, match.start()), text.rfind("。", 0, match.start()), text.rfind("\n", 0, match.start()))
        for found in _SECTION_CONTEXT.finditer(text, sentence + 1, match.start() + 1):
            label = plain(found["section"] or found["section2"] or "")
            if label and label != action.target:
                action.context = label
    if intent is Intent.CLICK and action.target and _CONFIRM_LABELS.match(action.target):
        sentence_start = max(text.rfind(".", 0, match.start()), text.rfind("。", 0, match.start()), text.rfind("\n", 0, match.start()))
        if _DIALOG_WORDS.search(text, sentence_start + 1, match.start()):
            action.intent = Intent.CONFIRM
    return action


def _is_button(label: str) -> bool:
    words = label.lower().split()
    return bool(words) and (words[0] in _BUTTON_WORDS or words[0].rstrip(":") in _BUTTON_WORDS)


def _fix_up(actions: list[Action]) -> list[Action]:
    actions = [
        action
        for index, action in enumerate(actions)
        if not (
            index
            and action.intent in (Intent.CONFIGURE, Intent.VERIFY)
            and actions[index - 1].intent is action.intent
            and actions[index - 1].target == action.target
        )
    ]
    consoles = [a for a in actions if a.intent is Intent.OPEN_CONSOLE]
    if len(consoles) > 1:
        generic = [a for a in consoles if a.target and _GENERIC_CONSOLES.match(a.target)]
        if len(generic) < len(consoles):
            actions = [a for a in actions if a not in generic]
    for action in actions:
        if action.intent is Intent.OPEN_CONSOLE and action.url and action.target and not _CONSOLE_WORD.search(action.target):
            action.intent = Intent.OPEN_URL
        if action.intent is Intent.OPEN_CONSOLE and action.target and action.target.lower().startswith("the "):
            action.target = action.target[4:]
    return actions


_PRODUCT_PREFIX = re.compile(r"^(?:the\s+)?(?:amazon\s+|aws\s+|alibaba\s+cloud\s+|microsoft\s+)?", re.IGNORECASE)
_PRODUCT_SUFFIX = re.compile(r"\s*(?:management\s+console|console|管理控制台|控制台)$", re.IGNORECASE)


_CONSOLE_MENTION = re.compile(
    r"\b((?:[A-Z][\w&\-]*\s){0,2}[A-Z][\w&\-]*)\s+(?:management\s+)?console\b|([A-Za-z0-9\u4e00-\u9fff]{1,12}?)(?:管理)?控制台"
)


#: Whose console a doc is for, by the consoles it names and the links it opens.
_CLOUDS = (
    ("aws", re.compile(r"\baws\b|\bamazon\s+[\w\- ]{0,40}console|aws\.amazon\.com|amazonaws\.com", re.IGNORECASE)),
    ("azure", re.compile(r"\bazure\s+portal\b|portal\.azure\.com|\bmicrosoft\s+azure\b", re.IGNORECASE)),
    ("gcp", re.compile(r"\bgoogle\s+cloud\s+console\b|console\.cloud\.google\.com", re.IGNORECASE)),
    ("alibaba", re.compile(r"aliyun\.com|alibabacloud\.com|\balibaba\s+cloud\b|阿里云", re.IGNORECASE)),
)


def cloud_named(texts: list[str]) -> str | None:
    """The cloud whose console ``texts`` (console names, link URLs) belong to, if one says."""
    for text in texts:
        for cloud, pattern in _CLOUDS:
            if text and pattern.search(text):
                return cloud
    return None


def console_mentioned(text: str) -> str | None:
    """The console named in running text ("... tab in the ECS console") -> its product."""
    for match in _CONSOLE_MENTION.finditer(text):
        product = product_from_console((match[1] or match[2] or "") + " console")
        if product:
            return product
    return None


def product_from_console(name: str) -> str | None:
    """"ECS console" -> "ECS", "Amazon S3 console" -> "S3", "Azure portal" -> "Azure"."""
    if _GENERIC_CONSOLES.match(name.strip()):
        return None
    if re.search(r"\bazure\s+portal\b", name, re.IGNORECASE):
        return "Azure"
    product = _PRODUCT_SUFFIX.sub("", _PRODUCT_PREFIX.sub("", name.strip())).strip()
    return product or None
