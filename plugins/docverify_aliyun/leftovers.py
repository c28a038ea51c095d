"""What runs provisioned on the real Alibaba Cloud and left, found by the ``docverify-run`` tag.

The ``terraform`` provisioner tags every taggable resource it creates ``docverify-run =
<run id>`` and ``docverify-task = <procedure id>``. :class:`TaggedLeftovers` asks each
product's ``ListTagResources`` (ECS, VPC, SLB, ALB, RDS, MongoDB: ``Tag.1.Key =
docverify-run``, which returns every resource carrying that key, whatever its value), in
each region and account, and deletes what it finds with the product's own delete action,
in an order that releases what depends on a resource before the resource (instances
before the vSwitch, the vSwitch before its VPC), in rounds: what is still in use is tried
again the next round.

It never deletes a resource whose listing does not show the ``docverify-run`` tag: an
answer that lists more than was asked for (an untagged resource) is reported as such and
left alone. Resources that cannot be found by tag (RAM users, roles, policies, OSS buckets
and objects, KMS keys, ActionTrail trails, listeners and entries) are destroyed through
the ledger only (``docverify cleanup`` without ``--console``: Terraform's own state).

The request and answer shapes are Alibaba Cloud's documented ones (each product's
``ListTagResources``: ``TagResources.TagResource[]`` of ``ResourceId``, ``ResourceType``,
``TagKey``, ``TagValue``; ALB's flat ``TagResources[]``). They are verified here against
recorded answers of that shape served locally (``tests/aliyun/test_leftovers.py``), not
against the live cloud.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docverify.errors import EnvironmentProblem
from docverify.lease.secret import SecretError, mask_id
from docverify_aliyun.openapi import ApiCallError, OpenApi

log = logging.getLogger(__name__)

RUN_TAG, TASK_TAG = "docverify-run", "docverify-task"
#: the AccessKey a cleanup falls back to without the console's own account
ENV_KEY_ID, ENV_KEY_SECRET = "ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"


@dataclass(frozen=True)
class Kind:
    """A taggable resource type docverify's templates create, and how it is deleted."""

    product: str  #: openapi.PRODUCTS key
    tag_type: str  #: ListTagResources' ResourceType
    what: str  #: for people
    delete: str  #: the delete action
    id_param: str  #: its parameter naming the resource
    extra: tuple[tuple[str, str], ...] = ()  #: further parameters (Force)
    order: int = 0  #: lower first: what depends on others goes before them
    as_list: bool = False  #: the parameter takes a JSON list (DeleteKeyPairs)

    def params(self, resource_id: str) -> dict[str, str]:
        value = json.dumps([resource_id]) if self.as_list else resource_id
        return {self.id_param: value, **dict(self.extra)}


KINDS: tuple[Kind, ...] = (
    Kind("ecs", "instance", "ECS instance", "DeleteInstance", "InstanceId", (("Force", "true"),), 0),
    Kind("rds", "INSTANCE", "RDS instance", "DeleteDBInstance", "DBInstanceId", (), 0),
    Kind("dds", "INSTANCE", "MongoDB instance", "DeleteDBInstance", "DBInstanceId", (), 0),
    Kind("slb", "instance", "SLB instance", "DeleteLoadBalancer", "LoadBalancerId", (), 0),
    Kind("alb", "loadbalancer", "ALB instance", "DeleteLoadBalancer", "LoadBalancerId", (), 0),
    Kind("vpc", "NATGATEWAY", "NAT gateway", "DeleteNatGateway", "NatGatewayId", (("Force", "true"),), 1),
    Kind("alb", "servergroup", "ALB server group", "DeleteServerGroup", "ServerGroupId", (), 1),
    Kind("ecs", "eni", "elastic network interface", "DeleteNetworkInterface", "NetworkInterfaceId", (), 1),
    Kind("ecs", "image", "custom image", "DeleteImage", "ImageId", (("Force", "true"),), 1),
    Kind("ecs", "snapshot", "snapshot", "DeleteSnapshot", "SnapshotId", (("Force", "true"),), 2),
    Kind("ecs", "disk", "disk", "DeleteDisk", "DiskId", (), 3),
    Kind("vpc", "EIP", "EIP", "ReleaseEipAddress", "AllocationId", (), 3),
    Kind("vpc", "IPV6GATEWAY", "IPv6 gateway", "DeleteIpv6Gateway", "Ipv6GatewayId", (), 3),
    Kind("ecs", "keypair", "key pair", "DeleteKeyPairs", "KeyPairNames", (), 3, as_list=True),
    Kind("ecs", "securitygroup", "security group", "DeleteSecurityGroup", "SecurityGroupId", (), 4),
    Kind("vpc", "VSWITCH", "vSwitch", "DeleteVSwitch", "VSwitchId", (), 5),
    Kind("vpc", "ROUTETABLE", "route table", "DeleteRouteTable", "RouteTableId", (), 6),
    Kind("vpc", "VPC", "VPC", "DeleteVpc", "VpcId", (), 7),
)
#: what has no tag to be found by (ledger only), for messages
UNTAGGED = ("RAM users, groups, roles and policies", "OSS buckets and objects", "KMS keys", "ActionTrail trails",
            "listeners, NAT entries and other sub-resources")


