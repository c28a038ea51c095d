"""Recorded Alibaba Cloud product APIs, served on loopback: what ``docverify cleanup
--console aliyun`` lists and deletes, and what ``docverify accounts rotate`` calls in RAM.

The requests are the official clients' own (``alibabacloud_tea_openapi``'s ``call_api``,
``alibabacloud_ram20150501``), their signatures verified as the real services verify
them. The answers have the shapes of Alibaba Cloud's API reference — their field names,
nesting and error codes — **reconstructed from the documentation, not captured live**:

- each product's ``ListTagResources`` (ECS 2014-05-26, VPC 2016-04-28, SLB 2014-05-15,
  RDS 2014-08-15, MongoDB 2015-12-01): ``{"RequestId", "NextToken", "TagResources":
  {"TagResource": [{"ResourceId", "ResourceType", "TagKey", "TagValue"}]}}``, one row per
  resource and tag; ALB 2020-06-16: ``"TagResources": [...]`` flat, with ``MaxResults``;
  ``Tag.N.Key`` alone returns every resource carrying the key, whatever its value;
- the delete actions (``DeleteInstance``, ``DeleteVpc``, ``ReleaseEipAddress``, ...):
  ``{"RequestId"}``; a resource something still depends on: ``DependencyViolation``;
- RAM 2015-05-01 ``CreateAccessKey`` (``AccessKey``: ``AccessKeyId``,
  ``AccessKeySecret``, ``Status``, ``CreateDate``), ``ListAccessKeys``
  (``AccessKeys.AccessKey[]``), ``UpdateAccessKey`` and ``DeleteAccessKey``
  (``RequestId``); errors ``LimitExceeded.User.AccessKey``,
  ``EntityNotExist.User.AccessKey``, ``NoPermission``.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass, field
from typing import Any

from aliyun_recordings import Keys, rpc_error, signed_params
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from docverify_sandbox.errors import ApiError

VERSIONS = {"ecs": "2014-05-26", "vpc": "2016-04-28", "slb": "2014-05-15", "alb": "2020-06-16", "rds": "2014-08-15",
            "dds": "2015-12-01"}
#: (product, delete action) -> (ResourceType the resource is listed as, the parameter naming it)
DELETES = {
    ("ecs", "DeleteInstance"): ("instance", "InstanceId"), ("ecs", "DeleteDisk"): ("disk", "DiskId"),
    ("ecs", "DeleteSnapshot"): ("snapshot", "SnapshotId"), ("ecs", "DeleteImage"): ("image", "ImageId"),
    ("ecs", "DeleteSecurityGroup"): ("securitygroup", "SecurityGroupId"),
    ("ecs", "DeleteKeyPairs"): ("keypair", "KeyPairNames"),
    ("ecs", "DeleteNetworkInterface"): ("eni", "NetworkInterfaceId"),
    ("vpc", "DeleteVpc"): ("VPC", "VpcId"), ("vpc", "DeleteVSwitch"): ("VSWITCH", "VSwitchId"),
    ("vpc", "DeleteRouteTable"): ("ROUTETABLE", "RouteTableId"), ("vpc", "ReleaseEipAddress"): ("EIP", "AllocationId"),
    ("vpc", "DeleteNatGateway"): ("NATGATEWAY", "NatGatewayId"), ("vpc", "DeleteIpv6Gateway"): ("IPV6GATEWAY", "Ipv6GatewayId"),
    ("slb", "DeleteLoadBalancer"): ("instance", "LoadBalancerId"),
    ("alb", "DeleteLoadBalancer"): ("loadbalancer", "LoadBalancerId"),
    ("alb", "DeleteServerGroup"): ("servergroup", "ServerGroupId"),
    ("rds", "DeleteDBInstance"): ("INSTANCE", "DBInstanceId"), ("dds", "DeleteDBInstance"): ("INSTANCE", "DBInstanceId"),
}


@dataclass
class CloudResource:
    product: str
    type: str  #: ResourceType in ListTagResources
    id: str
    region: str = "cn-hangzhou"
    tags: dict[str, str] = field(default_factory=dict)
    parent: str | None = None  #: the resource it lives in: that one cannot go first
    linger: int = 0  #: delete calls it still blocks its parent for after it was deleted (asynchronous release)


def request_id() -> str:
    return str(uuid.uuid4()).upper()


class ProductApiFake:
    """ECS, VPC, SLB, ALB, RDS and MongoDB on one address (``[console.aliyun] openapi_url``),
    each action answered only at its product's documented version. ``ignore_filter``: a
    ListTagResources that lists every resource of the type, tagged or not (the cleanup must
    still delete only what carries docverify's tag)."""

    PAGE = 3  #: rows per ListTagResources page: the cleanup must follow NextToken (a resource's rows may span two)

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self.resources: list[CloudResource] = []
        self.gone: list[tuple[CloudResource, int]] = []  #: deleted, still releasing: (resource, blocks left)
        self.calls: list[tuple[str, str, dict[str, str], str]] = []  #: (product, action, params, key id)
        self.ignore_filter = False
        self.app = Starlette(routes=[Route("/", self.rpc, methods=["GET", "POST"])])

    def add(self, product: str, type_: str, id_: str, tags: dict[str, str] | None = None, **more: Any) -> CloudResource:
        resource = CloudResource(product, type_, id_, tags=dict(tags or {}), **more)
        self.resources.append(resource)
        return resource

    def ids(self) -> set[str]:
        return {r.id for r in self.resources}

    def deletes(self) -> list[str]:
        return [f"{product}:{action}" for product, action, _, _ in self.calls if not action.startswith("List")]

    async def rpc(self, request: Request) -> Response:
        try:
            key_id, params = await signed_params(request, self.keys)
        except ApiError as error:
            return rpc_error(error)
        action, version = params.get("Action", ""), params.get("Version", "")
        product = next((p for p, v in VERSIONS.items() if v == version
                        and (action == "ListTagResources" or (p, action) in DELETES)), None)
        if product is None:
            return rpc_error(ApiError("InvalidAction.NotFound", f"Specified api {action} ({version}) is not found.",
                                      404))
        self.calls.append((product, action, params, key_id))
        if action == "ListTagResources":
            return self.list_tags(product, params)
        return self.delete(product, action, params)

    def list_tags(self, product: str, params: dict[str, str]) -> Response:
        if not params.get("ResourceType"):
            return rpc_error(ApiError("MissingParameter.ResourceType", "ResourceType is mandatory.", 400))
        key, value = params.get("Tag.1.Key"), params.get("Tag.1.Value")
        if not key and not params.get("ResourceId.1"):
            return rpc_error(ApiError("MissingParameter", "ResourceId or Tag is mandatory.", 400))
        region = params.get("RegionId")
        rows = []
        for r in self.resources:
            if r.product != product or r.type.lower() != params["ResourceType"].lower() or r.region != region:
                continue
            if not self.ignore_filter and (key not in r.tags or (value is not None and r.tags[key] != value)):
                continue
            rows += [{"ResourceId": r.id, "ResourceType": r.type, "TagKey": k, "TagValue": v} for k, v in r.tags.items()]
            if not r.tags:  # listed all the same (ignore_filter): a row without a tag
                rows.append({"ResourceId": r.id, "ResourceType": r.type})
        start = int(params.get("NextToken") or 0)
        page, rest = rows[start:start + self.PAGE], rows[start + self.PAGE:]
        token = str(start + self.PAGE) if rest else ""
        if product == "alb":
            return JSONResponse({"RequestId": request_id(), "NextToken": token, "MaxResults": self.PAGE,
                                 "TagResources": page})
        return JSONResponse({"RequestId": request_id(), "NextToken": token, "TagResources": {"TagResource": page}})

    def delete(self, product: str, action: str, params: dict[str, str]) -> Response:
        try:
            return self._delete(product, action, params)
        finally:  # every delete call brings the releases under way one step on
            self.gone = [(r, left - 1) for r, left in self.gone if left > 1]

    def _delete(self, product: str, action: str, params: dict[str, str]) -> Response:
        type_, name = DELETES[(product, action)]
        wanted = params.get(name, "")
        if action == "DeleteKeyPairs":
            wanted = wanted.strip('[]"')
        target = next((r for r in self.resources if r.product == product and r.type == type_ and r.id == wanted
                       and r.region == params.get("RegionId")), None)
        if target is None:
            return rpc_error(ApiError("InvalidResourceId.NotFound", f"The specified resource {wanted} does not "
                                                                     "exist.", 404))
        children = [r.id for r in self.resources if r.parent == target.id] + [r.id for r, _ in self.gone
                                                                               if r.parent == target.id]
        if children:
            return rpc_error(ApiError("DependencyViolation", f"{wanted} still has dependent resources: "
                                                             f"{', '.join(children)}.", 400))
        self.resources.remove(target)
        if target.linger:
            self.gone.append((target, target.linger + 1))  # this call's step does not count
        return JSONResponse({"RequestId": request_id()})


@dataclass
class RamKey:
    id: str
    secret: str
    user: str
    status: str = "Active"
    created: str = "2021-01-23T12:33:18Z"


class RamKeys(Keys):
    """The keys RAM knows, with their status: an Inactive key signs nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.ram: dict[str, RamKey] = {}

    def access_key(self, key_id: str) -> dict[str, Any] | None:
        key = self.ram.get(key_id)
        return {"secret": key.secret, "active": key.status == "Active"} if key else None


class RamFake:
    """RAM 2015-05-01's AccessKey actions. The caller's own keys when ``UserName`` is left
    out; at most two keys per user. ``fail`` maps an action to what its next calls answer,
    one per call in order: an error code, or None for the real answer."""

    LIMIT = 2

    def __init__(self, keys: RamKeys) -> None:
        self.keys = keys
        self.calls: list[tuple[str, str]] = []  #: (action, signing key id)
        self.fail: dict[str, list[str | None]] = {}
        self.app = Starlette(routes=[Route("/", self.rpc, methods=["GET", "POST"])])

    def add_key(self, user: str, key_id: str, secret: str, created: str = "2021-01-23T12:33:18Z") -> RamKey:
        key = self.keys.ram[key_id] = RamKey(key_id, secret, user, created=created)
        return key

    def keys_of(self, user: str) -> dict[str, str]:
        """Key id -> status of ``user``'s keys."""
        return {k.id: k.status for k in self.keys.ram.values() if k.user == user}

    async def rpc(self, request: Request) -> Response:
        try:
            key_id, params = await signed_params(request, self.keys)
        except ApiError as error:
            return rpc_error(error)
        action = params.get("Action", "")
        if params.get("Version") != "2015-05-01":
            return rpc_error(ApiError("InvalidVersion", "Specified parameter Version is not valid.", 400))
        self.calls.append((action, key_id))
        code = self.fail[action].pop(0) if self.fail.get(action) else None
        if code is not None:
            return rpc_error(ApiError(code, "You are not authorized to do this action. You should be authorized by "
                                            "RAM." if code == "NoPermission" else f"Refused: {code}.", 403))
        user = params.get("UserName") or self.keys.ram[key_id].user
        if action == "ListAccessKeys":
            return JSONResponse({"RequestId": request_id(), "AccessKeys": {"AccessKey": [
                {"AccessKeyId": k.id, "Status": k.status, "CreateDate": k.created}
                for k in self.keys.ram.values() if k.user == user]}})
        if action == "CreateAccessKey":
            if len(self.keys_of(user)) >= self.LIMIT:
                return rpc_error(ApiError("LimitExceeded.User.AccessKey", "The count of AccessKey for the user "
                                                                          "exceeds the limit.", 409))
            key = self.add_key(user, "LTAI5t" + secrets.token_hex(9), secrets.token_urlsafe(22),
                               created="2026-12-05T01:00:00Z")
            return JSONResponse({"RequestId": request_id(), "AccessKey": {
                "AccessKeyId": key.id, "AccessKeySecret": key.secret, "Status": key.status, "CreateDate": key.created}})
        target = self.keys.ram.get(params.get("UserAccessKeyId", ""))
        if target is None or target.user != user:
            return rpc_error(ApiError("EntityNotExist.User.AccessKey", "The AccessKey does not exist.", 404))
        if action == "UpdateAccessKey":
            if params.get("Status") not in ("Active", "Inactive"):
                return rpc_error(ApiError("InvalidParameter.Status", "The parameter Status is invalid.", 400))
            target.status = params["Status"]
            return JSONResponse({"RequestId": request_id()})
        if action == "DeleteAccessKey":
            del self.keys.ram[target.id]
            return JSONResponse({"RequestId": request_id()})
        return rpc_error(ApiError("InvalidAction.NotFound", f"Specified api {action} is not found.", 404))
