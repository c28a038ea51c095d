"""The sandbox console's catalog: every product, page, field and label, as data.

Each product is one YAML file under ``catalog/products/``. Its keys:

- ``key``, ``title``, ``service_name`` (ActionTrail serviceName), ``api_version``
  (the RPC ``Version``), ``event_source``, ``user_agent`` (of console events),
  ``regional`` (``false`` for global services such as RAM);
- ``addresses``: the real console's addresses for the product (no scheme:
  ``vpc.console.aliyun.com/eip``) -> the path under ``/console/<key>/`` that
  stands for it (``""``: the product's home): a doc's link opens the sandbox page;
- ``groups``: left-navigation group key -> label; ``nav``: item key ->
  ``{label, group?, resource? | view?}``;
- ``resources``: resource-type key -> ``{title, singular, id_param, name_param,
  id_prefix, resource_type, list_key, not_found, statuses, columns, fields,
  create, ops, actions, detail, parent?}``. ``fields`` declare labels, types,
  validation and defaults once; the create flow (``panel``, ``page`` or
  ``wizard`` with ``steps``), the action dialogs and the API validation all use
  them. ``ops`` map RPC action names to generic operation kinds (create, list,
  get, update, transition, delete) implemented once in ``operations.py``.
  ``extra_fields`` are fields of dialogs only (no attribute of the resource).

A create flow may offer ``variants``: other panels that make the same resource,
each opened by its own ``button`` next to the create button (Quick Add next to
Add Rule), with its ``title``, ``fields``, ``submit`` and optionally its own
``op`` (else the create flow's). ``each: {field, params}`` runs the operation once
per value checked in a ``checkboxes`` field, the value's ``:``-separated parts
being the named parameters (``tcp:22/22`` -> ``IpProtocol=tcp``,
``PortRange=22/22``): one API call and one audit event per value. ``op_by:
{Field: {value: Op}}`` picks another operation by a field's value (an outbound
security group rule is ``AuthorizeSecurityGroupEgress``). The keys operations
understand beyond the kinds (events, links, cascades) are listed in
``operations.py``.

A row action of ``kind: link`` goes to the row's detail page, or to its ``href``; with
``opens: <child type>`` it opens that child's create wizard for the row (a load
balancer's **Create Listener**). A wizard's ``created: {title, text, link}`` is the
message shown over the list after it creates (the ECS wizard's **Created**, with a
**Console** link).

A release (``releases/<date>.yaml``) is a list of ``changes`` applied on top
of the base data, in date order. Each change names its ``product``, ``page``
and ``kind`` and edits the tree with ``set``/``delete``/``insert_after``/
``append``/``remove`` at ``/``-separated paths. The changelog between two
releases is computed from these entries, so it is the drift ground truth.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
PRODUCTS_DIR = HERE / "products"
RELEASES_DIR = HERE.parent / "releases"

REGIONS: dict[str, str] = {
    "cn-hangzhou": "China (Hangzhou)",
    "cn-shanghai": "China (Shanghai)",
    "cn-beijing": "China (Beijing)",
    "cn-shenzhen": "China (Shenzhen)",
    "cn-huhehaote": "China (Hohhot)",
    "ap-southeast-1": "Singapore",
    "us-west-1": "US (Silicon Valley)",
    "eu-central-1": "Germany (Frankfurt)",
}
#: the two-to-three characters Alibaba puts after the id prefix, per region
REGION_ID_CODES: dict[str, str] = {
    "cn-hangzhou": "bp1",
    "cn-shanghai": "uf6",
    "cn-beijing": "2ze",
    "cn-shenzhen": "wz9",
    "cn-huhehaote": "hp3",
    "ap-southeast-1": "t4n",
    "us-west-1": "rj9",
    "eu-central-1": "gw8",
}
ZONE_LETTERS = ("h", "i", "j", "k")

PRODUCT_ORDER = ("ecs", "vpc", "eip", "nat", "oss", "ram", "slb", "alb", "rds", "mongodb", "kms", "actiontrail")


def zones(region: str) -> dict[str, str]:
    """Zone id -> label for a region, e.g. ``cn-hangzhou-h`` -> ``Zone H``."""
    return {f"{region}-{letter}": f"Zone {letter.upper()}" for letter in ZONE_LETTERS}


@dataclass(frozen=True)
class Release:
    """One UI release: its date (``YYYY-MM-DD``), name and overlay changes."""

    date: str
    name: str
    title: str
    changes: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Change:
    """One changelog row: what a release changed on which page."""

    release: str
    product: str
    page: str
    kind: str
    old: str | None
    new: str | None
    description: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "release": self.release,
            "product": self.product,
            "page": self.page,
            "kind": self.kind,
            "old": self.old,
            "new": self.new,
            "description": self.description,
        }


@dataclass
class Catalog:
    """The console as of one release: products by key, plus lookup tables."""

    release: Release
    products: dict[str, dict[str, Any]]
    ops: dict[tuple[str, str], tuple[str, str, dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for pkey, product in self.products.items():
            for rkey, res in product.get("resources", {}).items():
                all_ops = dict(res.get("ops", {}))
                all_ops.update(res.get("extra_ops", {}))
                for op_name, spec in all_ops.items():
                    self.ops[(product["api_version"], op_name)] = (pkey, rkey, spec)

    def product(self, key: str) -> dict[str, Any]:
        return self.products[key]

    def resource(self, product: str, rtype: str) -> dict[str, Any]:
        return self.products[product]["resources"][rtype]

    def find_op(self, version: str, action: str) -> tuple[str, str, dict[str, Any]] | None:
        return self.ops.get((version, action))

    def versions(self) -> set[str]:
        return {p["api_version"] for p in self.products.values()}

    def op_in_product(self, product: str, action: str) -> tuple[str, dict[str, Any]] | None:
        """The resource type and spec of ``action`` within a product."""
        for rkey, res in self.products[product].get("resources", {}).items():
            spec = res.get("ops", {}).get(action) or res.get("extra_ops", {}).get(action)
            if spec is not None:
                return rkey, spec
        return None

    def field_spec(self, product: str, rtype: str, name: str) -> dict[str, Any] | None:
        res = self.resource(product, rtype)
        spec = res.get("fields", {}).get(name)
        if spec is None:
            spec = res.get("extra_fields", {}).get(name)
        return spec

    def labels(self, product: str) -> set[str]:
        """Every label the product's pages render (navigation, titles, buttons,
        fields, options, columns, actions, dialogs, steps, tabs, sections)."""
        out: set[str] = set()
        p = self.products[product]
        out.update({p["title"], p.get("console", "")})
        out.update(p.get("groups", {}).values())
        for item in p.get("nav", {}).values():
            out.add(item["label"])
            if item.get("title"):
                out.add(item["title"])
        eq = p.get("event_query")
        if eq:
            out.update(eq["attributes"].values())
            out.update(eq["columns"])
            out.update({eq["detail_button"], eq["search"]})
        for res in p.get("resources", {}).values():
            _collect_labels(res, out)
        out.update(COMMON_LABELS)
        if p.get("regional", True):
            out.update(REGIONS.values())
        out.discard("")
        return out


#: labels every page renders (top bar, tables, dialogs, statuses)
COMMON_LABELS = {
    "OK", "Cancel", "Close", "Actions", "More", "Region", "Search", "Next", "Previous",
    "Details", "Manage", "Tags", "Resource Group", "Description", "Name", "Status",
    "Console", "Expenses", "User Center", "Log On", "Running", "Stopped", "Created",
}


def _collect_labels(res: dict[str, Any], out: set[str]) -> None:
    out.update({res.get("title", ""), res.get("singular", "")})
    out.update(res.get("tabs", []))
    out.update(res.get("statuses", {}).values())
    for col in res.get("columns", {}).values():
        out.add(col["label"])
    for fields in (res.get("fields", {}), res.get("extra_fields", {})):
        for spec in fields.values():
            _field_labels(spec, out)
    create = res.get("create")
    if create:
        out.update({create.get("button", ""), create.get("title", ""), create.get("submit", ""),
                    create.get("terms", ""), create.get("close", ""), create.get("done", "")})
        out.update(create.get("extra_buttons", []))
        for variant in (create.get("variants") or {}).values():
            out.update({variant.get("button", ""), variant.get("title", ""), variant.get("submit", "")})
        out.update(create.get("reveal_buttons", []))
        out.update(create.get("sections", {}).keys())
        steps = list(create.get("steps", {}).values())
        for i, step in enumerate(steps):
            out.update({step["title"], step.get("short", ""), step.get("summary", ""), step.get("advanced", "")})
            out.update(step.get("buttons", []))
            out.update(step.get("links", []))
            if i + 1 < len(steps):
                out.add(next_label(step, steps[i + 1]))
        cp = create.get("confirm_page")
        if cp:
            out.update({cp.get("title", ""), cp.get("ok", ""), cp.get("done", "")})
    for action in res.get("actions", {}).values():
        out.add(action["label"])
        out.update(action.get("menu", []))
        out.update(action.get("buttons", []))
        if action.get("title"):
            out.add(action["title"])
        if action.get("section"):
            out.add(action["section"])
        for box in ("confirm", "form"):
            dialog = action.get(box)
            if dialog:
                out.update({dialog.get("title", ""), dialog.get("ok", ""), dialog.get("done", ""),
                            dialog.get("confirm_ok", "")})
                fields = dialog.get("fields", {})
                if isinstance(fields, dict):
                    for spec in fields.values():
                        _field_labels(spec, out)
    detail = res.get("detail", {})
    out.update(detail.get("tabs", []))
    out.update(detail.get("sections", {}).keys())


def _field_labels(spec: dict[str, Any], out: set[str]) -> None:
    out.add(spec["label"])
    out.update(str(v) for v in spec.get("options", {}).values())
    if spec.get("checkbox_label"):
        out.add(spec["checkbox_label"])
    if spec.get("empty"):
        out.add(spec["empty"])
    if spec.get("advanced"):
        out.add(spec["advanced"])


def next_label(step: dict[str, Any], following: dict[str, Any]) -> str:
    """The label of a wizard step's forward button, e.g. ``Next: Networking``."""
    return step.get("next") or f"Next: {following['short']}"


