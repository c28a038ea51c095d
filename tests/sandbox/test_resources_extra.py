"""ENIs, VServer groups, ALB server groups, OSS CORS and lifecycle rules, cascade deletes and
the NAT gateway's EIP binding: through the signed API (with the ActionTrail events they leave),
through the console pages, and through the Terraform provider's API calls."""

from __future__ import annotations

import ipaddress
import json

import pytest
from click.testing import CliRunner

from docverify_sandbox import catalog
from docverify_sandbox.cli import sandbox as sandbox_cli
from docverify_sandbox.client import SandboxApiError

ECS, VPC, SLB, ALB, OSS, TRAIL = "2014-05-26", "2016-04-28", "2014-05-15", "2020-06-16", "2019-05-17", "2020-07-06"
R = {"RegionId": "cn-hangzhou"}


def err(fn, *args) -> SandboxApiError:
    with pytest.raises(SandboxApiError) as info:
        fn(*args)
    return info.value


def trail(client, **attrs) -> list[dict]:
    """The account's events with these lookup attributes, oldest first."""
    params = {"MaxResults": "50"}
    for n, (key, value) in enumerate(attrs.items(), 1):
        params[f"LookupAttribute.{n}.Key"], params[f"LookupAttribute.{n}.Value"] = key, value
    return list(reversed(client.call("LookupEvents", TRAIL, params)["Events"]))


def calls(client, resource: str) -> list[tuple[str, str, str | None]]:
    """(eventName, resourceType, errorCode) of every write event that names a resource, oldest first."""
    return [(e["eventName"], e["resourceType"], e.get("errorCode"))
            for e in trail(client, ResourceName=resource, EventRW="Write")]


@pytest.fixture()
def seeded(client):
    """The seeded default vSwitch (with its VPC), security group and running instance."""
    return {
        "vsw": client.call("DescribeVSwitches", VPC, R)["VSwitches"]["VSwitch"][0],
        "sg": client.call("DescribeSecurityGroups", ECS, R)["SecurityGroups"]["SecurityGroup"][0],
        "instance": client.call("DescribeInstances", ECS, R)["Instances"]["Instance"][0],
    }


def new_eni(client, seeded, **extra) -> str:
    return client.call("CreateNetworkInterface", ECS, {**R, "VSwitchId": seeded["vsw"]["VSwitchId"],
                                                        "SecurityGroupId": seeded["sg"]["SecurityGroupId"],
                                                        **extra})["NetworkInterfaceId"]


def eni_of(client, eni: str) -> dict:
    return client.call("DescribeNetworkInterfaceAttribute", ECS, {**R, "NetworkInterfaceId": eni})


# ------------------------------------------------------------------ ENIs


def test_eni_create_list_modify_bind_unbind_delete(client, seeded):
    eni = new_eni(client, seeded, NetworkInterfaceName="api-eni", Description="for the api test")
    assert eni.startswith("eni-bp1") and len(eni) == 24
    listed = client.call("DescribeNetworkInterfaces", ECS, {**R, "NetworkInterfaceId": eni})
    [item] = listed["NetworkInterfaceSets"]["NetworkInterfaceSet"]
    vsw = seeded["vsw"]
    assert (item["Status"], item["Type"], item["VpcId"], item["ZoneId"]) == \
        ("Available", "Secondary", vsw["VpcId"], vsw["ZoneId"])  # where its vSwitch is
    assert ipaddress.ip_address(item["PrimaryIpAddress"]) in ipaddress.ip_network(vsw["CidrBlock"])
    assert item["MacAddress"].startswith("00:16:3e:")

    client.call("ModifyNetworkInterfaceAttribute", ECS, {**R, "NetworkInterfaceId": eni,
                                                         "NetworkInterfaceName": "api-eni-2"})
    instance = seeded["instance"]["InstanceId"]
    client.call("AttachNetworkInterface", ECS, {**R, "NetworkInterfaceId": eni, "InstanceId": instance})
    bound = eni_of(client, eni)
    assert (bound["NetworkInterfaceName"], bound["Status"], bound["InstanceId"]) == ("api-eni-2", "InUse", instance)
    assert client.call("DescribeNetworkInterfaces", ECS, {**R, "InstanceId": instance})["TotalCount"] >= 1
    e = err(client.call, "AttachNetworkInterface", ECS, {**R, "NetworkInterfaceId": eni, "InstanceId": instance})
    assert e.code == "InvalidOperation.InvalidEniState"
    e = err(client.call, "DeleteNetworkInterface", ECS, {**R, "NetworkInterfaceId": eni})
    assert (e.status, e.code) == (403, "InvalidOperation.InvalidEniState")

    client.call("DetachNetworkInterface", ECS, {**R, "NetworkInterfaceId": eni, "InstanceId": instance})
    assert eni_of(client, eni)["Status"] == "Available" and "InstanceId" not in eni_of(client, eni)
    client.call("DeleteNetworkInterface", ECS, {**R, "NetworkInterfaceId": eni})
    assert err(eni_of, client, eni).code == "InvalidEniId.NotFound"

    eni_type = "ACS::ECS::NetworkInterface"
    assert calls(client, eni) == [
        ("CreateNetworkInterface", eni_type, None), ("ModifyNetworkInterfaceAttribute", eni_type, None),
        ("AttachNetworkInterface", eni_type, None),
        ("AttachNetworkInterface", eni_type, "InvalidOperation.InvalidEniState"),
        ("DeleteNetworkInterface", eni_type, "InvalidOperation.InvalidEniState"),
        ("DetachNetworkInterface", eni_type, None), ("DeleteNetworkInterface", eni_type, None)]
    created = trail(client, ResourceName=eni)[0]
    assert created["serviceName"] == "Ecs" and created["responseElements"]["NetworkInterfaceId"] == eni


