"""``docverify explore``: self-exploration tasks written from the sandbox console's catalog.

For every resource type of the catalog (``docverify_sandbox.catalog``) and every
write operation its console offers, one procedure in the real docs' style: log on,
the left-side navigation pane, the create button or the row's action (through its
menu), the dialog's or wizard's fields as a parameter table, the submit button.
Each procedure's ``docverify:`` annotation carries

- ``expect``: the operation's audit event (the product's ActionTrail service, the
  operation's event name, the resource: the name the procedure types, or the
  provisioned resource's ID);
- ``requires``: what the operation acts on or needs, as Resource META types, which
  the ``terraform`` provisioner makes with the sandbox's templates (the META type of a
  catalog resource is the one whose sandbox Terraform type is
  ``sandbox_<product>_<resource>``, ``plugins/docverify_terraform/terraform_templates/sandbox/types.yaml``);
- ``x-bench``: family (one per operation), category ``exploration``, the catalog's release.

Operation kinds: ``create`` (the resource's create flow), ``update`` and
``transition`` (a row action whose operation is of that kind: edit, bind, start,
disable) and ``delete``. Reads are left out: the console's list and detail pages
read the store directly and leave no audit event, and a benchmark task is decided by
the audit log only (the events a read API call leaves, ``eventRW: Read``, come from
provisioning and SDK calls, never from the page).

An operation the catalog does not give enough to write (a resource no template can
provision, a state provisioning cannot set, a required field no value fits) is
skipped with its reason, never written half.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The benchmark category of every exploration task.
CATEGORY = "exploration"
#: The operation kinds a task can be written for, in the order they are written.
KINDS = ("create", "update", "transition", "delete")
#: A run suffix as :func:`docverify.task.new_suffix` makes them, to check generated names against patterns.
SAMPLE_SUFFIX = "a1b2c3"
#: Field types that show a value and take none.
DISPLAY_TYPES = frozenset({"display", "region_display"})
#: Field types the procedure types into.
TYPED = frozenset({"text", "textarea", "number", "cidr", "password"})
#: Field types whose value is one of their options, chosen by its label.
CHOSEN = frozenset({"select", "radio"})
#: Field types that are turned on or off.
TOGGLED = frozenset({"checkbox", "switch"})
#: What generated text values are tried, in order, against a field's pattern and length.
TEXT_CANDIDATES = ("{name}", "80/80", "explore.example.com", "index.html", "Explore", "1")
#: A CIDR block field that must lie within another resource's (a vSwitch's within its VPC's):
#: that resource is provisioned with WITHIN_BLOCK, the field gets WITHIN_SUBNET.
WITHIN_BLOCK, WITHIN_SUBNET = "192.168.0.0/16", "192.168.1.0/24"
#: The password typed where a field asks for one (upper, lower case letters and digits).
PASSWORD = "Explore-Passw0rd1"


class Unwritable(Exception):
    """An operation the catalog does not give enough to write as a procedure; the message says why."""


@dataclass(frozen=True)
class Operation:
    """One write operation of the console: a resource type's create flow or one of its row actions."""

    product: str
    rtype: str
    kind: str  #: one of KINDS
    op: str  #: the catalog's operation (RPC action) name
    action: str | None = None  #: the row action's key; None for the create flow

    @property
    def family(self) -> str:
        """The task family (and id): ``explore-<product>-<resource>-<action or create>``."""
        return f"explore-{self.product}-{self.rtype}-{self.action or 'create'}".replace("_", "-")


@dataclass(frozen=True)
class ExplorationTask:
    operation: Operation
    file: str  #: relative to the task set's folder
    text: str  #: the Markdown procedure

    @property
    def id(self) -> str:
        return self.operation.family


@dataclass(frozen=True)
class Skipped:
    operation: Operation
    reason: str


