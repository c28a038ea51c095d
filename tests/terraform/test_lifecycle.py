"""The provider's API calls, without Terraform: create waits for the final status, read says gone,
update changes in place, delete waits until gone."""

from __future__ import annotations

from decimal import Decimal

import pytest

from docverify_sandbox.terraform_provider.catalog_types import catalogue
from docverify_sandbox.terraform_provider.lifecycle import ResourceFailure, SandboxResources, api_value


@pytest.fixture()
def resources(api):
    return SandboxResources(api, "cn-hangzhou", poll=0.05)


def T(name):
    return catalogue().types[name]


def test_api_values():
    assert [api_value(v) for v in (True, False, 40.0, Decimal("20"), Decimal("1.5"), 5, "x")] == \
        ["true", "false", "40", "20", "1.5", "5", "x"]


def test_the_ten_types_are_created_ready_and_deleted(resources):
    vpc = resources.create(T("sandbox_vpc_vpc"), {"VpcName": "lc-vpc", "CidrBlock": "10.0.0.0/16"})
    assert vpc["Status"] == "Available"  # not Pending: create waited
    vsw = resources.create(T("sandbox_vpc_vswitch"), {"VpcId": vpc["VpcId"], "ZoneId": "cn-hangzhou-h",
                                                       "CidrBlock": "10.0.1.0/24", "VSwitchName": "lc-vsw"})
    sg = resources.create(T("sandbox_ecs_security_group"), {"VpcId": vpc["VpcId"], "SecurityGroupName": "lc-sg"})
    inst = resources.create(T("sandbox_ecs_instance"), {
        "VSwitchId": vsw["VSwitchId"], "ZoneId": "cn-hangzhou-h", "SecurityGroupId": sg["SecurityGroupId"],
        "InstanceName": "lc-i"})
    assert inst["Status"] == "Running" and inst["InstanceType"] == "ecs.g6.large"
    made = [
        ("sandbox_oss_bucket", resources.create(T("sandbox_oss_bucket"), {"BucketName": "lc-bucket-ab12cd"})),
        ("sandbox_ram_user", resources.create(T("sandbox_ram_user"), {"UserName": "lc-user", "DisplayName": "lc"})),
        ("sandbox_eip_eip", resources.create(T("sandbox_eip_eip"), {"Name": "lc-eip"})),
        ("sandbox_nat_nat_gateway", resources.create(T("sandbox_nat_nat_gateway"), {
            "VpcId": vpc["VpcId"], "VSwitchId": vsw["VSwitchId"], "Name": "lc-nat"})),
        ("sandbox_slb_load_balancer", resources.create(T("sandbox_slb_load_balancer"), {
            "MasterZoneId": "cn-hangzhou-h", "LoadBalancerName": "lc-slb"})),
        ("sandbox_rds_db_instance", resources.create(T("sandbox_rds_db_instance"),
                                                     {"ZoneId": "cn-hangzhou-h", "VSwitchId": vsw["VSwitchId"]})),
        ("sandbox_ecs_instance", inst), ("sandbox_ecs_security_group", sg), ("sandbox_vpc_vswitch", vsw),
        ("sandbox_vpc_vpc", vpc),
    ]
    assert dict(made)["sandbox_rds_db_instance"]["Status"] == "Running"
    for name, item in made:
        rt = T(name)
        ident = str(item[rt.id_param])
        assert resources.read(rt, ident) is not None
        resources.delete(rt, ident)  # the running instance too: DeleteInstance is forced
        assert resources.read(rt, ident) is None, name


def test_update_in_place_with_renamed_request_parameters(resources):
    user = T("sandbox_ram_user")
    item = resources.create(user, {"UserName": "lc-upd", "DisplayName": "before"})
    resources.update(user, item["UserId"], {"DisplayName": "after"})  # sent as NewDisplayName
    assert resources.read(user, item["UserId"])["DisplayName"] == "after"
    resources.delete(user, item["UserId"])


def test_a_child_without_an_id_in_the_response_is_found_by_listing(resources):
    slb = resources.create(T("sandbox_slb_load_balancer"), {"MasterZoneId": "cn-hangzhou-h"})
    listener = T("sandbox_slb_listener")
    item = resources.create(listener, {"LoadBalancerId": slb["LoadBalancerId"], "ListenerPort": 8080})
    assert item["Status"] == "running" and str(item["ListenerPort"]) == "8080"
    resources.delete(listener, item["ListenerId"], parent=slb["LoadBalancerId"])
    resources.delete(T("sandbox_slb_load_balancer"), slb["LoadBalancerId"])