def test_eni_create_checks_what_it_names(client, seeded):
    vsw, sg = seeded["vsw"]["VSwitchId"], seeded["sg"]["SecurityGroupId"]
    assert err(client.call, "CreateNetworkInterface", ECS, {**R, "SecurityGroupId": sg}).code == "MissingParameter"
    e = err(client.call, "CreateNetworkInterface", ECS, {**R, "VSwitchId": vsw, "SecurityGroupId": "sg-bp1nothere"})
    assert (e.status, e.code) == (404, "InvalidSecurityGroupId.NotFound")
    other_vpc = client.call("CreateVpc", VPC, {**R, "CidrBlock": "10.0.0.0/8", "VpcName": "eni-other"})["VpcId"]
    other_sg = client.call("CreateSecurityGroup", ECS, {**R, "VpcId": other_vpc})["SecurityGroupId"]
    e = err(client.call, "CreateNetworkInterface", ECS, {**R, "VSwitchId": vsw, "SecurityGroupId": other_sg})
    assert (e.status, e.code) == (400, "InvalidParameter.Mismatch") and "same VPC" in e.body["Message"]
    e = err(client.call, "CreateNetworkInterface", ECS, {**R, "VSwitchId": vsw, "SecurityGroupId": sg,
                                                         "PrimaryIpAddress": "not-an-ip"})
    assert e.code == "InvalidPrivateIpAddress.Malformed"
    other_vsw = client.call("CreateVSwitch", VPC, {**R, "VpcId": other_vpc, "ZoneId": "cn-hangzhou-i",
                                                   "CidrBlock": "10.1.0.0/24"})["VSwitchId"]
    chosen = client.call("CreateNetworkInterface", ECS, {**R, "VSwitchId": other_vsw, "SecurityGroupId": other_sg,
                                                         "PrimaryIpAddress": "10.1.0.9"})["NetworkInterfaceId"]
    made = eni_of(client, chosen)
    assert (made["PrimaryIpAddress"], made["VpcId"], made["ZoneId"]) == ("10.1.0.9", other_vpc, "cn-hangzhou-i")
    # what an ENI names cannot go while it exists
    e = err(client.call, "DeleteSecurityGroup", ECS, {**R, "SecurityGroupId": other_sg})
    assert e.code == "DependencyViolation"
    e = err(client.call, "DeleteVSwitch", VPC, {**R, "VSwitchId": other_vsw})
    assert e.code == "DependencyViolation" and chosen in e.body["Message"]
    client.call("DeleteNetworkInterface", ECS, {**R, "NetworkInterfaceId": chosen})
    client.call("DeleteSecurityGroup", ECS, {**R, "SecurityGroupId": other_sg})
    client.call("DeleteVSwitch", VPC, {**R, "VSwitchId": other_vsw})
    client.call("DeleteVpc", VPC, {**R, "VpcId": other_vpc})


def test_a_released_instance_lets_its_eni_and_eip_go(client, seeded):
    vsw = seeded["vsw"]
    made = client.call("RunInstances", ECS, {**R, "ZoneId": vsw["ZoneId"], "VSwitchId": vsw["VSwitchId"],
                                             "SecurityGroupId": seeded["sg"]["SecurityGroupId"],
                                             "InstanceName": "eni-holder", "InstanceType": "ecs.g6.large",
                                             "ImageId": "aliyun_2_1903_x64_20G_alibase_20210120.vhd"})
    instance = made["InstanceIdSets"]["InstanceIdSet"][0]
    eni = new_eni(client, seeded)
    eip = client.call("AllocateEipAddress", VPC, R)["AllocationId"]
    client.call("AttachNetworkInterface", ECS, {**R, "NetworkInterfaceId": eni, "InstanceId": instance})
    client.call("AssociateEipAddress", VPC, {**R, "AllocationId": eip, "InstanceId": instance})
    e = err(client.call, "DeleteVSwitch", VPC, {**R, "VSwitchId": vsw["VSwitchId"]})
    assert e.code == "DependencyViolation"
    client.call("DeleteInstance", ECS, {**R, "InstanceId": instance, "Force": "true"})
    assert (eni_of(client, eni)["Status"], eni_of(client, eni).get("InstanceId")) == ("Available", None)
    freed = client.call("DescribeEipAddresses", VPC, {**R, "AllocationId": eip})["EipAddresses"]["EipAddress"][0]
    assert (freed["Status"], freed.get("InstanceId")) == ("Available", None)
    client.call("DeleteNetworkInterface", ECS, {**R, "NetworkInterfaceId": eni})
    client.call("ReleaseEipAddress", VPC, {**R, "AllocationId": eip})


# ---------------------------------------------------------- SLB / ALB


def test_vserver_group_create_list_modify_delete(client, seeded):
    lb = client.call("CreateLoadBalancer", SLB, {**R, "MasterZoneId": "cn-hangzhou-h",
                                                 "LoadBalancerName": "vsg-lb"})["LoadBalancerId"]
    instance = seeded["instance"]["InstanceId"]
    e = err(client.call, "CreateVServerGroup", SLB, {**R, "LoadBalancerId": lb, "VServerGroupName": "web",
                                                     "ServerId": instance, "Weight": "101"})
    assert e.code == "InvalidParameter"
    e = err(client.call, "CreateVServerGroup", SLB, {**R, "LoadBalancerId": "lb-bp1nothere", "VServerGroupName": "x"})
    assert e.code == "InvalidLoadBalancerId.NotFound"
    group = client.call("CreateVServerGroup", SLB, {**R, "LoadBalancerId": lb, "VServerGroupName": "web",
                                                    "ServerId": instance, "Port": "8080",
                                                    "Weight": "50"})["VServerGroupId"]
    assert group.startswith("rsp-")
    [item] = client.call("DescribeVServerGroups", SLB, {**R, "LoadBalancerId": lb})["VServerGroups"]["VServerGroup"]
    assert (item["VServerGroupId"], item["ServerId"], item["Port"], item["Weight"]) == (group, instance, "8080", "50")
    client.call("SetVServerGroupAttribute", SLB, {**R, "VServerGroupId": group, "VServerGroupName": "web-2",
                                                  "Weight": "20"})
    got = client.call("DescribeVServerGroupAttribute", SLB, {**R, "VServerGroupId": group})
    assert (got["VServerGroupName"], got["Weight"]) == ("web-2", "20")
    client.call("DeleteVServerGroup", SLB, {**R, "VServerGroupId": group})
    assert err(client.call, "DescribeVServerGroupAttribute", SLB, {**R, "VServerGroupId": group}).code == \
        "InvalidParameter"
    kind = "ACS::SLB::VServerGroup"
    assert calls(client, group) == [("CreateVServerGroup", kind, None), ("SetVServerGroupAttribute", kind, None),
                                    ("DeleteVServerGroup", kind, None)]
    client.call("DeleteLoadBalancer", SLB, {**R, "LoadBalancerId": lb})