@dataclass
class Exploration:
    """The tasks written from one catalog release, and the operations skipped with why."""

    release: str
    tasks: list[ExplorationTask] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def counts(self) -> dict[str, dict[str, int]]:
        """Tasks by product and operation kind."""
        out: dict[str, dict[str, int]] = {}
        for task in self.tasks:
            row = out.setdefault(task.operation.product, dict.fromkeys(KINDS, 0))
            row[task.operation.kind] += 1
        return out


# --- the catalog's resources as Resource META ---------------------------------------------------


@dataclass(frozen=True)
class Provisioning:
    """What the sandbox's Terraform templates can make: META type by catalog resource,
    and the META types whose template sets a status (``r.attributes.status``)."""

    meta: dict[tuple[str, str], str]
    with_status: frozenset[str]

    @classmethod
    def load(cls, templates: str | Path | None = None) -> Provisioning:
        """The sandbox provider's templates (``types.yaml`` and ``<type>.tf.j2``) on the
        terraform plugin's search path."""
        from docverify_terraform.stack import TemplateSet

        template_set = TemplateSet.load("sandbox", templates)
        meta, with_status = {}, set()
        for meta_type, tf_type in template_set.types.items():
            path = template_set.template_path(f"{meta_type}.tf.j2")
            match = re.fullmatch(r"sandbox_([a-z0-9]+)_(\w+)", tf_type)
            if path is None or match is None:
                continue
            meta[(match[1], match[2])] = meta_type
            if re.search(r"attributes(\.get\(['\"]status|\.status)", path.read_text(encoding="utf-8")):
                with_status.add(meta_type)
        return cls(meta, frozenset(with_status))

    def type_of(self, product: str, rtype: str) -> str:
        """The META type of a catalog resource; Unwritable when no template makes it."""
        found = self.meta.get((product, rtype))
        if found is None:
            raise Unwritable(f"no Terraform template provisions {product} {rtype} "
                             f"(no sandbox_{product}_{rtype} in the sandbox templates' types.yaml)")
        return found


# --- which operations ---------------------------------------------------------------------------


def operations(catalog: Any, products: Sequence[str], kinds: Sequence[str]) -> list[Operation]:
    """The console's write operations of ``products`` (all when empty) of ``kinds``, in
    catalog order: each resource's create flow, then its row actions whose operation is
    of a kind asked for. Actions without an operation (links, info) are no operation."""
    found: list[Operation] = []
    for pkey, product in catalog.products.items():
        if products and pkey not in products:
            continue
        for rtype, res in product.get("resources", {}).items():
            ops = {**res.get("ops", {}), **res.get("extra_ops", {})}
            if "create" in kinds and res.get("create"):
                found.append(Operation(pkey, rtype, "create", res["create"]["op"]))
            for key, action in res.get("actions", {}).items():
                kind = (ops.get(action.get("op") or "") or {}).get("kind")
                if kind in kinds and kind != "create":
                    found.append(Operation(pkey, rtype, kind, action["op"], key))
    return found


def explore(catalog: Any, products: Sequence[str] = (), kinds: Sequence[str] = KINDS,
            provisioning: Provisioning | None = None) -> Exploration:
    """Every operation of ``products`` and ``kinds`` written as a task, or skipped with why."""
    provisioning = provisioning or Provisioning.load()
    exploration = Exploration(catalog.release.name)
    for operation in operations(catalog, products, kinds):
        try:
            text = ProcedureWriter(catalog, provisioning, operation).write()
        except Unwritable as why:
            exploration.skipped.append(Skipped(operation, str(why)))
            continue
        file = f"{operation.product}/{operation.rtype}/{operation.family}.md"
        exploration.tasks.append(ExplorationTask(operation, file, text))
    return exploration


# --- values ------------------------------------------------------------------------------------


def word(label: str) -> str:
    """A resource's singular as prose: "Security Group" -> "security group", "VPC" and "VSwitch" stay."""
    return " ".join(part.lower() if re.fullmatch(r"[A-Z][a-z]+", part) else part for part in label.split())


