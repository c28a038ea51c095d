"""The renderer's contract, on tiny templates in a temporary folder."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from docverify.parse.model import Procedure
from docverify.provision.meta import Requirement, close
from docverify.task import Task
from docverify_terraform.stack import (
    TemplateError,
    TemplateSet,
    UncoveredMetaError,
    hcl,
    providers,
    render_stack,
    template_dirs,
)

REPO = Path(__file__).resolve().parents[2]

TINY = {
    "types.yaml": "vpc: tiny_vpc\nvswitch: tiny_vswitch\nsecurity_group: tiny_sg\nkms_key: tiny_key\n",
    "provider.tf.j2": 'provider "tiny" {\n  region = {{ region | hcl }}\n}\n',
    "vpc.tf.j2": """
        resource "tiny_vpc" "{{ r.address }}" {
          name = {{ r.name | hcl }}
          cidr = {{ r.attributes.get("cidr_block", "10.0.0.0/8") | hcl }}
        }
        output "{{ r.address }}_id" { value = tiny_vpc.{{ r.address }}.id }
        output "{{ r.address }}_name" { value = tiny_vpc.{{ r.address }}.name }
        """,
    "vswitch.tf.j2": """
        resource "tiny_vswitch" "{{ r.address }}" {
          name   = {{ r.name | hcl }}
          vpc_id = {{ ref("vpc") }}.id
          index  = {{ r.index }}
          region = {{ r.region | hcl }}
        }
        output "{{ r.address }}_id" { value = tiny_vswitch.{{ r.address }}.id }
        output "{{ r.address }}_name" { value = tiny_vswitch.{{ r.address }}.name }
        """,
    "kms_key.tf.j2": """
        resource "tiny_key" "{{ r.address }}" {
          description = "key {{ r.suffix }}"
        }
        output "{{ r.address }}_id" { value = tiny_key.{{ r.address }}.id }
        """,
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return folder


@pytest.fixture
def tiny(tmp_path) -> Path:
    _write(tmp_path / "templates" / "tiny", TINY)
    return tmp_path / "templates"


def test_renders_dependencies_with_refs_names_and_outputs(tiny):
    stack = render_stack(close([Requirement(type="vswitch")]), "tiny", suffix="ab12cd", region="cn-beijing", templates=tiny)
    assert [r.tf_address for r in stack.resources] == ["tiny_vpc.vpc_1", "tiny_vswitch.vswitch_1"]
    main = stack.files["main.tf"]
    assert 'vpc_id = tiny_vpc.vpc_1.id' in main
    assert '"docverify-vsw-ab12cd"' in main and '"cn-beijing"' in main and "index  = 1" in main
    assert main.index('resource "tiny_vpc"') < main.index('resource "tiny_vswitch"')
    assert stack.files["provider.tf"] == 'provider "tiny" {\n  region = "cn-beijing"\n}\n'
    assert set(stack.outputs) == {"vpc_1_id", "vpc_1_name", "vswitch_1_id", "vswitch_1_name"}
    assert {"vpc-id", "your-vpc-id", "vpc_1_id"} <= set(stack.outputs["vpc_1_id"])
    assert {"vswitch-name", "your-vswitch-name"} <= set(stack.outputs["vswitch_1_name"])


def test_outputs_fill_the_task_context_for_the_doc_placeholders(tiny):
    stack = render_stack(close([Requirement(type="vpc")]), "tiny", suffix="ab12cd", templates=tiny)
    context = stack.context({"vpc_1_id": {"value": "vpc-bp1234", "type": "string"}, "vpc_1_name": "docverify-vpc-ab12cd"})
    task = Task(procedure=Procedure(id="p", title="t", path="p.md", line=1, end_line=1),
                context={"suffix": "ab12cd", **context})
    assert task.resolve("Select <vpc-id> (<your-vpc-name>)") == "Select vpc-bp1234 (docverify-vpc-ab12cd)"
    # case and separators do not matter: one context key serves every spelling
    assert task.resolve("<VPC_ID>, <Your VPC Name>, <vpc id>") == "vpc-bp1234, docverify-vpc-ab12cd, vpc-bp1234"


def test_count_gives_numbered_resources(tiny):
    stack = render_stack(close([Requirement(type="vswitch", count=2)]), "tiny", suffix="s", templates=tiny)
    assert [(r.address, r.name, r.index) for r in stack.resources] == [
        ("vpc_1", "docverify-vpc-s", 1), ("vswitch_1", "docverify-vsw-s", 1), ("vswitch_2", "docverify-vsw-s-2", 2),
    ]
    assert "vswitch-id" in stack.outputs["vswitch_1_id"] and "vswitch-id" not in stack.outputs["vswitch_2_id"]


def test_unnamed_types_declare_only_an_id(tiny):
    stack = render_stack([Requirement(type="kms_key")], "tiny", suffix="s", templates=tiny)
    assert stack.resources[0].name is None and list(stack.outputs) == ["kms_key_1_id"]


def test_attributes_and_annotated_names(tiny):
    requirement = Requirement(type="vpc", name="shared-<suffix>", attributes={"cidr_block": "192.168.0.0/16"})
    main = render_stack([requirement], "tiny", suffix="q1", templates=tiny).files["main.tf"]
    assert 'name = "shared-q1"' in main and 'cidr = "192.168.0.0/16"' in main


def test_undefined_variable_names_template_file_and_line(tiny):
    (tiny / "tiny" / "vpc.tf.j2").write_text('resource "tiny_vpc" "{{ r.address }}" {\n  x = {{ r.nope }}\n}\n')
    with pytest.raises(TemplateError) as raised:
        render_stack([Requirement(type="vpc")], "tiny", suffix="s", templates=tiny)
    assert f"{tiny / 'tiny' / 'vpc.tf.j2'}:2:" in str(raised.value)
    assert "nope" in str(raised.value)


def test_syntax_error_names_template_file_and_line(tiny):
    (tiny / "tiny" / "vpc.tf.j2").write_text('resource "x" "y" {\n\n  a = {{ r.name \n}\n')
    with pytest.raises(TemplateError, match=r"vpc\.tf\.j2:4: template syntax error: unexpected '}'"):
        render_stack([Requirement(type="vpc")], "tiny", suffix="s", templates=tiny)


def test_ref_to_a_type_not_in_the_stack(tiny):
    with pytest.raises(TemplateError) as raised:
        render_stack([Requirement(type="vswitch", dependencies=["vpc"])], "tiny", suffix="s", templates=tiny)
    assert "vswitch.tf.j2:3: ref('vpc'): this stack has no vpc" in str(raised.value)


def test_a_template_must_declare_its_outputs(tiny):
    (tiny / "tiny" / "vpc.tf.j2").write_text('resource "tiny_vpc" "{{ r.address }}" {}\noutput "{{ r.address }}_id" {\n}\n')
    with pytest.raises(TemplateError, match=r'vpc\.tf\.j2: declares no output "vpc_1_name"'):
        render_stack([Requirement(type="vpc")], "tiny", suffix="s", templates=tiny)


def test_uncovered_types_and_their_dependents(tiny):
    requirements = close([Requirement(type="ecs_instance")])  # no ecs_instance (nor vswitch's sibling) template
    with pytest.raises(UncoveredMetaError, match="no 'tiny' template for ecs_instance"):
        render_stack(requirements, "tiny", suffix="s", templates=tiny)
    (tiny / "tiny" / "types.yaml").write_text("vpc: tiny_vpc\nvswitch: tiny_vswitch\n")
    stack = render_stack(requirements, "tiny", suffix="s", templates=tiny, allow_uncovered=True)
    assert [r.address for r in stack.resources] == ["vpc_1", "vswitch_1"]
    assert [r.type for r in stack.uncovered] == ["security_group", "ecs_instance"]


def test_an_extra_folder_overrides_the_built_in_templates_file_by_file(tmp_path):
    override = _write(tmp_path / "mine" / "alicloud", {
        "types.yaml": "vpc: my_vpc\n",
        "vpc.tf.j2": """
            resource "my_vpc" "{{ r.address }}" {}
            output "{{ r.address }}_id" { value = 1 }
            output "{{ r.address }}_name" { value = 1 }
            """,
    }).parent
    template_set = TemplateSet.load("alicloud", override)
    assert template_set.types["vpc"] == "my_vpc" and template_set.types["vswitch"] == "alicloud_vswitch"
    stack = render_stack(close([Requirement(type="vswitch")]), "alicloud", suffix="s", templates=override)
    assert 'resource "my_vpc" "vpc_1"' in stack.files["main.tf"]
    assert "vpc_id       = my_vpc.vpc_1.id" in stack.files["main.tf"]  # the built-in vswitch template, ref() via types.yaml


def test_default_templates_are_the_repository_folder():
    assert (REPO / "terraform_templates").resolve() in [d.resolve() for d in template_dirs()]
    assert "alicloud" in providers(template_dirs())


def test_unknown_provider_lists_the_known_ones(tiny):
    with pytest.raises(TemplateError) as raised:
        TemplateSet.load("azure", tiny)
    assert "no Terraform templates for provider 'azure'" in str(raised.value)
    assert "alicloud" in str(raised.value) and "tiny" in str(raised.value)


def test_bad_types_yaml(tiny):
    (tiny / "tiny" / "types.yaml").write_text("vpcs: tiny_vpc\n")
    with pytest.raises(TemplateError, match=r"types\.yaml: unknown META type 'vpcs'"):
        TemplateSet.load("tiny", tiny)
    (tiny / "tiny" / "types.yaml").write_text("vpc: [a\n")
    with pytest.raises(TemplateError, match=r"types\.yaml:\d+: not valid YAML"):
        TemplateSet.load("tiny", tiny)


def test_missing_templates_folder(tmp_path):
    with pytest.raises(TemplateError, match="does not exist"):
        template_dirs(tmp_path / "nowhere")


@pytest.mark.parametrize(("value", "expected"), [
    ("a", '"a"'),
    ('say "hi" ${var.x} %{ if }', '"say \\"hi\\" $${var.x} %%{ if }"'),
    (True, "true"),
    (None, "null"),
    (3, "3"),
    (["a", 1], '["a", 1]'),
    ({"Name": "x", "with space": False}, '{ Name = "x", "with space" = false }'),
])
def test_hcl_literals(value, expected):
    assert hcl(value) == expected
