"""The seeded state of a tenant: what every account holds after a reset.

Two starts (the sandbox's ``resources`` setting): ``seeded``, an account in use
(a default VPC, vSwitch, security group with rules, a running instance, RAM
users), and ``empty``, a new account: only the identities the account pool signs
in with (the RAM users and the administrator's AccessKey), no cloud resource, so
every prerequisite of a procedure must be provisioned.

Ids are derived from the account id, so a reset gives the same ids every time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Literal

#: What an account holds when it is created or reset.
Resources = Literal["seeded", "empty"]

from docverify_sandbox.state import DefaultAccount

T0 = 1_609_459_200.0  # 2021-01-01T00:00:00Z


def _sid(account: DefaultAccount, prefix: str, tag: str, code: str = "bp1") -> str:
    h = hashlib.sha256(f"{account.account_id}/{tag}".encode()).hexdigest()
    return f"{prefix}{code}{h[:17]}"


def seed_resources(account: DefaultAccount) -> list[dict[str, Any]]:
    """Rows for ``Store.insert``: a default VPC, vSwitch, security group with
    rules, a running ECS instance, and RAM users (an administrator with an
    AccessKey, a read-only user)."""
    acct = account.account_id
    region = "cn-hangzhou"
    vpc = _sid(account, "vpc-", "vpc")
    vsw = _sid(account, "vsw-", "vsw")
    sg = _sid(account, "sg-", "sg")
    inst = _sid(account, "i-", "instance")

    def row(product, rtype, ident, name, attrs, status=None, parent=None, reg=region):
        return {"id": ident, "account_id": acct, "product": product, "rtype": rtype, "region": reg,
                "name": name, "parent_id": parent, "status": status, "attrs": attrs, "created": T0}

    rows = [
        row("vpc", "vpc", vpc, "default-vpc", {"CidrBlock": "172.16.0.0/12", "Description": "Default VPC",
                                               "IsDefault": "true"}, "Available"),
        row("vpc", "vswitch", vsw, "default-vsw", {"VpcId": vpc, "ZoneId": "cn-hangzhou-h",
                                                   "CidrBlock": "172.16.0.0/20", "AvailableIpAddressCount": "4091"},
            "Available", parent=vpc),
        row("ecs", "security_group", sg, "default-sg", {"VpcId": vpc, "SecurityGroupType": "normal",
                                                        "Description": "System created security group."}),
    ]
    for n, (port, proto) in enumerate((("22/22", "tcp"), ("3389/3389", "tcp"), ("-1/-1", "icmp"))):
        rows.append(row("ecs", "security_group_rule", _sid(account, "sgr-", f"rule{n}"), None,
                        {"SecurityGroupId": sg, "Direction": "ingress", "Policy": "accept", "Priority": "1",
                         "IpProtocol": proto, "PortRange": port, "SourceCidrIp": "0.0.0.0/0",
                         "Description": ""}, parent=sg))
    rows.append(row("ecs", "instance", inst, "launch-advisor-20210101",
                    {"ZoneId": "cn-hangzhou-h", "InstanceType": "ecs.g6.large",
                     "ImageId": "aliyun_2_1903_x64_20G_alibase_20210120.vhd", "InstanceChargeType": "PostPaid",
                     "NetworkType": "vpc", "VSwitchId": vsw, "VpcId": vpc, "SecurityGroupId": sg,
                     "PrivateIpAddress": "172.16.0.10", "DeletionProtection": "false", "HostName": "iZbp1host",
                     "Description": "", "InternetMaxBandwidthOut": "0"}, "Running"))
    admin_id = "2" + hashlib.sha256(f"{acct}/admin".encode()).hexdigest()[:15].translate(str.maketrans("abcdef", "123456"))
    ro_id = "2" + hashlib.sha256(f"{acct}/ro".encode()).hexdigest()[:15].translate(str.maketrans("abcdef", "123456"))
    rows.append(row("ram", "user", admin_id, account.admin_user,
                    {"DisplayName": account.admin_user.title(), "Comments": "sandbox administrator",
                     "Password": account.admin_password, "ConsoleAccess": "true",
                     "Policies": ["AdministratorAccess"]}, reg="global"))
    rows.append(row("ram", "user", ro_id, account.readonly_user,
                    {"DisplayName": account.readonly_user.title(), "Comments": "read-only user",
                     "Password": account.readonly_password, "ConsoleAccess": "true",
                     "Policies": ["ReadOnlyAccess"]}, reg="global"))
    rows.append(row("ram", "access_key", account.admin_access_key_id, None,
                    {"AccessKeySecret": account.admin_access_key_secret, "UserName": account.admin_user},
                    "Active", parent=admin_id, reg="global"))
    return rows


def identity_resources(account: DefaultAccount) -> list[dict[str, Any]]:
    """What even an empty account holds: the RAM users and AccessKey it is used with."""
    return [row for row in seed_resources(account) if row["product"] == "ram"]


def seeder(resources: Resources) -> Callable[[DefaultAccount], list[dict[str, Any]]]:
    """The rows an account starts with, for the sandbox's ``resources`` setting."""
    return identity_resources if resources == "empty" else seed_resources