def article(noun: str) -> str:
    return "an" if re.match(r"[aeioAEIO]|(?:EIP|ENI|ECS|RDS|SLB|ALB|IPv6|OSS|RAM|SNAT|NAT)\b", noun) else "a"


def fits(value: str, spec: dict[str, Any]) -> bool:
    """Whether ``value`` (``<suffix>`` as a sample suffix) passes the field's length and pattern."""
    sample = value.replace("<suffix>", SAMPLE_SUFFIX)
    if spec.get("min_len") is not None and len(sample) < int(spec["min_len"]):
        return False
    if spec.get("max_len") is not None and len(sample) > int(spec["max_len"]):
        return False
    return not spec.get("pattern") or re.search(spec["pattern"], sample) is not None


def name_value(rtype: str, spec: dict[str, Any], tag: str = "") -> str | None:
    """A name of this run for a resource, ``explore-<resource>[-<tag>]-<suffix>``, spelled as
    the field's pattern allows ("-", "_" or nothing between words); None when none fits."""
    words = ["explore", *rtype.split("_"), *([tag] if tag else []), "<suffix>"]
    for glue in ("-", "_", ""):
        value = glue.join(words)
        if fits(value, spec):
            return value
    return None


def typed_value(rtype: str, name: str, spec: dict[str, Any], *, changed: bool = False) -> str:
    """A value to type into a text, number, CIDR or password field, from its type and
    limits; ``changed``: one that differs from the field's default (an update).
    Unwritable when no generated value fits the field."""
    kind = spec.get("type", "text")
    label = spec.get("label", name)
    if kind == "password":
        if fits(PASSWORD, spec):
            return PASSWORD
        raise Unwritable(f"field {name} ({label}): no generated password fits its length and pattern")
    if kind == "number":
        low, high = int(spec.get("min", 1)), int(spec.get("max", 65535))
        default = spec.get("default")
        wanted = 80 if "port" in label.lower() else low
        if changed and default is not None and str(wanted) == str(default):
            wanted = wanted + 1 if wanted + 1 <= high else wanted - 1
        return str(min(max(wanted, low), high))
    if kind == "cidr":
        return WITHIN_SUBNET if spec.get("within") else "192.168.0.0/24"
    candidates = [c.format(name=name_value(rtype, spec, "new" if changed else "") or "explore") for c in TEXT_CANDIDATES]
    if kind == "textarea" or re.search(r"description|comments|note", f"{name} {label}", re.IGNORECASE):
        candidates.insert(0, "Explored by docverify <suffix>")
    for candidate in candidates:
        if fits(candidate, spec) and not (changed and candidate == spec.get("default")):
            return candidate
    raise Unwritable(f"field {name} ({label}) needs a value and no generated one fits "
                     f"(pattern {spec.get('pattern')!r}, length {spec.get('min_len')}-{spec.get('max_len')})")


def other_option(spec: dict[str, Any]) -> str | None:
    """The label of an option other than the field's default (the first one), for an update."""
    options = spec.get("options") or {}
    default = str(spec.get("default")) if spec.get("default") is not None else None
    for value, label in options.items():
        if str(value) != default:
            return str(label)
    return None


def shown(spec: dict[str, Any], values: dict[str, str], specs: dict[str, dict[str, Any]]) -> bool:
    """Whether a field with a ``when`` condition is on the page with these values (the fields'
    defaults otherwise: the procedures change no field another one depends on)."""
    for other, wanted in (spec.get("when") or {}).items():
        current = values.get(other, (specs.get(other) or {}).get("default"))
        if str(current) != str(wanted):
            return False
    return True


# --- the procedure ------------------------------------------------------------------------------


@dataclass
class Row:
    """One parameter table row: the field's label, the value (bold when it is an option), why."""

    label: str
    value: str
    note: str


