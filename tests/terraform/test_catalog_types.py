"""Resource types generated from the sandbox catalog: names, attributes, coverage of the templates."""

from __future__ import annotations

import re

import pytest
from stack_helpers import TEMPLATES, types

from docverify_sandbox.terraform_provider.catalog_types import catalogue
from docverify_sandbox.terraform_provider.naming import attribute_name, type_name


@pytest.mark.parametrize("api,attr", [
    ("VpcName", "vpc_name"), ("CidrBlock", "cidr_block"), ("VSwitchId", "vswitch_id"),
    ("DBInstanceId", "db_instance_id"), ("SecurityGroupId", "security_group_id"),
    ("InternetMaxBandwidthOut", "internet_max_bandwidth_out"), ("ISP", "isp"),
    ("KMSMasterKeyID", "kms_master_key_id"), ("Ipv6CidrBlock", "ipv6_cidr_block"), ("Http2Enabled", "http2_enabled"),
    ("XForwardedFor_SLBIP", "x_forwarded_for_slbip"), ("DNSName", "dns_name"), ("EventRW", "event_rw"),
    ("PrivatePoolOptions.MatchCriteria", "private_pool_options_match_criteria"),
    ("SourceVSwitchId", "source_vswitch_id"),
    ("DKMSInstanceId", "dkms_instance_id"), ("Name", "name"),
])
def test_attribute_name(api, attr):
    assert attribute_name(api) == attr


def test_type_name():
    assert type_name("ecs", "security_group") == "sandbox_ecs_security_group"


def test_every_catalog_resource_becomes_a_type_or_says_why():
    cat = catalogue()
    assert {"sandbox_vpc_vpc", "sandbox_vpc_vswitch", "sandbox_ecs_security_group", "sandbox_ecs_instance",
            "sandbox_oss_bucket", "sandbox_ram_user", "sandbox_eip_eip", "sandbox_nat_nat_gateway",
            "sandbox_slb_load_balancer", "sandbox_rds_db_instance"} <= set(cat.types)
    assert cat.skipped == {"sandbox_ecs_security_group_rule":
                           "the catalog has neither a get nor a list operation to read it back"}
    for rt in cat.types.values():
        names = [a.name for a in rt.attributes]
        assert len(names) == len(set(names)), rt.name
        assert all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in names), rt.name
        assert not {"id", "status", "region_id"} & set(names), rt.name


def test_attributes_come_from_the_create_operation():
    cat = catalogue()
    vsw = cat.types["sandbox_vpc_vswitch"]
    assert (vsw.create_action, vsw.initial_status, vsw.final_status) == ("CreateVSwitch", "Pending", "Available")
    required = {a.name: a.required for a in vsw.attributes}
    assert [required[n] for n in ("vpc_id", "zone_id", "cidr_block", "vswitch_name")] == [True, True, True, False]
    assert vsw.attribute("vswitch_name").updatable and not vsw.attribute("cidr_block").updatable
    inst = cat.types["sandbox_ecs_instance"]
    assert inst.attribute("instance_type").default == "ecs.g6.large"  # required by the API, pre-filled by the console
    assert not inst.attribute("instance_type").required
    assert inst.attribute("system_disk_size").kind == "number"
    assert inst.attribute("deletion_protection").kind == "bool"
    assert inst.delete_force_param == "Force"
    assert "amount" not in [a.name for a in inst.attributes]  # one Terraform block is one instance
    user = cat.types["sandbox_ram_user"]
    assert not user.regional and user.attribute("password").sensitive
    assert user.updates[0].params == {"DisplayName": "NewDisplayName", "Comments": "NewComments"}
    # a child names its parent with a required attribute even where the create form does not show it
    assert cat.types["sandbox_oss_object"].attribute("bucket_name").required
    assert cat.types["sandbox_kms_key"].gone_status == "PendingDeletion"


def test_types_yaml_maps_every_meta_type_to_a_provider_type_with_a_template():
    mapping = types()
    try:
        from docverify.provision.meta import META_TYPES
    except ImportError:  # the META vocabulary lands with the provisioner
        META_TYPES = tuple(mapping)
    assert set(mapping) == set(META_TYPES)
    cat = catalogue()
    for meta, tf_type in mapping.items():
        assert tf_type in cat.types, meta
        text = (TEMPLATES / f"{meta}.tf.j2").read_text(encoding="utf-8")
        assert f'resource "{tf_type}" "{{{{ r.address }}}}"' in text, meta
        assert 'output "{{ r.address }}_id"' in text, meta
        # every attribute a template sets exists in the provider's schema
        rt = cat.types[tf_type]
        known = {a.name for a in rt.attributes} | {"region_id"} | ({"desired_status"} if rt.transitions else set())
        set_here = set(re.findall(r"^\s+([a-z_0-9]+)\s+=", text.split("output")[0], re.M))
        assert set_here <= known, (meta, set_here - known)