@dataclass(frozen=True)
class CleanupAccount:
    """An account whose leftovers are looked for: its AccessKey and home region."""

    name: str
    access_key_id: str
    access_key_secret: str = field(repr=False)
    region: str | None = None

    @property
    def shown(self) -> str:
        return f"{self.name} ({mask_id(self.access_key_id)})"


@dataclass
class Leftover:
    """A resource a run tagged and left."""

    account: CleanupAccount
    region: str
    kind: Kind
    id: str
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def tagged(self) -> bool:
        """Whether its listing shows docverify's run tag: only then may it be deleted."""
        return RUN_TAG in self.tags

    @property
    def run(self) -> str | None:
        return self.tags.get(RUN_TAG)

    @property
    def task(self) -> str | None:
        return self.tags.get(TASK_TAG)

    def describe(self) -> str:
        return (f"{self.kind.what} {self.id} in {self.region} of {self.account.shown}: "
                f"run {self.run or '?'}, task {self.task or '?'}")

    def to_dict(self) -> dict[str, Any]:
        return {"account": self.account.name, "access_key_id": mask_id(self.account.access_key_id),
                "region": self.region, "product": self.kind.product, "type": self.kind.tag_type,
                "what": self.kind.what, "id": self.id, "run": self.run, "task": self.task, "tags": dict(self.tags)}


@dataclass
class Deletion:
    """What deleting one leftover came to."""

    leftover: Leftover
    deleted: bool
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**self.leftover.to_dict(), "deleted": self.deleted, "error": self.error}


@dataclass
class TaggedLeftovers:
    """Finds and deletes, by the ``docverify-run`` tag, what runs left in ``accounts``."""

    accounts: Sequence[CleanupAccount]
    default_region: str = "cn-hangzhou"
    api_url: str | None = None  #: one server for every product (a recording)
    passes: int = 4
    pause_s: float = 20.0
    kinds: Sequence[Kind] = KINDS
    problems: list[str] = field(default_factory=list)  #: what could not be looked at (said, not fatal)
    _apis: dict[str, OpenApi] = field(default_factory=dict, repr=False)

    def api(self, account: CleanupAccount) -> OpenApi:
        if account.access_key_id not in self._apis:
            self._apis[account.access_key_id] = OpenApi(account.access_key_id, account.access_key_secret,
                                                        url=self.api_url)
        return self._apis[account.access_key_id]

    def regions(self, extra: Sequence[str] = ()) -> list[str]:
        """The regions looked at: the given ones, else the console's and each account's."""
        if extra:
            return list(dict.fromkeys(extra))
        return list(dict.fromkeys([self.default_region, *(a.region for a in self.accounts if a.region)]))

    def find(self, regions: Sequence[str] = (), run: str | None = None) -> list[Leftover]:
        """Every resource carrying the ``docverify-run`` tag (of ``run`` only, when given) in
        ``regions`` (default :meth:`regions`) of every account; in the order they would be
        deleted. A product that cannot be listed is noted in :attr:`problems`."""
        found: list[Leftover] = []
        for account in self.accounts:
            for region in self.regions(regions):
                for kind in self.kinds:
                    try:
                        found.extend(self._list(account, region, kind, run))
                    except ApiCallError as error:
                        self.problems.append(f"{kind.what}s in {region} of {account.shown} not listed: {error}")
        return sorted(found, key=lambda left: left.kind.order)

    def _list(self, account: CleanupAccount, region: str, kind: Kind, run: str | None) -> list[Leftover]:
        params = {"ResourceType": kind.tag_type, "Tag.1.Key": RUN_TAG, **({"Tag.1.Value": run} if run else {})}
        resources: dict[str, Leftover] = {}
        token = None
        while True:
            body = self.api(account).call(kind.product, "ListTagResources", region,
                                          {**params, **({"NextToken": token} if token else {})})
            for row in _rows(body):
                resource_id = str(row.get("ResourceId") or "")
                if not resource_id:
                    continue
                left = resources.setdefault(resource_id, Leftover(account, region, kind, resource_id))
                if row.get("TagKey"):
                    left.tags[str(row["TagKey"])] = str(row.get("TagValue") or "")
            token = body.get("NextToken")
            if not token:
                break
        return [left for left in resources.values() if run is None or left.run == run or not left.tagged]

    def delete(self, leftovers: Sequence[Leftover]) -> list[Deletion]:
        """Delete every tagged leftover, in order and in rounds (:attr:`passes`, :attr:`pause_s`
        apart): one that fails is tried again the next round, and reported with its last
        error if it still fails. An untagged one is never deleted: it is reported."""
        outcome: dict[int, Deletion] = {}
        todo = []
        for left in leftovers:
            if left.tagged:
                todo.append(left)
            else:
                outcome[id(left)] = Deletion(left, False, f"its listing shows no {RUN_TAG} tag: not docverify's, "
                                                          "not deleted")
        for number in range(self.passes):
            if not todo:
                break
            if number:
                time.sleep(self.pause_s)
            failed = []
            for left in sorted(todo, key=lambda item: item.kind.order):
                try:
                    self.api(left.account).call(left.kind.product, left.kind.delete, left.region,
                                                left.kind.params(left.id))
                except (ApiCallError, EnvironmentProblem) as error:
                    if getattr(error, "code", "").endswith(("NotFound", "NotExist", "NotExists")):
                        outcome[id(left)] = Deletion(left, True, "already gone")
                        continue
                    outcome[id(left)] = Deletion(left, False, str(error))
                    failed.append(left)
                    continue
                log.info("deleted %s", left.describe())
                outcome[id(left)] = Deletion(left, True)
            todo = failed
        return [outcome[id(left)] for left in leftovers]