@dataclass
class Requirement:
    type: str
    attributes: dict[str, Any] = field(default_factory=dict)

    def to_yaml(self) -> str:
        item: dict[str, Any] = {"type": self.type}
        if self.attributes:
            item["attributes"] = self.attributes
        return json.dumps(item)


class ProcedureWriter:
    """Writes one operation as a procedure with its annotation (see the module docs)."""

    def __init__(self, catalog: Any, provisioning: Provisioning, operation: Operation) -> None:
        self.catalog = catalog
        self.provisioning = provisioning
        self.op = operation
        self.product = catalog.product(operation.product)
        self.res = catalog.resource(operation.product, operation.rtype)
        self.steps: list[str] = []
        self.requires: dict[str, Requirement] = {}
        self.typed_name: str | None = None

    # the parts every procedure has

    def write(self) -> str:
        spec = self.op_spec()
        self.open_console()
        if self.op.kind == "create":
            self.create()
        else:
            self.act()
        event = spec.get("event") or self.op.op
        expect: dict[str, Any] = {"service": self.product["service_name"], "event": event}
        resource = self.expected_resource()
        if resource:
            expect["resource"] = resource
        return self.document(expect)

    def op_spec(self) -> dict[str, Any]:
        ops = {**self.res.get("ops", {}), **self.res.get("extra_ops", {})}
        spec = ops.get(self.op.op)
        if spec is None:
            raise Unwritable(f"operation {self.op.op} is not among {self.op.rtype}'s ops")
        return spec

    def expected_resource(self) -> str | None:
        """What the event must name: the name the procedure typed, else the provisioned resource's
        (or, for a create, its parent's) ID, which the event's request carries."""
        if self.op.kind == "create":
            if self.typed_name:
                return self.typed_name
            parent = self.res.get("parent")
            return f"<{self.meta(self.op.product, parent)}_1_id>" if parent else None
        return f"<{self.meta(self.op.product, self.op.rtype)}_1_id>"

    def meta(self, product: str, rtype: str) -> str:
        return self.provisioning.type_of(product, rtype)

    def require(self, product: str, rtype: str, **attributes: Any) -> str:
        meta_type = self.meta(product, rtype)
        requirement = self.requires.setdefault(meta_type, Requirement(meta_type))
        requirement.attributes.update(attributes)
        return meta_type

    def console_url(self) -> str:
        address = next(iter(self.product.get("addresses") or {}), None)
        if address is None:
            raise Unwritable(f"product {self.op.product} has no console address in the catalog")
        return f"https://{address}"

    def open_console(self) -> None:
        console = self.product.get("console") or f"{self.product['title']} console"
        self.steps.append(f"Log on to the [{console}]({self.console_url()}).")

    def navigate(self, rtype: str) -> None:
        """The left-side navigation pane to ``rtype``'s list, and the region (regional products)."""
        items = [item for item in self.product.get("nav", {}).values() if item.get("resource") == rtype]
        title = self.catalog.resource(self.op.product, rtype)["title"]
        item = next((item for item in items if item["label"] == title), items[0] if items else None)
        if item is None:
            raise Unwritable(f"no navigation item lists {self.op.product} {rtype}")
        group = item.get("group")
        if group and self.product.get("groups", {}).get(group):
            self.steps.append(f"In the left-side navigation pane, choose **{self.product['groups'][group]}** \\> "
                              f"**{item['label']}**.")
        else:
            self.steps.append(f"In the left-side navigation pane, click **{item['label']}**.")
        if self.product.get("regional", True):
            self.steps.append("In the top navigation bar, select a region.")

    def go_to_list(self) -> None:
        """To the page that lists the operation's resource: its own list, or its parent's
        details page (a child resource is listed and created there)."""
        parent = self.res.get("parent")
        if not parent:
            self.navigate(self.op.rtype)
            return
        parent_res = self.catalog.resource(self.op.product, parent)
        self.require(self.op.product, parent)
        self.navigate(parent)
        noun = word(parent_res["singular"])
        self.steps.append(f"On the **{parent_res['title']}** page, find the {noun} that you want to manage "
                          "and click its ID.")

    # create

    def create(self) -> None:
        create = self.res["create"]
        self.go_to_list()
        self.steps.append(f"Click **{create['button']}**.")
        style = create.get("style", "panel")
        specs = self.fields()
        if style == "wizard":
            self.wizard(create, specs)
        elif style == "direct":
            if create.get("confirm"):
                confirm = create["confirm"]
                self.steps.append(f"In the **{confirm['title']}** message, click **{confirm.get('ok', 'OK')}**.")
            if create.get("close"):
                self.steps.append(f"Click **{create['close']}**.")
        else:
            sections = create.get("sections") or {create["title"]: create.get("fields", list(self.res.get("fields", {})))}
            on_page = style == "page" and not self.res.get("parent")  # a child's create page opens as a panel
            where = f"On the **{create['title']}** page" if on_page else f"In the **{create['title']}** panel"
            names = [name for names in sections.values() for name in names]
            self.fill(where, names, specs)
            self.steps.append(f"Click **{create.get('submit', 'OK')}**.")
            page = create.get("confirm_page")
            if page:
                self.steps.append(f"On the **{page['title']}** page, click **{page.get('ok', 'OK')}**.")

    def wizard(self, create: dict[str, Any], specs: dict[str, dict[str, Any]]) -> None:
        from docverify_sandbox.catalog import next_label

        steps = list(create["steps"].values())
        for index, step in enumerate(steps):
            self.fill(f"On the **{step['title']}** page", step.get("fields", []), specs)
            if index + 1 < len(steps):
                self.steps.append(f"Click **{next_label(step, steps[index + 1])}**.")
        if create.get("terms"):
            self.steps.append(f"Read and select **{create['terms']}**.")
        self.steps.append(f"Click **{create.get('submit', 'OK')}**.")

    def fields(self, inline: dict[str, Any] | None = None, target: str | None = None) -> dict[str, dict[str, Any]]:
        """Field name -> spec: the resource's fields and dialog-only fields, a target's, or a dialog's own."""
        specs = {**self.res.get("extra_fields", {}), **self.res.get("fields", {})}
        if target:
            specs = {**self.catalog.resource(self.op.product, target).get("fields", {}), **specs}
        return {**specs, **(inline or {})}

    def fill(self, where: str, names: Iterable[str], specs: dict[str, dict[str, Any]], *, update: bool = False) -> None:
        """The steps that set a form's fields: a drop-down step per resource to select, then one
        parameter table. A create sets the resource's name and every required field without a
        default; an update changes the first field it can and sets every required one."""
        rows: list[Row] = []
        selects: list[str] = []
        changed = False
        for name in names:
            spec = specs.get(name)
            if spec is None or spec.get("type") in DISPLAY_TYPES or not shown(spec, {}, specs):
                continue
            kind = spec.get("type", "text")
            wants = bool(spec.get("required")) and spec.get("default") is None
            if kind == "ref":  # a create picks every resource provisioning can make; an update changes one
                if wants or not (update and changed):
                    try:
                        selects.append(self.select_ref(name, spec))
                        changed = True
                    except Unwritable:
                        if wants:
                            raise
                continue
            row = self.row(name, spec, wants=wants, change=update and not changed)
            if row is not None:
                rows.append(row)
                changed = True
                if spec.get("within"):
                    self.require_block(name, specs.get(spec["within"]) or {})
        for step in selects:
            self.steps.append(f"{where}, {step}")
        if update and not changed:
            raise Unwritable("the dialog has no field this task can change")
        if rows:
            table = ["|Parameter|Value|Description|", "|---------|-----|-----------|"]
            table += [f"|**{row.label}**|{row.value}|{row.note}|" for row in rows]
            self.steps.append(f"{where}, configure the following parameters.\n\n" + "\n".join(table))

    def row(self, name: str, spec: dict[str, Any], *, wants: bool, change: bool) -> Row | None:
        """The table row for one field, or None when the field keeps its value: a create's
        name, a field that names another resource, a required field without a default,
        and (``change``) the field an update changes."""
        kind = spec.get("type", "text")
        label = spec.get("label", name)
        if self.op.kind == "create" and name == self.res.get("name_param") and kind in ("text", "textarea"):
            value = name_value(self.op.rtype, spec)
            if value is None:
                raise Unwritable(f"field {name} ({label}): no generated name fits its pattern {spec.get('pattern')!r}")
            self.typed_name = value
            return Row(label, f"`{value}`", f"The name of the {word(self.res['singular'])}.")
        if (wants or change) and kind in ("text", "textarea"):
            named = self.names_other_resource(name)
            if named is not None:
                return Row(label, f"`{named}`", "The resource to use.")
        if change and kind != "password":
            row = self.change(name, spec)
            if row is not None:
                return row
        if not wants:
            return None
        if kind in TYPED:
            return Row(label, f"`{typed_value(self.op.rtype, name, spec)}`", "A value of this run.")
        if kind in CHOSEN and spec.get("options"):
            return Row(label, f"**{next(iter(spec['options'].values()))}**", "The first option.")
        if kind == "zone":
            return None  # the zone list has no empty choice: its first zone is selected
        raise Unwritable(f"field {name} ({label}) of type {kind} is required and has no default")

    def names_other_resource(self, name: str) -> str | None:
        """``<meta>_1_id`` / ``<meta>_1_name`` when the field is another resource type's ID or name
        parameter in this product (``GroupName`` of an Add to Group dialog): that resource is required."""
        for rtype, res in self.product.get("resources", {}).items():
            if rtype == self.op.rtype:
                continue
            for param, attr in ((res.get("id_param"), "id"), (res.get("name_param"), "name")):
                if param == name:
                    meta_type = self.require(self.op.product, rtype)
                    return f"<{meta_type}_1_{attr}>"
        return None

    def require_block(self, name: str, within: dict[str, Any]) -> None:
        """The resource whose CIDR block ``name``'s must lie within is provisioned with
        :data:`WITHIN_BLOCK` (its Terraform attribute named as the provider names the field)."""
        from docverify_sandbox.terraform_provider.naming import attribute_name

        if within.get("type") != "ref":
            raise Unwritable(f"field {name} must lie within {within.get('label', 'another field')}, "
                             "which names no resource to provision")
        self.require(within.get("product", self.op.product), within["ref"], **{attribute_name(name): WITHIN_BLOCK})

    def select_ref(self, name: str, spec: dict[str, Any]) -> str:
        """A drop-down of existing resources: that resource is required; the step selects one
        (Unwritable, requiring nothing, when no template provisions it)."""
        product = spec.get("product", self.op.product)
        self.meta(product, spec["ref"])
        self.require(product, spec["ref"])
        target = self.catalog.resource(product, spec["ref"])
        noun = word(target["singular"])
        return f"select {article(noun)} {noun} from the **{spec.get('label', name)}** drop-down list."

    def change(self, name: str, spec: dict[str, Any]) -> Row | None:
        """A row that changes the field's value (an update), or None when the field cannot be changed here."""
        kind = spec.get("type", "text")
        label = spec.get("label", name)
        if kind in TYPED:
            try:
                return Row(label, f"`{typed_value(self.op.rtype, name, spec, changed=True)}`", "The new value.")
            except Unwritable:
                return None
        if kind in CHOSEN:
            option = other_option(spec)
            return Row(label, f"**{option}**", "The new setting.") if option else None
        if kind in TOGGLED:
            on = str(spec.get("default", "false")).lower() not in ("true", "on", "1")
            return Row(label, "On" if on else "Off", "The new setting.")
        return None

    # row actions: update, transition, delete

    def act(self) -> None:
        action = self.res["actions"][self.op.action]
        self.require_state(action)
        self.require(self.op.product, self.op.rtype)
        self.go_to_list()
        noun = word(self.res["singular"])
        verb = {"delete": "delete", "transition": "manage", "update": "modify"}[self.op.kind]
        placement = action.get("placement", "row")
        if placement == "detail":
            self.steps.append(f"On the **{self.res['title']}** page, find the {noun} that you want to {verb} "
                              "and click its ID.")
            where = f"In the **{action['section']}** section, click" if action.get("section") else "Click"
            self.steps.append(f"{where} **{action['label']}**.")
        else:
            path = " \\> ".join(f"**{label}**" for label in [*action.get("menu", []), action["label"]])
            how = "choose" if action.get("menu") else "click"
            self.steps.append(f"Find the {noun} that you want to {verb} and {how} {path} in the **Actions** column.")
        self.dialog(action)

    def require_state(self, action: dict[str, Any]) -> None:
        """An action offered only in some states (``when``): the provisioned resource must be in
        one; its template sets the first when provisioning leaves it in another."""
        when = action.get("when")
        if not when:
            return
        create = self.res.get("create") or {}
        ops = {**self.res.get("ops", {}), **self.res.get("extra_ops", {})}
        created = ops.get(create.get("op") or "", {})
        status = created.get("final") or created.get("initial")
        if status in when:
            return
        from docverify_sandbox.terraform_provider.catalog_types import describe

        meta_type = self.meta(self.op.product, self.op.rtype)
        try:
            transitions = describe(self.catalog, self.op.product, self.op.rtype).transitions
        except ValueError:
            transitions = ()
        reachable = [state for state in when if any(t.to == state and status in t.statuses for t in transitions)]
        if meta_type not in self.provisioning.with_status or not reachable:
            raise Unwritable(f"the action needs the {self.op.rtype} in state {' or '.join(when)}; provisioning "
                             f"leaves it {status or 'without a status'} and cannot bring it there "
                             f"({meta_type}.tf.j2 and the sandbox provider's transitions)")
        self.require(self.op.product, self.op.rtype, status=reachable[0])

    def dialog(self, action: dict[str, Any]) -> None:
        """The action's dialog: a form to fill and submit, then its confirmation; or a confirmation."""
        form, confirm = action.get("form"), action.get("confirm")
        if form:
            inline = form["fields"] if isinstance(form.get("fields"), dict) else None
            names = list(form.get("fields") or [])
            where = f"In the **{form['title']}** dialog box"
            self.fill(where, names, self.fields(inline, action.get("target")), update=self.op.kind == "update")
            self.steps.append(f"Click **{form.get('ok', 'OK')}**.")
            if form.get("confirm_ok") or confirm:
                title = (confirm or {}).get("title", form["title"])
                ok = (confirm or {}).get("ok") or form.get("confirm_ok", "OK")
                self.steps.append(f"In the **{title}** message, click **{ok}**.")
        elif confirm:
            self.steps.append(f"In the **{confirm['title']}** message, click **{confirm.get('ok', 'OK')}**.")
        else:
            raise Unwritable(f"action {self.op.action} opens no dialog the procedure can finish")

    # the document

    def title(self) -> str:
        noun = word(self.res["singular"])
        if self.op.kind == "create":
            return f"Create {article(noun)} {noun}"
        action = self.res["actions"][self.op.action]
        dialog = action.get("form") or action.get("confirm") or {}
        return dialog.get("title") or f"{action['label']} {article(noun)} {noun}"

    def intro(self) -> str:
        noun = word(self.res["singular"])
        what = {"create": f"create {article(noun)} {noun}",
                "update": f"change the settings of {article(noun)} {noun}",
                "transition": f"change the state of {article(noun)} {noun}",
                "delete": f"delete {article(noun)} {noun} that you no longer need"}[self.op.kind]
        return (f"This topic describes how to {what} in the {self.product.get('console') or self.product['title']}."
                f" The operation is recorded by ActionTrail as a {self.op_spec().get('event') or self.op.op} event.")

    def document(self, expect: dict[str, Any]) -> str:
        product_name = re.sub(r"\s+console$", "", self.product.get("console") or self.product["title"])
        lines = ["---", f"product: {product_name}", "---", "", f"# {self.title()}", "", self.intro(), "",
                 "<!-- docverify:", f"id: {self.op.family}"]
        if self.requires:
            lines.append("requires:")
            lines += [f"  - {requirement.to_yaml()}" for requirement in self.requires.values()]
        lines += ["expect:", f"  - {json.dumps(expect)}",
                  f"x-bench: {json.dumps({'family': self.op.family, 'category': CATEGORY, 'release': self.catalog.release.name})}",
                  "-->", "## Procedure", ""]
        for number, step in enumerate(self.steps, 1):
            head, _, rest = step.partition("\n\n")
            lines.append(f"{number}.{' ' * (4 - len(str(number)) - 1)}{head}")
            if rest:
                lines.append("")
                lines += [f"    {line}" for line in rest.splitlines()]
            lines.append("")
        return "\n".join(lines)


