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

from docverify.spec.inline import BOLD_CLOSE, BOLD_OPEN, CODE_CLOSE, CODE_OPEN, EM_CLOSE, EM_OPEN, plain
from docverify.spec.labels import NOTE_WORDS
from docverify.spec.model import Field
from docverify.spec.tables import RawTable

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
    return plain(next(group for group in match.groups() if group is not None))


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


def column_roles(header: list[str]) -> list[str | None]:
    return [_ROLE_OF.get(re.sub(r"\s+", " ", cell).strip().lower().rstrip(":：")) for cell in header]


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
        elif group_cols:
            group = plain(render(cells[group_cols[-1]])) or group
        name = plain(render(cells[name_col]))
        if not name:
            continue
        value_marked = render(cells[value_col]) if value_col is not None else ""
        desc_marked = render(cells[desc_col]) if desc_col is not None else ""
        value = None
        if value_col is not None:
            value = value_from_text(value_marked)
            if value is None:
                value = bare_value(value_marked)
        if value is None and desc_marked:
            match = _EXAMPLE.search(desc_marked)
            value = _emph(match) if match else None
        description = plain(desc_marked) if desc_col is not None else plain(value_marked)
        options = options_from_text(desc_marked) or options_from_text(value_marked)
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
            )
        )
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
    return Field(
        name=name,
        line=line,
        value=value_from_text(rest),
        description=plain(rest),
        options=options_from_text(rest),
    )
