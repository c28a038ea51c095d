"""Resource META: what must exist before a procedure can run.

A :class:`Requirement` names a META type from a fixed, provider-independent
vocabulary (:data:`META_TYPES`: ``vpc``, ``vswitch``, ``ecs_instance``,
``oss_bucket`` ...), how many, optional attributes and name, the META types it
depends on, and where it came from:

- ``annotation``: the procedure's ``docverify:`` annotation, ``requires:``
  (``- {type: ecs_instance, count: 1, attributes: {status: Running}, name: web-<suffix>}``).
  Types may be written as aliases (``alicloud_vpc``, ``ACS::VPC::VPC``,
  ``bucket``, ``instance`` with the procedure's product). ``count: 0`` says the
  procedure needs no such resource: inference does not add it (a dependency of
  another requirement still does);
- ``inferred``: read from the procedure, each with its evidence (the doc line
  and text): the prerequisites ("An ECS instance is created.", "已创建专有网络"),
  the objects the steps act on ("Find the instance ...", "click the name of the
  target bucket", "select the VPC from the **VPC** drop-down list", a parameter
  table row **VSwitch ID**), the audit event that proves the procedure (a
  procedure that starts an instance needs a stopped instance), and the
  dependencies of everything involved.

What the procedure itself creates is never a requirement: "Create a VPC" needs
no VPC, its create step's object is the output (:attr:`MetaPlan.creates`), but
what that output depends on is needed (creating a vSwitch needs a VPC).

Dependencies are closed over (:data:`DEPENDENCIES`: ``vswitch`` → ``vpc``,
``ecs_instance`` → ``vswitch`` + ``security_group`` ...), shared ones once,
and requirements come out in dependency order. :func:`resolve_meta` is the
entry point the provisioner uses; :func:`analyze` also returns the outputs.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, NoReturn

from pydantic import ValidationError

from docverify.check.criteria import TITLE_PREFIX, _is_foreign, expected_events, match_text, product_of
from docverify.errors import UsageError
from docverify.parse.annotation_model import RequiredResource, describe
from docverify.parse.model import Intent, Procedure, Step

# --- the vocabulary ----------------------------------------------------------------------------

#: Every META type, in dependency order: a type's dependencies come before it.
META_TYPES: tuple[str, ...] = (
    "vpc",
    "vswitch",
    "security_group",
    "route_table",
    "ipv6_gateway",
    "key_pair",
    "ecs_instance",
    "network_interface",
    "disk",
    "snapshot",
    "image",
    "eip",
    "nat_gateway",
    "snat_entry",
    "dnat_entry",
    "oss_bucket",
    "oss_object",
    "ram_user",
    "ram_group",
    "ram_role",
    "ram_policy",
    "ram_access_key",
    "slb",
    "slb_listener",
    "alb",
    "alb_server_group",
    "alb_listener",
    "rds_instance",
    "rds_database",
    "rds_account",
    "mongodb_instance",
    "kms_key",
    "actiontrail_trail",
)

#: Direct dependencies: META type -> {dependency: how many of it}. Provider-independent
#: facts of the cloud (an ECS instance lives in a vSwitch and a security group; a
#: snapshot is taken of a disk attached to an instance; an ALB spans two zones).
DEPENDENCIES: dict[str, dict[str, int]] = {
    "vpc": {},
    "vswitch": {"vpc": 1},
    "security_group": {"vpc": 1},
    "route_table": {"vpc": 1},
    "ipv6_gateway": {"vpc": 1},
    "key_pair": {},
    "ecs_instance": {"vswitch": 1, "security_group": 1},
    "network_interface": {"vswitch": 1, "security_group": 1},
    "disk": {},
    "snapshot": {"disk": 1, "ecs_instance": 1},
    "image": {"ecs_instance": 1},
    "eip": {},
    "nat_gateway": {"vswitch": 1},
    "snat_entry": {"nat_gateway": 1, "eip": 1},
    "dnat_entry": {"nat_gateway": 1, "eip": 1},
    "oss_bucket": {},
    "oss_object": {"oss_bucket": 1},
    "ram_user": {},
    "ram_group": {},
    "ram_role": {},
    "ram_policy": {},
    "ram_access_key": {"ram_user": 1},
    "slb": {},
    "slb_listener": {"slb": 1},
    "alb": {"vswitch": 2},
    "alb_server_group": {"vpc": 1},
    "alb_listener": {"alb": 1},
    "rds_instance": {"vswitch": 1},
    "rds_database": {"rds_instance": 1},
    "rds_account": {"rds_instance": 1},
    "mongodb_instance": {"vswitch": 1},
    "kms_key": {},
    "actiontrail_trail": {},
}

#: Generated names: ``docverify-<slug>-<suffix>`` ("_" where the cloud allows no "-").
_SLUGS: dict[str, str] = {
    "vpc": "vpc", "vswitch": "vsw", "security_group": "sg", "route_table": "rtb", "ipv6_gateway": "ipv6gw", "key_pair": "kp",
    "ecs_instance": "ecs", "network_interface": "eni", "disk": "disk", "snapshot": "snap", "image": "image", "eip": "eip",
    "nat_gateway": "nat", "snat_entry": "snat", "dnat_entry": "dnat", "oss_bucket": "bucket",
    "oss_object": "object", "ram_user": "user", "ram_group": "group", "ram_role": "role",
    "ram_policy": "policy", "slb": "slb", "slb_listener": "listener", "alb": "alb",
    "alb_server_group": "servergroup", "alb_listener": "listener", "rds_instance": "rds", "rds_database": "db",
    "rds_account": "account",
    "mongodb_instance": "mongo", "actiontrail_trail": "trail",
}
#: Types whose names allow lower-case letters, digits and "_" only (RDS database and account names).
_UNDERSCORE_NAMES = frozenset({"rds_database", "rds_account"})
#: Types without a name of their own (identified by their ID only).
UNNAMED = frozenset({"ram_access_key", "kms_key"})

#: Aliases accepted in annotations, compared after normalization (lower case, letters and
#: digits only): Terraform resource types, ROS/ActionTrail resource types, plain words.
_ALIASES: dict[str, tuple[str, ...]] = {
    "vpc": ("alicloud_vpc", "ACS::VPC::VPC", "ALIYUN::ECS::VPC", "virtual private cloud", "专有网络"),
    "vswitch": ("v-switch", "alicloud_vswitch", "ACS::VPC::VSwitch", "ALIYUN::ECS::VSwitch", "交换机"),
    "security_group": ("sg", "alicloud_security_group", "ACS::ECS::SecurityGroup", "ALIYUN::ECS::SecurityGroup", "安全组"),
    "route_table": ("alicloud_route_table", "ACS::VPC::RouteTable", "ALIYUN::VPC::RouteTable", "路由表"),
    "ipv6_gateway": ("alicloud_vpc_ipv6_gateway", "ACS::VPC::Ipv6Gateway", "ALIYUN::VPC::Ipv6Gateway", "IPv6网关"),
    "key_pair": ("keypair", "ssh key pair", "alicloud_ecs_key_pair", "alicloud_key_pair", "ACS::ECS::KeyPair",
                 "ALIYUN::ECS::SSHKeyPair", "密钥对"),
    "ecs_instance": ("ecs", "alicloud_instance", "alicloud_ecs_instance", "ACS::ECS::Instance", "ALIYUN::ECS::Instance",
                     "云服务器"),
    "network_interface": ("eni", "elastic network interface", "alicloud_ecs_network_interface",
                          "alicloud_network_interface", "ACS::ECS::NetworkInterface", "ALIYUN::ECS::NetworkInterface", "弹性网卡"),
    "disk": ("cloud disk", "alicloud_ecs_disk", "alicloud_disk", "ACS::ECS::Disk", "ALIYUN::ECS::Disk", "云盘"),
    "snapshot": ("alicloud_ecs_snapshot", "alicloud_snapshot", "ACS::ECS::Snapshot", "ALIYUN::ECS::Snapshot", "快照"),
    "image": ("custom image", "alicloud_image", "ACS::ECS::Image", "ALIYUN::ECS::CustomImage", "自定义镜像"),
    "eip": ("elastic ip", "elastic ip address", "alicloud_eip_address", "alicloud_eip", "ACS::VPC::EIP", "ALIYUN::VPC::EIP",
            "弹性公网ip"),
    "nat_gateway": ("nat", "alicloud_nat_gateway", "ACS::VPC::NatGateway", "ALIYUN::VPC::NatGateway", "nat网关"),
    "snat_entry": ("snat", "alicloud_snat_entry", "ACS::VPC::SnatEntry", "ALIYUN::VPC::SnatEntry"),
    "dnat_entry": ("dnat", "forward entry", "alicloud_forward_entry", "ACS::VPC::ForwardEntry", "ALIYUN::VPC::ForwardEntry"),
    "oss_bucket": ("bucket", "alicloud_oss_bucket", "ACS::OSS::Bucket", "ALIYUN::OSS::Bucket", "存储空间"),
    "oss_object": ("object", "oss object", "alicloud_oss_bucket_object", "ACS::OSS::Object"),
    "ram_user": ("user", "alicloud_ram_user", "ACS::RAM::User", "ALIYUN::RAM::User", "ram用户"),
    "ram_group": ("group", "user group", "alicloud_ram_group", "ACS::RAM::Group", "ALIYUN::RAM::Group", "用户组"),
    "ram_role": ("role", "alicloud_ram_role", "ACS::RAM::Role", "ALIYUN::RAM::Role", "ram角色"),
    "ram_policy": ("policy", "custom policy", "alicloud_ram_policy", "ACS::RAM::Policy", "ALIYUN::RAM::ManagedPolicy", "权限策略"),
    "ram_access_key": ("access key", "accesskey", "access_key", "alicloud_ram_access_key", "ACS::RAM::AccessKey",
                       "ALIYUN::RAM::AccessKey"),
    "slb": ("clb", "server load balancer", "alicloud_slb_load_balancer", "alicloud_slb", "ACS::SLB::LoadBalancer",
            "ALIYUN::SLB::LoadBalancer"),
    "slb_listener": ("clb_listener", "alicloud_slb_listener", "ACS::SLB::Listener", "ALIYUN::SLB::Listener"),
    "alb": ("application load balancer", "alicloud_alb_load_balancer", "ACS::ALB::LoadBalancer", "ALIYUN::ALB::LoadBalancer"),
    "alb_server_group": ("server group", "alb server group", "alicloud_alb_server_group", "ACS::ALB::ServerGroup",
                         "ALIYUN::ALB::ServerGroup", "服务器组"),
    "alb_listener": ("alicloud_alb_listener", "ACS::ALB::Listener", "ALIYUN::ALB::Listener"),
    "rds_instance": ("rds", "db_instance", "alicloud_db_instance", "ACS::RDS::DBInstance", "ALIYUN::RDS::DBInstance"),
    "rds_database": ("database", "alicloud_db_database", "ACS::RDS::Database", "ALIYUN::RDS::Database"),
    "rds_account": ("db_account", "alicloud_rds_account", "alicloud_db_account", "ACS::RDS::Account", "ALIYUN::RDS::Account"),
    "mongodb_instance": ("mongodb", "dds", "alicloud_mongodb_instance", "ACS::MongoDB::DBInstance", "ALIYUN::MONGODB::Instance"),
    "kms_key": ("kms", "cmk", "alicloud_kms_key", "ACS::KMS::Key", "ALIYUN::KMS::Key"),
    "actiontrail_trail": ("trail", "alicloud_actiontrail_trail", "alicloud_actiontrail", "ACS::ActionTrail::Trail",
                          "ALIYUN::ACTIONTRAIL::Trail"),
}
#: Words that name a type only together with the procedure's product ("instance" on ECS).
_PRODUCT_ALIASES: dict[str, dict[str, str]] = {
    "instance": {"ecs": "ecs_instance", "rds": "rds_instance", "mongodb": "mongodb_instance", "slb": "slb", "alb": "alb"},
    "listener": {"slb": "slb_listener", "alb": "alb_listener"},
    "key": {"kms": "kms_key"},
    "account": {"rds": "rds_account"},
}


def _norm(text: str) -> str:
    return re.sub(r"[^0-9a-z\u4e00-\u9fff]+", "", text.lower())


_ALIAS_INDEX: dict[str, str] = {}
for _type in META_TYPES:
    _ALIAS_INDEX[_norm(_type)] = _type
    for _alias in _ALIASES[_type]:
        _ALIAS_INDEX.setdefault(_norm(_alias), _type)


class MetaError(UsageError):
    """A ``requires:`` annotation names an unknown type or is malformed (file and line in the message)."""

    def __init__(self, path: str, line: int, detail: str) -> None:
        super().__init__(f"{path}:{line}: {detail}")
        self.path, self.line, self.detail = path, line, detail


def normalize_type(name: str, product: str | None = None) -> str | None:
    """The META type an annotation's ``type:`` means, or None when it names none.

    ``product`` is a product key (``ecs``, ``rds``, ...) used for words that need one
    ("instance", "listener", "key", "account")."""
    key = _norm(str(name))
    if key in _ALIAS_INDEX:
        return _ALIAS_INDEX[key]
    for word, by_product in _PRODUCT_ALIASES.items():
        if key in (word, word + "s") and product in by_product:
            return by_product[product]
    return None


# --- the data ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """Why a requirement (or an output) was inferred: the doc line and what it says."""

    line: int
    kind: str  #: "prerequisite", "step", "field", "title", "criteria", "dependency", "annotation"
    text: str

    def describe(self) -> str:
        return f"L{self.line} {self.kind}: {self.text}" if self.line else f"{self.kind}: {self.text}"

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "text": self.text}


@dataclass
class Requirement:
    """One kind of resource that must exist before the procedure runs."""

    type: str
    count: int = 1
    attributes: dict[str, Any] = field(default_factory=dict)
    name: str | None = None  #: as annotated, or generated with the run suffix
    dependencies: list[str] = field(default_factory=list)  #: META types it needs, in order
    source: str = "inferred"  #: "annotation" or "inferred"
    evidence: list[Evidence] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "count": self.count,
            "attributes": dict(self.attributes),
            "name": self.name,
            "dependencies": list(self.dependencies),
            "source": self.source,
            "evidence": [e.to_dict() for e in self.evidence],
        }


@dataclass
class MetaPlan:
    """A procedure's Resource META and what the procedure itself creates."""

    requirements: list[Requirement] = field(default_factory=list)
    creates: dict[str, list[Evidence]] = field(default_factory=dict)  #: META type -> why it is an output
    product: str | None = None  #: the product key used to read "instance", "listener", ...
    #: META type -> the prerequisites that ask for its absence ("contains no ENIs"): not made
    absent: dict[str, list[Evidence]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "product": self.product,
            "creates": [{"type": t, "evidence": [e.to_dict() for e in ev]} for t, ev in self.creates.items()],
            "requirements": [r.to_dict() for r in self.requirements],
            "absent": [{"type": t, "evidence": [e.to_dict() for e in ev]} for t, ev in self.absent.items()],
        }