def test_deleting_a_key_schedules_its_deletion(resources):
    key = T("sandbox_kms_key")
    item = resources.create(key, {"DKMSInstanceId": "kst-default", "Description": "lc-key"})
    resources.delete(key, item["KeyId"])
    assert resources.read(key, item["KeyId"]) is None


def test_only_not_found_means_gone(resources):
    vpc = T("sandbox_vpc_vpc")
    assert resources.read(vpc, "vpc-bp1doesnotexist000000") is None
    with pytest.raises(ResourceFailure, match="InvalidRegionId.NotFound"):
        resources.read(vpc, "vpc-bp1doesnotexist000000", region="mars-north-1")


def test_api_errors_are_one_line_with_the_code(resources):
    with pytest.raises(ResourceFailure) as info:
        resources.create(T("sandbox_vpc_vpc"), {"CidrBlock": "10.0.0.0/33"})
    assert str(info.value).startswith("sandbox_vpc_vpc: CreateVpc failed: InvalidCidrBlock.Malformed")
    assert "\n" not in str(info.value)


def test_a_create_that_never_settles_is_taken_back(api):
    impatient = SandboxResources(api, "cn-hangzhou", poll=0.05, settle_timeout=0)
    with pytest.raises(ResourceFailure, match=r"is still Pending after 0 s .*\(it was deleted again\)"):
        impatient.create(T("sandbox_vpc_vpc"), {"VpcName": "lc-unsettled", "CidrBlock": "10.0.0.0/16"})
    left = api.call("DescribeVpcs", "2016-04-28", {"RegionId": "cn-hangzhou", "VpcName": "lc-unsettled"})
    assert left["Vpcs"]["Vpc"] == []


def test_deleting_what_a_procedure_filled_deletes_its_contents_first(api):
    """A procedure under test launched an instance in a provisioned vSwitch and security
    group of a provisioned VPC: teardown deletes them first instead of failing on
    DependencyViolation (the provider gets every type to find them)."""
    resources = SandboxResources(api, "cn-hangzhou", poll=0.05, types=catalogue().types)
    vpc = resources.create(T("sandbox_vpc_vpc"), {"VpcName": "lc-full", "CidrBlock": "10.9.0.0/16"})
    sg = resources.create(T("sandbox_ecs_security_group"), {"VpcId": vpc["VpcId"], "SecurityGroupName": "lc-full-sg"})
    # made outside Terraform, as the procedure would through the console
    vsw = api.call("CreateVSwitch", "2016-04-28", {"RegionId": "cn-hangzhou", "VpcId": vpc["VpcId"],
                                                    "ZoneId": "cn-hangzhou-h", "CidrBlock": "10.9.1.0/24"})
    made = api.call("RunInstances", "2014-05-26", {"RegionId": "cn-hangzhou", "VSwitchId": vsw["VSwitchId"],
                                                    "SecurityGroupId": sg["SecurityGroupId"], "ZoneId": "cn-hangzhou-h",
                                                    "InstanceType": "ecs.g6.large", "InstanceName": "lc-full-i", "ImageId": "aliyun_2_1903_x64_20G_alibase_20210120.vhd"})
    instance = (made.get("InstanceIdSets") or {}).get("InstanceIdSet", [None])[0] or made.get("InstanceId")
    assert instance
    resources.delete(T("sandbox_ecs_security_group"), sg["SecurityGroupId"])  # the instance goes first
    resources.delete(T("sandbox_vpc_vpc"), vpc["VpcId"])  # then the vSwitch
    assert resources.read(T("sandbox_ecs_instance"), instance) is None
    assert resources.read(T("sandbox_vpc_vswitch"), vsw["VSwitchId"]) is None
    assert resources.read(T("sandbox_vpc_vpc"), vpc["VpcId"]) is None


def test_without_the_types_a_dependency_still_fails_clearly(api):
    resources = SandboxResources(api, "cn-hangzhou", poll=0.05)
    vpc = resources.create(T("sandbox_vpc_vpc"), {"VpcName": "lc-kept", "CidrBlock": "10.8.0.0/16"})
    vsw = api.call("CreateVSwitch", "2016-04-28", {"RegionId": "cn-hangzhou", "VpcId": vpc["VpcId"],
                                                    "ZoneId": "cn-hangzhou-h", "CidrBlock": "10.8.1.0/24"})
    with pytest.raises(ResourceFailure, match="DependencyViolation.VSwitch"):
        resources.delete(T("sandbox_vpc_vpc"), vpc["VpcId"])
    api.call("DeleteVSwitch", "2016-04-28", {"RegionId": "cn-hangzhou", "VSwitchId": vsw["VSwitchId"]})
    resources.delete(T("sandbox_vpc_vpc"), vpc["VpcId"])


