"""Terraform resource types derived from the sandbox catalog, one generic description each.

Nothing here is written per type: every resource of every product in
``docverify_sandbox/catalog/products/*.yaml`` becomes a :class:`ResourceType`
from its ``fields``, its ``create`` flow and its ``ops`` (create, get/list,
update, delete), or is listed in ``skipped`` with the reason it cannot be one.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import pickle
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from docverify_sandbox.terraform_provider.naming import attribute_name, type_name

#: environment variable naming the sandbox release whose catalog the provider serves (newest when unset)
RELEASE_ENV = "DOCVERIFY_SANDBOX_RELEASE"
#: environment variable naming a directory where the derived types are kept between provider starts
CACHE_ENV = "DOCVERIFY_PROVIDER_CACHE"

#: attributes every resource has, and names Terraform reserves in a resource block
RESERVED = frozenset({"id", "status", "region_id", "count", "for_each", "provider", "lifecycle",
                      "depends_on", "connection", "provisioner", "source", "version", "locals"})

#: field types that only display something; they are never API parameters
_DISPLAY = ("display", "region_display")
#: parameters the provider sets itself: one resource per Terraform block, the region from region_id
_OWN = ("RegionId", "Amount")
_PLAIN_UPDATE_KEYS = ("from", "to", "via", "append", "remove", "set_from_ref", "clear", "link", "unlink",
                      "ref_by_name", "id_param")


@dataclass(frozen=True)
class Attribute:
    """One configurable attribute: a parameter of the create operation."""

    name: str  #: Terraform name (snake_case)
    api_name: str  #: the API parameter
    kind: str  #: "string", "number" or "bool"
    required: bool
    sensitive: bool
    updatable: bool  #: changed in place by an update operation; otherwise a change replaces the resource
    description: str = ""
    default: str | None = None  #: sent when unset: the API requires it, the console pre-fills it


@dataclass(frozen=True)
class UpdateOp:
    """An update operation and the attributes it changes (API field -> request parameter)."""

    action: str
    params: dict[str, str]


@dataclass(frozen=True)
class DetachOp:
    """An operation that brings a resource back to a status it can be deleted in
    (an ENI bound to an instance is detached first), with the parameters it takes
    from the resource as the API reports it."""

    action: str
    statuses: tuple[str, ...]  #: the statuses it starts from
    to: str  #: the status it ends in
    params: tuple[str, ...]


@dataclass(frozen=True)
class TransitionOp:
    """An operation that moves a resource from one status to another (StopInstance:
    Running -> Stopped), to bring a new resource to the status a procedure needs."""

    action: str
    statuses: tuple[str, ...]  #: the statuses it starts from
    to: str  #: the status it ends in


@dataclass(frozen=True)
class ResourceType:
    """Everything the provider needs to manage one catalog resource type."""

    name: str  #: Terraform type, e.g. ``sandbox_vpc_vswitch``
    product: str
    rtype: str
    title: str
    version: str  #: the RPC ``Version`` of the product
    regional: bool
    id_param: str
    name_param: str | None
    id_is_name: bool
    parent_param: str | None
    create_action: str
    create_response: Any
    initial_status: str | None
    final_status: str | None
    status_param: str
    read_action: str
    read_kind: str  #: "get" or "list"
    read_id_param: str
    read_wrap: str | None
    list_key: tuple[str, ...]
    list_action: str | None
    delete_action: str
    delete_id_param: str
    delete_force_param: str | None
    gone_status: str | None  #: deleted by a transition into this status (e.g. keys pending deletion)
    not_found: frozenset[str]
    attributes: tuple[Attribute, ...]
    computed: tuple[tuple[str, str], ...] = ()  #: (Terraform name, API name) of values the cloud generates
    updates: tuple[UpdateOp, ...] = field(default=())
    #: what blocks deleting it, as (how, Terraform type): "child" (its parent is this one)
    #: or "user" (it names this one, e.g. an instance in a vSwitch)
    dependents: tuple[tuple[str, str], ...] = ()
    #: the error code of an operation refused in the resource's current status
    status_error: str = "IncorrectStatus"
    detach: tuple[DetachOp, ...] = ()
    transitions: tuple[TransitionOp, ...] = ()  #: status changes it offers (desired_status)
    #: the error code of a delete that its children block, where it is not DependencyViolation
    #: (a bucket with objects: BucketNotEmpty; a user with AccessKeys: DeleteConflict.User.AccessKey)
    dependency_error: str | None = None

    @property
    def statuses(self) -> tuple[str, ...]:
        """The statuses ``desired_status`` can name: those a transition ends in, and the
        status a deletion leaves (a key pending deletion; Terraform forgets it then, as
        deleted, unless the procedure brings it back)."""
        gone = (self.gone_status,) if self.gone_status and self.transitions else ()
        return tuple(dict.fromkeys([*(op.to for op in self.transitions), *gone]))

    def attribute(self, name: str) -> Attribute:
        return next(a for a in self.attributes if a.name == name)

    @property
    def name_attribute(self) -> str | None:
        """The Terraform attribute holding the resource's name, when it has one."""
        if not self.name_param:
            return None
        return next((a.name for a in self.attributes if a.api_name == self.name_param), None)