def test_releasing_a_clb_takes_its_listeners_and_vserver_groups(client):
    lb = client.call("CreateLoadBalancer", SLB, {**R, "MasterZoneId": "cn-hangzhou-h"})["LoadBalancerId"]
    client.call("CreateLoadBalancerHTTPListener", SLB, {**R, "LoadBalancerId": lb, "ListenerPort": "80"})
    group = client.call("CreateVServerGroup", SLB, {**R, "LoadBalancerId": lb, "VServerGroupName": "g"})
    listed = client.call("DescribeLoadBalancerListeners", SLB, {**R, "LoadBalancerId": lb})["Listeners"]["Listener"]
    assert len(listed) == 1
    client.call("DeleteLoadBalancer", SLB, {**R, "LoadBalancerId": lb})
    assert err(client.call, "DescribeVServerGroupAttribute", SLB, {**R, **group}).code == "InvalidParameter"
    listeners = client.call("DescribeLoadBalancerListeners", SLB, {**R, "PageSize": "100"})["Listeners"]["Listener"]
    assert all(x["LoadBalancerId"] != lb for x in listeners)
    groups = client.call("DescribeVServerGroups", SLB, {**R, "PageSize": "100"})["VServerGroups"]["VServerGroup"]
    assert all(g["LoadBalancerId"] != lb for g in groups)


def test_alb_server_group_and_the_listeners_that_use_it(client, seeded):
    vpc = seeded["vsw"]["VpcId"]
    out = client.call("CreateServerGroup", ALB, {**R, "ServerGroupName": "api-sgp", "VpcId": vpc,
                                                 "ServerGroupType": "Ip", "Protocol": "HTTPS", "Scheduler": "Wlc"})
    group = out["ServerGroupId"]
    assert group.startswith("sgp-") and out["JobId"].startswith("job-")
    e = err(client.call, "CreateServerGroup", ALB, {**R, "ServerGroupName": "x", "VpcId": vpc, "Protocol": "FTP"})
    assert e.code == "InvalidParameter"
    assert err(client.call, "CreateServerGroup", ALB, {**R, "ServerGroupName": "xy"}).code == "MissingParameter"
    [item] = client.call("ListServerGroups", ALB, {**R, "ServerGroupId": group})["ServerGroups"]
    assert (item["ServerGroupType"], item["Protocol"], item["Scheduler"], item["ServerGroupStatus"]) == \
        ("Ip", "HTTPS", "Wlc", "Available")
    client.call("UpdateServerGroupAttribute", ALB, {**R, "ServerGroupId": group, "ServerGroupName": "api-sgp-2"})
    assert client.call("ListServerGroups", ALB, {**R, "ServerGroupId": group})["ServerGroups"][0]["ServerGroupName"] \
        == "api-sgp-2"

    alb = client.call("CreateLoadBalancer", ALB, {**R, "VpcId": vpc, "ZoneId": "cn-hangzhou-h"})["LoadBalancerId"]
    e = err(client.call, "CreateListener", ALB, {**R, "LoadBalancerId": alb, "ListenerPort": "80",
                                                 "ServerGroupId": "sgp-bp1nothere"})
    assert e.code == "ResourceNotFound.ServerGroup"
    listener = client.call("CreateListener", ALB, {**R, "LoadBalancerId": alb, "ListenerPort": "80",
                                                   "ServerGroupId": group})["ListenerId"]
    e = err(client.call, "DeleteServerGroup", ALB, {**R, "ServerGroupId": group})
    assert (e.status, e.code) == (400, "ResourceInUse.ServerGroup") and listener in e.body["Message"]
    # deleting the ALB instance deletes its listeners with it: the server group is free again
    client.call("DeleteLoadBalancer", ALB, {**R, "LoadBalancerId": alb})
    e = err(client.call, "GetListenerAttribute", ALB, {**R, "ListenerId": listener})
    assert e.code == "ResourceNotFound.Listener"
    assert all(x["ListenerId"] != listener for x in client.call("ListListeners", ALB, R)["Listeners"])
    client.call("DeleteServerGroup", ALB, {**R, "ServerGroupId": group})
    assert client.call("ListServerGroups", ALB, {**R, "ServerGroupId": group})["ServerGroups"] == []
    kind = "ACS::ALB::ServerGroup"
    assert calls(client, group) == [
        ("CreateServerGroup", kind, None), ("UpdateServerGroupAttribute", kind, None),
        ("DeleteServerGroup", kind, "ResourceInUse.ServerGroup"), ("DeleteServerGroup", kind, None)]


# ------------------------------------------------------------------ OSS


def test_cors_rules_are_put_replaced_and_deleted_as_bucket_changes(client):
    bucket = "cors-api-bucket"
    client.call("PutBucket", OSS, {**R, "BucketName": bucket})
    e = err(client.call, "PutBucketCors", OSS, {**R, "BucketName": bucket, "AllowedOrigin": "*",
                                                "AllowedMethod.1": "GET", "AllowedMethod.2": "PATCH"})
    assert (e.status, e.code) == (400, "InvalidArgument")
    e = err(client.call, "PutBucketCors", OSS, {**R, "BucketName": bucket, "AllowedOrigin": "*"})
    assert e.code == "MissingParameter"
    # a list parameter, the RPC way; the console's checkboxes send the same
    client.call("PutBucketCors", OSS, {**R, "BucketName": bucket, "AllowedOrigin": "https://docs.example.com",
                                       "AllowedMethod.1": "GET", "AllowedMethod.2": "PUT", "MaxAgeSeconds": "600"})
    client.call("PutBucketCors", OSS, {**R, "BucketName": bucket, "AllowedOrigin": "*", "AllowedMethod": "HEAD"})
    rules = client.call("GetBucketCors", OSS, {**R, "BucketName": bucket})["CORSConfiguration"]["CORSRule"]
    first = next(r for r in rules if r["AllowedOrigin"] == "https://docs.example.com")
    assert (first["AllowedMethod"], first["MaxAgeSeconds"], first["BucketName"]) == ("GET,PUT", "600", bucket)
    # naming an existing rule replaces it
    client.call("PutBucketCors", OSS, {**R, "BucketName": bucket, "RuleId": first["RuleId"],
                                       "AllowedMethod.1": "GET", "AllowedMethod.2": "DELETE"})
    rules = client.call("GetBucketCors", OSS, {**R, "BucketName": bucket})["CORSConfiguration"]["CORSRule"]
    assert len(rules) == 2 and {r["AllowedMethod"] for r in rules} == {"GET,DELETE", "HEAD"}
    # the catalog's name of that operation is no API action
    e = err(client.call, "UpdateBucketCorsRule", OSS, {**R, "BucketName": bucket, "RuleId": first["RuleId"]})
    assert e.code == "InvalidAction.NotFound"
    client.call("DeleteBucketCors", OSS, {**R, "BucketName": bucket, "RuleId": first["RuleId"]})
    assert client.call("GetBucketCors", OSS, {**R, "BucketName": bucket})["TotalCount"] == 1
    client.call("DeleteBucketCors", OSS, {**R, "BucketName": bucket})  # without a rule: all of them
    assert client.call("GetBucketCors", OSS, {**R, "BucketName": bucket})["TotalCount"] == 0
    events = [(e["eventName"], e["resourceType"], e["resourceName"], e.get("errorCode"))
              for e in trail(client, ResourceName=bucket, EventRW="Write")]
    assert events == [("PutBucket", "ACS::OSS::Bucket", bucket, None)] + [
        ("PutBucketCors", "ACS::OSS::Bucket", bucket, code) for code in ("InvalidArgument", "MissingParameter")] + [
        ("PutBucketCors", "ACS::OSS::Bucket", bucket, None)] * 3 + [
        ("DeleteBucketCors", "ACS::OSS::Bucket", bucket, None)] * 2
    client.call("DeleteBucket", OSS, {**R, "BucketName": bucket})