# --- names -------------------------------------------------------------------------------------


def default_name(meta_type: str, suffix: str | None, index: int = 1) -> str | None:
    """``docverify-vpc-ab12cd`` (``docverify_db_ab12cd`` for RDS databases and accounts);
    ``-2``/``_2`` appended from the second resource on; None for unnamed types."""
    if meta_type in UNNAMED:
        return None
    slug = _SLUGS.get(meta_type, meta_type.replace("_", "-"))
    parts = ["docverify", slug] + ([suffix] if suffix else []) + ([str(index)] if index > 1 else [])
    return ("_" if meta_type in _UNDERSCORE_NAMES else "-").join(parts)


def instance_name(requirement: Requirement, suffix: str | None, index: int = 1) -> str | None:
    """The name of the ``index``-th resource (1-based) a requirement asks for."""
    if requirement.type in UNNAMED:
        return None
    if requirement.name:
        base = requirement.name.replace("<suffix>", suffix or "")
        separator = "_" if requirement.type in _UNDERSCORE_NAMES else "-"
        return base if index == 1 else f"{base}{separator}{index}"
    return default_name(requirement.type, suffix, index)


# --- annotations -------------------------------------------------------------------------------



def annotated_requirements(procedure: Procedure, product: str | None = None) -> list[Requirement]:
    """The ``requires:`` entries of the procedure's annotation, validated (MetaError
    naming the file and line otherwise). Entries with ``count: 0`` are kept (they
    suppress inference) and dropped later."""
    annotation = procedure.annotation
    if annotation is None or not annotation.requires:
        return []
    out: list[Requirement] = []
    for index, item in enumerate(annotation.requires):
        where = f"requires[{index}]"

        def fail(message: str, needle: str | None = None) -> NoReturn:
            line = _annotation_line(procedure, needle)
            raise MetaError(procedure.path, line, f"{where} of {procedure.id}: {message}")

        try:  # the parser validated it; an Annotation made in code is validated here
            entry = RequiredResource.model_validate(item)
        except ValidationError as error:
            detail = error.errors()[0]
            fail(describe({**detail, "loc": ("requires", index, *detail["loc"])}),
                 str(detail["loc"][0]) if detail["loc"] else None)
        meta_type = normalize_type(entry.type, product)
        if meta_type is None:
            close = difflib.get_close_matches(entry.type.lower(), list(META_TYPES), n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'? " if close else ""
            context = ""
            if _norm(entry.type).rstrip("s") in _PRODUCT_ALIASES:
                context = " (it needs the procedure's product: set 'product:' or write the full type)"
            fail(f"unknown Resource META type '{entry.type}'{context}; {hint}valid types: {', '.join(META_TYPES)}",
                 entry.type)
        out.append(Requirement(
            type=meta_type, count=entry.count, attributes=dict(entry.attributes), name=entry.name,
            source="annotation", evidence=[Evidence(annotation.line, "annotation", f"requires: type {entry.type}")],
        ))
    return out


def _annotation_line(procedure: Procedure, needle: str | None) -> int:
    """The line of the annotation that holds ``needle`` (else the annotation's first line)."""
    annotation = procedure.annotation
    start = annotation.line if annotation else procedure.line
    if not needle:
        return start
    try:
        lines = Path(procedure.path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return start
    for number in range(start, min(len(lines), start + 200) + 1):
        text = lines[number - 1]
        if needle in text and ("requires" in text or ":" in text or "-" in text):
            return number
        if "-->" in text and number > start:
            break
    return start


# --- inference: words for the META types ---------------------------------------------------------

_L = r"(?<![a-z0-9])"  # a Latin word edge on the left
_R = r"(?![a-z0-9])"

#: Phrases that look like a type but are not one; matched first, never a resource.
_NOT_TYPES = (
    r"security groups? rules?", r"instance (?:types?|famil(?:y|ies)|specifications?|metadata|settings|status|"
    r"configurations?|ram roles?|charge|creation|purchase)", r"system disks?", r"data disks?",
    r"(?:automatic )?snapshot polic(?:y|ies)", r"automatic snapshots?", r"(?:nas )?file systems?",
    r"alibaba cloud accounts?", r"resource groups?", r"snapshot service", r"listener (?:protocols?|ports?|names?)",
    r"instance names?", r"(?:server group|vserver group) (?:names?|types?|ids?)", r"vserver groups?",
    r"deployment sets?",
    r"route entr(?:y|ies)", r"backend servers?", r"polic(?:y|ies) documents?",
    r"vpc-type", r"key pair names?", r"bucket names?", r"user names?", r"logon names?", r"public images?",
    r"vpc id", r"vswitch id", r"instance id/name", r"access control lists?",
    r"instance resource access management \(ram\) roles?",
    r"安全组规则", r"实例规格", r"实例创建页?", r"实例ram角色", r"实例元数据", r"实例自定义数据",
    r"实例的(?:总费用|使用时长|整体配置)", r"系统盘", r"数据盘", r"快照策略", r"资源组", r"公共镜像", r"镜像市场",
)

#: (META type, pattern, product key or None). Earlier entries win where matches overlap.
_TERMS: tuple[tuple[str, str, str | None], ...] = (
    ("ecs_instance", r"(?:ecs|elastic compute service(?: \(ecs\))?|linux|windows) instances?|云服务器(?:ecs)?(?:实例)?|ecs实例", None),
    ("mongodb_instance", r"(?:apsaradb for )?mongodb (?:replica set |sharded cluster )?instances?|replica set instances?|sharded cluster instances?|mongodb实例|副本集实例|分片集群实例", None),
    ("rds_instance", r"(?:apsaradb )?rds(?: for \w+)? instances?|apsaradb rds for \w+ instances?|rds实例|云数据库rds(?:版)?实例", None),
    ("slb_listener", r"(?:slb|clb) listeners?", None),
    ("alb_listener", r"alb listeners?", None),
    ("alb_server_group", r"alb server groups?", None),
    ("slb", r"(?:slb|clb|server load balancer|classic load balancer) instances?|server load balance(?:rs?)?|传统型负载均衡(?:clb)?(?:实例)?|(?:clb|slb)实例", None),
    ("alb", r"(?:alb|application load balancer) instances?|application load balancers?|应用型负载均衡(?:alb)?(?:实例)?|alb实例", None),
    ("snat_entry", r"snat entr(?:y|ies)|snat条目", None),
    ("dnat_entry", r"dnat entr(?:y|ies)|dnat条目", None),
    ("nat_gateway", r"(?:internet |vpc |enhanced )?nat gateways?|nat网关", None),
    ("eip", r"elastic ip(?: address(?:es)?|s)?|eips?|弹性公网ip(?:地址)?", None),
    ("ipv6_gateway", r"ipv6 gateways?|ipv6网关", None),
    ("vswitch", r"v-?switch(?:es)?|交换机", None),
    ("vpc", r"virtual private clouds?(?: \(vpcs?\))?|(?:ipv6 |ipv4 |dual-stack )?vpcs?|专有网络(?:vpc)?", None),
    ("security_group", r"security groups?|安全组", None),
    ("route_table", r"route tables?|路由表", None),
    ("key_pair", r"(?:ssh )?key pairs?|(?:ssh)?密钥对", None),
    ("image", r"custom images?|自定义镜像", None),
    ("snapshot", r"snapshots?|快照", None),
    ("disk", r"(?:cloud )?disks?|云盘", None),
    ("network_interface", r"(?:elastic )?network interfaces?|enis?|弹性网卡", None),
    ("oss_bucket", r"(?:oss )?buckets?|存储空间", None),
    ("oss_object", r"oss objects?", None),
    ("ram_access_key", r"accesskey(?: pairs?)?|access ?keys?(?: pairs?)?", None),
    ("ram_group", r"(?:ram )?user groups?|用户组", None),
    ("ram_user", r"ram users?|ram用户", None),
    ("ram_role", r"ram roles?|service-linked roles?|ram角色|服务关联角色", None),
    ("ram_policy", r"(?:custom|ram) polic(?:y|ies)|自定义(?:权限)?策略|权限策略", None),
    ("kms_key", r"kms keys?|customer master keys?|cmks?", None),
    ("actiontrail_trail", r"trails?", None),
    # words that need the procedure's product
    ("ecs_instance", r"instances?|实例", "ecs"),
    ("rds_instance", r"instances?|实例", "rds"),
    ("mongodb_instance", r"instances?|实例", "mongodb"),
    ("slb", r"instances?|实例", "slb"),
    ("alb", r"instances?|实例", "alb"),
    ("slb_listener", r"(?:https? |tcp |udp )?listeners?|监听", "slb"),
    ("alb_listener", r"(?:https? |quic )?listeners?|监听", "alb"),
    ("alb_server_group", r"(?:backend )?server groups?|(?:后端)?服务器组", "alb"),
    ("rds_database", r"databases?|数据库", "rds"),
    ("rds_account", r"(?:database |privileged |standard )?accounts?|(?:数据库)?账号", "rds"),
    ("oss_object", r"objects?|文件|对象", "oss"),
    ("ram_user", r"users?|用户", "ram"),
    ("ram_group", r"groups?", "ram"),
    ("ram_role", r"roles?|角色", "ram"),
    ("ram_policy", r"polic(?:y|ies)|策略", "ram"),
    ("kms_key", r"keys?|密钥", "kms"),
    ("actiontrail_trail", r"跟踪", "actiontrail"),  # a common word elsewhere
)


def _edge(pattern: str) -> re.Pattern[str]:
    return re.compile(f"{_L}(?:{pattern}){_R}", re.IGNORECASE)


_NOT_TYPE_RE = _edge("|".join(_NOT_TYPES))
_TERM_RES: tuple[tuple[str, re.Pattern[str], str | None], ...] = tuple((t, _edge(p), prod) for t, p, prod in _TERMS)


@dataclass(frozen=True)
class _Mention:
    type: str
    start: int
    end: int


def mentions(text: str, product: str | None) -> list[_Mention]:
    """The META types a text names, in order (non-overlapping, earlier terms first)."""
    taken: list[tuple[int, int]] = [m.span() for m in _NOT_TYPE_RE.finditer(text)]
    found: list[_Mention] = []
    for meta_type, pattern, scope in _TERM_RES:
        if scope is not None and scope != product:
            continue
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            taken.append((start, end))
            found.append(_Mention(meta_type, start, end))
    return sorted(found, key=lambda m: m.start)


# --- inference: cues -----------------------------------------------------------------------------

_DET = r"(?:the|a|an|your|its|one\s+or\s+more|multiple|existing|target|specific|desired|required|several)"
_ADJ = r"(?:(?!(?:where|which|that|to|of|for|in|on|from|with|and|or|when|if)\s)[\w()./-]+\s+)"
_CREATE_BEFORE = re.compile(
    r"(?:\b(?:create|creating|created|add|adding|purchase|purchasing|buy|buying|apply\s+for|applying\s+for|launch|"
    r"launching|upload|uploading|new)\s+(?:a\s+|an\s+|the\s+|new\s+|one\s+|your\s+|more\s+|and\s+\w+\s+(?:a\s+|an\s+)?)*"
    + _ADJ + r"{0,3}"
    r"|(?:创建|新建|购买|申请|添加|上传)(?:一个|新的|新)?\s*)$",
    re.IGNORECASE,
)
_EXISTING_BEFORE = re.compile(
    r"(?:\bfind\s+(?:" + _DET + r"\s+)*" + _ADJ + r"{0,3}"
    r"|\b(?:click|clicking|select|selecting|choose|open|view|manage|release|delete|stop|start|restart|modify|bind|"
    r"associate|attach|disassociate|unbind|detach)\s+(?:on\s+)?(?:" + _DET + r"\s+)+" + _ADJ + r"{0,2}"
    r"|\bclick(?:ing)?\s+(?:the|its)\s+(?:names?|ids?)\s+of\s+(?:" + _DET + r"\s+)*" + _ADJ + r"{0,2}"
    r"|\b(?:the|a|an)\s+(?:target|specified|existing|selected|created)\s+" + _ADJ + r"{0,2}"
    r"|(?:找到|选择|单击|点击|选中|勾选)(?:目标|待[^，。；\s]{0,8}的|需要[^，。；\s]{0,10}的|要[^，。；\s]{0,10}的|已创建的?)?\s*"
    r"|(?:目标|已创建的?|已有的?|已经有可用的|已有可用的|可用的)\s*)$",
    re.IGNORECASE,
)
_EXISTING_AFTER = re.compile(
    r"^(?:\s*\([^)]{0,40}\))?(?:"
    r"\s+(?:that|which|whose|to\s+which|for\s+which|from\s+which|in\s+which|with\s+which|on\s+which)\s+you\s+(?:want|need|would\s+like)"
    r"|\s+you\s+want\s+to"
    r"|\s+to\s+be\s+\w+ed\b"
    r"|\s+(?:is|are|has\s+been|have\s+been)\s+(?:already\s+)?(?:deployed|located|running|stopped|available|"
    r"associated|bound|attached)"
    r"|\s+(?:details?\s+page|list,?\s+click)"
    r"|\s*(?:所在的?(?:地域|区域)|的(?:名称|ID|详情页))"
    r")",
    re.IGNORECASE,
)
_IN_LIST = re.compile(r"\bin\s+the\s+$", re.IGNORECASE)
#: A clicked label that is a resource's name, not a control's: lower case, digits, "-", "_" or ".",
#: with a digit or a separator ("default-vpc", "web01"; not "Create", "OK").
_RESOURCE_NAME = re.compile(r"(?=[a-z0-9._-]*[0-9._-])[a-z0-9][a-z0-9._-]{2,79}")
#: Types whose names are unique across the whole cloud: never provisioned under the doc's name.
_GLOBAL_NAMES = frozenset({"oss_bucket"})
#: Leading clauses that state a purpose or a condition, not a precondition.
_PURPOSE = re.compile(
    r"^\s*(?:(?:to|if|when|before|after|in\s+order\s+to)\b[^,，]{0,160}[,，]"
    r"|(?:如果|若|在)[^，,。]{0,60}?(?:之前|之后|时|后)?[，,]"
    r"|(?:如果|若)[^，,。]{0,60}[，,])",
    re.IGNORECASE,
)
_CONDITION_AFTER = re.compile(r"\s+(?:if|when|unless)\s+you\b.*$", re.IGNORECASE)
_DEFINITION = re.compile(
    r"^\s*(?:an?\s+|the\s+)?[\w\s()-]{1,60}?\s(?:is|are)\s+(?:a|an|the|used|one"
    # "is not a ...", "is not supported"; not a state the resource must be in ("is not associated with ...")
    r"|not(?!\s+(?:associated|attached|bound|mounted|in\s+use|used\s+by|running|stopped|locked|protected)\b))\b"
    r"|^[^。]{1,40}?(?<!已)是(?!否)",
    re.IGNORECASE,
)
_KNOWN = re.compile(r"\b(?:is|are)\s+(?:known|determined|planned|understood|decided)\b", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.。!?！？])\s*")

#: Parameter labels (table rows, drop-down lists) that select an existing resource.
_FIELD_LABELS: dict[str, str] = {
    _norm(label): meta_type
    for label, meta_type in (
        ("VPC", "vpc"), ("VPC ID", "vpc"), ("VPC Network", "vpc"), ("专有网络", "vpc"), ("专有网络VPC", "vpc"),
        ("vSwitch", "vswitch"), ("VSwitch ID", "vswitch"), ("交换机", "vswitch"),
        ("Security Group", "security_group"), ("Security Group ID", "security_group"), ("安全组", "security_group"),
        ("OSS Bucket", "oss_bucket"), ("Bucket", "oss_bucket"),
        ("EIP", "eip"), ("EIPs", "eip"), ("Elastic IP Address", "eip"),
        ("NAT Gateway", "nat_gateway"), ("NAT Gateway ID", "nat_gateway"),
        ("RAM User", "ram_user"), ("Key Pair Name", "key_pair"),
    )
}
#: A label that starts with one of these creates what follows ("Create Bucket", "新建安全组").
_CREATE_LABEL = re.compile(
    r"^\s*(?:create|new|add|apply\s+for|purchase|buy|launch|upload)\s+(?:an?\s+|new\s+)?(?P<rest>.+?)(?:\s+now)?\s*$"
    r"|^\s*(?:创建|新建|购买|申请|添加|上传)(?P<rest_zh>.+?)\s*$",
    re.IGNORECASE,
)
_QUALIFIERS = re.compile(
    r"^(?:(?:internet|vpc|enhanced|ssh|ecs|instance|custom|normal|ram|http|https|tcp|udp|quic|ipv4|ipv6|"
    r"dual-stack|pay-as-you-go|subscription|alb|slb|clb|oss|standard|basic)\s+)*",
    re.IGNORECASE,
)
_STEP_TITLE = re.compile(r"^\s*(?:(?:\(optional\)|（可选）)\s*)?(?:step\s*\d+|步骤\s*[\w一二三四五六七八九十]+)", re.IGNORECASE)
_STEP_CREATES = re.compile(
    r"^\s*(?:create|add|purchase|buy|apply\s+for|launch|upload)\s+(?:and\s+\w+\s+)?(?:a\s+|an\s+|the\s+|new\s+)*"
    r"|^\s*(?:创建|新建|购买|申请|添加|上传)",
    re.IGNORECASE,
)

#: Audit events (service, event) -> (META types it creates, META types it needs with their attributes).
_EVENTS: dict[tuple[str, str], tuple[tuple[str, ...], tuple[tuple[str, dict[str, Any]], ...]]] = {}


def _event(service: str, events: str, creates: tuple[str, ...] = (), needs: tuple[Any, ...] = ()) -> None:
    for name in events.split():
        _EVENTS[(service, name)] = (creates, tuple((n, {}) if isinstance(n, str) else n for n in needs))


_event("Oss", "PutBucket", creates=("oss_bucket",))
_event("Oss", "DeleteBucket PutBucketTags PutBucketWebsite PutBucketVersioning PutBucketAcl PutBucketCors "
       "PutBucketLifecycle PutBucketPolicy PutBucketReferer PutBucketEncryption PutBucketLogging", needs=("oss_bucket",))
_event("Oss", "PutObject", creates=("oss_object",))
_event("Ecs", "AuthorizeSecurityGroup AuthorizeSecurityGroupEgress RevokeSecurityGroup DeleteSecurityGroup",
       needs=("security_group",))
_event("Ecs", "CreateSecurityGroup", creates=("security_group",))
_event("Ecs", "CreateKeyPair ImportKeyPair", creates=("key_pair",))
_event("Ecs", "CreateImage", creates=("image",))
_event("Ecs", "CreateSnapshot", creates=("snapshot",))
_event("Ecs", "CreateDisk", creates=("disk",))
_event("Ecs", "RunInstances CreateInstance", creates=("ecs_instance",))
_event("Ecs", "StartInstance", needs=(("ecs_instance", {"status": "Stopped"}),))
_event("Ecs", "StopInstance RebootInstance", needs=(("ecs_instance", {"status": "Running"}),))
_event("Ecs", "DeleteInstance ModifyInstanceAutoReleaseTime ModifyInstanceAttribute", needs=("ecs_instance",))
_event("Vpc", "CreateVpc", creates=("vpc",))
_event("Vpc", "CreateVSwitch", creates=("vswitch",))
_event("Vpc", "CreateRouteTable", creates=("route_table",))
_event("Vpc", "CreateIpv6Gateway", creates=("ipv6_gateway",), needs=("vpc",))
_event("Vpc", "DeleteVSwitch", needs=("vswitch",))
_event("Vpc", "DeleteVpc", needs=("vpc",))
_event("Vpc", "AllocateEipAddress AllocateEipSegmentAddress AllocateEipAddressPro", creates=("eip",))
_event("Vpc", "AssociateEipAddress UnassociateEipAddress ReleaseEipAddress", needs=("eip",))
_event("Vpc", "CreateSnatEntry", creates=("snat_entry",))
_event("Vpc", "CreateForwardEntry", creates=("dnat_entry",))
_event("Vpc", "DeleteSnatEntry", needs=("snat_entry",))
_event("Vpc", "DeleteForwardEntry", needs=("dnat_entry",))
_event("Vpc", "CreateNatGateway", creates=("nat_gateway",))
_event("Vpc", "ModifyNatGatewayAttribute DeleteNatGateway", needs=("nat_gateway",))
_event("Slb", "CreateLoadBalancerHTTPSListener CreateLoadBalancerHTTPListener CreateLoadBalancerTCPListener "
       "CreateLoadBalancerUDPListener", creates=("slb_listener",))
_event("Slb", "CreateLoadBalancer", creates=("slb",))
_event("Slb", "DeleteLoadBalancer", needs=("slb",))
_event("Alb", "CreateListener", creates=("alb_listener",))
_event("Alb", "CreateLoadBalancer", creates=("alb",))
_event("Rds", "CreateAccount", creates=("rds_account",))
_event("Rds", "CreateDatabase", creates=("rds_database",))
_event("Rds", "ModifySecurityIps DeleteDBInstance", needs=("rds_instance",))
_event("Rds", "CreateDBInstance", creates=("rds_instance",))
_event("Dds", "CreateDBInstance CreateShardingDBInstance", creates=("mongodb_instance",))
_event("Dds", "DeleteDBInstance", needs=("mongodb_instance",))
_event("Kms", "CreateKey", creates=("kms_key",))
_event("Kms", "ScheduleKeyDeletion", needs=("kms_key",))
_event("Kms", "CancelKeyDeletion", needs=(("kms_key", {"status": "PendingDeletion"}),))
_event("Kms", "DisableKey", needs=(("kms_key", {"status": "Enabled"}),))
_event("Kms", "EnableKey", needs=(("kms_key", {"status": "Disabled"}),))
_event("Actiontrail", "CreateTrail", creates=("actiontrail_trail",))
_event("Actiontrail", "UpdateTrail DeleteTrail", needs=("actiontrail_trail",))
_event("Actiontrail", "StopLogging", needs=(("actiontrail_trail", {"status": "Enable"}),))
_event("Actiontrail", "StartLogging", needs=(("actiontrail_trail", {"status": "Disable"}),))
_event("Ram", "AttachPolicyToRole", needs=("ram_role",))
_event("Ram", "AttachPolicyToGroup", needs=("ram_group",))
_event("Ram", "AttachPolicyToUser", needs=("ram_user",))
_event("Ram", "AddUserToGroup", needs=("ram_user", "ram_group"))
_event("Ram", "CreateAccessKey", creates=("ram_access_key",))
_event("Ram", "UpdateAccessKey DeleteAccessKey", needs=("ram_access_key",))
_event("Ram", "CreateGroup", creates=("ram_group",))
_event("Ram", "CreateUser", creates=("ram_user",))
_event("Ram", "CreateRole", creates=("ram_role",))
_event("Ram", "CreatePolicy", creates=("ram_policy",))
_event("Ram", "DeleteGroup", needs=("ram_group",))
_event("Ram", "DeleteUser", needs=("ram_user",))
_event("Ram", "DeleteRole", needs=("ram_role",))
_event("Ram", "DeletePolicy", needs=("ram_policy",))
_event("Ram", "DetachPolicyFromUser UpdateUser", needs=("ram_user",))
_event("Ram", "UpdateGroup", needs=("ram_group",))
_event("Ram", "UpdateRole", needs=("ram_role",))
# modifications, and resources without a META type of their own (SLB's vServer groups): what they act on
_event("Ecs", "ModifySecurityGroupAttribute ModifySecurityGroupRule", needs=("security_group",))
_event("Ecs", "DeleteKeyPairs", needs=("key_pair",))
_event("Ecs", "DeleteImage ModifyImageAttribute", needs=("image",))
_event("Ecs", "DeleteSnapshot ModifySnapshotAttribute", needs=("snapshot",))
_event("Ecs", "DeleteDisk ModifyDiskAttribute", needs=("disk",))
_event("Ecs", "CreateNetworkInterface", creates=("network_interface",))
_event("Ecs", "DeleteNetworkInterface ModifyNetworkInterfaceAttribute", needs=("network_interface",))
_event("Ecs", "AttachNetworkInterface", needs=("network_interface", "ecs_instance"))
_event("Ecs", "DetachNetworkInterface", needs=("network_interface", "ecs_instance"))
_event("Vpc", "ModifyVpcAttribute", needs=("vpc",))
_event("Vpc", "ModifyVSwitchAttribute", needs=("vswitch",))
_event("Vpc", "DeleteRouteTable ModifyRouteTableAttributes", needs=("route_table",))
_event("Vpc", "DeleteIpv6Gateway ModifyIpv6GatewayAttribute", needs=("ipv6_gateway",))
_event("Vpc", "ModifyEipAddressAttribute", needs=("eip",))
_event("Vpc", "ModifySnatEntry", needs=("snat_entry",))
_event("Vpc", "ModifyForwardEntry", needs=("dnat_entry",))
_event("Slb", "CreateVServerGroup DeleteVServerGroup SetVServerGroupAttribute SetLoadBalancerName", needs=("slb",))
_event("Slb", "StopLoadBalancerListener DeleteLoadBalancerListener", needs=("slb_listener",))
_event("Slb", "StartLoadBalancerListener", needs=(("slb_listener", {"status": "stopped"}),))
_event("Alb", "CreateServerGroup", creates=("alb_server_group",))
_event("Alb", "DeleteServerGroup UpdateServerGroupAttribute", needs=("alb_server_group",))
_event("Alb", "StopListener DeleteListener UpdateListenerAttribute", needs=("alb_listener",))
_event("Alb", "StartListener", needs=(("alb_listener", {"status": "Stopped"}),))
_event("Alb", "DeleteLoadBalancer UpdateLoadBalancerAttribute", needs=("alb",))
_event("Rds", "DeleteAccount", needs=("rds_account",))
_event("Rds", "DeleteDatabase", needs=("rds_database",))
_event("Rds", "ModifyDBInstanceDescription", needs=("rds_instance",))
_event("Dds", "ModifyDBInstanceDescription", needs=("mongodb_instance",))
_event("Kms", "UpdateKeyDescription", needs=("kms_key",))

# --- inference -----------------------------------------------------------------------------------


class _Collector:
    """Needs and outputs with their evidence, first-seen order kept."""

    def __init__(self) -> None:
        self.needs: dict[str, list[Evidence]] = {}
        self.attributes: dict[str, dict[str, Any]] = {}
        self.counts: dict[str, int] = {}  #: more than one where a dependency needs it (an ALB's two vSwitches)
        self.creates: dict[str, list[Evidence]] = {}
        self.weak: set[str] = set()  #: outputs only a heading suggests: a need found in the text wins
        self.names: dict[str, str] = {}  #: the name a step gives what it acts on ("In the VPC list, click default-vpc")
        self.absent: dict[str, list[Evidence]] = {}  #: what a prerequisite asks not to exist

    def need(self, meta_type: str, evidence: Evidence, attributes: dict[str, Any] | None = None) -> None:
        items = self.needs.setdefault(meta_type, [])
        if evidence not in items:
            items.append(evidence)
        if attributes:
            self.attributes.setdefault(meta_type, {}).update(attributes)

    def create(self, meta_type: str, evidence: Evidence) -> None:
        items = self.creates.setdefault(meta_type, [])
        if evidence not in items:
            items.append(evidence)

    def exclude(self, meta_type: str, evidence: Evidence) -> None:
        items = self.absent.setdefault(meta_type, [])
        if evidence not in items:
            items.append(evidence)


def _snippet(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _events(procedure: Procedure, product: str | None, collector: _Collector) -> None:
    """What the success criteria say: created outputs and needed inputs. The events
    are the annotation's ``expect:`` or the built-in criteria of the title (read
    with this module's product, which also looks at headings, menus and file
    names); a wizard step titled "Step 2: ..." without an event of its own takes
    the enclosing heading's ("Create an instance by using the wizard"), as a weak
    output that what the steps act on overrides."""

    events = [(e.service or "", e.event, "annotation expect" if e.source == "annotation" else "title", False)
              for e in expected_events(procedure)]
    title = TITLE_PREFIX.sub("", procedure.title)
    if not events:
        events = [(r.service or "", r.event, "title", False) for r in match_text(title, product)]
    if not events and _STEP_TITLE.match(procedure.title) and not _STEP_CREATES.match(title):
        headings = procedure.headings[:-1] if procedure.headings[-1:] == [procedure.title] else procedure.headings
        for heading in reversed(headings):
            rules = match_text(TITLE_PREFIX.sub("", heading), product)
            if rules:
                events = [(r.service or "", r.event, f"heading '{_snippet(heading, 60)}'", True) for r in rules]
                break
    for service, event, origin, weak in events:
        creates, needs = _EVENTS.get((service, event), ((), ()))
        evidence = Evidence(procedure.line, "criteria", f"{_snippet(procedure.title)} → {service + ':' if service else ''}{event} ({origin})")
        for meta_type in creates:
            if weak:
                collector.weak.add(meta_type)
            collector.create(meta_type, evidence)
        for meta_type, attributes in needs:
            collector.need(meta_type, evidence, attributes)


def _title_creates(procedure: Procedure, product: str | None, collector: _Collector) -> None:
    """'Create and upload a default homepage object' -> creates oss_object."""
    title = TITLE_PREFIX.sub("", procedure.title)
    match = _STEP_CREATES.match(title)
    if not match:
        return
    rest = title[match.end():]
    found = mentions(rest, product)
    if found and len(rest[: found[0].start].split()) <= 3:
        collector.create(found[0].type, Evidence(procedure.line, "title", _snippet(procedure.title)))


def _label_creates(label: str, product: str | None) -> str | None:
    """The META type a button or menu item creates: "Create Bucket", "Create Internet
    NAT Gateway", "新建安全组"; None when the label creates nothing known."""
    match = _CREATE_LABEL.match(label)
    if not match:
        return None
    rest = (match.group("rest") or match.group("rest_zh") or "").strip()
    rest = _QUALIFIERS.sub("", rest)
    found = mentions(rest, product)
    if len(found) == 1 and found[0].start == 0 and found[0].end == len(rest):
        return found[0].type
    return None


def _conditional(text: str) -> bool:
    return bool(re.match(r"^\s*(?:to|if|when)\b|^\s*(?:如果|若|如需)", text, re.IGNORECASE))


def _steps(procedure: Procedure, product: str | None, collector: _Collector) -> None:
    for step in procedure.all_steps():
        _step(step, product, collector)


def _step(step: Step, product: str | None, collector: _Collector) -> None:
    text = step.text
    evidence = Evidence(step.line, "step", f"{step.number}. {_snippet(text)}")
    # outputs: "Create a RAM user." as a step; a clicked "Create Bucket"; a menu "Create > ECS Instance"
    start = _STEP_CREATES.match(text)
    if start:
        found = mentions(text[start.end():], product)
        if found and len(text[start.end(): start.end() + found[0].start].split()) <= 3:
            collector.create(found[0].type, evidence)
    for action in step.actions:
        if action.intent in (Intent.CLICK, Intent.NAVIGATE, Intent.CONFIRM) and not _conditional(text):
            labels = [action.target] if action.target else []
            if action.path:
                labels = [" ".join(action.path[i:i + 2]) for i in range(len(action.path) - 1)] + list(action.path)
            for label in labels:
                created = _label_creates(label or "", product)
                if created:
                    collector.create(created, evidence)
                    break
        if action.intent is Intent.SELECT and action.target and _norm(action.target) in _FIELD_LABELS:
            collector.need(_FIELD_LABELS[_norm(action.target)], evidence)
        if action.resource and not _conditional(text):  # "click the name of the bucket", "find the instance"
            named = mentions(action.resource, product)
            if named:
                collector.need(named[0].type, evidence)
    # inputs: the objects the text acts on
    for mention in mentions(text, product):
        before = text[max(0, mention.start - 90): mention.start]
        after = text[mention.end: mention.end + 90]
        if _CREATE_BEFORE.search(before) or re.search(r"\b(?:after|once|when|before)\s+(?:the|a|an|your)\s+$", before, re.IGNORECASE):
            continue
        in_list = bool(_IN_LIST.search(before) and re.match(r"^\s+list\b", after, re.IGNORECASE))
        if _EXISTING_BEFORE.search(before) or _EXISTING_AFTER.match(after) or in_list:
            collector.need(mention.type, evidence)
        if in_list and mention.type not in _GLOBAL_NAMES:  # "In the VPC list, click **default-vpc**": its name
            clicked = next((a.target for a in step.actions if a.intent is Intent.CLICK and a.target
                            and _RESOURCE_NAME.fullmatch(a.target)), None)
            if clicked:
                collector.names.setdefault(mention.type, clicked)
    for row in step.fields:
        meta_type = _FIELD_LABELS.get(_norm(row.name))
        if meta_type and not re.match(r"^\s*(?:create|new|none|do not|不)", row.value or "", re.IGNORECASE):
            collector.need(meta_type, Evidence(row.line, "field", f"{row.name}" + (f" = {row.value}" if row.value else "")))


#: Words right before a resource that say it must NOT exist ("contains no instances and no
#: ENIs", "is not associated with any EIP", "without a vSwitch", "没有实例"): a prerequisite
#: that asks for its absence provisions nothing.
_NEGATED_BEFORE = re.compile(
    r"(?:\b(?:no|without|zero|neither|nor)\s+(?:[\w-]+\s+){0,3}(?:\(\s*)?"
    r"|\bnot\s+(?:[\w-]+\s+){0,3}?(?:any|an?)\s+(?:[\w()-]+\s+){0,2}"
    r"|(?:没有|不含|不包含|无)\S{0,4})$",
    re.IGNORECASE,
)


#: What joins resources that one negation or one predicate covers ("no instances or ENIs",
#: "没有ECS实例或弹性网卡").
_JOINED = re.compile(r"^\s*(?:,?\s*(?:and|or|nor)\s+(?:any\s+|no\s+)?|,\s*|或者?|和|及|以及|与|、)\s*$",
                     re.IGNORECASE)
#: A predicate after a resource that says it is gone ("All AccessKey pairs of the user are
#: deleted", "实例已释放"): the prerequisite asks for its absence, not for it.
_GONE_AFTER = re.compile(
    r"\b(?:is|are|has\s+been|have\s+been|was|were)\s+(?:all\s+|already\s+)*(?:deleted|removed|released)\b"
    r"|(?:已经?|均已|都已|全部已)(?:被)?(?:删除|释放|移除|移出)",
    re.IGNORECASE,
)
#: The same said before the resources ("已删除RAM用户的所有AccessKey"): the clause's last one.
_GONE_BEFORE = re.compile(r"(?:已经?|先)(?:删除|释放|移除)(?:了)?", re.IGNORECASE)
#: What makes the resource before it the head of a noun phrase the one after it belongs to
#: ("AccessKey pairs *of the* RAM user", "the disks *attached to* the instance").
_OWNED_BY = re.compile(
    r"^\s+(?:of|in|on|from|for|within|attached\s+to|bound\s+to|associated\s+with|that\s+belongs?\s+to|"
    r"belonging\s+to)\s+(?:" + _DET + r"\s+)?(?:[\w-]+\s+){0,2}$",
    re.IGNORECASE,
)


def _absent(clause: str, found: list[_Mention]) -> set[int]:
    """The indexes of ``found`` (the mentions of ``clause``, in order) that the clause asks
    to be absent: negated ("contains no instances or ENIs", "没有ECS实例或弹性网卡"), or the
    head of what it says is deleted ("All AccessKey pairs of the RAM user are deleted": the
    pairs, not the user)."""
    absent: set[int] = set()
    for index, mention in enumerate(found):
        if _NEGATED_BEFORE.search(clause[:mention.start]) or (
                index - 1 in absent and _JOINED.match(clause[found[index - 1].end:mention.start])):
            absent.add(index)
    gone = _GONE_AFTER.search(clause)
    heads = [i for i, m in enumerate(found) if gone is not None and m.end <= gone.start()
             and not re.search(r"[,;，；]", clause[m.end:gone.start()])]
    if heads:  # the resource right before the predicate, or the one that owns it
        at = heads[-1]
        while at > 0 and _OWNED_BY.match(clause[found[at - 1].end:found[at].start]):
            at -= 1
        absent.add(at)
        while at > 0 and _JOINED.match(clause[found[at - 1].end:found[at].start]):
            at -= 1
            absent.add(at)
    elif found and (before := _GONE_BEFORE.search(clause)) and before.end() <= found[-1].start:
        absent.add(len(found) - 1)
    return absent


def _prerequisites(procedure: Procedure, product: str | None, collector: _Collector) -> None:
    from docverify.parse.prerequisites import looks_like_prerequisite

    for text in procedure.prerequisites:
        line = _line_of(procedure, text)
        for index, sentence in enumerate(s for s in _SENTENCES.split(text) if s.strip()):
            if index and not looks_like_prerequisite(sentence):
                continue
            if _DEFINITION.search(sentence) and not re.search(
                r"\b(?:created|purchased|activated|prepared|available|must|need|make sure|ensure)\b|已|确保|确认|需要|必须",
                sentence, re.IGNORECASE,
            ):
                continue
            if _KNOWN.search(sentence):
                continue  # "The instance type, region ... are known": knowledge, not resources
            clause = _CONDITION_AFTER.sub("", _PURPOSE.sub("", sentence, count=1))
            found = mentions(clause, product)
            absent = _absent(clause, found)
            for index, mention in enumerate(found):
                evidence = Evidence(line, "prerequisite", _snippet(sentence))
                if index in absent:  # "contains no instances", "the AccessKey pairs are deleted": must not exist
                    collector.exclude(mention.type, evidence)
                else:
                    collector.need(mention.type, evidence)


def _line_of(procedure: Procedure, text: str) -> int:
    """Prerequisites carry no line: find the first words of the text in the file."""
    probe = " ".join(text.split()[:6])
    if not probe:
        return procedure.line
    try:
        lines = Path(procedure.path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return procedure.line
    plain = [re.sub(r"[*_`\\]|\[|\]\([^)]*\)", "", line) for line in lines]
    for number, line in enumerate(plain, start=1):
        if probe in " ".join(line.split()):
            return number
    head = text.strip()[:12]
    for number, line in enumerate(plain, start=1):
        if head and head in line:
            return number
    return procedure.line


#: An IPv4 CIDR block a doc gives, and the private address ranges a VPC's block comes from.
_CIDR = re.compile(r"^(\d{1,3})\.(\d{1,3})\.\d{1,3}\.\d{1,3}/\d{1,2}$")


def _address_space(procedure: Procedure, collector: _Collector) -> None:
    """A vSwitch the procedure creates with the doc's CIDR block ("for example
    `10.55.16.0/24`") needs a VPC whose block holds it: the private range it is in
    (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16) becomes the needed VPC's block."""
    if "vswitch" not in collector.creates or "vpc" not in collector.needs:
        return
    for step in procedure.all_steps():
        for row in step.fields:
            match = _CIDR.match((row.value or "").strip())
            if match is None:
                continue
            first, second = int(match[1]), int(match[2])
            block = ("10.0.0.0/8" if first == 10 else "172.16.0.0/12" if first == 172 and 16 <= second <= 31
                     else "192.168.0.0/16" if (first, second) == (192, 168) else None)
            if block:
                collector.attributes.setdefault("vpc", {}).setdefault("cidr_block", block)
                return


def analyze(procedure: Procedure, *, suffix: str | None = None) -> MetaPlan:
    """The procedure's Resource META (closed over dependencies, in dependency order)
    and what it creates. With ``suffix`` every named requirement gets its name."""
    product = product_of(procedure)
    annotated = annotated_requirements(procedure, product)
    collector = _Collector()
    if not _is_foreign(procedure):  # the vocabulary is Alibaba Cloud's: nothing is inferred for AWS or Azure docs
        _events(procedure, product, collector)
        _title_creates(procedure, product, collector)
        _steps(procedure, product, collector)
        _prerequisites(procedure, product, collector)
    for meta_type in collector.weak:
        if meta_type in collector.needs and len(collector.creates.get(meta_type, [])) == 1:
            del collector.creates[meta_type]
    _address_space(procedure, collector)
    creates = collector.creates
    # what the outputs are made in is needed before the procedure runs
    for output in list(creates):
        for dependency in _closure([output]):
            if dependency != output and dependency not in creates:
                collector.need(dependency, Evidence(procedure.line, "dependency", f"{output} (created by the procedure) needs a {dependency}"))
        for dependency, count in DEPENDENCIES[output].items():
            if dependency not in creates:
                collector.counts[dependency] = max(collector.counts.get(dependency, 1), count)
    suppressed = {r.type for r in annotated if r.count == 0}
    requirements: list[Requirement] = [r for r in annotated if r.count > 0]
    present = {r.type for r in requirements}
    for meta_type, evidence in collector.needs.items():
        if meta_type in creates or meta_type in present or meta_type in suppressed:
            continue
        ordered = sorted(evidence, key=lambda e: _EVIDENCE_ORDER.get(e.kind, 9))  # the doc's own words first
        requirements.append(Requirement(type=meta_type, count=collector.counts.get(meta_type, 1),
                                        attributes=dict(collector.attributes.get(meta_type, {})),
                                        name=collector.names.get(meta_type), source="inferred", evidence=ordered))
        present.add(meta_type)
    requirements = close(requirements)
    if suffix is not None:
        for requirement in requirements:
            if requirement.type not in UNNAMED:
                requirement.name = instance_name(requirement, suffix)
    needed = {r.type for r in requirements}
    absent = {t: ev for t, ev in collector.absent.items() if t not in needed}
    return MetaPlan(requirements=requirements, creates=dict(creates), product=product, absent=absent)


_EVIDENCE_ORDER = {"annotation": 0, "prerequisite": 1, "step": 2, "field": 3, "criteria": 4, "title": 5, "dependency": 6}


def _closure(types: Iterable[str]) -> list[str]:
    seen: list[str] = []

    def visit(meta_type: str) -> None:
        if meta_type in seen:
            return
        seen.append(meta_type)
        for dependency in DEPENDENCIES[meta_type]:
            visit(dependency)

    for meta_type in types:
        visit(meta_type)
    return seen


def close(requirements: list[Requirement]) -> list[Requirement]:
    """Add the missing dependencies (once each, enough of them), fill in each
    requirement's ``dependencies`` and sort in dependency order."""
    by_type: dict[str, Requirement] = {}
    out = list(requirements)
    for requirement in out:
        by_type.setdefault(requirement.type, requirement)
    pending = list(out)
    while pending:
        requirement = pending.pop(0)
        for dependency, count in DEPENDENCIES[requirement.type].items():
            existing = by_type.get(dependency)
            evidence = Evidence(0, "dependency", f"needed by {requirement.type}")
            if existing is None:
                existing = Requirement(type=dependency, count=count, source="inferred", evidence=[evidence])
                by_type[dependency] = existing
                out.append(existing)
                pending.append(existing)
            else:
                total = sum(r.count for r in out if r.type == dependency)
                if total < count:
                    existing.count += count - total
                    existing.evidence.append(Evidence(0, "dependency", f"{requirement.type} needs {count}"))
    for requirement in out:
        requirement.dependencies = list(DEPENDENCIES[requirement.type])
    order = {t: i for i, t in enumerate(META_TYPES)}
    return sorted(out, key=lambda r: order[r.type])  # stable: annotation order within a type


def resolve_meta(task_or_procedure: Any) -> list[Requirement]:
    """The Resource META of a :class:`~docverify.task.Task` or a Procedure: what must
    exist before it runs, dependencies included, in dependency order. For a task,
    names carry its run suffix (``docverify-vpc-<suffix>``; an annotated name's
    ``<suffix>`` and other placeholders resolved by the task)."""
    procedure = getattr(task_or_procedure, "procedure", task_or_procedure)
    if not isinstance(procedure, Procedure):
        raise TypeError(f"resolve_meta needs a Task or a Procedure, not {type(task_or_procedure).__name__}")
    context = getattr(task_or_procedure, "context", None)
    suffix = context.get("suffix") if isinstance(context, dict) else None
    plan = analyze(procedure)
    if suffix:
        resolve = getattr(task_or_procedure, "resolve", None)
        for requirement in plan.requirements:
            if requirement.name and callable(resolve):
                requirement.name = resolve(requirement.name)
            requirement.name = instance_name(requirement, suffix)
    return plan.requirements
