"""One implementation per operation: the generic engine behind API and pages.

An operation is named by its RPC ``(Version, Action)``; the catalog says which
resource type it acts on and which generic kind it is (create, list, get,
update, transition, delete). Console pages and signed API calls both end in
:meth:`Engine.call`, which checks region and permissions, validates parameters
against the catalog's field declarations, runs the operation under the store's
writer lock and writes the ActionTrail event, success or failure.

An operation may carry an ``event``: the API Action and ActionTrail eventName
it really is, when that name is taken by another product's operation in the
same API version (binding an EIP to a NAT gateway is ``AssociateEipAddress``
with ``InstanceType=Nat``). Its catalog name stays unique and is what console
actions name; its ``match`` says which calls of the public name it answers
(``"*"``: any value, so ``PutBucketCors`` with a ``RuleId`` replaces that rule).

What else the operation kinds read from the catalog, besides the basics:
create ``derive`` (attributes taken from referenced resources, which must
agree) and ``status_param`` (the caller picks the status); update ``link`` /
``unlink`` (bind a referenced resource on its side too); delete
``block_if_children`` (a list, or child type -> error code), ``referenced_by``
(resources that name this one: an ``error`` blocks, a ``release`` lets them
go, both: blocked unless the operation's ``force_param`` is set),
``all_in_parent`` (no id: every one the parent holds). A resource with
``audit_as: parent`` is recorded in ActionTrail as a change of its parent; a
``checkboxes`` field takes an RPC list (``Name.1``, ``Name.2``, ...).
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

from docverify_sandbox import audit
from docverify_sandbox.catalog import REGIONS, Catalog, zones
from docverify_sandbox.errors import ApiError, ValidationErrors, invalid, missing
from docverify_sandbox.state import Store


@dataclass
class Caller:
    """Who calls: account, principal (ActionTrail userIdentity) and channel."""

    account_id: str
    identity: dict[str, Any]
    channel: str = "api"  #: "api" or "console"
    source_ip: str = "127.0.0.1"
    user_agent: str = ""
    policies: list[str] = field(default_factory=list)


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def truthy(value: Any) -> bool:
    return str(value).lower() in ("true", "1", "on", "yes")


def listed(params: dict[str, str], name: str) -> str | None:
    """A list parameter sent the RPC way (``Name.1``, ``Name.2``, ...; a checkbox group
    submits the same), joined with commas in the order of N; None when there is none."""
    items = []
    for key, value in params.items():
        head, _, n = key.rpartition(".")
        if head == name and n.isdigit() and value != "":
            items.append((int(n), value))
    return ",".join(v for _, v in sorted(items)) if items else None


SERVICE_POLICY = {"Ecs": "ECS", "Vpc": "VPC", "Oss": "OSS", "Ram": "RAM", "Slb": "SLB", "Rds": "RDS",
                  "Dds": "MongoDB", "Actiontrail": "ActionTrail"}


class Engine:
    """Runs operations against the store, as described by the catalog."""

    def __init__(self, catalog: Catalog, store: Store) -> None:
        self.catalog = catalog
        self.store = store
        self.special: dict[tuple[str, str], Callable[..., dict[str, Any]]] = {
            ("2020-07-06", "LookupEvents"): self._lookup_events,
        }
        #: (Version, public Action) -> operations that answer it when their ``match`` holds
        self.aliases: dict[tuple[str, str], list[tuple[str, str, dict[str, Any]]]] = {}
        for (version, _name), (pkey, rtype, spec) in catalog.ops.items():
            if spec.get("event") and spec.get("match"):
                self.aliases.setdefault((version, spec["event"]), []).append((pkey, rtype, spec))

    # ------------------------------------------------------------- entry
    def call(self, caller: Caller, version: str, action: str, params: dict[str, str],
             *, product_hint: str | None = None) -> dict[str, Any]:
        """Run one operation and audit it. Raises :class:`ApiError`."""
        request_id = str(uuid.uuid4()).upper()
        started = time.time()
        found, params = self._resolve(caller, version, action, params)
        if found and found[2].get("event"):
            action = found[2]["event"]
        special = self.special.get((version, action))
        product_key = found[0] if found else ("actiontrail" if special else product_hint)
        response: dict[str, Any] | None = None
        error: ApiError | None = None
        touched: list[dict[str, Any]] = []
        region = params.get("RegionId") or "cn-hangzhou"
        try:
            if not found and not special:
                if version not in self.catalog.versions():
                    raise ApiError("InvalidVersion", f"Specified parameter Version '{version}' is not valid.", 400)
                raise ApiError("InvalidAction.NotFound",
                               "Specified api is not found, please check your url and method.", 404)
            product = self.catalog.product(product_key)
            if special:
                rw = "Read"
            else:
                rw = "Read" if found[2]["kind"] in ("list", "get") else "Write"
            region = self._region(product, params, found[2] if found else {"all_regions": True}) or "cn-hangzhou"
            self._authorize(caller, product, rw, action)
            if special:
                response = special(caller, params)
            else:
                _, rtype, spec = found
                response = self._run(caller, product_key, rtype, action, spec, params, region, touched)
            response = {"RequestId": request_id, **response}
            return response
        except ValidationErrors as exc:
            error = exc
            raise
        except ApiError as exc:
            error = exc
            raise
        finally:
            if product_key:
                product = self.catalog.product(product_key)
                rw = "Read" if (special or (found and found[2]["kind"] in ("list", "get"))) else "Write"
                subject = None
                if found:
                    res = self.catalog.resource(found[0], found[1])
                    subject = (res, found[2].get("id_param", res["id_param"]))
                event = audit.build_event(
                    product=product, catalog=self.catalog, action=action, rw=rw, caller=caller,
                    params=params, response=response, error=error, touched=touched, region=region,
                    request_id=request_id, when=started, subject=subject)
                self.store.add_event(caller.account_id, event, started)

    def _resolve(self, caller: Caller, version: str, action: str, params: dict[str, str]):
        """The operation a call runs, and its parameters as the API names them.

        A public Action whose parameters match an aliased operation runs that one;
        an aliased operation's own catalog name is no API Action (only console
        actions use it), and its parameters are completed into the public call:
        the ``match`` values, and the resource id under the operation's ``id_param``.
        """
        for pkey, rtype, spec in self.aliases.get((version, action), ()):
            if all(params.get(k) if v == "*" else params.get(k) == str(v) for k, v in spec["match"].items()):
                return (pkey, rtype, spec), params
        found = self.catalog.find_op(version, action)
        if not found or not found[2].get("event") or found[2]["event"] == action:
            return found, params
        if caller.channel != "console":
            return None, params
        spec = found[2]
        public = dict(params)
        for k, v in (spec.get("match") or {}).items():
            if v != "*":
                public.setdefault(k, str(v))
        own_id = self.catalog.resource(found[0], found[1])["id_param"]
        id_param = spec.get("id_param", own_id)
        if id_param != own_id and own_id in public and id_param not in public:
            public[id_param] = public.pop(own_id)
        return found, public

    # ----------------------------------------------------------- checks
    def _region(self, product: dict[str, Any], params: dict[str, str], spec: dict[str, Any]) -> str:
        region = params.get("RegionId")
        if not product.get("regional", True):
            if region and region not in REGIONS:
                raise ApiError("InvalidRegionId.NotFound", f"The specified RegionId '{region}' does not exist.", 404)
            return "global"
        if not region:
            if spec.get("all_regions"):
                return ""
            raise missing("RegionId")
        if region not in REGIONS:
            raise ApiError("InvalidRegionId.NotFound", f"The specified RegionId '{region}' does not exist.", 404)
        return region

    def policies_of(self, account_id: str, user_name: str) -> list[str]:
        users = self.store.find(account_id, "ram", "user", name=user_name)
        out: list[str] = []
        for u in users:
            out.extend(u["attrs"].get("Policies", []))
        for g in self.store.find(account_id, "ram", "grant"):
            if g["attrs"].get("UserName") == user_name:
                out.append(g["attrs"].get("PolicyName", ""))
        return out

    def _authorize(self, caller: Caller, product: dict[str, Any], rw: str, action: str) -> None:
        if caller.identity.get("type") == "root-account":
            return
        policies = set(self.policies_of(caller.account_id, caller.identity.get("userName", "")))
        service = SERVICE_POLICY.get(product["service_name"], product["service_name"])
        if "AdministratorAccess" in policies or f"Aliyun{service}FullAccess" in policies:
            return
        if rw == "Read" and ("ReadOnlyAccess" in policies or f"Aliyun{service}ReadOnlyAccess" in policies):
            return
        raise ApiError("Forbidden.RAM", f"User not authorized to operate on the specified resource, or this API "
                       f"doesn't support RAM. ({product['service_name'].lower()}:{action})", 403)

    # ----------------------------------------------------------- fields
    def fields_of(self, product: str, rtype: str) -> dict[str, dict[str, Any]]:
        res = self.catalog.resource(product, rtype)
        return {**res.get("extra_fields", {}), **res.get("fields", {})}

    def validate(self, caller: Caller, product: str, rtype: str, specs: dict[str, dict[str, Any]],
                 params: dict[str, str], region: str, *, require: bool, only: list[str] | None = None,
                 required_extra: tuple[str, ...] = ()) -> dict[str, Any]:
        """Check params against field declarations; return the cleaned values."""
        values: dict[str, Any] = {}
        errors: dict[str, ApiError] = {}
        names = only if only is not None else list(specs)
        merged = {n: (params[n] if n in params else specs.get(n, {}).get("default")) for n in names}
        for name in names:
            spec = specs.get(name) or {"label": name, "type": "text"}
            kind = spec.get("type", "text")
            if kind in ("display", "region_display"):
                continue
            cond = spec.get("when")
            if cond and any(str(merged.get(k)) != str(v) for k, v in cond.items()):
                continue
            raw = params.get(name)
            if raw is None and kind == "checkboxes":
                raw = listed(params, name)
            if raw is None or raw == "":
                if (require and spec.get("required")) or name in required_extra:
                    errors[name] = missing(name)
                    continue
                if require and spec.get("default") is not None:
                    raw = spec["default"]
                else:
                    continue
            try:
                values[name] = self._check(caller, product, rtype, name, spec, str(raw), region, params)
            except ApiError as exc:
                errors[name] = exc
        if errors:
            raise ValidationErrors(errors)
        return values

    def _check(self, caller: Caller, product: str, rtype: str, name: str, spec: dict[str, Any], raw: str,
               region: str, params: dict[str, str]) -> Any:
        kind = spec.get("type", "text")
        code = spec.get("error")
        if kind in ("text", "password", "textarea", "tags"):
            if spec.get("min_len") and len(raw) < spec["min_len"]:
                raise invalid(name, code, f"It must be at least {spec['min_len']} characters long.")
            if spec.get("max_len") and len(raw) > spec["max_len"]:
                raise invalid(name, code, f"It must be at most {spec['max_len']} characters long.")
            if spec.get("pattern") and not re.match(spec["pattern"], raw):
                raise invalid(name, code, "It contains characters that are not allowed or starts wrongly.")
            if spec.get("json"):
                try:
                    json.loads(raw)
                except ValueError:
                    raise invalid(name, code, "It is not valid JSON.") from None
            return raw
        if kind == "number":
            try:
                num = int(raw)
            except ValueError:
                raise invalid(name, code, "It must be an integer.") from None
            if "min" in spec and num < spec["min"] or "max" in spec and num > spec["max"]:
                raise invalid(name, code, f"Valid values: {spec.get('min')} to {spec.get('max')}.")
            return raw
        if kind in ("select", "radio"):
            if raw not in {str(k) for k in spec.get("options", {})}:
                raise invalid(name, code, "Valid values: " + ", ".join(str(k) for k in spec["options"]) + ".")
            return raw
        if kind == "checkboxes":
            chosen = list(dict.fromkeys(v.strip() for v in raw.split(",") if v.strip()))
            allowed = [str(k) for k in spec.get("options", {})]
            if not chosen or any(v not in allowed for v in chosen):
                raise invalid(name, code, "Valid values: " + ", ".join(allowed) + ".")
            return ",".join(chosen)
        if kind in ("checkbox", "switch"):
            if raw.lower() not in ("true", "false", "on", "1", "0"):
                raise invalid(name, code, "Valid values: true, false.")
            return "true" if truthy(raw) else "false"
        if kind == "zone":
            if raw not in zones(region):
                raise ApiError("InvalidZoneId.NotFound", f"The specified zone '{raw}' does not exist in {region}.",
                               404, field=name)
            return raw
        if kind == "cidr":
            try:
                net = ipaddress.ip_network(raw, strict=True)
            except ValueError:
                raise invalid(name, code or "InvalidCidrBlock.Malformed", "It is not a valid CIDR block.") from None
            within = spec.get("within")
            if within and params.get(within):
                parent = self.store.find(caller.account_id, product, "vpc", id=params[within])
                if parent and not net.subnet_of(ipaddress.ip_network(parent[0]["attrs"]["CidrBlock"])):
                    raise invalid(name, code, "The vSwitch CIDR block must be within the VPC CIDR block.")
            return raw
        if kind == "ref":
            ref_product = spec.get("product", product)
            ref_type = spec["ref"]
            target = self.catalog.resource(ref_product, ref_type)
            regional = self.catalog.product(ref_product).get("regional", True)
            kwargs = {"name": raw} if spec.get("by") == "name" else {"id": raw}
            rows = self.store.find(caller.account_id, ref_product, ref_type,
                                   region=region if regional else None, **kwargs)
            if not rows:
                raise ApiError(spec.get("error") or target.get("not_found", "InvalidParameter"),
                               f"The specified {target['singular']} '{raw}' does not exist.", 404, field=name)
            return raw
        return raw

    # -------------------------------------------------------------- run
    def serialize(self, product: str, rtype: str, rec: dict[str, Any], *, secrets: bool = False) -> dict[str, Any]:
        res = self.catalog.resource(product, rtype)
        specs = self.fields_of(product, rtype)
        out: dict[str, Any] = {}
        for k, v in rec["attrs"].items():
            if (specs.get(k) or {}).get("secret") or (k == "AccessKeySecret" and not secrets):
                continue
            out[k] = v
        out[res["id_param"]] = rec["id"]
        if res.get("name_param"):
            out[res["name_param"]] = rec["name"] if rec["name"] is not None else ""
        if rec["region"] and rec["region"] != "global":
            out["RegionId"] = rec["region"]
        if rec["status"] is not None:
            out[res.get("status_param", "Status")] = rec["status"]
        out["CreationTime"] = iso(rec["created"])
        return out

    def get_one(self, caller: Caller, product: str, rtype: str, ident: str, region: str,
                parent_id: str | None = None) -> dict[str, Any]:
        res = self.catalog.resource(product, rtype)
        regional = self.catalog.product(product).get("regional", True) and region
        kwargs: dict[str, Any] = {"name": ident} if res.get("lookup_by_name") else {"id": ident}
        rows = self.store.find(caller.account_id, product, rtype, region=region if regional else None,
                               parent_id=parent_id, **kwargs)
        if not rows and res.get("lookup_by_name"):
            rows = self.store.find(caller.account_id, product, rtype, id=ident)
        if not rows:
            raise ApiError(res.get("not_found", "InvalidParameter"),
                           f"The specified {res['singular']} '{ident}' does not exist.", 404,
                           field=res["id_param"])
        return rows[0]

    def _parent(self, caller: Caller, product: str, res: dict[str, Any], params: dict[str, str],
                region: str, *, required: bool) -> dict[str, Any] | None:
        if not res.get("parent"):
            return None
        parent_res = self.catalog.resource(product, res["parent"])
        pparam = res.get("parent_param", parent_res["id_param"])
        pid = params.get(pparam)
        if not pid:
            if required:
                raise missing(pparam)
            return None
        return self.get_one(caller, product, res["parent"], pid, region)

    def _run(self, caller: Caller, product: str, rtype: str, action: str, spec: dict[str, Any],
             params: dict[str, str], region: str, touched: list[dict[str, Any]]) -> dict[str, Any]:
        res = self.catalog.resource(product, rtype)
        kind = spec["kind"]
        params = dict(params)
        for api_name, field_name in (spec.get("rename") or {}).items():
            if api_name in params:
                params[field_name] = params.pop(api_name)
        handler = getattr(self, f"_op_{kind}")
        with self.store.tx() as db:
            return handler(db, caller, product, rtype, res, action, spec, params, region, touched)

    def _op_create(self, db, caller, product, rtype, res, action, spec, params, region, touched):
        specs = self.fields_of(product, rtype)
        parent = self._parent(caller, product, res, params, region, required=True)
        create_fields = create_field_names(res)
        values = self.validate(caller, product, rtype, specs, params, region, require=True, only=create_fields)
        values.update(spec.get("defaults", {}))
        for k, v in res.get("defaults", {}).items():
            values.setdefault(k, v)
        self._derive(caller, product, specs, spec, values)
        if parent is not None and res.get("max_per_parent"):
            count = len(self.store.find(caller.account_id, product, rtype, parent_id=parent["id"]))
            if count >= res["max_per_parent"]:
                raise ApiError(res.get("max_error", "QuotaExceeded"),
                               f"You can create at most {res['max_per_parent']} {res['title']}.", 400)
        amount = int(values.pop("Amount", "1") or 1) if "Amount" in res.get("fields", {}) else 1
        now = time.time()
        latency = self.store.latency
        initial = spec.get("initial")
        final = spec.get("final", initial)
        if spec.get("status_param") and values.get(spec["status_param"]):
            # the caller chooses the status (a lifecycle rule created Disabled)
            initial = final = values.pop(spec["status_param"])
            if initial not in res.get("statuses", {}):
                raise invalid(spec["status_param"])
        ids = []
        records = []
        for _ in range(amount):
            if res.get("id_is_name"):
                ident = values.get(res["id_param"]) or params.get(res["id_param"])
                if not ident:
                    raise missing(res["id_param"])
                dup = (self.store.exists_anywhere(product, rtype, ident) if res.get("unique_global") else
                       bool(self.store.find(caller.account_id, product, rtype, id=ident,
                                            parent_id=parent["id"] if parent else None)))
                if dup:
                    raise ApiError(res.get("unique_global") or res.get("unique") or "InvalidParameter.Duplicate",
                                   f"The {res['singular']} '{ident}' already exists.", 409,
                                   field=res["id_param"])
            else:
                ident = self.store.new_id(res.get("id_prefix", ""), region, res.get("id_format"))
            name = values.get(res.get("name_param", ""), None)
            if res.get("lookup_by_name") and self.store.find(caller.account_id, product, rtype, name=name):
                raise ApiError(res.get("unique", "InvalidParameter.Duplicate"),
                               f"The {res['singular']} '{name}' already exists.", 409, field=res["name_param"])
            attrs = {k: v for k, v in values.items() if k not in (res["id_param"], res.get("name_param"))}
            for attr, gen in (res.get("generate") or {}).items():
                if not attrs.get(attr):  # generated unless the caller chose it
                    attrs[attr] = self._generate(gen, self._cidr_of(caller, product, specs, gen, attrs))
            if parent is not None:
                attrs[res.get("parent_param", self.catalog.resource(product, res["parent"])["id_param"])] = \
                    params.get(res.get("parent_param", self.catalog.resource(product, res["parent"])["id_param"]))
                if res["parent"] == "user":
                    attrs["UserName"] = parent["name"]
            rec = {"id": ident, "account_id": caller.account_id, "product": product, "rtype": rtype,
                   "region": region or "global", "name": name if name is not None else (ident if res.get("id_is_name") else None),
                   "parent_id": parent["id"] if parent else None, "attrs": attrs, "created": now,
                   "status": initial, "target_status": final if final != initial else None,
                   "ready_at": now + latency if final != initial else None}
            if latency <= 0 and final != initial:
                rec["status"], rec["target_status"], rec["ready_at"] = final, None, None
            self.store.insert(db, rec)
            ids.append(ident)
            rec["seq"] = None
            records.append(rec)
            self._touch(touched, product, rtype, res, ident, rec["parent_id"])
        template = spec.get("response")
        rec = records[0]
        shown = dict(rec, status=rec["status"])
        item = self.serialize(product, rtype, shown)
        if template is None:
            return {res["id_param"]: ids[0]}
        return self._render(template, ids, item, rec["attrs"])

    def _render(self, template: Any, ids: list[str], item: dict[str, Any], attrs: dict[str, Any]) -> Any:
        if isinstance(template, dict):
            return {k: self._render(v, ids, item, attrs) for k, v in template.items()}
        if isinstance(template, list):
            return [self._render(v, ids, item, attrs) for v in template]
        if template == "$id":
            return ids[0]
        if template == "$ids":
            return ids
        if template == "$item":
            return item
        if isinstance(template, str) and template.startswith("$attr."):
            return attrs.get(template[6:])
        if isinstance(template, str) and template.startswith("$gen."):
            return self.store.new_id(template[5:] + "-", "cn-hangzhou")
        return template

    def _derive(self, caller: Caller, product: str, specs: dict[str, dict[str, Any]], spec: dict[str, Any],
                values: dict[str, Any]) -> None:
        """Fill attributes a create operation takes from the resources it references
        (``derive: {VpcId: [VSwitchId.VpcId, SecurityGroupId.VpcId]}``): every source,
        and the value the caller gave, must agree."""
        for attr, sources in (spec.get("derive") or {}).items():
            seen: dict[str, Any] = {}
            for source in sources:
                fname, _, ref_attr = source.partition(".")
                fspec = specs.get(fname) or {}
                if not values.get(fname) or fspec.get("type") != "ref":
                    continue
                rows = self.store.find(caller.account_id, fspec.get("product", product), fspec["ref"],
                                       id=values[fname])
                if rows:
                    seen[fname] = rows[0]["attrs"].get(ref_attr) or ""
            if values.get(attr):
                seen[attr] = values[attr]
            if len(set(seen.values())) > 1:
                label = (specs.get(attr) or {}).get("label", attr)
                raise ApiError(spec.get("mismatch_error", "InvalidParameter.Mismatch"),
                               f"The specified {' and '.join(seen)} are not in the same {label}.", 400,
                               field=next(iter(seen)))
            if seen:
                values[attr] = next(iter(seen.values()))

    def _cidr_of(self, caller: Caller, product: str, specs: dict[str, dict[str, Any]], gen: str,
                 attrs: dict[str, Any]) -> str | None:
        """The CIDR block an address is generated in (``private_ip:VSwitchId``), if any."""
        _, _, fname = gen.partition(":")
        fspec = specs.get(fname) or {}
        if not fname or not attrs.get(fname) or fspec.get("type") != "ref":
            return None
        rows = self.store.find(caller.account_id, fspec.get("product", product), fspec["ref"], id=attrs[fname])
        return rows[0]["attrs"].get("CidrBlock") if rows else None

    def _generate(self, gen: str, cidr: str | None = None) -> str:
        tok = self.store.token(12)
        h = sum(map(ord, tok))
        gen = gen.partition(":")[0]
        if gen == "private_ip" and cidr:
            net = ipaddress.ip_network(cidr, strict=False)
            usable = max(net.num_addresses - 4, 1)  # Alibaba keeps the first three and the last address
            return str(net.network_address + 3 + (h * 7919) % usable)
        if gen == "private_ip":
            return f"192.168.{h % 250}.{(h * 7) % 250 + 2}"
        if gen == "mac":
            return "00:16:3e:" + ":".join(f"{(h * k) % 256:02x}" for k in (31, 37, 41))
        if gen == "public_ip":
            return f"47.{96 + h % 20}.{h % 250}.{(h * 13) % 250 + 2}"
        if gen == "secret":
            return self.store.token(30)
        if gen == "fingerprint":
            return ":".join(f"{ord(c) % 256:02x}" for c in tok[:16])
        if gen == "available_ips":
            return "252"
        return tok

    def _op_list(self, db, caller, product, rtype, res, action, spec, params, region, touched):
        parent = self._parent(caller, product, res, params, region, required=False)
        regional = self.catalog.product(product).get("regional", True) and region
        rows = self.store.find(caller.account_id, product, rtype, region=region if regional else None,
                               parent_id=parent["id"] if parent else None)
        ident = params.get(res["id_param"])
        plural = params.get(res["id_param"] + "s")
        if plural:
            try:
                wanted = set(json.loads(plural))
            except ValueError:
                raise invalid(res["id_param"] + "s", None, "It must be a JSON array.") from None
            rows = [r for r in rows if r["id"] in wanted]
        if ident:
            rows = [r for r in rows if r["id"] == ident]
        name_param = res.get("name_param")
        if name_param and params.get(name_param) and name_param != res["id_param"]:
            rows = [r for r in rows if r["name"] == params[name_param]]
        if params.get("Status"):
            rows = [r for r in rows if r["status"] == params["Status"]]
        for fname in self.fields_of(product, rtype):
            if fname in params and fname not in (name_param, res["id_param"], "RegionId") and \
                    self.fields_of(product, rtype)[fname].get("type") == "ref":
                rows = [r for r in rows if r["attrs"].get(fname) == params[fname]]
        page, size = self._paging(params)
        total = len(rows)
        items = [self.serialize(product, rtype, r) for r in rows[(page - 1) * size: page * size]]
        key = spec.get("list_key") or res["list_key"]
        body: Any = items if len(key) == 1 else {key[1]: items}
        return {key[0]: body, "TotalCount": total, "PageNumber": page, "PageSize": size}

    @staticmethod
    def _paging(params: dict[str, str]) -> tuple[int, int]:
        try:
            page = int(params.get("PageNumber", "1"))
            size = int(params.get("PageSize", "10"))
        except ValueError:
            raise invalid("PageNumber/PageSize", None, "It must be an integer.") from None
        if page < 1:
            raise invalid("PageNumber")
        if not 1 <= size <= 100:
            raise invalid("PageSize", None, "Valid values: 1 to 100.")
        return page, size

    def _target(self, caller, product, res, params, region, spec):
        id_param = spec.get("id_param", res["id_param"])
        ident = params.get(id_param)
        if not ident and res.get("lookup_by_name"):
            ident = params.get(res.get("name_param", ""))
        if not ident:
            raise missing(id_param)
        parent = self._parent(caller, product, res, params, region, required=False)
        return self.get_one(caller, product, res_key(self.catalog, product, res), ident, region,
                            parent_id=parent["id"] if parent else None)

    def _op_get(self, db, caller, product, rtype, res, action, spec, params, region, touched):
        rec = self._target(caller, product, res, params, region, spec)
        item = self.serialize(product, rtype, rec)
        if spec.get("fields"):
            item = {k: item.get(k, []) for k in spec["fields"]}
        children = spec.get("children")
        if children:
            for child_key, child in self.catalog.product(product)["resources"].items():
                if child.get("parent") == rtype:
                    rows = self.store.find(caller.account_id, product, child_key, parent_id=rec["id"])
                    item[children[0]] = {children[1]: [self.serialize(product, child_key, r) for r in rows]}
        if spec.get("wrap"):
            return {spec["wrap"]: item}
        return item

    def _check_status(self, res, rec, allowed, action):
        if allowed and rec["status"] not in allowed:
            raise ApiError(res.get("status_error", "IncorrectStatus"),
                           f"The current status of the resource does not support this operation. "
                           f"({rec['id']} is {rec['status']}; {action} needs {', '.join(allowed)})", 403)

    def _op_update(self, db, caller, product, rtype, res, action, spec, params, region, touched):
        rec = self._target(caller, product, res, params, region, spec)
        specs = self.fields_of(product, rtype)
        names = list(spec.get("params", []))
        required = tuple(n for n in names if (specs.get(n) or {}).get("required") and
                         ((specs.get(n) or {}).get("type") == "ref" or n in (spec.get("append") or {}).values()))
        values = self.validate(caller, product, rtype, specs, params, region, require=False, only=names,
                               required_extra=required)
        self._check_status(res, rec, spec.get("from"), action)
        attrs = dict(rec["attrs"])
        cols: dict[str, Any] = {}
        for k, v in values.items():
            if k == res.get("name_param"):
                cols["name"] = v
            elif k == spec.get("status_param"):
                if v not in res.get("statuses", {}):
                    raise invalid(k)
                cols["status"] = v
            elif k not in (spec.get("append") or {}).values() and k not in (spec.get("remove") or {}).values():
                attrs[k] = v
        for attr, param in (spec.get("append") or {}).items():
            lst = list(attrs.get(attr, []))
            if values.get(param) and values[param] not in lst:
                lst.append(values[param])
            attrs[attr] = lst
        for attr, param in (spec.get("remove") or {}).items():
            attrs[attr] = [x for x in attrs.get(attr, []) if x != values.get(param)]
        for attr, ref_attr in (spec.get("set_from_ref") or {}).items():
            for pname in names:
                fspec = specs.get(pname) or {}
                if fspec.get("type") == "ref" and values.get(pname):
                    ref = self.store.find(caller.account_id, fspec.get("product", product), fspec["ref"],
                                          id=values[pname])
                    if ref:
                        attrs[attr] = ref[0]["attrs"].get(ref_attr)
        linked = self._link(db, caller, product, specs, rec, spec, values, action)
        for attr in spec.get("clear", []):
            attrs.pop(attr, None)
        if spec.get("to"):
            self._set_status(cols, spec)
        cols["attrs"] = attrs
        self.store.update(db, rec["seq"], **cols)
        self._touch(touched, product, rtype, res, rec["id"], rec["parent_id"])
        touched.extend(linked)
        return {}

    def _link(self, db, caller: Caller, product: str, specs: dict[str, dict[str, Any]], rec: dict[str, Any],
              spec: dict[str, Any], values: dict[str, Any], action: str) -> list[dict[str, Any]]:
        """Bind or unbind the resources an update names, on their side too: ``link``
        (``{AllocationId: {from: [Available], status: InUse, set: {InstanceId: $id}}}``)
        checks and sets the referenced resource; ``unlink`` (``{AllocationId: {status:
        Available, clear: [InstanceId]}}``) returns it. Answers what it changed."""
        changed: list[dict[str, Any]] = []
        for fname, how in (spec.get("link") or {}).items():
            fspec = specs[fname]
            ref_product, ref_type = fspec.get("product", product), fspec["ref"]
            old, new = rec["attrs"].get(fname), values.get(fname)
            if not new or new == old:
                continue
            target = self.store.find(caller.account_id, ref_product, ref_type, id=new)[0]
            self._check_status(self.catalog.resource(ref_product, ref_type), target, how.get("from"), action)
            if old:  # one slot: the resource bound before is let go
                for prev in self.store.find(caller.account_id, ref_product, ref_type, id=old):
                    self._release(db, prev, {"status": (how.get("from") or [None])[0], "clear": list(how["set"])})
            attrs = dict(target["attrs"])
            attrs.update({k: rec["id"] if v == "$id" else v for k, v in how.get("set", {}).items()})
            self.store.update(db, target["seq"], attrs=attrs, status=how.get("status", target["status"]),
                              target_status=None, ready_at=None)
            changed.append({"product": ref_product, "rtype": ref_type, "id": new})
        for fname, how in (spec.get("unlink") or {}).items():
            fspec = specs[fname]
            ref_product, ref_type = fspec.get("product", product), fspec["ref"]
            ident = values.get(fname) or rec["attrs"].get(fname)
            if not ident:
                continue
            ref_res = self.catalog.resource(ref_product, ref_type)
            if rec["attrs"].get(fname) != ident:
                raise ApiError(ref_res.get("status_error", "IncorrectStatus"),
                               f"The {ref_res['singular']} '{ident}' is not associated with {rec['id']}.", 400,
                               field=fname)
            for target in self.store.find(caller.account_id, ref_product, ref_type, id=ident):
                self._release(db, target, how)
                changed.append({"product": ref_product, "rtype": ref_type, "id": ident})
        return changed

    def _release(self, db, row: dict[str, Any], how: dict[str, Any]) -> None:
        """Let a resource go from what bound it: a new status, some attributes cleared."""
        attrs = {k: v for k, v in row["attrs"].items() if k not in how.get("clear", [])}
        cols: dict[str, Any] = {"attrs": attrs}
        if how.get("status"):
            cols.update(status=how["status"], target_status=None, ready_at=None)
        self.store.update(db, row["seq"], **cols)

    def _touch(self, touched: list[dict[str, Any]], product: str, rtype: str, res: dict[str, Any],
               ident: str | None, parent_id: str | None) -> None:
        """Note what an operation acted on, for its ActionTrail event. Configuration kept
        as children of a resource (``audit_as: parent``, a bucket's CORS rules) is recorded
        as a change of that resource, as the cloud records it."""
        if res.get("audit_as") == "parent" and parent_id:
            entry = {"product": product, "rtype": res["parent"], "id": parent_id}
        else:
            entry = {"product": product, "rtype": rtype, "id": ident}
        if entry not in touched:
            touched.append(entry)

    def _set_status(self, cols: dict[str, Any], spec: dict[str, Any]) -> None:
        latency = self.store.latency
        if latency <= 0 or spec.get("via") == spec["to"]:
            cols.update(status=spec["to"], target_status=None, ready_at=None)
        else:
            cols.update(status=spec["via"], target_status=spec["to"], ready_at=time.time() + latency)

    def _op_transition(self, db, caller, product, rtype, res, action, spec, params, region, touched):
        rec = self._target(caller, product, res, params, region, spec)
        self._check_status(res, rec, spec.get("from"), action)
        cols: dict[str, Any] = {}
        self._set_status(cols, spec)
        self.store.update(db, rec["seq"], **cols)
        self._touch(touched, product, rtype, res, rec["id"], rec["parent_id"])
        return {}

    def _op_delete(self, db, caller, product, rtype, res, action, spec, params, region, touched):
        if spec.get("id_list_param") and params.get(spec["id_list_param"]):
            try:
                idents = json.loads(params[spec["id_list_param"]])
            except ValueError:
                raise invalid(spec["id_list_param"], None, "It must be a JSON array.") from None
            recs = [self.get_one(caller, product, rtype, i, region) for i in idents]
        elif spec.get("all_in_parent") and not params.get(spec.get("id_param", res["id_param"])):
            # without an id: every one the parent holds (DeleteBucketCors empties the bucket's CORS)
            parent = self._parent(caller, product, res, params, region, required=True)
            recs = self.store.find(caller.account_id, product, rtype, parent_id=parent["id"])
            if not recs:
                touched.append({"product": product, "rtype": res["parent"], "id": parent["id"]})
        else:
            recs = [self._target(caller, product, res, params, region, spec)]
        force = truthy(params.get(spec.get("force_param", "Force"), "false"))
        forced = force and bool(spec.get("force_param"))  # the operation's own Force: take dependents along
        for rec in recs:
            if spec.get("protect") and truthy(rec["attrs"].get(spec["protect"], "false")):
                raise ApiError("InvalidOperation.DeletionProtection",
                               "The operation is not permitted due to deletion protection.", 403)
            if not force:
                self._check_status(res, rec, spec.get("from"), action)
            if not forced:
                for child, code in blocking_children(spec).items():
                    if self.store.find(caller.account_id, product, child, parent_id=rec["id"]):
                        child_res = self.catalog.resource(product, child)
                        raise ApiError(code, f"The {res['singular']} still has dependent resources "
                                             f"({child_res['title']}).", 400)
            for other in spec.get("block_if_referenced", []):
                if self.store.referencing(caller.account_id, product, other, res["id_param"], rec["id"]):
                    raise ApiError("DependencyViolation",
                                   f"The {res['singular']} is still used by other resources.", 403)
            for ref in spec.get("referenced_by", []):
                ref_product = ref.get("product", product)
                rows = self.store.referrers(caller.account_id, ref_product, ref["rtype"],
                                            ref.get("attr", res["id_param"]), rec["id"])
                if rows and ref.get("error") and not (forced and ref.get("release")):
                    other_res = self.catalog.resource(ref_product, ref["rtype"])
                    raise ApiError(ref["error"], f"The {res['singular']} is still used by "
                                                 f"{other_res['title']}: {', '.join(r['id'] for r in rows)}.", 400)
                for row in rows if ref.get("release") else ():
                    self._release(db, row, ref["release"])
            self.store.delete(db, rec["seq"])
            self._delete_children(db, caller.account_id, product, rtype, rec["id"])
            self._touch(touched, product, rtype, res, rec["id"], rec["parent_id"])
        return {}

    def _delete_children(self, db, account_id: str, product: str, rtype: str, ident: str) -> None:
        """Delete what a deleted resource held (listeners of a load balancer, entries of
        a NAT gateway), down every level the catalog declares."""
        for child, cres in self.catalog.product(product)["resources"].items():
            if cres.get("parent") != rtype:
                continue
            for row in self.store.find(account_id, product, child, parent_id=ident):
                self._delete_children(db, account_id, product, child, row["id"])
                self.store.delete(db, row["seq"])

    # ---------------------------------------------------------- specials
    def _lookup_events(self, caller: Caller, params: dict[str, str]) -> dict[str, Any]:
        return audit.lookup_events(self.store, caller.account_id, params)


def blocking_children(spec: dict[str, Any]) -> dict[str, str]:
    """A delete operation's ``block_if_children`` as child type -> error code (a list
    uses the operation's ``dependency_error`` for every child type)."""
    children = spec.get("block_if_children") or {}
    if isinstance(children, dict):
        return dict(children)
    return {child: spec.get("dependency_error", "DependencyViolation") for child in children}


def create_field_names(res: dict[str, Any]) -> list[str]:
    """The fields a resource's create flow collects (wizard steps, page sections or panel fields)."""
    create = res.get("create") or {}
    if create.get("steps"):
        return [f for step in create["steps"].values() for f in step.get("fields", [])]
    if create.get("sections"):
        return [f for fields in create["sections"].values() for f in fields]
    if create.get("fields"):
        return list(create["fields"])
    return list(res.get("fields", {}))


def res_key(catalog: Catalog, product: str, res: dict[str, Any]) -> str:
    for key, value in catalog.product(product)["resources"].items():
        if value is res:
            return key
    raise KeyError(res.get("title"))