def test_lifecycle_rules_and_their_conditions(client):
    bucket = "lifecycle-api-bucket"
    client.call("PutBucket", OSS, {**R, "BucketName": bucket})
    rule = {**R, "BucketName": bucket}
    assert err(client.call, "PutBucketLifecycle", OSS, {**rule, "ExpirationDays": "30"}).code == "MissingParameter"
    assert err(client.call, "PutBucketLifecycle", OSS, {**rule, "Prefix": "logs/"}).code == "MissingParameter"
    e = err(client.call, "PutBucketLifecycle", OSS, {**rule, "Policy": "bucket", "ObjectLifecycle": "date",
                                                      "ExpirationDate": "next week"})
    assert e.code == "InvalidArgument"
    client.call("PutBucketLifecycle", OSS, {**rule, "Prefix": "logs/", "ExpirationDays": "30", "Status": "Disabled"})
    client.call("PutBucketLifecycle", OSS, {**rule, "Policy": "bucket", "ObjectLifecycle": "date",
                                            "ExpirationDate": "2027-01-01"})  # the whole bucket: no prefix
    rules = client.call("GetBucketLifecycle", OSS, rule)["LifecycleConfiguration"]["Rule"]
    logs = next(r for r in rules if r.get("Prefix") == "logs/")
    whole = next(r for r in rules if r["Policy"] == "bucket")
    assert (logs["Status"], logs["ExpirationDays"]) == ("Disabled", "30")
    assert (whole["Status"], whole["ExpirationDate"]) == ("Enabled", "2027-01-01")
    assert client.call("GetBucketLifecycle", OSS, {**rule, "Status": "Disabled"})["TotalCount"] == 1
    client.call("PutBucketLifecycle", OSS, {**rule, "RuleId": logs["RuleId"], "Status": "Enabled",
                                            "ExpirationDays": "7"})
    assert err(client.call, "PutBucketLifecycle", OSS, {**rule, "RuleId": logs["RuleId"], "Status": "Paused"}).code \
        == "InvalidParameter"
    rules = client.call("GetBucketLifecycle", OSS, rule)["LifecycleConfiguration"]["Rule"]
    assert {(r["RuleId"], r["Status"], r.get("ExpirationDays")) for r in rules if r["RuleId"] == logs["RuleId"]} == \
        {(logs["RuleId"], "Enabled", "7")}
    client.call("DeleteBucketLifecycle", OSS, {**rule, "RuleId": whole["RuleId"]})
    e = err(client.call, "DeleteBucketLifecycle", OSS, {**rule, "RuleId": whole["RuleId"]})
    assert (e.status, e.code) == (404, "NoSuchLifecycle")
    names = [(e["eventName"], e["resourceType"]) for e in trail(client, ResourceName=bucket, EventRW="Write")
             if not e.get("errorCode")]
    assert names == [("PutBucket", "ACS::OSS::Bucket")] + [("PutBucketLifecycle", "ACS::OSS::Bucket")] * 3 + [
        ("DeleteBucketLifecycle", "ACS::OSS::Bucket")]
    # the bucket's rules go with the bucket
    client.call("DeleteBucket", OSS, {**R, "BucketName": bucket})
    assert all(r["BucketName"] != bucket
               for r in client.call("GetBucketLifecycle", OSS, R)["LifecycleConfiguration"]["Rule"])


# ------------------------------------------------------------------ NAT


def new_nat(client, seeded, name: str) -> str:
    vsw = seeded["vsw"]
    return client.call("CreateNatGateway", VPC, {**R, "VpcId": vsw["VpcId"], "VSwitchId": vsw["VSwitchId"],
                                                 "Name": name})["NatGatewayId"]


def eip_of(client, eip: str) -> dict:
    return client.call("DescribeEipAddresses", VPC, {**R, "AllocationId": eip})["EipAddresses"]["EipAddress"][0]


def nat_of(client, ngw: str) -> dict:
    return client.call("DescribeNatGateways", VPC, {**R, "NatGatewayId": ngw})["NatGateways"]["NatGateway"][0]


def test_binding_an_eip_to_a_nat_gateway_is_associate_eip_address(client, seeded):
    ngw, other = new_nat(client, seeded, "bind-nat"), new_nat(client, seeded, "bind-nat-2")
    eip = client.call("AllocateEipAddress", VPC, R)["AllocationId"]
    e = err(client.call, "AssociateNatEip", VPC, {**R, "NatGatewayId": ngw, "AllocationId": eip})
    assert e.code == "InvalidAction.NotFound"  # no such API: the catalog's name for it
    client.call("AssociateEipAddress", VPC, {**R, "AllocationId": eip, "InstanceId": ngw, "InstanceType": "Nat"})
    bound = eip_of(client, eip)
    assert (bound["Status"], bound["InstanceId"], bound["InstanceType"]) == ("InUse", ngw, "Nat")
    assert (nat_of(client, ngw)["AllocationId"], nat_of(client, ngw)["EipAddress"]) == (eip, bound["IpAddress"])
    e = err(client.call, "AssociateEipAddress", VPC, {**R, "AllocationId": eip, "InstanceId": other,
                                                      "InstanceType": "Nat"})
    assert e.code == "IncorrectEipStatus"
    e = err(client.call, "UnassociateEipAddress", VPC, {**R, "AllocationId": eip, "InstanceId": other,
                                                        "InstanceType": "Nat"})
    assert e.code == "IncorrectEipStatus"
    client.call("UnassociateEipAddress", VPC, {**R, "AllocationId": eip, "InstanceId": ngw, "InstanceType": "Nat"})
    assert eip_of(client, eip)["Status"] == "Available" and "InstanceId" not in eip_of(client, eip)
    assert "AllocationId" not in nat_of(client, ngw) and "EipAddress" not in nat_of(client, ngw)

    [assoc] = [e for e in trail(client, EventName="AssociateEipAddress") if e["resourceName"].startswith(ngw)]
    assert (assoc["serviceName"], assoc["eventSource"], assoc["apiVersion"]) == ("Vpc", "vpc.aliyuncs.com", VPC)
    assert {k: assoc["requestParameters"][k] for k in ("AllocationId", "InstanceId", "InstanceType")} == \
        {"AllocationId": eip, "InstanceId": ngw, "InstanceType": "Nat"}
    assert set(assoc["resourceType"].split(";")) == {"ACS::VPC::NatGateway", "ACS::VPC::EIP"}
    names = [e["eventName"] for e in trail(client, ResourceName=eip, EventRW="Write") if not e.get("errorCode")]
    assert names == ["AllocateEipAddress", "AssociateEipAddress", "UnassociateEipAddress"]
    # an EIP bound to an ECS instance is still the EIP product's own operation
    instance = seeded["instance"]["InstanceId"]
    client.call("AssociateEipAddress", VPC, {**R, "AllocationId": eip, "InstanceId": instance})
    assert eip_of(client, eip)["InstanceId"] == instance
    client.call("UnassociateEipAddress", VPC, {**R, "AllocationId": eip, "InstanceId": instance})
    client.call("ReleaseEipAddress", VPC, {**R, "AllocationId": eip})
    for gw in (ngw, other):
        client.call("DeleteNatGateway", VPC, {**R, "NatGatewayId": gw})