def read_yaml(path: Path) -> Any:
    """A catalog file, parsed by libyaml where PyYAML has it (ten times faster than the
    pure-Python parser: the 12 product files take 0.1 s, not 1.4 s)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@functools.cache
def base_products() -> dict[str, dict[str, Any]]:
    products = {}
    for key in PRODUCT_ORDER:
        path = PRODUCTS_DIR / f"{key}.yaml"
        data = read_yaml(path)
        products[data["key"]] = data
    return products


@functools.cache
def releases() -> tuple[Release, ...]:
    """Every shipped release, oldest first."""
    out = []
    for path in sorted(RELEASES_DIR.glob("*.yaml")):
        data = read_yaml(path)
        out.append(Release(str(data["date"]), data["name"], data.get("title", ""),
                           tuple(data.get("changes") or ())))
    return tuple(sorted(out, key=lambda r: r.date))


def resolve_release(date: str | None) -> Release:
    """The latest release on or before ``date`` (``YYYY-MM-DD``, ``YYYY-MM`` or a
    release name); the newest when ``date`` is None."""
    from docverify.errors import UsageError

    all_releases = releases()
    if not date:
        return all_releases[-1]
    for rel in all_releases:
        if rel.name == date:
            return rel
    key = date if len(date) > 7 else f"{date}-31"
    eligible = [r for r in all_releases if r.date <= key]
    if not eligible:
        names = ", ".join(f"{r.name} ({r.date})" for r in all_releases)
        raise UsageError(f"no sandbox release on or before {date!r}", hint=f"releases: {names}")
    return eligible[-1]


@functools.cache
def load(date: str | None = None) -> Catalog:
    """The catalog as of a release date (see :func:`resolve_release`)."""
    release = resolve_release(date)
    products = copy.deepcopy(base_products())
    for rel in releases():
        if rel.date > release.date:
            break
        for change in rel.changes:
            apply_change(products, change)
    return Catalog(release, products)


# ----------------------------------------------------------------- overlays


def _split(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def get_path(tree: dict[str, Any], path: str) -> Any:
    node: Any = tree
    for part in _split(path):
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node[part]
    return node


def _parent(tree: dict[str, Any], path: str) -> tuple[Any, str]:
    parts = _split(path)
    node: Any = tree
    for part in parts[:-1]:
        node = node.setdefault(part, {}) if isinstance(node, dict) else node[int(part)]
    return node, parts[-1]


def apply_change(products: dict[str, Any], change: dict[str, Any]) -> None:
    """Apply one release change to the product tree in place."""
    for path, value in (change.get("set") or {}).items():
        node, key = _parent(products, path)
        node[key] = copy.deepcopy(value)
    for path in change.get("delete") or ():
        node, key = _parent(products, path)
        if isinstance(node, list):
            node.remove(key)
        else:
            node.pop(key, None)
    for path, value in (change.get("append") or {}).items():
        node, key = _parent(products, path)
        node.setdefault(key, []).append(copy.deepcopy(value))
    for path, value in (change.get("remove") or {}).items():
        lst = get_path(products, path)
        if value in lst:
            lst.remove(value)
    ins = change.get("insert_after")
    if ins:
        node = get_path(products, ins["path"])
        items = list(node.items())
        pos = [k for k, _ in items].index(ins["after"]) + 1
        items.insert(pos, (ins["key"], copy.deepcopy(ins["value"])))
        node.clear()
        node.update(items)


def _derive(products: dict[str, Any], change: dict[str, Any]) -> tuple[str | None, str | None]:
    old = change.get("old")
    new = change.get("new")
    if old is None and new is None and change.get("set"):
        path, value = next(iter(change["set"].items()))
        try:
            before = get_path(products, path)
        except (KeyError, IndexError, ValueError):
            before = None
        old = before if isinstance(before, str) else None
        new = value if isinstance(value, str) else (value.get("label") if isinstance(value, dict) else None)
    return old, new


def changelog(from_date: str, to_date: str) -> list[Change]:
    """Every change a console at ``to_date`` shows compared with ``from_date``."""
    start = resolve_release(from_date)
    end = resolve_release(to_date)
    products = copy.deepcopy(base_products())
    rows: list[Change] = []
    for rel in releases():
        if rel.date > end.date:
            break
        for change in rel.changes:
            if rel.date > start.date:
                old, new = _derive(products, change)
                rows.append(Change(rel.name, change["product"], change["page"], change["kind"],
                                   old, new, change.get("description", "")))
            apply_change(products, change)
    return rows
