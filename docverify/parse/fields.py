"""Fields: rows of parameter tables and "**Label**: text" bullets.

A table is a parameter table when a header names a column role:

=============  ==============================================================
role           header words (any case)
=============  ==============================================================
name           Parameter, Setting, Name, Field, Option, Item, Configuration,
               参数, 配置项, 名称, 配置, 选项, 设置项 ...
value          Value, Example, Default, 取值, 示例, 值 ...
description    Description, Details, Notes, 说明, 描述, 备注 ...
required       Required, Mandatory, 是否必选, 是否必填, 必选 ...
group          Step, Section, Category, 步骤, 分类 ...
=============  ==============================================================

The name column is the first column with the name role (the first column when
none has it); columns before it are group columns ("Step|Parameter|Example|
Description"). A row with fewer cells than the header is right-aligned and the
missing group cells carry over from the row above (Alibaba's row spans). A row
whose only non-empty cell is the first (``| **PROJECT DETAILS** | |``) is a
group header: it sets `Field.group` for the rows below.

Values come from the value column, or from the description when the doc says
"In this example, **X** is selected" (本示例选择**X**):

- "Leave the value blank" -> ``""``;
- "Leave the default of **4**" -> ``"4"``;
- "Select **Create new**, enter **myResourceGroup**" -> ``"myResourceGroup"``
  (an entered value wins over a clicked one);
- "Select **Standard**", "Enter *myBasicPublicIP*" -> the emphasised text;
- "Select IPv4" -> ``"IPv4"``; "Select your subscription." -> no value;
- a short cell without a verb ("Pay-As-You-Go") -> the cell itself.

Options are the bold items that start bullet lines in a cell
("-   **Standard**: ...") or a run of two or more bold items joined only by
commas, "or", "and", 、 or 或 ("**固定IP**或者**动态IP**").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from docverify.parse.inline import BOLD_CLOSE, BOLD_OPEN, CODE_CLOSE, CODE_OPEN, EM_CLOSE, EM_OPEN, plain
from docverify.parse.labels import NOTE_WORDS
from docverify.parse.model import Field
from docverify.parse.tables import RawTable

_ROLE_WORDS = {
    "name": (
        "parameter", "parameters", "setting", "settings", "name", "field", "option", "options", "item",
        "configuration", "configuration item", "config", "property", "console option", "key",
        "参数", "参数名", "参数名称", "配置项", "名称", "配置", "选项", "设置项", "字段", "属性",
    ),
    "value": (
        "value", "values", "example", "example value", "default", "default value", "setting value",
        "automatic setting", "取值", "示例", "示例值", "值", "默认值", "参数值", "配置值",
    ),
    "description": (
        "description", "descriptions", "details", "notes", "note", "remarks", "meaning",
        "说明", "描述", "备注", "参数说明", "配置说明", "含义",
    ),
    "required": ("required", "mandatory", "required?", "是否必选", "是否必填", "必选", "必填", "是否必需", "必需"),
    "group": ("step", "section", "category", "group", "步骤", "分类", "类别", "分组", "配置步骤"),
}
_ROLE_OF = {word: role for role, words in _ROLE_WORDS.items() for word in words}

_EMPH = (
    "(?:" + BOLD_OPEN + "([^" + BOLD_OPEN + BOLD_CLOSE + "]+)" + BOLD_CLOSE
    + "|" + EM_OPEN + "([^" + EM_OPEN + EM_CLOSE + "]+)" + EM_CLOSE
    + "|" + CODE_OPEN + "([^" + CODE_OPEN + CODE_CLOSE + "]+)" + CODE_CLOSE + ")"
)
_BLANK = re.compile(r"\bleave\s+(?:the\s+)?(?:value|field|box|it|this)?\s*(?:blank|empty)\b|留空|不填", re.I)
_DEFAULT = re.compile(r"\b(?:leave|keep)\s+(?:the\s+)?default(?:\s+(?:value|setting|selection))?(?:\s+(?:of|as))?[\s:]*" + _EMPH, re.I)
_ENTER = re.compile(r"(?:\b(?:enter|type|input|specify)\b|输入|填写)[^" + BOLD_OPEN + EM_OPEN + CODE_OPEN + r".;。]{0,30}?" + _EMPH, re.I)
_SELECT = re.compile(r"(?:\b(?:select|choose|pick|set\s+(?:it\s+)?to)\b|选择)\s*(?:the\s+)?" + _EMPH, re.I)
_EXAMPLE = re.compile(
    r"(?:\bin\s+this\s+(?:example|topic)\b[^" + BOLD_OPEN + r".]{0,40}?" + _EMPH + r"\s+is\s+(?:selected|used)"
    r"|本示例(?:选择|使用|为)\s*" + _EMPH + ")",
    re.I,
)
_VERB_PLAIN = re.compile(
    r"^(?:select|choose|enter|type)\s+(?!(?:a|an|the|your|one|this|that|any|all|each|whether|if|from)\b)"
    r"([^\s.,;]+(?:\s[^\s.,;]+)?)\.?$",
    re.I,
)
_SENTENCE_WORDS = re.compile(
    r"(?<![\w-])(?:select|choose|enter|leave|click|you|the|is|are|to|if|for|when|note|must|can)(?![\w-])"
    r"|[。，；]|[.;:]\s|[.。!?！？]$",
    re.I,
)
_BULLET_OPTION = re.compile(r"(?:^|\n|\s{2,})[-+*]\s+" + BOLD_OPEN + "([^" + BOLD_OPEN + BOLD_CLOSE + "]+)" + BOLD_CLOSE)
_OPTION_RUN = re.compile(
    BOLD_OPEN + "[^" + BOLD_OPEN + BOLD_CLOSE + "]+" + BOLD_CLOSE
    + r"(?:\s*(?:,|，|、|/|或者|或|和|及|\bor\b|\band\b|,\s*or\b|,\s*and\b)\s*"
    + BOLD_OPEN + "[^" + BOLD_OPEN + BOLD_CLOSE + "]+" + BOLD_CLOSE + ")+",
    re.I,
)
_BOLD_TEXT = re.compile(BOLD_OPEN + "([^" + BOLD_OPEN + BOLD_CLOSE + "]+)" + BOLD_CLOSE)
_YES = {"yes", "y", "true", "required", "mandatory", "是", "必选", "必填", "✓", "✔"}
_NO = {"no", "n", "false", "optional", "否", "可选", "非必选", "非必填"}


def _emph(match: re.Match) -> str:
    """The emphasised text a pattern ending in ``_EMPH`` caught (its named groups are not it)."""
    named = set(match.re.groupindex.values())
    return plain(next(group for index, group in enumerate(match.groups(), 1) if group is not None and index not in named))


def value_from_text(marked: str) -> str | None:
    """The concrete value a cell or sentence gives, if any (see module docs)."""
    if _BLANK.search(marked):
        return ""
    for pattern in (_DEFAULT, _ENTER, _SELECT, _EXAMPLE):
        match = pattern.search(marked)
        if match:
            return _emph(match)
    text = plain(marked)
    match = _VERB_PLAIN.match(text)
    if match:
        return match[1]
    return None


#: Where a description's sentences end (a list item inside a cell starts a new one too).
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|[。；！？]\s*|\n+|\s{2,}(?=[-+*]\s)")
#: Sentences that describe a condition or a possibility, not what to do: "If you select **X**, ...".
_NOT_AN_ORDER = re.compile(
    r"^(?:[-+*]\s+)?(?:if|when|whether|after|before|once|unless|otherwise|only\s+if|to\s+\w+|for\s+(?:more|example)|"
    r"如果|若|当|如需|如要|为了|如您|假如)"
    r"|\b(?:can|may|might|could|cannot|can't|must\s+not|do\s+not|don't|never)\b|可以|可选择|不要|请勿|不能",
    re.I,
)
#: An order to enter or choose, at the start of a sentence ("Optional." and "In this
#: example," may come first): the value is the emphasised text right after it.
_ORDER = re.compile(
    r"^(?:(?:optional|required|(?P<example>in\s+this\s+(?:example|topic)|本示例中?)|可选|必选)\s*[.,:，：。]?\s*)?"
    r"(?P<verb>select|choose|pick|enter|type|input|specify|use|keep|set\s+(?:it|this(?:\s+parameter)?|the\s+(?:value|parameter))\s+to|"
    r"set\s+to|选择|输入|填写|填入|设置为|设为|保持|使用|选中)\s*(?:the\s+|an?\s+)?(?:option\s+|value\s+)?" + _EMPH,
    re.I,
)
#: A run of two or more emphasised choices ("Select **Standard** or **IA**."): options, no value.
_CHOICE_AFTER = re.compile(r"^\s*(?:,|，|、|/|或者|或|和|\bor\b|\band\b)\s*[" + BOLD_OPEN + EM_OPEN + CODE_OPEN + "]", re.I)
#: "Default: **X**", "The default value is X", "默认为X", "Only **X** is supported", "仅支持X".
_STATED = re.compile(
    r"^(?:default(?:\s+value)?\s*[:：]\s*|the\s+default(?:\s+value)?\s+is\s+|by\s+default,?\s+|默认(?:值)?(?:为|是|[:：])\s*"
    r"|only\s+|仅支持\s*|只支持\s*)" + _EMPH + r"(?:\s+(?:is|are)\s+(?:supported|available|selected|used))?",
    re.I,
)
#: An order to turn a switch or check box on or off, naming no value: "Turn on the switch.", "打开开关", "不选中".
_SWITCH = re.compile(
    r"^(?:(?P<off>turn\s+off|disable|clear(?:\s+the\s+check\s*box)?|do\s+not\s+select|deselect|uncheck|不选中|取消勾选|取消选中|关闭开关|关闭|不开启|不勾选)"
    r"|turn\s+on|enable|select\s+the\s+check\s*box|check\s+the\s+box|打开开关|开启|选中|勾选)"
    r"(?:\s+(?:the\s+)?(?:switch|check\s*box|option|it))?\s*(?:[.。，,;；]|$)",
    re.I,
)
#: A number to set, unit after it ("Set the value to 5 Mbit/s.", "Enter 20."): the number.
_PLAIN_NUMBER = re.compile(
    r"^(?:(?:optional|可选)\s*[.,:，：。]?\s*)?(?:set\s+(?:it|this(?:\s+parameter)?|the\s+(?:value|parameter))\s+to|enter|specify|输入|设置为|设为)"
    r"\s*(\d+(?:\.\d+)?)(?:\s*[A-Za-z%]+(?:/[A-Za-z]+)?)?\s*[.。]?$",
    re.I,
)
#: A path on the reader's own machine: an example of where a value comes from, never the value.
_LOCAL_PATH = re.compile(r"^(?:~[/\\]|\.{1,2}[/\\]|[A-Za-z]:\\|/(?:home|users|root|etc|tmp|var)/)", re.I)
#: An example the description gives: "Enter a name, for example `web-a1`.", "例如`test`".
_FOR_EXAMPLE = re.compile(r"(?:\b(?:for\s+example|such\s+as|e\.g\.)|例如|比如|如)[,:，：\s]*" + _EMPH, re.I)
#: An example value in a field's plain description: "Example: 192.168.0.100.", "例如192.168.0.100、..."
#: (in backticks, or with a digit or a dot in it: not a word such as "set").
_EXAMPLE_IN_TEXT = re.compile(r"(?:\b(?:for\s+)?examples?\b|\be\.g\.|例如|示例|比如)\s*[:：,，]?\s*"
                              r"(?:`([^`\s]+)`|((?=[\w./:\-]*[\d.])[\w./:\-]*\w))", re.I)


def example_in_text(description: str) -> str | None:
    """The example value a field's plain description gives, which is no value to check
    (``Field.description``: "You can enter a single IP address. Example: 192.168.0.100."),
    else None."""
    found = _EXAMPLE_IN_TEXT.search(description)
    return (found[1] or found[2]) if found else None


def _clauses(marked: str) -> list[str]:
    """A description's sentences; a Chinese sentence's clauses too ("输入端口，本示例输入`2231`"),
    except those after a condition ("如果…，选择**X**" stays one conditional sentence)."""
    out = []
    for sentence in _SENTENCE_END.split(marked):
        sentence = sentence.strip()
        if not sentence:
            continue
        if "，" in sentence and not _NOT_AN_ORDER.match(sentence):
            out.extend(clause.strip() for clause in sentence.split("，") if clause.strip())
        else:
            out.append(sentence)
    return out


def value_from_description(marked: str) -> tuple[str | None, bool]:
    """The value a description cell (or a field bullet) tells the reader to use, and
    whether it is only an example: ``(value, example)``.

    Alibaba's ``Parameter | Description`` tables carry the value in the
    description: "Select **IA**.", "Enter `docs_db`.", "Set it to **5**.", "Default:
    **40**.", "Only **Pay-As-You-Go** is supported.", "选择**TCP**。". Only an order
    counts: a sentence about a condition or a possibility ("If you select **X**",
    "You can choose **Y**") names no value, nor does a list of choices ("Select
    **Standard** or **IA**."). "Enter a name, for example `web-a1`." gives an example
    (``example=True``): the doc's value for a name the reader may choose.
    """
    if _BLANK.search(marked):
        return "", False
    found: str | None = None
    found_example = False
    example: str | None = None
    for sentence in _clauses(marked):
        if found is None and (switch := _SWITCH.match(plain(sentence))):
            found = "off" if switch["off"] else "on"  # "Turn on the switch.", "不选中。"
            continue
        if found is None and not _NOT_AN_ORDER.search(sentence):
            match = _ORDER.match(sentence) or _STATED.match(sentence) or _DEFAULT.match(sentence)
            if match is not None and not _CHOICE_AFTER.match(sentence[match.end():]):
                found = _emph(match)
                # "In this example, enter `web-01`" (本示例输入): a name of the doc's, the reader's own to pick
                typed = match.re is _ORDER and match["example"] and re.match(r"enter|type|input|输入|填写|填入", match["verb"], re.I)
                found_example = bool(typed)
            elif number := _PLAIN_NUMBER.match(plain(sentence)):
                found = number[1]
        if example is None:
            match = _FOR_EXAMPLE.search(sentence)
            if match is not None and not _CHOICE_AFTER.match(sentence[match.end():]) and not _LOCAL_PATH.match(_emph(match)):
                example = _emph(match)  # not "paste the contents of a file (for example `~/.ssh/id_rsa.pub`)"
        match = _EXAMPLE.search(sentence)
        if match is not None:  # "In this example, **X** is selected": the doc's own choice
            return _emph(match), False
    if found is not None:
        return found, found_example
    if example is not None:
        return example, True
    text = plain(marked)
    match = _VERB_PLAIN.match(text)
    if match:
        return match[1], False
    return None, False


def bare_value(marked: str) -> str | None:
    """A short cell that is itself a value ("Pay-As-You-Go", "2 Mbps")."""
    text = plain(marked)
    if not text or len(text) > 60 or "\n" in marked.strip() or _SENTENCE_WORDS.search(text):
        return None
    if text.lower() in ("n/a", "none", "-", "—"):
        return None
    return text


def options_from_text(marked: str) -> list[str]:
    found = [plain(text) for text in _BULLET_OPTION.findall(marked)]
    if not found:
        for run in _OPTION_RUN.finditer(marked):
            found.extend(plain(text) for text in _BOLD_TEXT.findall(run[0]))
    return [option for option in dict.fromkeys(found) if option and not NOTE_WORDS.match(option)]


def _required(text: str) -> bool | None:
    word = text.strip().lower().rstrip(".")
    if word in _YES:
        return True
    if word in _NO:
        return False
    return None


#: A cell that is only a list of bold choices ("- **Set Now** - **Set Later**").
_ONLY_BOLD_BULLETS = re.compile(r"(?:\s*[-+*]\s+" + BOLD_OPEN + "[^" + BOLD_OPEN + BOLD_CLOSE + "]+" + BOLD_CLOSE + r"\s*){2,}")
#: An ID masked in a doc's example ("sg-bp1bhjjsoiyx44hd****", "vpc-bp1opxu1zkhn00g\*\*\*\*").
_MASKED = re.compile(r"\*{3,}|\w\*{2,}$")
#: A header that names a group of settings ("Listener configuration", "SSL证书配置"):
#: its rows are fields, like a "Parameter" column's.
_SETTINGS_HEADER = re.compile(r"(?:\b(?:configurations?|settings|parameters|options|fields)|配置|设置|参数)$", re.I)


def column_roles(header: list[str]) -> list[str | None]:
    roles = []
    for cell in header:
        word = re.sub(r"\s+", " ", cell).strip().lower().rstrip(":：")
        roles.append(_ROLE_OF.get(word) or ("name" if word and _SETTINGS_HEADER.search(word) else None))
    return roles


def fields_from_table(table: RawTable, render: Callable[[str], str]) -> list[Field]:
    """Fields of a parameter table; [] when the table is not one.

    `render` turns a cell's raw Markdown into marked text.
    """
    header = [plain(render(cell)) for cell in table.header]
    roles = column_roles(header)
    if not any(roles):
        return []
    width = len(header)
    name_col = roles.index("name") if "name" in roles else 0
    if roles[name_col] not in (None, "name"):
        name_col = 0
    group_cols = list(range(name_col))
    value_col = roles.index("value") if "value" in roles else None
    desc_col = roles.index("description") if "description" in roles else None
    required_col = roles.index("required") if "required" in roles else None
    if value_col is None and desc_col is None and required_col is None and "name" not in roles:
        return []
    if roles[name_col] is None and value_col is None and required_col is None:
        # "| Billing method | Description |": the rows are the choices of one setting,
        # described for the reader, not fields to fill
        return []

    fields: list[Field] = []
    group: str | None = None
    for row in table.rows:
        cells = row.cells[:width]
        if len(row.cells) > width:
            cells[-1] = " | ".join([cells[-1], *row.cells[width:]])
        filled = [cell for cell in cells if cell.strip()]
        if not filled:
            continue
        if len(filled) == 1 and cells[0].strip() and width > 1:
            group = plain(render(cells[0])) or group
            continue
        if len(cells) < width:
            cells = [""] * (width - len(cells)) + cells
            row_group = None
        elif group_cols:
            row_group = plain(render(cells[group_cols[-1]])) or None
        else:
            row_group = None
        name = plain(render(cells[name_col]))
        if not name:
            continue
        listed: list[str] = []
        if row_group and _ONLY_BOLD_BULLETS.fullmatch(render(cells[name_col])):
            # "| **Set Password** | - **Set Now** - **Set Later** | ...": the group cell names
            # the field, the bullets are its choices
            name, listed = row_group, options_from_text(render(cells[name_col]))
        elif row_group:
            group = row_group
        value_marked = render(cells[value_col]) if value_col is not None else ""
        desc_marked = render(cells[desc_col]) if desc_col is not None else ""
        value, example = None, False
        if value_col is not None:
            value = value_from_text(value_marked)
            if value is None:
                value = bare_value(value_marked)
        if value is not None and _MASKED.search(value):
            value = None  # "[Default]sg-bp1bhjjsoiyx44hd****": the writer's own resource, masked; not the reader's
        if value is None and desc_marked:
            value, example = value_from_description(desc_marked)
        description = plain(desc_marked) if desc_col is not None else plain(value_marked)
        options = listed or options_from_text(desc_marked) or options_from_text(value_marked)
        required = _required(plain(render(cells[required_col]))) if required_col is not None else None
        fields.append(
            Field(
                name=name,
                line=row.line,
                value=value,
                description=description,
                required=required,
                group=group,
                options=options,
                example=example,
            )
        )
    return fields


def fields_from_sideways_table(table: RawTable, render: Callable[[str], str]) -> list[Field]:
    """A table the step announces ("add rules as described in the following table") whose
    header names the fields and whose one row holds their values: "| Action | Port range |
    Authorized object |" over "| Allow | - SSH 22 - HTTP 80 | 0.0.0.0/0 |". A cell that
    lists choices gives the field those options and no single value."""
    if len(table.rows) != 1 or len(table.header) < 2:
        return []
    names = [plain(render(cell)) for cell in table.header]
    if not all(names) or any(len(name.split()) > 4 for name in names):
        return []
    row = table.rows[0]
    fields = []
    for name, cell in zip(names, row.cells):
        marked = render(cell)
        listed = [plain(item) for item in re.findall(r"(?:^|\s)[-+*]\s+(.+?)(?=\s+[-+*]\s|$)", marked, re.S)]
        value = None if len(listed) > 1 else (value_from_text(marked) or bare_value(marked))
        fields.append(Field(name=name, line=row.line, value=value, options=listed if len(listed) > 1 else []))
    return fields


_BULLET_FIELD = re.compile("^" + BOLD_OPEN + "([^" + BOLD_OPEN + BOLD_CLOSE + "]+)" + BOLD_CLOSE + r"\s*[:：]\s*(.*)$", re.S)


def field_from_bullet(marked: str, line: int) -> Field | None:
    """``**Billing Method**: Select a billing method`` -> a Field."""
    match = _BULLET_FIELD.match(marked.strip())
    if not match:
        return None
    name = plain(match[1])
    if not name or NOTE_WORDS.match(name):
        return None
    rest = match[2]
    value, example = value_from_description(rest)
    return Field(
        name=name,
        line=line,
        value=value,
        description=plain(rest),
        options=options_from_text(rest),
        example=example,
    )