def test_a_new_resource_is_brought_to_the_status_a_procedure_needs(resources):
    """A stopped instance for "start an instance" (issue 12: a prerequisite in the
    state the step needs, not one whose Start is disabled)."""
    vpc = resources.create(T("sandbox_vpc_vpc"), {"VpcName": "lc-st", "CidrBlock": "10.0.0.0/16"})
    vsw = resources.create(T("sandbox_vpc_vswitch"), {"VpcId": vpc["VpcId"], "ZoneId": "cn-hangzhou-h",
                                                       "CidrBlock": "10.0.1.0/24"})
    sg = resources.create(T("sandbox_ecs_security_group"), {"VpcId": vpc["VpcId"]})
    rt = T("sandbox_ecs_instance")
    assert rt.statuses == ("Running", "Stopped")
    inst = resources.create(rt, {"VSwitchId": vsw["VSwitchId"], "ZoneId": "cn-hangzhou-h",
                                 "SecurityGroupId": sg["SecurityGroupId"], "InstanceName": "lc-stopped"})
    assert resources.bring_to(rt, inst["InstanceId"], "Stopped")["Status"] == "Stopped"
    assert resources.bring_to(rt, inst["InstanceId"], "Stopped")["Status"] == "Stopped"  # already there
    with pytest.raises(ResourceFailure, match="no operation brings .* from Stopped to Pending"):
        resources.bring_to(rt, inst["InstanceId"], "Pending")
    for name, item in (("sandbox_ecs_instance", inst), ("sandbox_ecs_security_group", sg),
                       ("sandbox_vpc_vswitch", vsw), ("sandbox_vpc_vpc", vpc)):
        resources.delete(T(name), str(item[T(name).id_param]))


def test_arguments_of_a_later_release_are_optional_in_an_earlier_one():
    key = catalogue("2021-06").types["sandbox_kms_key"]
    assert key.attribute("dkms_instance_id").required is False  # the 2026-03 template applies in 2021-06


def test_an_instance_a_procedure_protected_is_still_deleted(resources, api):
    """Teardown after "enable release protection": the protection is turned off first."""
    vpc = resources.create(T("sandbox_vpc_vpc"), {"VpcName": "lc-prot", "CidrBlock": "10.0.0.0/16"})
    vsw = resources.create(T("sandbox_vpc_vswitch"), {"VpcId": vpc["VpcId"], "ZoneId": "cn-hangzhou-h",
                                                       "CidrBlock": "10.0.1.0/24"})
    sg = resources.create(T("sandbox_ecs_security_group"), {"VpcId": vpc["VpcId"]})
    rt = T("sandbox_ecs_instance")
    inst = resources.create(rt, {"VSwitchId": vsw["VSwitchId"], "ZoneId": "cn-hangzhou-h",
                                 "SecurityGroupId": sg["SecurityGroupId"], "InstanceName": "lc-protected"})
    api.call("ModifyInstanceAttribute", rt.version, {"RegionId": "cn-hangzhou", "InstanceId": inst["InstanceId"],
                                                     "DeletionProtection": "true"})
    resources.delete(rt, inst["InstanceId"])
    assert resources.read(rt, inst["InstanceId"]) is None
    for name, item in (("sandbox_ecs_security_group", sg), ("sandbox_vpc_vswitch", vsw), ("sandbox_vpc_vpc", vpc)):
        resources.delete(T(name), str(item[T(name).id_param]))


def test_a_bucket_or_user_a_procedure_filled_is_still_deleted(api):
    """Teardown after "upload a file" or "create an AccessKey" in a provisioned bucket or user."""
    resources = SandboxResources(api, "cn-hangzhou", poll=0.05, types=catalogue().types)
    bucket = T("sandbox_oss_bucket")
    item = resources.create(bucket, {"BucketName": "lc-full-ab12cd"})
    api.call("PutObject", bucket.version, {"RegionId": "cn-hangzhou", "BucketName": "lc-full-ab12cd",
                                           "ObjectName": "index.html", "Content": "hi"})
    resources.delete(bucket, item["BucketName"])
    assert resources.read(bucket, item["BucketName"]) is None
    user = T("sandbox_ram_user")
    made = resources.create(user, {"UserName": "lc-keyed", "DisplayName": "keyed"})
    api.call("CreateAccessKey", user.version, {"UserName": "lc-keyed"})
    resources.delete(user, made["UserId"])
    assert resources.read(user, made["UserId"]) is None
