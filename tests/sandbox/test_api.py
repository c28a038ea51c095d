"""RPC API: signatures, error codes, tenant isolation, async states, reset."""

from __future__ import annotations

import time
import urllib.request

import pytest

from docverify_sandbox.client import SandboxApiError, SandboxClient

ECS = "2014-05-26"
VPC = "2016-04-28"


def err(fn, *args):
    with pytest.raises(SandboxApiError) as info:
        fn(*args)
    return info.value


def test_describe_instances_has_seeded_instance(client):
    out = client.call("DescribeInstances", ECS, {"RegionId": "cn-hangzhou"})
    assert out["RequestId"]
    inst = out["Instances"]["Instance"][0]
    assert inst["InstanceId"].startswith("i-bp1") and len(inst["InstanceId"]) == 22
    assert inst["Status"] == "Running"


def test_forged_v2_signature_is_rejected(sandbox, account):
    forged = SandboxClient(sandbox.url, account.admin_access_key_id, "not-the-secret")
    e = err(forged.call, "DescribeInstances", ECS, {"RegionId": "cn-hangzhou"})
    assert (e.status, e.code) == (400, "SignatureDoesNotMatch")


def test_unknown_access_key(sandbox):
    e = err(SandboxClient(sandbox.url, "LTAInobody", "x").call, "DescribeInstances", ECS, {"RegionId": "cn-hangzhou"})
    assert (e.status, e.code) == (404, "InvalidAccessKeyId.NotFound")


def test_replayed_nonce_is_rejected(sandbox, client):
    import json
    from urllib.parse import urlencode

    data = urlencode(client.signed_params("DescribeVpcs", VPC, {"RegionId": "cn-hangzhou"})).encode()
    urllib.request.urlopen(urllib.request.Request(sandbox.url + "/", data=data)).read()
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(urllib.request.Request(sandbox.url + "/", data=data))
    assert json.loads(info.value.read())["Code"] == "SignatureNonceUsed"


@pytest.mark.parametrize("action,version,params,status,code", [
    ("NoSuchAction", ECS, {"RegionId": "cn-hangzhou"}, 404, "InvalidAction.NotFound"),
    ("DescribeInstances", "1999-01-01", {"RegionId": "cn-hangzhou"}, 400, "InvalidVersion"),
    ("DescribeInstances", ECS, {}, 400, "MissingParameter"),
    ("DescribeInstances", ECS, {"RegionId": "mars-north-1"}, 404, "InvalidRegionId.NotFound"),
    ("DescribeInstances", ECS, {"RegionId": "cn-hangzhou", "PageSize": "abc"}, 400, "InvalidParameter"),
    ("StartInstance", ECS, {"RegionId": "cn-hangzhou", "InstanceId": "i-bp1doesnotexist0000"}, 404,
     "InvalidInstanceId.NotFound"),
    ("CreateVpc", VPC, {"RegionId": "cn-hangzhou", "CidrBlock": "10.0.0.0/33"}, 400, "InvalidCidrBlock.Malformed"),
    ("CreateVSwitch", VPC, {"RegionId": "cn-hangzhou", "ZoneId": "cn-hangzhou-h", "CidrBlock": "10.0.0.0/24"}, 400,
     "MissingParameter"),
])
def test_error_codes(client, action, version, params, status, code):
    e = err(client.call, action, version, params)
    assert (e.status, e.code) == (status, code)
    assert e.body["RequestId"] and e.body["Message"]


def test_instance_lifecycle_and_status_errors(client):
    sg = client.call("DescribeSecurityGroups", ECS, {"RegionId": "cn-hangzhou"})["SecurityGroups"]["SecurityGroup"][0]
    out = client.call("RunInstances", ECS, {"RegionId": "cn-hangzhou", "ZoneId": "cn-hangzhou-i",
                                            "SecurityGroupId": sg["SecurityGroupId"], "InstanceName": "api-test",
                                            "InstanceType": "ecs.g6.large", "ImageId": "centos_7_9_x64_20G_alibase_20210318.vhd",
                                            "Amount": "2", "DeletionProtection": "true"})
    ids = out["InstanceIdSets"]["InstanceIdSet"]
    assert len(ids) == 2
    e = err(client.call, "StartInstance", ECS, {"RegionId": "cn-hangzhou", "InstanceId": ids[0]})
    assert (e.status, e.code) == (403, "IncorrectInstanceStatus")
    client.call("StopInstance", ECS, {"RegionId": "cn-hangzhou", "InstanceId": ids[0]})
    e = err(client.call, "DeleteInstance", ECS, {"RegionId": "cn-hangzhou", "InstanceId": ids[0]})
    assert e.code == "InvalidOperation.DeletionProtection"
    client.call("ModifyInstanceAttribute", ECS, {"RegionId": "cn-hangzhou", "InstanceId": ids[0],
                                                 "DeletionProtection": "false"})
    client.call("DeleteInstance", ECS, {"RegionId": "cn-hangzhou", "InstanceId": ids[0]})
    e = err(client.call, "DescribeInstanceAttribute", ECS, {"RegionId": "cn-hangzhou", "InstanceId": ids[0]})
    assert e.code == "InvalidInstanceId.NotFound"