# --- the task set on disk -----------------------------------------------------------------------


def write_task_set(exploration: Exploration, folder: Path) -> Path:
    """Write the tasks under ``folder`` (``<product>/<resource>/<id>.md``) and their
    manifest, every family in the train split; the Markdown files a previous manifest
    there listed and this set no longer has are removed. Returns the manifest's path."""
    from docverify_bench.tasks import MANIFEST, build_manifest

    folder.mkdir(parents=True, exist_ok=True)
    manifest_path = folder / MANIFEST
    written = {task.file for task in exploration.tasks}
    if manifest_path.is_file():
        try:
            previous = json.loads(manifest_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            previous = {}
        for entry in (previous.get("tasks") or {}).values():
            stale = folder / str(entry.get("file", ""))
            if entry.get("file") and entry["file"] not in written and stale.is_file():
                stale.unlink()
    for task in exploration.tasks:
        path = folder / task.file
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != task.text:
            path.write_text(task.text, encoding="utf-8")
    splits = {"families": {task.operation.family: {"split": "train"} for task in exploration.tasks}}
    manifest = build_manifest(folder, f"explore-{exploration.release}", splits)
    manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest_path


def skipped_summary(skipped: Sequence[Skipped]) -> list[str]:
    """One line per skipped operation: ``product resource kind (action): reason``."""
    return [f"{s.operation.product} {s.operation.rtype} {s.operation.kind}"
            f"{f' ({s.operation.action})' if s.operation.action else ''}: {s.reason}" for s in skipped]


def count_table(exploration: Exploration) -> list[str]:
    """The tasks by product and kind as text lines, with totals."""
    counts = exploration.counts()
    skipped = Counter(s.operation.product for s in exploration.skipped)
    lines = [f"{'product':<12}" + "".join(f"{kind:>11}" for kind in KINDS) + f"{'total':>8}{'skipped':>9}"]
    for product in sorted(set(counts) | set(skipped)):
        row = counts.get(product, dict.fromkeys(KINDS, 0))
        lines.append(f"{product:<12}" + "".join(f"{row[kind]:>11}" for kind in KINDS)
                     + f"{sum(row.values()):>8}{skipped.get(product, 0):>9}")
    totals = {kind: sum(row[kind] for row in counts.values()) for kind in KINDS}
    lines.append(f"{'all':<12}" + "".join(f"{totals[kind]:>11}" for kind in KINDS)
                 + f"{sum(totals.values()):>8}{len(exploration.skipped):>9}")
    return lines
