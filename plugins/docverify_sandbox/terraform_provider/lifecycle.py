"""Create, read, update and delete one sandbox resource through the signed RPC API.

Plain, synchronous functions over :class:`docverify_sandbox.client.SandboxClient`,
driven by a :class:`~docverify_sandbox.terraform_provider.catalog_types.ResourceType`;
the pyvider resources run them in a worker thread. Creation waits for the
operation's final status, deletion until the resource is gone; reading answers
None for a resource that no longer exists.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Callable

from docverify_sandbox.client import SandboxApiError, SandboxClient
from docverify_sandbox.terraform_provider.catalog_types import ResourceType

#: how long a create or delete may wait for the resource to settle, in seconds
SETTLE_TIMEOUT = 300.0
#: parameters every signed RPC request carries; an id parameter of the same name (a RAM user's
#: ``AccessKeyId``) cannot be sent as a filter, so such lists are filtered here instead
COMMON_PARAMS = frozenset({"Action", "Version", "Format", "AccessKeyId", "SignatureMethod", "SignatureVersion",
                           "SignatureNonce", "Timestamp", "Signature"})


class ResourceFailure(Exception):
    """An API call for a resource failed; the message is one line (no secrets: the API never echoes them)."""


def api_value(value: Any) -> str:
    """An attribute value as the RPC API takes it: ``true``/``false``, integers without ``.0``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (float, Decimal)) and value == int(value):
        return str(int(value))
    return str(value)


def attribute_value(kind: str, raw: Any) -> Any:
    """An API value as the attribute's Terraform type holds it (None when it does not convert)."""
    if raw is None or isinstance(raw, (dict, list)):
        return None
    if kind == "bool":
        return str(raw).lower() in ("true", "1", "on", "yes")
    if kind == "number":
        try:
            number = float(raw)
        except (TypeError, ValueError):
            return None
        return int(number) if number.is_integer() else number
    return str(raw)