def test_async_state_with_latency():
    from docverify_sandbox.console import SandboxConsole
    from docverify_sandbox.state import DEFAULT_ACCOUNTS

    acct = DEFAULT_ACCOUNTS[0]
    with SandboxConsole(SandboxConsole.Options(latency_ms=1000)).start() as ep:
        c = SandboxClient(ep.url, acct.admin_access_key_id, acct.admin_access_key_secret)

        def status(vpc: str) -> str:
            return c.call("DescribeVpcs", VPC, {"RegionId": "cn-hangzhou", "VpcId": vpc})["Vpcs"]["Vpc"][0]["Status"]

        vpc = c.call("CreateVpc", VPC, {"RegionId": "cn-hangzhou", "CidrBlock": "10.0.0.0/8"})["VpcId"]
        assert status(vpc) == "Pending"  # read back at once: well within the second it takes
        deadline = time.monotonic() + 10
        while (now := status(vpc)) == "Pending" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert now == "Available"


def test_tenants_are_isolated(sandbox, client, other_account):
    other = SandboxClient(sandbox.url, other_account.admin_access_key_id, other_account.admin_access_key_secret)
    vpc = client.call("CreateVpc", VPC, {"RegionId": "cn-shanghai", "CidrBlock": "10.0.0.0/8",
                                         "VpcName": "mine"})["VpcId"]
    theirs = other.call("DescribeVpcs", VPC, {"RegionId": "cn-shanghai"})["Vpcs"]["Vpc"]
    assert vpc not in {v["VpcId"] for v in theirs}
    e = err(other.call, "DeleteVpc", VPC, {"RegionId": "cn-shanghai", "VpcId": vpc})
    assert e.code == "InvalidVpcId.NotFound"


def test_readonly_ram_user_is_forbidden_to_write(sandbox, root_client, account):
    key = root_client.call("CreateAccessKey", "2015-05-01", {"UserName": account.readonly_user})["AccessKey"]
    ro = SandboxClient(sandbox.url, key["AccessKeyId"], key["AccessKeySecret"])
    assert ro.call("DescribeVpcs", VPC, {"RegionId": "cn-hangzhou"})["TotalCount"] >= 1
    e = err(ro.call, "CreateVpc", VPC, {"RegionId": "cn-hangzhou", "CidrBlock": "10.0.0.0/8"})
    assert (e.status, e.code) == (403, "Forbidden.RAM")
    root_client.call("DeleteAccessKey", "2015-05-01", {"UserName": account.readonly_user,
                                                       "UserAccessKeyId": key["AccessKeyId"]})


def test_reset_restores_seed(root_client):
    root_client.call("CreateVpc", VPC, {"RegionId": "cn-hangzhou", "CidrBlock": "10.0.0.0/8", "VpcName": "extra"})
    root_client.call("ResetAccount", "sandbox")
    vpcs = root_client.call("DescribeVpcs", VPC, {"RegionId": "cn-hangzhou"})["Vpcs"]["Vpc"]
    assert [v["VpcName"] for v in vpcs] == ["default-vpc"]


def test_bad_input_never_500(sandbox, client):
    import json

    def post(data: bytes, headers=None):
        req = urllib.request.Request(sandbox.url + "/", data=data, headers=headers or {})
        try:
            with urllib.request.urlopen(req) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    status, body = post(b"x" * (2 * 1024 * 1024))
    assert (status, body["Code"]) == (413, "RequestEntityTooLarge")
    status, body = post(b"\xff\xfe=%%%", {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 400 and "Code" in body
    status, body = post(b"Action=DescribeVpcs")
    assert (status, body["Code"]) == (400, "MissingParameter")
    status, body = post(b"", {"Authorization": "ACS3-HMAC-SHA256 garbage", "x-acs-action": "DescribeVpcs",
                              "x-acs-version": VPC})
    assert status == 400 and body["Code"] == "IncompleteSignature"


def test_alb_and_kms_operations(client):
    alb, kms = "2020-06-16", "2016-01-20"
    vpc = client.call("DescribeVpcs", VPC, {"RegionId": "cn-hangzhou"})["Vpcs"]["Vpc"][0]["VpcId"]
    lb = client.call("CreateLoadBalancer", alb, {"RegionId": "cn-hangzhou", "VpcId": vpc, "ZoneId": "cn-hangzhou-h",
                                                 "LoadBalancerName": "api-alb"})["LoadBalancerId"]
    lsn = client.call("CreateListener", alb, {"RegionId": "cn-hangzhou", "LoadBalancerId": lb,
                                              "ListenerPort": "80"})["ListenerId"]
    e = err(client.call, "StartListener", alb, {"RegionId": "cn-hangzhou", "ListenerId": lsn})
    assert e.code == "IncorrectStatus.Listener"
    lbs = client.call("ListLoadBalancers", alb, {"RegionId": "cn-hangzhou"})["LoadBalancers"]
    assert [x["LoadBalancerStatus"] for x in lbs if x["LoadBalancerId"] == lb] == ["Active"]
    client.call("DeleteLoadBalancer", alb, {"RegionId": "cn-hangzhou", "LoadBalancerId": lb})
    key = client.call("CreateKey", kms, {"RegionId": "cn-hangzhou", "Description": "api key"})["KeyMetadata"]
    assert key["KeyState"] == "Enabled" and key["KeyId"].startswith("key-")
    client.call("ScheduleKeyDeletion", kms, {"RegionId": "cn-hangzhou", "KeyId": key["KeyId"], "PendingWindowInDays": "7"})
    e = err(client.call, "DisableKey", kms, {"RegionId": "cn-hangzhou", "KeyId": key["KeyId"]})
    assert e.code == "Forbidden.KeyStateConflict"
    e = err(client.call, "DescribeKey", kms, {"RegionId": "cn-hangzhou", "KeyId": "key-missing"})
    assert e.code == "Forbidden.KeyNotFound"
