"""Rows of a console's lists: which one an existing resource is, and its links.

A doc step that acts on an existing resource names it, not its row: "Click the
name of the bucket.", "Find the instance and click **Manage** in the **Actions**
column.", "单击目标实例ID。". The parser marks such actions with the resource noun
(:attr:`docverify.parse.model.Action.resource`); here that noun becomes a row of the
list on the page:

1. a row that shows a value this procedure typed itself (it created the resource
   a few steps earlier);
2. else a row that shows a name or ID the run knows for that kind of resource
   (the task context: what provisioning created, ``ecs_instance_1_id`` for "the
   instance");
3. else a row that shows any name or ID the run knows;
4. else the only row, or the first one (the doc leaves the choice to the reader).

A list without data rows (only its header, or "No data") gives no row: the
resource does not exist, which is the environment's problem, not the doc's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from docverify.execute.locate import Element, within

#: Resource nouns of Chinese docs, as the task context's keys name them.
NOUNS_ZH = {
    "实例": "instance", "存储空间": "bucket", "用户组": "group", "用户": "user", "安全组": "security group",
    "专有网络": "vpc", "交换机": "vswitch", "弹性公网ip": "eip", "网关": "gateway", "负载均衡": "slb",
    "监听": "listener", "密钥对": "key pair", "密钥": "key", "跟踪": "trail", "数据库": "database",
    "账号": "account", "角色": "role", "策略": "policy", "镜像": "image", "快照": "snapshot", "云盘": "disk",
    "网卡": "network interface", "路由表": "route table", "服务器组": "server group", "条目": "entry",
}
#: An ID as consoles show them: "i-bp1...", "vpc-bp1...", "sg-...", or a long number.
ID_LIKE = re.compile(r"^(?:[a-z][a-z0-9]{0,9}-[a-z0-9]{8,}|\d{8,})$")
#: A row that only says the list is empty.
EMPTY_ROW = re.compile(r"^(?:no data(?: available)?|no records?(?: found)?|no items?|no results?(?: found)?|"
                       r"暂无数据|没有数据|无数据)\.?$", re.I)


def row_text(elements: Sequence[Element], row: Element) -> str:
    """What a row shows: its name, else its cells' and links' names (a snapshot
    with refs leaves rows unnamed)."""
    if row.name.strip():
        return row.name
    return " ".join(e.name for e in elements if within(e, row) and e.name)


def data_rows(elements: Sequence[Element]) -> list[tuple[Element, str]]:
    """The rows of the page's lists that hold a resource, with what each shows: not
    a header row, not an empty-list row, and with a ref to act in."""
    out = []
    for row in (e for e in elements if e.role == "row" and e.ref):
        if any(e.role == "columnheader" for e in elements if within(e, row)):
            continue
        text = row_text(elements, row).strip()
        if not text or EMPTY_ROW.match(text):
            continue
        out.append((row, text))
    return out


def noun_words(noun: str) -> set[str]:
    """The words of a resource noun, Chinese nouns in English ("RAM用户" -> {"ram", "user"})."""
    text = noun.lower()
    for chinese, english in NOUNS_ZH.items():
        text = text.replace(chinese, f" {english} ")
    return {word for word in re.split(r"[^a-z0-9]+", text) if word and word not in ("the", "a", "an", "target")}


def known_values(context: Mapping[str, str], noun: str) -> tuple[list[str], list[str]]:
    """Names and IDs the run knows (task context keys ending in ``_id`` or
    ``_name``): those of the noun's kind first, then all."""
    words = noun_words(noun)
    kind, anything = [], []
    for key, value in context.items():
        if not value or not key.endswith(("_id", "_name")) or len(value) < 3:
            continue
        anything.append(value)
        if words & set(key.lower().split("_")):
            kind.append(value)
    return kind, anything