@dataclass(frozen=True)
class Catalogue:
    """The provider's resource types, and the catalog types it could not make into one."""

    types: dict[str, ResourceType]
    skipped: dict[str, str]
    release: str


def _ops(res: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {**res.get("ops", {}), **res.get("extra_ops", {})}


def _routes_here(catalog, version: str, action: str, product: str, rtype: str) -> bool:
    """True when the sandbox runs ``action`` against this resource type (names are shared
    across types of a product; the catalog's last declaration wins)."""
    found = catalog.find_op(version, action)
    return bool(found) and found[0] == product and found[1] == rtype


def _kind(spec: dict[str, Any]) -> str:
    kind = spec.get("type", "text")
    if kind == "number":
        return "number"
    if kind in ("checkbox", "switch"):
        return "bool"
    return "string"


def describe(catalog, product: str, rtype: str) -> ResourceType:
    """The resource type of one catalog resource; ValueError says why there is none."""
    from docverify_sandbox.operations import create_field_names

    prod = catalog.product(product)
    res = catalog.resource(product, rtype)
    version = prod["api_version"]
    ops = {name: spec for name, spec in _ops(res).items() if _routes_here(catalog, version, name, product, rtype)}

    create_action = (res.get("create") or {}).get("op") or next(
        (n for n, s in ops.items() if s["kind"] == "create"), None)
    if not create_action or create_action not in ops:
        raise ValueError("the catalog has no create operation for it")
    create = ops[create_action]

    get_action = next((n for n, s in ops.items() if s["kind"] == "get" and not s.get("fields")), None)
    list_action = next((n for n, s in ops.items() if s["kind"] == "list"), None)
    if get_action:
        read_action, read_kind, read_spec = get_action, "get", ops[get_action]
    elif list_action:
        read_action, read_kind, read_spec = list_action, "list", ops[list_action]
    else:
        raise ValueError("the catalog has neither a get nor a list operation to read it back")

    delete_action = next((n for n, s in ops.items() if s["kind"] == "delete"), None)
    gone_status = None
    if delete_action is None:
        delete_action = next((n for n, s in ops.items() if s["kind"] == "transition"
                              and "deletion" in str(s.get("to", "")).lower()), None)
        if delete_action is None:
            raise ValueError("the catalog has no delete operation for it")
        gone_status = ops[delete_action]["to"]
    delete = ops[delete_action]

    specs = {**res.get("extra_fields", {}), **res.get("fields", {})}
    updatable: dict[str, tuple[str, str]] = {}  # field -> (action, request parameter)
    updates: list[UpdateOp] = []
    for action, spec in ops.items():
        if spec["kind"] != "update" or not spec.get("params") or any(k in spec for k in _PLAIN_UPDATE_KEYS):
            continue
        request_name = {fname: api for api, fname in (spec.get("rename") or {}).items()}
        params = {p: request_name.get(p, p) for p in spec["params"]}
        updates.append(UpdateOp(spec.get("event", action), params))  # called by its API Action name
        for p, api in params.items():
            updatable.setdefault(p, (action, api))

    attributes: list[Attribute] = []
    seen: set[str] = set()
    # a create parameter that chooses the status (a lifecycle rule created Disabled): settled as soon as made
    status_field = create.get("status_param")
    for api_name in create_field_names(res):
        spec = specs.get(api_name) or {"label": api_name, "type": "text"}
        if spec.get("type") in _DISPLAY or api_name in _OWN or api_name in seen:
            continue
        seen.add(api_name)
        required = bool(spec.get("required")) and not spec.get("when")
        default = str(spec["default"]) if required and spec.get("default") is not None else None
        name = attribute_name(api_name)
        if name in RESERVED:  # a lifecycle rule's Status: `status` is the computed one, so lifecycle_rule_status
            name = f"{rtype}_{name}"
        attributes.append(Attribute(
            name=name, api_name=api_name, kind=_kind(spec), required=required and default is None,
            sensitive=spec.get("type") == "password" or bool(spec.get("secret")),
            updatable=api_name in updatable, description=spec.get("label", ""), default=default))

    parent_param = None
    if res.get("parent"):
        parent = catalog.resource(product, res["parent"])
        parent_param = res.get("parent_param", parent["id_param"])
        if parent_param not in seen:
            attributes.append(Attribute(
                name=attribute_name(parent_param), api_name=parent_param, kind="string", required=True,
                sensitive=False, updatable=False, description=f"the {parent['singular']} it belongs to"))

    names = [a.name for a in attributes]
    clash = sorted({n for n in names if names.count(n) > 1} | (set(names) & RESERVED))
    if clash:
        raise ValueError(f"its parameters map to clashing attribute names: {', '.join(clash)}")
    computed = tuple((attribute_name(api), api) for api, gen in (res.get("generate") or {}).items()
                     if gen != "secret" and attribute_name(api) not in set(names) | RESERVED)

    not_found = {res.get("not_found", "InvalidParameter")}
    if res.get("parent"):
        not_found.add(catalog.resource(product, res["parent"]).get("not_found", "InvalidParameter"))

    list_spec = ops.get(list_action, {}) if list_action else {}
    dependents = [("child", type_name(product, c)) for c in delete.get("block_if_children", [])]
    dependents += [("user", type_name(product, u)) for u in delete.get("block_if_referenced", [])]
    # a reference the forced delete lets go (an EIP bound to a NAT gateway) is no dependent to delete
    dependents += [("user", type_name(r.get("product", product), r["rtype"])) for r in delete.get("referenced_by", [])
                   if r.get("error") and not (r.get("release") and delete.get("force_param"))]
    deletable = set(delete.get("from") or ())
    detach = tuple(DetachOp(spec.get("event", name), tuple(spec["from"]), spec["to"], tuple(spec.get("params", ())))
                   for name, spec in ops.items()
                   if spec["kind"] in ("update", "transition") and spec.get("from") and spec.get("to") in deletable
                   and not set(spec["from"]) & deletable)
    transitions = tuple(TransitionOp(spec.get("event", name), tuple(spec["from"]), spec["to"])
                        for name, spec in ops.items()
                        if spec["kind"] == "transition" and spec.get("from") and spec.get("to")
                        and spec["to"] != gone_status and name != delete_action and not spec.get("params"))
    return ResourceType(
        name=type_name(product, rtype), product=product, rtype=rtype, title=res.get("singular", rtype),
        version=version, regional=prod.get("regional", True), id_param=res["id_param"],
        name_param=res.get("name_param"), id_is_name=bool(res.get("id_is_name")), parent_param=parent_param,
        create_action=create_action, create_response=create.get("response"),
        initial_status=create.get("initial"),
        final_status=None if status_field else create.get("final", create.get("initial")),
        status_param=res.get("status_param", "Status"), read_action=read_action, read_kind=read_kind,
        read_id_param=read_spec.get("id_param", res["id_param"]), read_wrap=read_spec.get("wrap"),
        list_key=tuple(list_spec.get("list_key") or res.get("list_key") or ()), list_action=list_action,
        delete_action=delete_action, delete_id_param=delete.get("id_param", res["id_param"]),
        delete_force_param=delete.get("force_param"), gone_status=gone_status,
        not_found=frozenset(not_found), attributes=tuple(attributes), computed=computed, updates=tuple(updates),
        dependents=tuple(dependents),
        status_error=res.get("status_error", "IncorrectStatus"), detach=detach, transitions=transitions,
        dependency_error=delete.get("dependency_error"))


@functools.cache
def catalogue(release: str | None = None) -> Catalogue:
    """Every resource type of the sandbox catalog as of ``release`` (default: env
    ``DOCVERIFY_SANDBOX_RELEASE``, else the newest release).

    Terraform starts the provider several times per command; with env
    ``DOCVERIFY_PROVIDER_CACHE`` set, the result is kept there (keyed by the catalog's
    files) so a start does not parse the catalog again.
    """
    release = release or os.environ.get(RELEASE_ENV) or None
    cache_dir = os.environ.get(CACHE_ENV)
    path = Path(cache_dir) / f"catalogue-{_fingerprint(release)}.pickle" if cache_dir else None
    if path is not None and path.is_file():
        try:
            cached = pickle.loads(path.read_bytes())
        except Exception:  # a cache from another version: rebuild it
            cached = None
        if isinstance(cached, Catalogue):
            return cached
    result = _build(release)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".catalogue.")
        with os.fdopen(fd, "wb") as f:
            f.write(pickle.dumps(result))
        os.replace(tmp, path)
    return result


