"""The alicloud stacks as the provisioner renders them for the real cloud — sizes named by
the cost guard, every resource tagged — checked against the provider's documentation,
offline (no provider binary, so no ``terraform validate``): each block's type and each
argument it sets must be documented for that type (the provider docs and examples of
tests/corpus/terraform-alicloud, or the checked allowlist of
tests/provision/test_alicloud_templates.py), and every resource whose type documents
``tags`` carries ``docverify-run`` and ``docverify-task``."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from docverify.provision.meta import META_TYPES, Requirement, close
from docverify_terraform.cost_guard import resource_block
from docverify_terraform.provisioner import TerraformProvisioner, tag_value

ROOT = Path(__file__).resolve().parents[2]


def _template_checks():
    """tests/provision/test_alicloud_templates.py: its HCL block scanner and its allowlist
    (arguments checked against provider doc pages the corpus does not hold)."""
    path = ROOT / "tests" / "provision" / "test_alicloud_templates.py"
    spec = importlib.util.spec_from_file_location("alicloud_template_checks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


CHECKS = _template_checks()


@pytest.fixture(scope="module")
def documented(corpus) -> dict[str, set[str]]:
    """Resource (``alicloud_x``) or data source (``data.alicloud_x``) -> its documented arguments."""
    root = corpus / "terraform-alicloud"
    known: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.tf")):
        for name, arguments in CHECKS._blocks(path.read_text(encoding="utf-8")):
            known.setdefault(name, set()).update(arguments)
    for path in sorted((root / "provider_docs").glob("*.html.markdown")):
        text = path.read_text(encoding="utf-8")
        resource = "alicloud_" + path.name.removesuffix(".html.markdown")
        known.setdefault(resource, set()).update(re.findall(r"^\* `(\w+)` -", text, re.MULTILINE))
        for code in re.findall(r"```\w*\n(.*?)```", text, re.DOTALL):
            for name, arguments in CHECKS._blocks(code):
                known.setdefault(name, set()).update(arguments)
    for name, arguments in CHECKS.ALLOWLIST.items():
        known.setdefault(name, set()).update(arguments)
    return known


def provisioned(*meta_types: str, **options):
    """The stack a run on the real cloud renders, with the guard's limits opened wide."""
    made = TerraformProvisioner(TerraformProvisioner.Options(max_paid_resources=100, **options))
    task = SimpleNamespace(id="docs/everything.md#all-of-it")
    requirements = close([Requirement(type=t) for t in meta_types])
    return made, made.render(task, requirements, "alicloud", suffix="ab12cd", region="cn-hangzhou", templates=None)


def test_every_block_type_and_argument_is_documented(documented):
    _, stack = provisioned(*META_TYPES)
    problems = []
    for name, arguments in CHECKS._blocks("\n".join(stack.files.values())):
        if name not in documented:
            problems.append(f"{name}: no documentation of this type")
            continue
        unknown = sorted(arguments - documented[name] - CHECKS.META_ARGUMENTS)
        if unknown:
            problems.append(f"{name}: {', '.join(unknown)}")
    assert not problems, "not in the provider's documentation:\n" + "\n".join(problems)


def test_every_taggable_resource_carries_the_run_and_the_procedure(documented):
    made, stack = provisioned(*META_TYPES)
    main = stack.files["main.tf"]
    wanted = f'{{ docverify-run = "{tag_value(made.run_id)}", docverify-task = "docs_everything.md_all-of-it" }}'
    tagged, untaggable = [], []
    for match in re.finditer(r'^resource "(\w+)" "(\w+)" \{$', main, re.MULTILINE):
        tf_type, name = match.groups()
        arguments = resource_block(main, tf_type, name)
        if "tags" in documented.get(tf_type, set()):
            assert arguments.get("tags") == wanted, f"{tf_type}.{name}: {arguments.get('tags')}"
            tagged.append(tf_type)
        else:
            assert "tags" not in arguments, tf_type
            untaggable.append(tf_type)
    assert {"alicloud_instance", "alicloud_vpc", "alicloud_vswitch", "alicloud_security_group", "alicloud_db_instance",
            "alicloud_eip_address", "alicloud_nat_gateway", "alicloud_slb_load_balancer",
            "alicloud_alb_load_balancer"} <= set(tagged)
    # what cleanup finds through the ledger only: listeners, entries, associations, RAM, objects
    assert {"alicloud_ram_user", "alicloud_slb_listener", "alicloud_snat_entry", "alicloud_oss_bucket_object",
            "alicloud_actiontrail_trail"} <= set(untaggable)


def test_no_credential_is_ever_in_a_template():
    _, stack = provisioned(*META_TYPES)
    text = "\n".join(stack.files.values())
    assert not re.search(r"^\s*(access_key|secret_key|security_token|profile|shared_credentials_file)\s*=", text,
                         re.MULTILINE)
    assert 'provider "alicloud" {\n  region = "cn-hangzhou"\n}' in stack.files["provider.tf"]


def test_the_guard_names_the_sizes_it_holds():
    _, stack = provisioned("ecs_instance", "rds_instance", "mongodb_instance")
    sizes = {r.meta_type: resource_block(r.text, r.tf_type, r.address)[r.size] for r in stack.paid() if r.size}
    assert sizes == {"ecs_instance": '"ecs.t6-c1m1.large"', "rds_instance": '"mysql.n2.small.1"',
                     "mongodb_instance": '"dds.mongo.mid"'}


@pytest.mark.terraform
def test_terraform_parses_and_formats_the_stack_a_run_applies(tmp_path):
    _, stack = provisioned(*META_TYPES)
    for name, text in stack.files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    code, output = CHECKS._terraform_fmt(tmp_path)
    assert code == 0, output