def _rows(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The (resource, tag) rows of a ListTagResources answer: ``TagResources.TagResource[]``
    (ECS, VPC, SLB, RDS, MongoDB) or ``TagResources[]`` (ALB)."""
    rows = body.get("TagResources") or []
    if isinstance(rows, Mapping):
        rows = rows.get("TagResource") or []
    return [row for row in rows if isinstance(row, Mapping)]


def cleanup_accounts(own: Any, environ: Mapping[str, str] | None = None,
                     config_file: Path | None = None) -> list[CleanupAccount]:
    """The accounts whose leftovers are looked for, each AccessKey once: ``own`` (the
    console's own account, :func:`docverify_aliyun.console.own_account`), else the
    ``ALIBABA_CLOUD_ACCESS_KEY_ID``/``_SECRET`` environment; and the pool's accounts of the
    aliyun console with an AccessKey. Raises :class:`EnvironmentProblem` when there is none."""
    from docverify.lease import open_pool

    environ = os.environ if environ is None else environ
    found: dict[str, CleanupAccount] = {}
    if own is not None and own.access_key_id is not None and own.access_key_secret is not None:
        key = own.access_key_id.reveal()
        found[key] = CleanupAccount("the console's own account", key, own.access_key_secret.reveal(), own.region)
    elif environ.get(ENV_KEY_ID) and environ.get(ENV_KEY_SECRET):
        found[environ[ENV_KEY_ID]] = CleanupAccount(ENV_KEY_ID, environ[ENV_KEY_ID], environ[ENV_KEY_SECRET],
                                                    environ.get("ALIBABA_CLOUD_REGION"))
    pool = open_pool(console="aliyun", config_file=config_file, environ=environ, defaults=False)
    problems = []
    for spec in pool.specs:
        if not spec.matches(console="aliyun") or spec.ref("access_key_id") is None:
            continue
        try:
            account = spec.resolve(environ)
        except SecretError as error:
            problems.append(f"{spec.name}: {error}")
            continue
        if account.access_key_id is None or account.access_key_secret is None:
            continue
        key = account.access_key_id.reveal()
        found.setdefault(key, CleanupAccount(spec.name, key, account.access_key_secret.reveal(), account.region))
    if not found:
        more = f" ({'; '.join(problems)})" if problems else ""
        raise EnvironmentProblem(f"no AccessKey of an aliyun account to look for leftovers with{more}",
                                 hint="set DOCVERIFY_ALIYUN_ACCESS_KEY_ID/_SECRET (or ALIBABA_CLOUD_ACCESS_KEY_ID/"
                                      "_SECRET), or add accounts with console = \"aliyun\" to the pool")
    return list(found.values())