def _fingerprint(release: str | None) -> str:
    """What the derived types depend on: the release asked for, the catalog's files, this code."""
    spec = importlib.util.find_spec("docverify_sandbox")
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    files = sorted(f for root in roots for f in (*root.glob("catalog/**/*"), *root.glob("releases/*"))
                   if f.is_file() and "__pycache__" not in f.parts)
    files += [Path(__file__), Path(__file__).with_name("naming.py")]
    digest = hashlib.sha256(str(release).encode())
    for f in files:
        st = f.stat()
        digest.update(f"{f}\0{st.st_mtime_ns}\0{st.st_size}\n".encode())
    return digest.hexdigest()[:16]


def _build(release: str | None) -> Catalogue:
    from docverify_sandbox import catalog as sandbox_catalog

    cat = sandbox_catalog.load(release)
    others = [sandbox_catalog.load(other.date) for other in sandbox_catalog.releases() if other.name != cat.release.name]
    types: dict[str, ResourceType] = {}
    skipped: dict[str, str] = {}
    for product, prod in cat.products.items():
        for rtype in prod.get("resources", {}):
            try:
                rt = describe(cat, product, rtype)
            except ValueError as why:
                skipped[type_name(product, rtype)] = str(why)
            else:
                types[rt.name] = _with_other_releases(rt, others, product, rtype)
    return Catalogue(types, skipped, cat.release.name)


def _with_other_releases(rt: ResourceType, others: list, product: str, rtype: str) -> ResourceType:
    """``rt`` taking the arguments other releases add as optional ones, as one
    provider version serves every API version: the same template (a KMS key's
    ``dkms_instance_id``, required since 2026-03) applies against any release, and an
    argument this release does not know is sent and ignored, as the API does."""
    known = {a.name for a in rt.attributes}
    extra: list[Attribute] = []
    for other in others:
        try:
            theirs = describe(other, product, rtype)
        except (ValueError, KeyError):
            continue
        for attribute in theirs.attributes:
            if attribute.name not in known:
                known.add(attribute.name)
                extra.append(replace(attribute, required=False, default=None))
    return replace(rt, attributes=rt.attributes + tuple(extra)) if extra else rt