class SandboxResources:
    """The API calls behind every resource type, for one endpoint, AccessKey and default region."""

    def __init__(self, client: SandboxClient, region: str, *, poll: float = 0.1,
                 settle_timeout: float = SETTLE_TIMEOUT, sleep: Callable[[float], None] = time.sleep,
                 types: Mapping[str, ResourceType] | None = None) -> None:
        self.client = client
        self.region = region
        self.types = types  #: every resource type, to delete what depends on a resource; None: no cascade
        self.poll = poll
        self.settle_timeout = settle_timeout
        self.sleep = sleep

    # ------------------------------------------------------------ plumbing
    def _call(self, rt: ResourceType, action: str, params: dict[str, str]) -> dict[str, Any]:
        try:
            return self.client.call(action, rt.version, params)
        except SandboxApiError as exc:
            raise ResourceFailure(f"{rt.name}: {action} failed: {exc.code}: {exc.body.get('Message', '')}") from None

    def _scope(self, rt: ResourceType, region: str | None, parent: str | None) -> dict[str, str]:
        params: dict[str, str] = {}
        if rt.regional:
            params["RegionId"] = region or self.region
        if rt.parent_param and parent:
            params[rt.parent_param] = parent
        return params

    def _is_gone(self, rt: ResourceType, exc: SandboxApiError) -> bool:
        return exc.status == 404 and exc.code in rt.not_found

    # -------------------------------------------------------------- create
    def create(self, rt: ResourceType, values: dict[str, Any], region: str | None = None) -> dict[str, Any]:
        """Create one resource from attribute values (API names); wait for its final status; return it."""
        parent = values.get(rt.parent_param) if rt.parent_param else None
        params = self._scope(rt, region, parent)
        params.update({a.api_name: a.default for a in rt.attributes if a.default is not None})
        params.update({k: api_value(v) for k, v in values.items() if v is not None})
        response = self._call(rt, rt.create_action, params)
        ident = self._created_id(rt, response, params, region, parent)
        try:
            return self.wait_until_ready(rt, ident, region, parent)
        except ResourceFailure as exc:
            # Terraform records nothing for a failed create: take the half-made resource back, or say it is there
            try:
                self.delete(rt, ident, region, parent)
            except ResourceFailure:
                raise ResourceFailure(f"{exc} (and {ident} could not be deleted again: delete it by hand)") from None
            raise ResourceFailure(f"{exc} (it was deleted again)") from None

    def _created_id(self, rt: ResourceType, response: dict[str, Any], params: dict[str, str],
                    region: str | None, parent: str | None) -> str:
        if rt.id_is_name:
            return params[rt.id_param]
        ident = _id_in(rt.create_response, response, rt.id_param)
        if ident:
            return ident
        # the operation answers nothing that names it: the newest one with exactly these values
        try:
            items = self._list(rt, region, parent, {})
        except SandboxApiError as exc:
            raise ResourceFailure(f"{rt.name}: {rt.list_action} failed: {exc.code}: "
                                  f"{exc.body.get('Message', '')}") from None
        for item in items:
            if all(str(item.get(k)) == v for k, v in params.items() if k in item and k != "RegionId"):
                return str(item[rt.id_param])
        raise ResourceFailure(f"{rt.name}: {rt.create_action} succeeded but the new resource cannot be found")

    def wait_until_ready(self, rt: ResourceType, ident: str, region: str | None = None,
                         parent: str | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + self.settle_timeout
        delay = self.poll
        while True:
            item = self.read(rt, ident, region, parent)
            if item is None:
                raise ResourceFailure(f"{rt.name}: {ident} disappeared while it was being created")
            if not rt.final_status or item.get(rt.status_param) == rt.final_status:
                return item
            if time.monotonic() > deadline:
                raise ResourceFailure(f"{rt.name}: {ident} is still {item.get(rt.status_param)} after "
                                      f"{self.settle_timeout:.0f} s (waiting for {rt.final_status})")
            self.sleep(delay)
            delay = min(delay * 1.5, 2.0)

    # ---------------------------------------------------------------- read
    def read(self, rt: ResourceType, ident: str, region: str | None = None,
             parent: str | None = None) -> dict[str, Any] | None:
        """The resource as the API describes it, or None when it is gone."""
        item = self.describe(rt, ident, region, parent)
        if item is None or (rt.gone_status and item.get(rt.status_param) == rt.gone_status):
            return None
        return item

    def describe(self, rt: ResourceType, ident: str, region: str | None = None,
                 parent: str | None = None) -> dict[str, Any] | None:
        """What the API says of the resource, in whatever status (a key pending deletion
        too); None when it does not know it."""
        try:
            if rt.read_kind == "get":
                params = self._scope(rt, region, parent)
                params[rt.read_id_param] = ident
                item = self.client.call(rt.read_action, rt.version, params)
                if rt.read_wrap:
                    item = item.get(rt.read_wrap) or {}
            else:
                item = next((i for i in self._list(rt, region, parent, {rt.id_param: ident})
                             if str(i.get(rt.id_param)) == ident), None)
        except SandboxApiError as exc:
            if self._is_gone(rt, exc):
                return None
            raise ResourceFailure(f"{rt.name}: {rt.read_action} failed: {exc.code}: "
                                  f"{exc.body.get('Message', '')}") from None
        return item

    def _list(self, rt: ResourceType, region: str | None, parent: str | None,
              filters: dict[str, str]) -> list[dict[str, Any]]:
        if not rt.list_action:
            return []
        filters = {k: v for k, v in filters.items() if k not in COMMON_PARAMS}
        params = {**self._scope(rt, region, parent), **filters, "PageSize": "100"}
        body: Any = self.client.call(rt.list_action, rt.version, params)
        for key in rt.list_key:
            body = (body or {}).get(key, []) if isinstance(body, dict) else body
        return list(body or [])

    # -------------------------------------------------------------- update
    def update(self, rt: ResourceType, ident: str, changes: dict[str, Any], region: str | None = None,
               parent: str | None = None) -> None:
        """Change attributes (API names) in place, one update operation per group of changes."""
        pending = dict(changes)
        for op in rt.updates:
            mine = {op.params[k]: api_value(v) for k, v in pending.items() if k in op.params and v is not None}
            if not mine:
                continue
            params = self._scope(rt, region, parent)
            params[rt.id_param] = ident
            params.update(mine)
            self._call(rt, op.action, params)
            for k in list(pending):
                if k in op.params:
                    pending.pop(k)

    def bring_to(self, rt: ResourceType, ident: str, status: str, region: str | None = None,
                 parent: str | None = None) -> dict[str, Any]:
        """Move the resource to ``status`` through the transition that ends there
        (a stopped instance for "start the instance"), and wait until it is."""
        item = self.read(rt, ident, region, parent)
        if item is None:
            raise ResourceFailure(f"{rt.name}: {ident} is gone")
        current = str(item.get(rt.status_param))
        if current == status:
            return item
        if status == rt.gone_status:  # a key pending deletion, for "cancel the deletion": its deletion
            self.delete(rt, ident, region, parent)
            gone = self.describe(rt, ident, region, parent)
            if gone is None:
                raise ResourceFailure(f"{rt.name}: {ident} is gone instead of {status}")
            return gone
        op = next((op for op in rt.transitions if op.to == status and current in op.statuses), None)
        if op is None:
            offered = ", ".join(rt.statuses) or "none"
            raise ResourceFailure(f"{rt.name}: no operation brings {ident} from {current} to {status} "
                                  f"(desired_status can be: {offered})")
        params = self._scope(rt, region, parent)
        params[rt.id_param] = ident
        self._call(rt, op.action, params)
        deadline = time.monotonic() + self.settle_timeout
        delay = self.poll
        while True:
            item = self.read(rt, ident, region, parent)
            if item is not None and str(item.get(rt.status_param)) == status:
                return item
            if time.monotonic() > deadline:
                raise ResourceFailure(f"{rt.name}: {ident} did not reach {status} in {self.settle_timeout:.0f} s")
            self.sleep(delay)
            delay = min(delay * 1.5, 2.0)

    # -------------------------------------------------------------- delete
    def delete(self, rt: ResourceType, ident: str, region: str | None = None, parent: str | None = None) -> None:
        """Delete the resource (forcing where the operation allows it) and wait until it is gone."""
        params = self._scope(rt, region, parent)
        params[rt.delete_id_param] = ident
        if rt.delete_force_param:
            params[rt.delete_force_param] = "true"
        try:
            self.client.call(rt.delete_action, rt.version, params)
        except SandboxApiError as exc:
            code = str(exc.code or "")
            if self._is_gone(rt, exc):
                pass
            elif (code.startswith("DependencyViolation") or code == rt.dependency_error) \
                    and self.delete_dependents(rt, ident, region):
                self.delete(rt, ident, region, parent)  # what blocked it is gone: once more
                return
            elif code == rt.status_error and self.detach(rt, ident, region, parent):
                self.delete(rt, ident, region, parent)  # now in a status it can be deleted in
                return
            elif "DeletionProtection" in code and self.unprotect(rt, ident, region, parent):
                self.delete(rt, ident, region, parent)  # a procedure turned release protection on
                return
            else:
                raise ResourceFailure(f"{rt.name}: {rt.delete_action} {ident} failed: {exc.code}: "
                                      f"{exc.body.get('Message', '')}") from None
        deadline = time.monotonic() + self.settle_timeout
        while self.read(rt, ident, region, parent) is not None:
            if time.monotonic() > deadline:
                raise ResourceFailure(f"{rt.name}: {ident} still exists {self.settle_timeout:.0f} s after "
                                      f"{rt.delete_action}")
            self.sleep(self.poll)

    def detach(self, rt: ResourceType, ident: str, region: str | None, parent: str | None) -> bool:
        """Bring a resource a procedure bound to something (an ENI attached to an instance,
        an EIP associated with a NAT gateway) back to a status it can be deleted in, with
        the operation the catalog has for that. False when there is none for its status."""
        item = self.read(rt, ident, region, parent)
        status = None if item is None else item.get(rt.status_param)
        op = next((d for d in rt.detach if status in d.statuses), None)
        if op is None:
            return False
        params = self._scope(rt, region, parent)
        params[rt.id_param] = ident
        params.update({p: api_value(item[p]) for p in op.params if item.get(p) not in (None, "")})
        self._call(rt, op.action, params)
        deadline = time.monotonic() + self.settle_timeout
        while (item := self.read(rt, ident, region, parent)) is not None and item.get(rt.status_param) != op.to:
            if time.monotonic() > deadline:
                raise ResourceFailure(f"{rt.name}: {ident} is still {item.get(rt.status_param)} "
                                      f"{self.settle_timeout:.0f} s after {op.action} (waiting for {op.to})")
            self.sleep(self.poll)
        return True

    def unprotect(self, rt: ResourceType, ident: str, region: str | None, parent: str | None) -> bool:
        """Turn off the deletion protection a procedure turned on (release protection
        of an instance), where an update operation can; False when none can."""
        protected = [a for a in rt.attributes if a.updatable and "DeletionProtection" in a.api_name]
        if not protected:
            return False
        self.update(rt, ident, {a.api_name: False for a in protected}, region, parent)
        return True

    def delete_dependents(self, rt: ResourceType, ident: str, region: str | None) -> bool:
        """Delete what keeps ``ident`` from being deleted: its children, and the resources
        that name it (a vSwitch the procedure under test created in a provisioned VPC, an
        instance it launched in a provisioned security group). A sandbox account is a test
        account: its teardown must not stop at what a procedure left inside what docverify
        made. False when nothing was found to delete."""
        found = False
        for how, type_name in rt.dependents:
            other = (self.types or {}).get(type_name)
            if other is None:
                continue
            items = self._list(other, region, ident if how == "child" else None, {})
            for item in items:
                other_id = str(item.get(other.id_param) or "")
                if not other_id or (how == "user" and ident not in json.dumps(item)):
                    continue
                found = True
                self.delete(other, other_id, region, ident if how == "child" else None)
        return found


def _id_in(template: Any, response: Any, id_param: str) -> str | None:
    """Where the create operation's response template puts the new id (``$id``, ``$ids``, ``$item``)."""
    if template is None:
        value = response.get(id_param) if isinstance(response, dict) else None
        return str(value) if value else None
    if template == "$id":
        return str(response) if response else None
    if template == "$ids":
        return str(response[0]) if isinstance(response, list) and response else None
    if template == "$item":
        value = response.get(id_param) if isinstance(response, dict) else None
        return str(value) if value else None
    if isinstance(template, dict) and isinstance(response, dict):
        for key, sub in template.items():
            if key in response:
                found = _id_in(sub, response[key], id_param)
                if found:
                    return found
    return None