def test_deleting_a_nat_gateway_needs_force_to_take_its_entries_and_eip(client, seeded):
    ngw = new_nat(client, seeded, "force-nat")
    eip = client.call("AllocateEipAddress", VPC, R)["AllocationId"]
    client.call("AssociateEipAddress", VPC, {**R, "AllocationId": eip, "InstanceId": ngw, "InstanceType": "Nat"})
    e = err(client.call, "DeleteNatGateway", VPC, {**R, "NatGatewayId": ngw})
    assert (e.status, e.code) == (400, "DependencyViolation.EIPS")
    snat = client.call("CreateSnatEntry", VPC, {**R, "NatGatewayId": ngw, "SnatIp": "47.96.1.10",
                                                "SourceVSwitchId": seeded["vsw"]["VSwitchId"]})["SnatEntryId"]
    dnat = client.call("CreateForwardEntry", VPC, {**R, "NatGatewayId": ngw, "ExternalIp": "47.96.1.10",
                                                   "InternalIp": "172.16.0.10", "ExternalPort": "80",
                                                   "InternalPort": "80"})["ForwardEntryId"]
    assert err(client.call, "DeleteNatGateway", VPC, {**R, "NatGatewayId": ngw}).code == "DependencyViolation.SnatEntry"
    client.call("DeleteSnatEntry", VPC, {**R, "NatGatewayId": ngw, "SnatEntryId": snat})
    e = err(client.call, "DeleteNatGateway", VPC, {**R, "NatGatewayId": ngw, "Force": "false"})
    assert e.code == "DependencyViolation.ForwardEntry"
    client.call("DeleteNatGateway", VPC, {**R, "NatGatewayId": ngw, "Force": "true"})
    assert client.call("DescribeNatGateways", VPC, {**R, "NatGatewayId": ngw})["NatGateways"]["NatGateway"] == []
    assert all(x["ForwardEntryId"] != dnat for x in
               client.call("DescribeForwardTableEntries", VPC, R)["ForwardTableEntries"]["ForwardTableEntry"])
    assert (eip_of(client, eip)["Status"], eip_of(client, eip).get("InstanceId")) == ("Available", None)
    assert [(e["eventName"], e.get("errorCode")) for e in trail(client, ResourceName=ngw)
            if e["eventName"] == "DeleteNatGateway"] == [
        ("DeleteNatGateway", "DependencyViolation.EIPS"), ("DeleteNatGateway", "DependencyViolation.SnatEntry"),
        ("DeleteNatGateway", "DependencyViolation.ForwardEntry"), ("DeleteNatGateway", None)]
    client.call("ReleaseEipAddress", VPC, {**R, "AllocationId": eip})
    # a gateway with nothing in it goes without Force
    bare = new_nat(client, seeded, "bare-nat")
    client.call("DeleteNatGateway", VPC, {**R, "NatGatewayId": bare})


# ------------------------------------------------------------- catalog


NEW_TYPES = {("ecs", "network_interface"): "ACS::ECS::NetworkInterface",
             ("slb", "vserver_group"): "ACS::SLB::VServerGroup", ("alb", "server_group"): "ACS::ALB::ServerGroup",
             ("oss", "cors_rule"): "ACS::OSS::Bucket", ("oss", "lifecycle_rule"): "ACS::OSS::Bucket"}


