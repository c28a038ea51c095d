"""The built-in success criteria: common Alibaba Cloud procedures -> the audit event that proves them.

A procedure without an ``expect:`` annotation still gets success criteria when it
is one of the common console procedures: its title (or, for a procedure that
opens a console itself, the buttons it clicks) is matched against a table of
*verb* × *object* patterns, each naming the ActionTrail event that the console
records when the procedure succeeds ("Create a bucket" on OSS -> ``Oss:PutBucket``).

How the table is read:

- Rules are tried in order; the first that matches wins, so specific rules
  ("security group rule", "custom image") come before general ones
  ("security group", "instance").
- A rule matches when one of its verbs is followed, within a few words, by one
  of its objects. The words in between may not include a preposition ("Create a
  custom image *from* an instance" is about the image, not the instance).
- A rule scoped to a product (``"ecs"``) applies only to procedures of that
  product, which comes from the procedure (annotation, front matter, the console
  it opens); unscoped rules name their product in the object ("ECS instance",
  "bucket", "NAT gateway").
- Objects joined by "and" give one criterion each: "Create a VPC and vSwitch" ->
  ``Vpc:CreateVpc`` and ``Vpc:CreateVSwitch``.
- Nothing matches: no criteria, and the runner falls back to the judges (or
  reports INCONCLUSIVE). Read-only procedures ("View ...", "Check whether ...")
  and uploads of objects (OSS data events, not in the management audit log) are
  left to the judges on purpose.

The event and service names are those of the real ActionTrail management events
(serviceName ``Ecs``, ``Oss``, ``Vpc``...), which the sandbox console records too.
The map is for Alibaba Cloud documentation: a procedure about another cloud (it
names AWS, Amazon, Azure...) gets no built-in criteria.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from docverify.parse.annotation_model import ExpectedAuditEvent
from docverify.parse.model import Intent, Procedure


@dataclass(frozen=True)
class ExpectedEvent:
    """An audit event whose presence (without an error code) means success."""

    event: str  #: eventName, "PutBucket"
    service: str | None = None  #: serviceName, "Oss"
    resource: str | None = None  #: a resource name that must appear in the event, if given
    source: str = "annotation"  #: "annotation" or "built-in"
    params: dict[str, str] = field(default_factory=dict)  #: request parameters the event must carry

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and v != {}}

    def describe(self) -> str:
        return f"{self.service + ':' if self.service else ''}{self.event}"


def expected_events(procedure: Procedure) -> list[ExpectedEvent]:
    """The procedure's success criteria: its annotation's ``expect:``, else the
    built-in map of common procedures (:mod:`docverify.check.criteria`)."""
    annotation = procedure.annotation
    if annotation is not None and annotation.expect:  # validated by the parser (spec/annotations.py)
        items = [ExpectedAuditEvent.model_validate(item) for item in annotation.expect]
        return [
            ExpectedEvent(
                event=item.event_name,
                service=item.service_name,
                resource=item.resource_name,
                params={key: str(value) for key, value in item.params.items()},
            )
            for item in items
        ]
    return builtin_criteria(procedure)


# --- verbs (English and Chinese), as regular-expression alternatives --------------------------

CREATE = r"create|add|purchase|buy|apply for|launch|创建|新建|购买|添加|申请"
DELETE = r"delete|remove|release|删除|释放|移除"
MODIFY = r"modify|change|edit|update|rename|reset|修改|更改|编辑|重置"
CONFIGURE = (
    r"configure|set up|set|enable|disable|turn on|turn off|add|create|modify|change|edit|manage"
    r"|配置|设置|开启|关闭|启用|禁用|添加|创建|修改|更改"
)
ENABLE = r"enable|turn on|start|开启|启用|启动"
DISABLE = r"disable|turn off|stop|关闭|禁用|停用|停止"
ASSOCIATE = r"associate|bind|attach|绑定"
DISASSOCIATE = r"disassociate|unbind|detach|解绑|解除绑定"
GRANT = r"grant|attach|add|授予|添加"

# --- objects that recur ------------------------------------------------------------------------

ECS_INSTANCE = r"ecs instances?|云服务器(?:ecs)?(?:实例)?|ecs实例"
INSTANCE = r"instances?|实例"
EIP = r"eips?|elastic ip(?: address(?:es)?)?|弹性公网ip(?:地址)?"
NAT_GATEWAY = r"nat gateways?|nat网关"
BUCKET = r"buckets?|存储空间"
#: a snapshot, not an automatic snapshot policy (no event docverify knows: left to the judges)
SNAPSHOT = r"snapshots?(?! polic)|快照(?!策略)"
#: What "modify the X of a Y" changes: the Y's attributes.
ATTRIBUTES = r"(?:names?|descriptions?|attributes?|information|settings|bandwidth|specifications?|remarks?|passwords?|名称|描述|信息|属性|带宽|备注|密码)"


def _modified(objects: str) -> str:
    """Objects of a MODIFY rule: the resource itself, or one of its attributes."""
    return rf"(?:{objects})(?: {ATTRIBUTES})?|(?:{objects}){ATTRIBUTES}"


@dataclass(frozen=True)
class Rule:
    """Procedures whose title has one of ``verbs`` then one of ``objects`` succeed
    when ``service:event`` is in the audit log."""

    product: str | None  #: the product key it is scoped to (see PRODUCTS), or None
    verbs: str
    objects: str
    service: str | None  #: ActionTrail serviceName; None when it varies
    event: str  #: ActionTrail eventName

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(
            rf"{_EDGE}(?P<verb>{self.verbs}){_EDGE}"
            rf"(?P<gap>(?:(?!{_STOP})[^.;:!?。；：]){{0,40}}?)"
            rf"{_EDGE}(?P<object>{self.objects}){_EDGE}"
        )


#: A word edge for Latin words, none needed next to Chinese: "create" must not match in
#: "recreate", but 申请 is a whole word in "申请eip".
_EDGE = r"(?:(?<![a-z])|(?![a-z]))"
#: Words that end a verb's reach: "create a custom image FROM an instance".
#: (a product's name with "for" in it, "ApsaraDB for MongoDB", "ApsaraDB RDS for MySQL", is no preposition)
_STOP = (r"(?<![a-z])(?:from|in|on|(?<!apsaradb )(?<!rds )for|to|of|by|with|when|using|via|into|at|under|after|before"
         r"|that|which|within|through)(?![a-z])|为|在|从|时")

RULES: tuple[Rule, ...] = (
    # Object Storage Service: bucket settings before the bucket itself.
    Rule("oss", CONFIGURE, r"(?:bucket )?(?:tags?|tagging)|(?:bucket)?标签", "Oss", "PutBucketTags"),
    Rule("oss", CONFIGURE, r"static website(?: hosting)?|static pages?|静态页面|静态网站(?:托管)?", "Oss", "PutBucketWebsite"),
    Rule("oss", CONFIGURE, r"(?:bucket )?versioning|版本控制", "Oss", "PutBucketVersioning"),
    Rule("oss", CONFIGURE, r"(?:bucket )?acls?|access control lists?|读写权限", "Oss", "PutBucketAcl"),
    Rule("oss", CONFIGURE, r"cors(?: rules?)?|cross-origin resource sharing|跨域(?:设置|规则)?", "Oss", "PutBucketCors"),
    Rule("oss", CONFIGURE, r"lifecycle(?: rules?)?|生命周期(?:规则)?", "Oss", "PutBucketLifecycle"),
    Rule("oss", CONFIGURE, r"bucket polic(?:y|ies)|bucket授权策略", "Oss", "PutBucketPolicy"),
    Rule("oss", CONFIGURE, r"hotlink protection|referer whitelists?|防盗链", "Oss", "PutBucketReferer"),
    Rule("oss", CONFIGURE, r"(?:server-side )?encryption|服务端加密", "Oss", "PutBucketEncryption"),
    Rule("oss", CONFIGURE, r"(?:access )?logging|日志转存", "Oss", "PutBucketLogging"),
    Rule(None, CREATE, BUCKET, "Oss", "PutBucket"),
    Rule(None, DELETE, BUCKET, "Oss", "DeleteBucket"),
    # Elastic Compute Service: security groups, key pairs, images, disks, then instances.
    Rule(None, CREATE + "|configure|配置", r"outbound (?:security group )?rules?|出方向(?:安全组)?规则", "Ecs", "AuthorizeSecurityGroupEgress"),
    Rule(None, CREATE + "|configure|配置", r"(?:inbound )?security group rules?|(?:入方向)?安全组规则", "Ecs", "AuthorizeSecurityGroup"),
    Rule("ecs", CREATE + "|configure|配置", r"(?:inbound )?rules?(?: for common ports)?|(?:入方向)?规则", "Ecs", "AuthorizeSecurityGroup"),
    Rule(None, DELETE, r"security group rules?|安全组规则", "Ecs", "RevokeSecurityGroup"),
    Rule(None, MODIFY, r"(?:inbound |outbound )?security group rules?|(?:入方向|出方向)?安全组规则", "Ecs", "ModifySecurityGroupRule"),
    Rule(None, MODIFY, _modified(r"security groups?|安全组"), "Ecs", "ModifySecurityGroupAttribute"),
    Rule(None, CREATE, r"security groups?|安全组", "Ecs", "CreateSecurityGroup"),
    Rule(None, DELETE, r"security groups?|安全组", "Ecs", "DeleteSecurityGroup"),
    Rule(None, r"import|导入", r"(?:ssh )?key pairs?|(?:ssh)?密钥对", "Ecs", "ImportKeyPair"),
    Rule(None, CREATE, r"(?:ssh )?key pairs?|(?:ssh)?密钥对", "Ecs", "CreateKeyPair"),
    Rule(None, DELETE, r"(?:ssh )?key pairs?|(?:ssh)?密钥对", "Ecs", "DeleteKeyPairs"),
    Rule(None, CREATE, r"(?:elastic )?network interfaces?|enis?|弹性网卡", "Ecs", "CreateNetworkInterface"),
    Rule(None, r"bind|attach|associate|绑定", r"(?:elastic )?network interfaces?|enis?|弹性网卡", "Ecs", "AttachNetworkInterface"),
    Rule(None, r"unbind|detach|disassociate|解绑", r"(?:elastic )?network interfaces?|enis?|弹性网卡", "Ecs", "DetachNetworkInterface"),
    Rule(None, DELETE, r"(?:elastic )?network interfaces?|enis?|弹性网卡", "Ecs", "DeleteNetworkInterface"),
    Rule(None, MODIFY, _modified(r"(?:elastic )?network interfaces?|enis?|弹性网卡"), "Ecs", "ModifyNetworkInterfaceAttribute"),
    Rule(None, CREATE, r"custom images?|自定义镜像", "Ecs", "CreateImage"),
    Rule("ecs", CREATE, r"images?|镜像", "Ecs", "CreateImage"),
    Rule("ecs", CREATE, SNAPSHOT, "Ecs", "CreateSnapshot"),
    Rule("ecs", CREATE, r"(?:data )?disks?|云盘", "Ecs", "CreateDisk"),
    Rule("ecs", DELETE, r"custom images?|images?|自定义镜像|镜像", "Ecs", "DeleteImage"),
    Rule("ecs", DELETE, SNAPSHOT, "Ecs", "DeleteSnapshot"),
    Rule("ecs", DELETE, r"(?:data )?disks?|云盘", "Ecs", "DeleteDisk"),
    Rule("ecs", MODIFY, _modified(r"custom images?|images?|自定义镜像|镜像"), "Ecs", "ModifyImageAttribute"),
    Rule("ecs", MODIFY, _modified(SNAPSHOT), "Ecs", "ModifySnapshotAttribute"),
    Rule("ecs", MODIFY, _modified(r"(?:data )?disks?|云盘"), "Ecs", "ModifyDiskAttribute"),
    Rule(None, CREATE, ECS_INSTANCE, "Ecs", "RunInstances"),
    Rule("ecs", CREATE, INSTANCE, "Ecs", "RunInstances"),
    Rule(None, r"start|启动", ECS_INSTANCE, "Ecs", "StartInstance"),
    Rule("ecs", r"start|启动", INSTANCE, "Ecs", "StartInstance"),
    Rule(None, r"stop|停止", ECS_INSTANCE, "Ecs", "StopInstance"),
    Rule("ecs", r"stop|停止", INSTANCE, "Ecs", "StopInstance"),
    Rule(None, r"restart|reboot|重启", ECS_INSTANCE, "Ecs", "RebootInstance"),
    Rule("ecs", r"restart|reboot|重启", INSTANCE, "Ecs", "RebootInstance"),
    Rule("ecs", CONFIGURE + r"|cancel|取消", r"automatic release|auto-release|scheduled release|自动释放|定时释放", "Ecs", "ModifyInstanceAutoReleaseTime"),
    Rule(None, DELETE, ECS_INSTANCE, "Ecs", "DeleteInstance"),
    Rule("ecs", DELETE, INSTANCE, "Ecs", "DeleteInstance"),
    Rule("ecs", CONFIGURE, r"release protection|释放保护", "Ecs", "ModifyInstanceAttribute"),
    Rule(None, MODIFY, _modified(ECS_INSTANCE) + r"|(?:ecs )?instance passwords?", "Ecs", "ModifyInstanceAttribute"),
    Rule("ecs", MODIFY, _modified(INSTANCE) + r"|instance passwords?|实例密码", "Ecs", "ModifyInstanceAttribute"),
    # Virtual Private Cloud (a VPC before its vSwitches: "Create a VPC and vSwitch").
    Rule(None, CREATE, r"vpcs?|专有网络(?:vpc)?", "Vpc", "CreateVpc"),
    Rule(None, CREATE, r"v-?switch(?:es)?|交换机", "Vpc", "CreateVSwitch"),
    Rule(None, CREATE, r"route tables?|路由表", "Vpc", "CreateRouteTable"),
    Rule(None, CREATE, r"ipv6 gateways?|ipv6网关", "Vpc", "CreateIpv6Gateway"),
    Rule(None, DELETE, r"v-?switch(?:es)?|交换机", "Vpc", "DeleteVSwitch"),
    Rule(None, DELETE, r"vpcs?|专有网络(?:vpc)?", "Vpc", "DeleteVpc"),
    Rule(None, DELETE, r"route tables?|路由表", "Vpc", "DeleteRouteTable"),
    Rule(None, DELETE, r"ipv6 gateways?|ipv6网关", "Vpc", "DeleteIpv6Gateway"),
    Rule(None, MODIFY, _modified(r"v-?switch(?:es)?|交换机"), "Vpc", "ModifyVSwitchAttribute"),
    Rule(None, MODIFY, _modified(r"route tables?|路由表"), "Vpc", "ModifyRouteTableAttributes"),
    Rule(None, MODIFY, _modified(r"ipv6 gateways?|ipv6网关"), "Vpc", "ModifyIpv6GatewayAttribute"),
    Rule(None, MODIFY, _modified(r"vpcs?|专有网络(?:vpc)?"), "Vpc", "ModifyVpcAttribute"),
    # Elastic IP Address (service Vpc).
    Rule(None, CREATE, r"contiguous eips?|连续(?:的)?eip", "Vpc", "AllocateEipSegmentAddress"),
    Rule(None, r"recover|retrieve|找回", r"(?:released )?(?:" + EIP + ")", "Vpc", "AllocateEipAddressPro"),
    Rule(None, CREATE, EIP, "Vpc", "AllocateEipAddress"),
    Rule(None, DISASSOCIATE, EIP, "Vpc", "UnassociateEipAddress"),
    Rule(None, ASSOCIATE, EIP, "Vpc", "AssociateEipAddress"),
    Rule(None, DELETE, EIP, "Vpc", "ReleaseEipAddress"),
    Rule(None, MODIFY, _modified(EIP), "Vpc", "ModifyEipAddressAttribute"),
    # NAT Gateway (service Vpc).
    Rule(None, CREATE, r"snat entr(?:y|ies)|snat条目", "Vpc", "CreateSnatEntry"),
    Rule(None, CREATE, r"dnat entr(?:y|ies)|dnat条目", "Vpc", "CreateForwardEntry"),
    Rule(None, DELETE, r"snat entr(?:y|ies)|snat条目", "Vpc", "DeleteSnatEntry"),
    Rule(None, DELETE, r"dnat entr(?:y|ies)|dnat条目", "Vpc", "DeleteForwardEntry"),
    Rule(None, MODIFY, r"snat entr(?:y|ies)|snat条目", "Vpc", "ModifySnatEntry"),
    Rule(None, MODIFY, r"dnat entr(?:y|ies)|dnat条目", "Vpc", "ModifyForwardEntry"),
    Rule(None, CREATE, NAT_GATEWAY, "Vpc", "CreateNatGateway"),
    Rule(None, MODIFY, _modified(NAT_GATEWAY), "Vpc", "ModifyNatGatewayAttribute"),
    Rule(None, DELETE, NAT_GATEWAY, "Vpc", "DeleteNatGateway"),
    # Server Load Balancer (CLB, service Slb) and Application Load Balancer (service Alb).
    Rule(None, CREATE, r"(?:alb|application load balancer) instances?|application load balancers?|应用型负载均衡(?:alb)?(?:实例)?", "Alb", "CreateLoadBalancer"),  # before the console's generic "instance": a 负载均衡 console hosts both
    Rule("slb", CREATE, r"https listeners?|https监听", "Slb", "CreateLoadBalancerHTTPSListener"),
    Rule("slb", CREATE, r"http listeners?|http监听", "Slb", "CreateLoadBalancerHTTPListener"),
    Rule("slb", CREATE, r"tcp listeners?|tcp监听", "Slb", "CreateLoadBalancerTCPListener"),
    Rule("slb", CREATE, r"udp listeners?|udp监听", "Slb", "CreateLoadBalancerUDPListener"),
    Rule("alb", CREATE, r"(?:https? |quic )?listeners?|(?:https?|quic)?监听", "Alb", "CreateListener"),
    Rule(None, CREATE, r"(?:slb|clb|server load balancer) instances?|(?:slb|clb|传统型负载均衡(?:clb)?)实例", "Slb", "CreateLoadBalancer"),
    Rule("slb", CREATE, INSTANCE, "Slb", "CreateLoadBalancer"),
    Rule(None, DELETE, r"(?:slb|clb|server load balancer) instances?", "Slb", "DeleteLoadBalancer"),
    Rule("slb", CREATE, r"vserver groups?|虚拟服务器组", "Slb", "CreateVServerGroup"),
    Rule("slb", DELETE, r"vserver groups?|虚拟服务器组", "Slb", "DeleteVServerGroup"),
    Rule("slb", MODIFY, _modified(r"vserver groups?|虚拟服务器组"), "Slb", "SetVServerGroupAttribute"),
    Rule("slb", ENABLE, r"listeners?|监听", "Slb", "StartLoadBalancerListener"),
    Rule("slb", DISABLE, r"listeners?|监听", "Slb", "StopLoadBalancerListener"),
    Rule("slb", DELETE, r"listeners?|监听", "Slb", "DeleteLoadBalancerListener"),
    Rule("slb", MODIFY, _modified(r"(?:slb |clb )?instances?|实例") + r"|instance names?", "Slb", "SetLoadBalancerName"),
    Rule("slb", DELETE, INSTANCE, "Slb", "DeleteLoadBalancer"),
    Rule("alb", CREATE, INSTANCE, "Alb", "CreateLoadBalancer"),
    Rule("alb", CREATE, r"server groups?|服务器组", "Alb", "CreateServerGroup"),
    Rule("alb", DELETE, r"server groups?|服务器组", "Alb", "DeleteServerGroup"),
    Rule("alb", MODIFY, _modified(r"server groups?|服务器组"), "Alb", "UpdateServerGroupAttribute"),
    Rule("alb", ENABLE, r"listeners?|监听", "Alb", "StartListener"),
    Rule("alb", DISABLE, r"listeners?|监听", "Alb", "StopListener"),
    Rule("alb", DELETE, r"listeners?|监听", "Alb", "DeleteListener"),
    Rule("alb", MODIFY, _modified(r"listeners?|监听"), "Alb", "UpdateListenerAttribute"),
    Rule(None, DELETE, r"(?:alb|application load balancer) instances?|application load balancers?", "Alb", "DeleteLoadBalancer"),
    Rule("alb", DELETE, INSTANCE, "Alb", "DeleteLoadBalancer"),
    Rule("alb", MODIFY, _modified(r"(?:alb )?instances?|实例"), "Alb", "UpdateLoadBalancerAttribute"),
    # ApsaraDB RDS (service Rds): accounts and databases before instances.
    Rule("rds", CREATE, r"(?:database |privileged |standard )?accounts?|(?:数据库)?账号", "Rds", "CreateAccount"),
    Rule("rds", CREATE, r"databases?|数据库", "Rds", "CreateDatabase"),
    Rule("rds", CONFIGURE, r"(?:ip )?(?:address )?whitelists?|白名单", "Rds", "ModifySecurityIps"),
    Rule(None, CREATE, r"(?:apsaradb )?rds instances?|(?:rds|云数据库rds(?:版)?)实例", "Rds", "CreateDBInstance"),
    Rule("rds", CREATE, INSTANCE, "Rds", "CreateDBInstance"),
    Rule("rds", DELETE, r"(?:database |privileged |standard )?accounts?|(?:数据库)?账号", "Rds", "DeleteAccount"),
    Rule("rds", DELETE, r"databases?|数据库", "Rds", "DeleteDatabase"),
    Rule("rds", DELETE, INSTANCE, "Rds", "DeleteDBInstance"),
    Rule("rds", MODIFY, _modified(INSTANCE), "Rds", "ModifyDBInstanceDescription"),
    # ApsaraDB for MongoDB (service Dds).
    Rule("mongodb", CREATE, r"sharded cluster instances?|分片集群实例", "Dds", "CreateShardingDBInstance"),
    Rule(None, CREATE, r"mongodb instances?|mongodb实例", "Dds", "CreateDBInstance"),
    Rule("mongodb", CREATE, INSTANCE, "Dds", "CreateDBInstance"),
    Rule("mongodb", DELETE, INSTANCE, "Dds", "DeleteDBInstance"),
    Rule("mongodb", MODIFY, _modified(INSTANCE), "Dds", "ModifyDBInstanceDescription"),
    # Key Management Service (service Kms).
    Rule(None, CREATE, r"(?:kms )?(?:customer master keys?|cmks?)|kms keys?", "Kms", "CreateKey"),
    Rule("kms", r"disable|禁用", r"(?:kms )?(?:customer master keys?|cmks?)|(?:用户)?主密钥", "Kms", "DisableKey"),
    Rule("kms", r"enable|启用", r"(?:kms )?(?:customer master keys?|cmks?)|(?:用户)?主密钥", "Kms", "EnableKey"),
    Rule("kms", r"schedule|计划", r"(?:key )?deletion|删除", "Kms", "ScheduleKeyDeletion"),
    Rule("kms", r"cancel|revoke|取消|撤销|撤回", r"(?:key )?deletion|删除", "Kms", "CancelKeyDeletion"),
    Rule("kms", CREATE, r"keys?|密钥", "Kms", "CreateKey"),
    Rule("kms", r"disable|禁用", r"keys?|密钥", "Kms", "DisableKey"),
    Rule("kms", r"enable|启用", r"keys?|密钥", "Kms", "EnableKey"),
    Rule("kms", DELETE, r"keys?|密钥", "Kms", "ScheduleKeyDeletion"),
    Rule("kms", MODIFY, _modified(r"(?:kms )?keys?|cmks?|customer master keys?|(?:用户)?主?密钥"), "Kms", "UpdateKeyDescription"),
    # ActionTrail (service Actiontrail).
    Rule(None, CREATE, r"trails?|跟踪", "Actiontrail", "CreateTrail"),
    Rule("actiontrail", ENABLE, r"(?:trail )?logging|(?:the )?trails?|跟踪(?:的)?(?:日志记录)?|日志投递|日志记录", "Actiontrail", "StartLogging"),
    Rule("actiontrail", DISABLE, r"(?:trail )?logging|(?:the )?trails?|跟踪(?:的)?(?:日志记录)?|日志投递|日志记录", "Actiontrail", "StopLogging"),
    Rule("actiontrail", MODIFY, r"trails?|跟踪", "Actiontrail", "UpdateTrail"),
    Rule(None, DELETE, r"trails?|跟踪", "Actiontrail", "DeleteTrail"),
    # Resource Access Management (service Ram): permissions, groups and keys before users.
    Rule(None, GRANT, r"(?:permissions?|polic(?:y|ies)) to (?:an? |the )?ram roles?", "Ram", "AttachPolicyToRole"),
    Rule("ram", GRANT, r"(?:permissions?|polic(?:y|ies)) to (?:an? |the )?(?:ram )?roles?", "Ram", "AttachPolicyToRole"),
    Rule("ram", GRANT, r"(?:permissions?|polic(?:y|ies)) to (?:an? |the )?(?:ram )?(?:user )?groups?", "Ram", "AttachPolicyToGroup"),
    Rule(None, GRANT, r"(?:permissions?|polic(?:y|ies)) to (?:an? |the )?ram users?", "Ram", "AttachPolicyToUser"),
    Rule("ram", GRANT, r"(?:permissions?|polic(?:y|ies)) to (?:an? |the )?users?", "Ram", "AttachPolicyToUser"),
    Rule(None, r"authorize|授权", r"ram users?|ram用户", "Ram", "AttachPolicyToUser"),
    Rule("ram", r"add|添加", r"(?:ram )?users? to (?:an? |the )?(?:user )?groups?", "Ram", "AddUserToGroup"),
    Rule(None, CREATE, r"accesskey(?: pairs?)?|access keys?", "Ram", "CreateAccessKey"),
    Rule("ram", DISABLE + "|" + ENABLE, r"accesskey(?: pairs?)?|access keys?", "Ram", "UpdateAccessKey"),
    Rule(None, DELETE, r"accesskey(?: pairs?)?|access keys?", "Ram", "DeleteAccessKey"),
    Rule(None, CREATE, r"service-linked roles?|服务关联角色", None, "CreateServiceLinkedRole"),
    Rule(None, CREATE, r"ram user groups?|ram用户组", "Ram", "CreateGroup"),
    Rule("ram", CREATE, r"(?:user )?groups?|用户组", "Ram", "CreateGroup"),
    Rule(None, CREATE, r"ram users?|ram用户", "Ram", "CreateUser"),
    Rule("ram", CREATE, r"users?|用户", "Ram", "CreateUser"),
    Rule(None, CREATE, r"ram roles?|ram角色", "Ram", "CreateRole"),
    Rule("ram", CREATE, r"roles?|角色", "Ram", "CreateRole"),
    Rule(None, CREATE, r"(?:ram|custom) polic(?:y|ies)|自定义(?:权限)?策略", "Ram", "CreatePolicy"),
    Rule("ram", CREATE, r"polic(?:y|ies)|权限策略", "Ram", "CreatePolicy"),
    Rule(None, DELETE, r"ram user groups?|ram用户组", "Ram", "DeleteGroup"),
    Rule(None, DELETE, r"ram users?|ram用户", "Ram", "DeleteUser"),
    Rule(None, DELETE, r"ram roles?|ram角色", "Ram", "DeleteRole"),
    Rule("ram", DELETE, r"(?:user )?groups?|用户组", "Ram", "DeleteGroup"),
    Rule("ram", DELETE, r"users?|用户", "Ram", "DeleteUser"),
    Rule("ram", DELETE, r"roles?|角色", "Ram", "DeleteRole"),
    Rule("ram", DELETE, r"polic(?:y|ies)|权限策略", "Ram", "DeletePolicy"),
    Rule("ram", r"revoke|remove|detach|移除|撤销|解除", r"(?:permissions?|polic(?:y|ies))(?: from (?:an? |the )?(?:ram )?users?)?|权限", "Ram", "DetachPolicyFromUser"),
    Rule(None, MODIFY, _modified(r"ram user groups?|ram用户组"), "Ram", "UpdateGroup"),
    Rule(None, MODIFY, _modified(r"ram users?|ram用户"), "Ram", "UpdateUser"),
    Rule(None, MODIFY, _modified(r"ram roles?|ram角色"), "Ram", "UpdateRole"),
    Rule("ram", MODIFY, _modified(r"(?:user )?groups?|用户组"), "Ram", "UpdateGroup"),
    Rule("ram", MODIFY, _modified(r"users?|用户"), "Ram", "UpdateUser"),
    Rule("ram", MODIFY, _modified(r"roles?|角色"), "Ram", "UpdateRole"),
)

#: Product key -> how procedures and consoles name it (searched as words in the product name, lower case).
PRODUCTS: dict[str, str] = {
    "oss": r"oss|object storage|对象存储",
    "ecs": r"ecs|elastic compute|云服务器",
    "eip": r"eips?|elastic ip|弹性公网",
    "nat": r"nat",
    "alb": r"alb|application load balancer|应用型负载均衡",
    "slb": r"slb|clb|server load balancer|classic load balancer|传统型负载均衡",
    "vpc": r"vpc|virtual private cloud|专有网络",
    "ram": r"ram|resource access management|访问控制",
    "mongodb": r"mongodb|dds",
    "rds": r"rds",
    "kms": r"kms|key management|密钥管理",
    "actiontrail": r"actiontrail|操作审计",
}

#: Product words in titles, headings, menu paths and file names, for a procedure whose
#: product names none of PRODUCTS (docverify.provision.meta.product_of), in the order they are
#: tried: narrower than the product names where a word is common in titles ("elastic
#: ip", "dds"), wider where a title names the product by its object ("bucket").
PRODUCT_WORDS: tuple[tuple[str, str], ...] = tuple((key, {
    "ecs": r"ecs|云服务器",
    "oss": r"oss|bucket|存储空间",
    "ram": r"ram",
    "vpc": r"vpc|专有网络",
    "eip": r"eip",
    "slb": r"slb|clb|server load balancer|传统型负载均衡",
    "mongodb": r"mongodb",
}.get(key, PRODUCTS[key])) for key in ("alb", "slb", "mongodb", "rds", "ecs", "oss", "ram", "kms", "actiontrail", "vpc", "nat", "eip"))

#: A procedure that names another cloud gets no built-in criteria.
_FOREIGN = re.compile(r"(?<![a-z])(?:aws|amazon|azure|microsoft|google cloud|gcp|ec2|s3|iam|cloudtrail)(?![a-z0-9])", re.IGNORECASE)
#: "Step 2: ", "Method 1: ", "(Optional) ", "步骤一：": what a title starts with that is not its goal
#: (docverify.provision.meta reads titles with it too).
TITLE_PREFIX = re.compile(
    r"^\s*(?:(?:step|method|option)\s*\w+\s*[:：.]\s*|步骤\s*[\w一二三四五六七八九十]+\s*[:：]\s*"
    r"|方法\s*[\w一二三四五六七八九十]+\s*[:：]\s*|\(optional\)\s*|（可选）\s*)+",
    re.IGNORECASE,
)
_CONJUNCTION = re.compile(r"^\s*(?:and|&|,|以及|和|及|与|、)\s*", re.IGNORECASE)


def builtin_criteria(procedure: Procedure) -> list[ExpectedEvent]:
    """The audit events that mean ``procedure`` succeeded, from the built-in map;
    ``[]`` when it is not one of the procedures the map knows."""
    if _is_foreign(procedure):
        return []
    product = product_key(procedure) or product_of(procedure)  # the console, else the doc's own words
    found = match_text(_title(procedure.title), product)
    if not found and _opens_console(procedure):
        for label in reversed(_clicked_labels(procedure)):
            found = match_text(label, product)
            if found:
                break
    return [ExpectedEvent(event=rule.event, service=rule.service, source="built-in") for rule in found]


def match_text(text: str, product: str | None) -> list[Rule]:
    """The rules a title (or button label) matches: the first matching rule, then one
    more for each object joined to it by "and"."""
    text = _attribute_last(" ".join(text.lower().split()))
    found: list[Rule] = []
    for _ in range(4):
        hit = _first_match(text, product, exclude=found)
        if hit is None:
            break
        rule, match = hit
        found.append(rule)
        rest = _CONJUNCTION.match(text[match.end():])
        if rest is None:
            break
        text = match.group("verb") + " " + text[match.end() + rest.end():]
    return found


#: "the name of a security group": the attribute, then the resource it belongs to.
_ATTRIBUTE_OF = re.compile(
    r"\b(?:the\s+)?(?P<attr>" + ATTRIBUTES + r")\s+of\s+(?:an?\s+|the\s+|your\s+|an\s+existing\s+)?(?P<object>(?:[\w-]+\s?){1,4}?)"
    r"(?=$|[.,;:]|\s(?:in|on|for|to|from|by|with|using|via)\b)"
)


def _attribute_last(text: str) -> str:
    """"modify the name of a security group" -> "modify the security group name": the
    resource next to its verb, as the rules read it."""
    return _ATTRIBUTE_OF.sub(lambda m: f"the {m['object'].strip()} {m['attr']}", text)


def product_key(procedure: Procedure) -> str | None:
    """The procedure's product as a key of :data:`PRODUCTS`: its own product, else
    the console its steps open; None when neither is one the map knows."""
    names = [procedure.product or ""]
    names += [a.target or "" for s in procedure.all_steps() for a in s.actions if a.intent is Intent.OPEN_CONSOLE]
    for name in names:
        key = _known_product(name)
        if key:
            return key
    return None


def _known_product(name: str) -> str | None:
    lowered = name.lower()
    for key, pattern in PRODUCTS.items():
        if re.search(rf"{_EDGE}(?:{pattern}){_EDGE}", lowered):
            return key
    return None


def _first_match(text: str, product: str | None, exclude: list[Rule]) -> tuple[Rule, re.Match[str]] | None:
    for rule in RULES:
        if rule in exclude or (rule.product is not None and rule.product != product):
            continue
        match = rule.pattern.search(text)
        if match:
            return rule, match
    return None


def _title(title: str) -> str:
    return TITLE_PREFIX.sub("", title)


def _is_foreign(procedure: Procedure) -> bool:
    texts = [procedure.title, procedure.product or "", *(step.text for step in procedure.all_steps())]
    return any(_FOREIGN.search(text) for text in texts)


def _opens_console(procedure: Procedure) -> bool:
    return any(a.intent is Intent.OPEN_CONSOLE for s in procedure.all_steps() for a in s.actions)


def _clicked_labels(procedure: Procedure) -> list[str]:
    return [
        a.target for s in procedure.all_steps() for a in s.actions
        if a.intent in (Intent.CLICK, Intent.CONFIRM) and a.target
    ]


def product_of(procedure: Procedure) -> str | None:
    """The procedure's product as a key (``ecs``, ``rds``, ``alb`` ...): the built-in
    criteria's reading (annotation, front matter, the console it opens), else the
    title, headings, menu paths and file name."""
    key = product_key(procedure)
    if key is not None:
        return key
    texts = [procedure.title, *procedure.headings]
    texts += [" ".join(a.path) for s in procedure.all_steps() for a in s.actions if a.path]
    path = Path(procedure.path)
    texts.append(path.stem.replace("_", " "))
    texts += [part.replace("_", " ") for part in reversed(path.parent.parts[-3:])]  # docs/ecs/zh/...
    for text in texts:
        lowered = text.lower()
        for product, pattern in PRODUCT_WORDS:
            if re.search(rf"(?:(?<![a-z])|(?![a-z]))(?:{pattern})(?![a-z])", lowered):
                return product
    return None