def resource_row(elements: Sequence[Element], noun: str, context: Mapping[str, str],
                 typed: Iterable[str] = ()) -> Element | None:
    """The row of the resource ``noun`` names (see the module docs), or None when
    the page lists none."""
    rows = data_rows(elements)
    if not rows:
        return None
    kind, anything = known_values(context, noun)
    for values in (list(typed), kind, anything):
        showing = [row for row, text in rows if any(value and value in text for value in values)]
        if showing:
            return showing[0]
    return rows[0][0]


def resource_link(elements: Sequence[Element], row: Element, part: str | None) -> Element | None:
    """The link of ``row`` that opens the resource: its ID's ("id") or its name's
    ("name"); the first link when the row shows only one."""
    links = [e for e in elements if within(e, row) and e.role == "link" and e.ref and e.name]
    if not links:
        return None
    ids = [e for e in links if ID_LIKE.match(e.name.strip())]
    names = [e for e in links if e not in ids]
    preferred = ids if part == "id" else names
    return (preferred or links)[0]


#: A description that orders a resource itself: "Enter the EIP ...", "Select the vSwitch ...", "选择目标交换机".
ORDERS_A_RESOURCE = re.compile(r"^(?:enter|select|specify|choose|type|输入|选择|填写|指定)\s*(?:the\s+|an?\s+|your\s+|目标|已有的?)?"
                               r"(?:existing\s+)?(?P<rest>.+)", re.I)
#: What a Chinese description names of a resource after its 的: an address, an ID, a name.
ZH_ATTRIBUTE = re.compile(r"(?:私网|公网|内网)?(?:IP)?地址|IP|ID|名称|名字", re.I)
#: A task-context key of a provisioned resource: ``<META type>_<n>_<attribute>``.
CONTEXT_KEY = re.compile(r"^(?P<type>[a-z][a-z0-9_]*?)_(?P<n>\d+)_(?P<attr>id|name|ip_address|ip|private_ip)$")


def known_for_field(context: Mapping[str, str], name: str, description: str) -> str | None:
    """The value of an existing resource a field asks for ("**Select Public IP Address**:
    Enter the EIP that is associated with the NAT gateway." -> the provisioned EIP's
    address), from the task context; None when the field names no resource the run
    knows. The field's own words pick the attribute: an IP address, an ID, else a name."""
    order_of = ORDERS_A_RESOURCE.match(description.strip())
    if order_of is None:
        return None  # "Enter a description for the VPC." asks for a description, not the VPC
    text = order_of["rest"]
    if re.search(r"[\u4e00-\u9fff]", text):
        # "已绑定到该NAT网关的弹性公网IP地址": the head noun is after the last 的; "ECS实例的私网IP地址":
        # an attribute after it names the resource before it
        parts = [part for part in re.split(r"的", text.rstrip("。.")) if part]
        head = parts[-1] if parts else text
        if len(parts) > 1 and ZH_ATTRIBUTE.fullmatch(head.strip()):
            head = parts[-2]
        words = noun_words(head)
    else:
        rest = text.split()
        if len(rest) > 2 and rest[0].lower() in ("id", "name", "ip", "address") and rest[1].lower() == "of":
            rest = rest[2:]  # "the ID of the vSwitch": the vSwitch's
            rest = rest[1:] if rest[0].lower() in ("the", "a", "an", "your") else rest
        words = noun_words(" ".join(rest[:2]))
    own = noun_words(name)
    private = bool(re.search(r"private|私网|内网", f"{name} {description}", re.I))
    found: dict[str, dict[str, str]] = {}
    for key, value in context.items():
        match = CONTEXT_KEY.match(key)
        if match and value and words & set(match["type"].split("_")):
            found.setdefault(f"{match['type']}_{match['n']}", {})[match["attr"]] = value
    if not found:
        return None
    attributes = next(iter(found.values()))
    if own & {"ip", "address"} or "地址" in name:
        order = ("private_ip", "ip_address", "ip") if private else ("ip_address", "ip", "private_ip")
    elif "id" in own:
        order = ("id", "name")
    else:
        order = ("name", "id")
    return next((attributes[attr] for attr in order if attr in attributes), None)