@pytest.mark.parametrize("release", ["2021-06", "2026-03"])
def test_products_json_lists_the_new_types_by_their_api_names(release):
    result = CliRunner().invoke(sandbox_cli, ["products", "--release", release, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["release"] == release
    types = {(p["product"], r["type"]): r for p in data["products"] for r in p["resource_types"]}
    for key, resource_type in NEW_TYPES.items():
        assert types[key]["resource_type"] == resource_type, key
    assert types[("ecs", "network_interface")]["operations"] == [
        "AttachNetworkInterface", "CreateNetworkInterface", "DeleteNetworkInterface",
        "DescribeNetworkInterfaceAttribute", "DescribeNetworkInterfaces", "DetachNetworkInterface",
        "ModifyNetworkInterfaceAttribute"]
    assert types[("oss", "cors_rule")]["operations"] == ["DeleteBucketCors", "GetBucketCors", "PutBucketCors"]
    assert types[("oss", "lifecycle_rule")]["operations"] == [
        "DeleteBucketLifecycle", "GetBucketLifecycle", "PutBucketLifecycle"]
    nat_ops = types[("nat", "nat_gateway")]["operations"]
    assert {"AssociateEipAddress", "UnassociateEipAddress"} <= set(nat_ops) and "AssociateNatEip" not in nat_ops
    labels = catalog.load(release).labels("ecs") | catalog.load(release).labels("oss")
    assert {"ENIs", "Create ENI", "Bind to Instance", "Unbind", "Allowed Methods", "Cache Timeout (Seconds)",
            "Match by Prefix", "Configure to Apply to Whole Bucket", "Validity Period (Days)"} <= labels


# ------------------------------------------------- Terraform provider


@pytest.fixture()
def provider(client):
    from docverify_sandbox.terraform_provider.catalog_types import catalogue
    from docverify_sandbox.terraform_provider.lifecycle import SandboxResources

    types = catalogue().types
    return SandboxResources(client, "cn-hangzhou", poll=0.01, types=types), types


def test_provider_tears_down_what_a_procedure_bound_or_filled(client, seeded, provider):
    """Provisioned an ENI, an EIP, a NAT gateway and a bucket; the procedure under test bound
    the ENI to an instance, the EIP to the gateway, and filled the gateway and the bucket:
    every provisioned resource is still deleted."""
    api, types = provider
    vsw = seeded["vsw"]
    eni = api.create(types["sandbox_ecs_network_interface"],
                     {"VSwitchId": vsw["VSwitchId"], "SecurityGroupId": seeded["sg"]["SecurityGroupId"]})
    eip = api.create(types["sandbox_eip_eip"], {"Name": "tf-eip"})
    nat = api.create(types["sandbox_nat_nat_gateway"], {"VpcId": vsw["VpcId"], "VSwitchId": vsw["VSwitchId"]})
    bucket = api.create(types["sandbox_oss_bucket"], {"BucketName": "tf-filled-bucket"})
    # what the procedure did, through the console's API
    client.call("AttachNetworkInterface", ECS, {**R, "NetworkInterfaceId": eni["NetworkInterfaceId"],
                                                "InstanceId": seeded["instance"]["InstanceId"]})
    client.call("AssociateEipAddress", VPC, {**R, "AllocationId": eip["AllocationId"],
                                             "InstanceId": nat["NatGatewayId"], "InstanceType": "Nat"})
    client.call("CreateSnatEntry", VPC, {**R, "NatGatewayId": nat["NatGatewayId"], "SnatIp": eip["IpAddress"],
                                         "SourceVSwitchId": vsw["VSwitchId"]})
    client.call("PutBucketCors", OSS, {**R, "BucketName": "tf-filled-bucket", "AllowedOrigin": "*",
                                       "AllowedMethod": "GET"})
    # the EIP before the gateway that holds it, as Terraform may order them
    for name, item in (("sandbox_ecs_network_interface", eni), ("sandbox_eip_eip", eip),
                       ("sandbox_nat_nat_gateway", nat), ("sandbox_oss_bucket", bucket)):
        rt = types[name]
        api.delete(rt, str(item[rt.id_param]))
        assert api.read(rt, str(item[rt.id_param])) is None, name
    rules = client.call("GetBucketCors", OSS, {**R, "PageSize": "100"})["CORSConfiguration"]["CORSRule"]
    assert all(r["BucketName"] != "tf-filled-bucket" for r in rules)


def test_provider_manages_rules_and_groups(client, seeded, provider):
    api, types = provider
    client.call("PutBucket", OSS, {**R, "BucketName": "tf-rules-bucket"})
    lifecycle = types["sandbox_oss_lifecycle_rule"]
    assert lifecycle.attribute("lifecycle_rule_status").updatable  # `status` is the computed one
    rule = api.create(lifecycle, {"BucketName": "tf-rules-bucket", "Prefix": "tmp/", "ExpirationDays": 3,
                                  "Status": "Disabled"})  # created Disabled: ready at once
    assert rule["Status"] == "Disabled"
    api.update(lifecycle, rule["RuleId"], {"Status": "Enabled", "ExpirationDays": 5}, parent="tf-rules-bucket")
    again = api.read(lifecycle, rule["RuleId"], parent="tf-rules-bucket")
    assert (again["Status"], again["ExpirationDays"]) == ("Enabled", "5")
    cors = types["sandbox_oss_cors_rule"]
    made = api.create(cors, {"BucketName": "tf-rules-bucket", "AllowedOrigin": "*", "AllowedMethod": "GET,PUT"})
    api.update(cors, made["RuleId"], {"AllowedMethod": "GET"}, parent="tf-rules-bucket")
    assert api.read(cors, made["RuleId"], parent="tf-rules-bucket")["AllowedMethod"] == "GET"
    group = types["sandbox_slb_vserver_group"]
    assert {a.name for a in group.attributes} >= {"vserver_group_name", "load_balancer_id", "server_id"}
    lb = client.call("CreateLoadBalancer", SLB, {**R, "MasterZoneId": "cn-hangzhou-h"})["LoadBalancerId"]
    made = api.create(group, {"LoadBalancerId": lb, "VServerGroupName": "tf-group", "Port": 81})
    api.delete(group, made["VServerGroupId"], parent=lb)
    assert api.read(group, made["VServerGroupId"], parent=lb) is None
    api.delete(lifecycle, rule["RuleId"], parent="tf-rules-bucket")
    assert api.read(lifecycle, rule["RuleId"], parent="tf-rules-bucket") is None
    client.call("DeleteLoadBalancer", SLB, {**R, "LoadBalancerId": lb})
    client.call("DeleteBucket", OSS, {**R, "BucketName": "tf-rules-bucket"})


# ------------------------------------------------------------- console


def row_of(page, text):
    return page.get_by_role("row").filter(has_text=text)


def confirm(page, title, button="OK"):
    page.get_by_role("dialog", name=title).get_by_role("button", name=button).click()


def open_menu(row, *path):
    row.get_by_role("button", name=path[0], exact=True).click()
    for item in path[1:]:
        row.get_by_role("menuitem", name=item, exact=True).click()


@pytest.mark.browser
def test_console_eni_create_bind_unbind_delete(page, sandbox):
    page.goto(f"{sandbox.url}/console/ecs")
    nav = page.get_by_role("navigation", name="Elastic Compute Service navigation")
    nav.get_by_role("link", name="ENIs").click()
    assert page.get_by_role("heading", name="Network Interfaces").is_visible()
    assert "No data available." in page.get_by_role("status").inner_text()
    page.get_by_role("button", name="Create ENI").click()
    dialog = page.get_by_role("dialog", name="Create ENI")
    dialog.get_by_label("ENI Name").fill("docs-eni")
    dialog.get_by_label("VPC", exact=True).select_option(index=1)
    dialog.get_by_label("vSwitch").select_option(index=1)
    dialog.get_by_label("Security Group").select_option(index=1)
    dialog.get_by_role("button", name="OK").click()
    assert "Available" in row_of(page, "docs-eni").inner_text()
    row_of(page, "docs-eni").get_by_role("button", name="Bind to Instance").click()
    page.get_by_role("dialog", name="Bind to Instance").get_by_label("Instance").select_option(index=1)
    confirm(page, "Bind to Instance")
    row = row_of(page, "docs-eni")
    assert "In Use" in row.inner_text() and "i-bp1" in row.inner_text()
    row.get_by_role("button", name="Unbind").click()
    confirm(page, "Unbind ENI")
    assert "Available" in row_of(page, "docs-eni").inner_text()
    open_menu(row_of(page, "docs-eni"), "More", "Delete")
    confirm(page, "Delete ENI")
    page.get_by_role("status").filter(has_text="succeeded").wait_for()
    assert row_of(page, "docs-eni").count() == 0


@pytest.mark.browser
def test_console_eni_list_pages(page, sandbox, client):
    seeded = {"vsw": client.call("DescribeVSwitches", VPC, R)["VSwitches"]["VSwitch"][0],
              "sg": client.call("DescribeSecurityGroups", ECS, R)["SecurityGroups"]["SecurityGroup"][0]}
    made = [new_eni(client, seeded, NetworkInterfaceName=f"paged-{n:02d}") for n in range(12)]
    third = client.call("DescribeNetworkInterfaces", ECS, {**R, "PageSize": "5", "PageNumber": "3"})
    assert (third["TotalCount"], len(third["NetworkInterfaceSets"]["NetworkInterfaceSet"])) == (12, 2)
    page.goto(f"{sandbox.url}/console/ecs/network_interface")
    pager = page.get_by_role("navigation", name="Pagination")
    assert "Total 12 items, page 1 of 2" in pager.inner_text()
    assert page.get_by_role("table", name="Network Interfaces").get_by_role("row").count() == 11  # header + 10
    from playwright.sync_api import expect  # waits for the page each click opens

    pager.get_by_role("link", name="Next").click()
    expect(page.get_by_role("navigation", name="Pagination")).to_contain_text("page 2 of 2")
    expect(row_of(page, made[0])).to_have_count(1)  # the oldest comes last
    page.get_by_label("ENI ID/Name").fill("paged-07")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("table", name="Network Interfaces").get_by_role("row")).to_have_count(2)


@pytest.mark.browser
def test_console_vserver_group_create_edit_delete(page, sandbox, client):
    client.call("CreateLoadBalancer", SLB, {**R, "MasterZoneId": "cn-hangzhou-h", "LoadBalancerName": "vsg-slb"})
    page.goto(f"{sandbox.url}/console/slb")
    row_of(page, "vsg-slb").get_by_role("link", name="vsg-slb", exact=True).click()  # the instance's details
    groups = page.get_by_role("region", name="VServer Groups")
    groups.get_by_role("button", name="Create VServer Group").click()
    dialog = page.get_by_role("dialog", name="Create VServer Group")
    dialog.get_by_label("VServer Group Name").fill("docs-group")
    dialog.get_by_label("Backend Server").select_option(index=1)
    dialog.get_by_label("Port").fill("8080")
    dialog.get_by_label("Weight").fill("50")
    dialog.get_by_role("button", name="Create").click()
    table = page.get_by_role("table", name="VServer Groups")
    assert "docs-group" in table.inner_text() and "8080" in table.inner_text()
    table.get_by_role("row").filter(has_text="docs-group").get_by_role("button", name="Edit").click()
    page.get_by_role("dialog", name="Edit VServer Group").get_by_label("Weight").fill("20")
    confirm(page, "Edit VServer Group")
    row = page.get_by_role("table", name="VServer Groups").get_by_role("row").filter(has_text="docs-group")
    assert "20" in row.inner_text()
    row.get_by_role("button", name="Delete").click()
    confirm(page, "Delete VServer Group")
    assert "docs-group" not in page.get_by_role("table", name="VServer Groups").inner_text()
    names = [e["eventName"] for e in trail(client, ResourceType="ACS::SLB::VServerGroup")[-3:]]
    assert names == ["CreateVServerGroup", "SetVServerGroupAttribute", "DeleteVServerGroup"]
    assert trail(client, ResourceType="ACS::SLB::VServerGroup")[-1]["eventType"] == "ConsoleOperation"


@pytest.mark.browser
def test_console_alb_server_group_create_modify_delete(page, sandbox):
    page.goto(f"{sandbox.url}/console/alb")
    page.get_by_role("navigation", name="Application Load Balancer navigation") \
        .get_by_role("link", name="Server Groups").click()
    page.get_by_role("button", name="Create Server Group").click()
    dialog = page.get_by_role("dialog", name="Create Server Group")
    dialog.get_by_role("radio", name="IP", exact=True).check()
    dialog.get_by_label("Server Group Name").fill("docs-sgp")
    dialog.get_by_label("VPC").select_option(index=1)
    dialog.get_by_role("radio", name="HTTPS").check()
    dialog.get_by_role("button", name="Create").click()
    row = row_of(page, "docs-sgp")
    assert "Available" in row.inner_text() and "HTTPS" in row.inner_text()
    row.get_by_role("button", name="Modify").click()
    dialog = page.get_by_role("dialog", name="Modify Server Group")
    dialog.get_by_role("radio", name="Weighted Least Connections").check()
    dialog.get_by_role("button", name="OK").click()
    assert "Weighted Least Connections" in row_of(page, "docs-sgp").inner_text()
    open_menu(row_of(page, "docs-sgp"), "More", "Delete")
    confirm(page, "Delete Server Group")
    assert row_of(page, "docs-sgp").count() == 0


@pytest.mark.browser
def test_console_cors_rule_create_edit_delete(page, sandbox, client):
    client.call("PutBucket", OSS, {**R, "BucketName": "docs-cors-bucket"})
    page.goto(f"{sandbox.url}/console/oss/bucket")
    page.get_by_role("link", name="docs-cors-bucket").click()
    page.get_by_role("tab", name="Content Security").click()
    cors = page.get_by_role("region", name="CORS")
    cors.get_by_role("button", name="Create Rule").click()
    dialog = page.get_by_role("dialog", name="Create Rule")
    dialog.get_by_label("Source").fill("https://docs.example.com")
    dialog.get_by_role("checkbox", name="GET").check()
    dialog.get_by_role("checkbox", name="PUT").check()
    dialog.get_by_label("Allowed Headers").fill("*")
    dialog.get_by_label("Cache Timeout (Seconds)").fill("600")
    dialog.get_by_role("button", name="OK").click()
    table = page.get_by_role("table", name="CORS")
    assert "GET,PUT" in table.inner_text() and "600" in table.inner_text()
    table.get_by_role("row").filter(has_text="docs.example.com").get_by_role("button", name="Edit").click()
    dialog = page.get_by_role("dialog", name="Edit Rule")
    assert dialog.get_by_role("checkbox", name="PUT").is_checked()  # opens with the rule's methods
    dialog.get_by_role("checkbox", name="PUT").uncheck()
    dialog.get_by_role("checkbox", name="HEAD").check()
    dialog.get_by_role("button", name="OK").click()
    assert "GET,HEAD" in page.get_by_role("table", name="CORS").inner_text()
    page.get_by_role("table", name="CORS").get_by_role("row").filter(has_text="docs.example.com") \
        .get_by_role("button", name="Delete").click()
    confirm(page, "Delete Rule")
    assert "docs.example.com" not in page.get_by_role("table", name="CORS").inner_text()
    events = trail(client, ResourceName="docs-cors-bucket", EventRW="Write")
    assert [e["eventName"] for e in events] == ["PutBucket", "PutBucketCors", "PutBucketCors", "DeleteBucketCors"]
    created = events[1]
    assert created["eventType"] == "ConsoleOperation" and created["resourceType"] == "ACS::OSS::Bucket"
    assert (created["requestParameters"]["AllowedMethod.1"], created["requestParameters"]["AllowedMethod.3"]) == \
        ("GET", "PUT")


@pytest.mark.browser
def test_console_cors_rule_needs_a_method(page, sandbox, client):
    client.call("PutBucket", OSS, {**R, "BucketName": "docs-cors-nomethod"})
    page.goto(f"{sandbox.url}/console/oss/bucket/docs-cors-nomethod")
    page.get_by_role("region", name="CORS").get_by_role("button", name="Create Rule").click()
    dialog = page.get_by_role("dialog", name="Create Rule")
    dialog.get_by_label("Source").fill("*")
    dialog.get_by_role("button", name="OK").click()
    dialog = page.get_by_role("dialog", name="Create Rule")
    assert "AllowedMethod" in dialog.get_by_role("alert").first.inner_text()
    assert dialog.get_by_label("Source").input_value() == "*"  # what was typed stays


@pytest.mark.browser
def test_console_lifecycle_rule_create_delete(page, sandbox, client):
    client.call("PutBucket", OSS, {**R, "BucketName": "docs-lifecycle-bucket"})
    page.goto(f"{sandbox.url}/console/oss/bucket/docs-lifecycle-bucket")
    page.get_by_role("tab", name="Data Management").click()
    lifecycle = page.get_by_role("region", name="Lifecycle")
    lifecycle.get_by_role("button", name="Create Rule").click()
    dialog = page.get_by_role("dialog", name="Create Rule")
    dialog.get_by_role("radio", name="Disabled").check()
    dialog.get_by_role("textbox", name="Prefix", exact=True).fill("logs/")
    dialog.get_by_role("spinbutton", name="Days", exact=True).fill("30")
    dialog.get_by_role("button", name="OK").click()
    row = page.get_by_role("table", name="Lifecycle").get_by_role("row").filter(has_text="logs/")
    assert "Disabled" in row.inner_text() and "30" in row.inner_text()
    # a rule for the whole bucket, expiring on a date: the prefix and days give way
    page.get_by_role("region", name="Lifecycle").get_by_role("button", name="Create Rule").click()
    dialog = page.get_by_role("dialog", name="Create Rule")
    dialog.get_by_role("radio", name="Configure to Apply to Whole Bucket").check()
    prefix = dialog.locator('input[name="Prefix"]')
    assert prefix.count() == 1 and prefix.is_hidden()
    dialog.get_by_role("radio", name="Expiration Date").check()
    dialog.get_by_role("textbox", name="Date", exact=True).fill("2027-01-01")
    dialog.get_by_role("button", name="OK").click()
    table = page.get_by_role("table", name="Lifecycle")
    assert "2027-01-01" in table.inner_text() and "Configure to Apply to Whole Bucket" in table.inner_text()
    table.get_by_role("row").filter(has_text="logs/").get_by_role("button", name="Delete").click()
    confirm(page, "Delete Rule")
    assert "logs/" not in page.get_by_role("table", name="Lifecycle").inner_text()
    names = [e["eventName"] for e in trail(client, ResourceName="docs-lifecycle-bucket", EventRW="Write")]
    assert names == ["PutBucket", "PutBucketLifecycle", "PutBucketLifecycle", "DeleteBucketLifecycle"]


@pytest.mark.browser
def test_console_nat_associate_and_disassociate_eip(page, sandbox, client):
    vsw = client.call("DescribeVSwitches", VPC, R)["VSwitches"]["VSwitch"][0]
    ngw = client.call("CreateNatGateway", VPC, {**R, "VpcId": vsw["VpcId"], "VSwitchId": vsw["VSwitchId"],
                                                "Name": "docs-nat-eip"})["NatGatewayId"]
    eip = client.call("AllocateEipAddress", VPC, {**R, "Name": "docs-nat-ip"})
    page.goto(f"{sandbox.url}/console/nat")
    row_of(page, "docs-nat-eip").get_by_role("button", name="Associate Now").click()
    dialog = page.get_by_role("dialog", name="Associate EIP")
    dialog.get_by_label("EIPs").select_option(eip["AllocationId"])
    dialog.get_by_role("button", name="OK").click()
    assert eip["EipAddress"] in row_of(page, "docs-nat-eip").inner_text()
    assert eip_of(client, eip["AllocationId"])["Status"] == "InUse"
    row_of(page, "docs-nat-eip").get_by_role("button", name="Disassociate").click()
    confirm(page, "Disassociate EIP")
    assert eip["EipAddress"] not in row_of(page, "docs-nat-eip").inner_text()
    assert eip_of(client, eip["AllocationId"])["Status"] == "Available"
    # bound again; the EIP console shows the binding and can undo it (the same UnassociateEipAddress)
    row_of(page, "docs-nat-eip").get_by_role("button", name="Associate Now").click()
    page.get_by_role("dialog", name="Associate EIP").get_by_label("EIPs").select_option(eip["AllocationId"])
    confirm(page, "Associate EIP")
    page.goto(f"{sandbox.url}/console/eip")
    row = row_of(page, "docs-nat-ip")
    assert "In Use" in row.inner_text() and ngw in row.inner_text()
    row.get_by_role("button", name="Unbind").click()
    confirm(page, "Unbind EIP")
    assert "Available" in row_of(page, "docs-nat-ip").inner_text()
    assert "EipAddress" not in nat_of(client, ngw)
    events = [e for e in trail(client, ResourceName=ngw, EventRW="Write") if e["eventType"] == "ConsoleOperation"]
    assert [e["eventName"] for e in events] == ["AssociateEipAddress", "UnassociateEipAddress"] * 2
    assert all((e["serviceName"], e["requestParameters"]["InstanceId"], e["requestParameters"]["InstanceType"]) ==
               ("Vpc", ngw, "Nat") for e in events)
