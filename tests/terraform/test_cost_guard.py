"""The cost guard: paid resources counted across a run and held to a limit, sizes held to an
allow-list, refused before anything is applied — always on a real cloud, on the sandbox only
when configured (where it runs here end to end, with real Terraform)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from docverify.errors import EnvironmentProblem
from docverify.parse.parser import parse_text
from docverify.provision.meta import Requirement, close
from docverify.task import make_task
from docverify_sandbox.console import SandboxConsole
from docverify_terraform.cost_guard import CostGuard, resource_block
from docverify_terraform.provisioner import CHEAP_INSTANCE_TYPES, TerraformProvisioner, tag_value
from docverify_terraform.stack import TemplateError, TemplateSet, render_stack

ROOT = Path(__file__).resolve().parents[2]


def task(task_id: str = "docs/ecs.md#stop-an-instance"):
    return SimpleNamespace(id=task_id)


def needs(*meta_types: str, **attributes) -> list[Requirement]:
    return close([Requirement(type=t, attributes=dict(attributes)) for t in meta_types])


def provisioner(**options) -> TerraformProvisioner:
    return TerraformProvisioner(TerraformProvisioner.Options(**options))


def render(made: TerraformProvisioner, requirements, provider: str = "alicloud", task_id: str = "t1"):
    return made.render(task(task_id), requirements, provider, suffix="ab12cd", region="cn-hangzhou", templates=None)


def test_types_yaml_marks_what_costs_money():
    alicloud, sandbox = TemplateSet.load("alicloud"), TemplateSet.load("sandbox")
    paid = {"ecs_instance", "disk", "eip", "nat_gateway", "slb", "alb", "rds_instance", "mongodb_instance", "kms_key"}
    assert alicloud.paid == paid and sandbox.paid == paid
    assert alicloud.sizes == {"ecs_instance": "instance_type", "rds_instance": "instance_type",
                              "mongodb_instance": "db_instance_class"}
    assert alicloud.types["ecs_instance"] == "alicloud_instance"  # the mapping form still names the resource type


def test_a_templates_folder_cannot_unmark_a_paid_type(tmp_path):
    (tmp_path / "alicloud").mkdir()
    (tmp_path / "alicloud" / "types.yaml").write_text("ecs_instance: alicloud_instance\n")
    assert "ecs_instance" in TemplateSet.load("alicloud", tmp_path).paid


@pytest.mark.parametrize("entry, words", [
    ("ecs_instance: {resource: alicloud_instance, paid: yes-please}", "paid must be true or false"),
    ("ecs_instance: {resource: alicloud_instance, price: 3}", "unknown keys price"),
    ("ecs_instance: {paid: true}", "must map to a Terraform resource type name"),
    ("ecs_instance: {resource: alicloud_instance, size: Instance Type}", "size must name an attribute"),
])
def test_a_bad_types_yaml_entry_names_its_file(tmp_path, entry, words):
    (tmp_path / "alicloud").mkdir()
    (tmp_path / "alicloud" / "types.yaml").write_text(entry + "\n")
    with pytest.raises(TemplateError, match=words) as raised:
        TemplateSet.load("alicloud", tmp_path)
    assert str(tmp_path / "alicloud" / "types.yaml") in str(raised.value)


def test_where_the_guard_applies():
    assert provisioner().cost_guard("sandbox") is None  # free
    real = provisioner().cost_guard("alicloud")
    assert real.max_paid == 0 and real.allowed["ecs_instance"] == CHEAP_INSTANCE_TYPES
    counted = provisioner(max_paid_resources=2).cost_guard("sandbox")
    assert counted.max_paid == 2 and counted.allowed == {}  # the sandbox's sizes only when asked for
    sized = provisioner(allowed_instance_types=["ecs.g6.large"]).cost_guard("sandbox")
    assert sized.max_paid is None and sized.allowed == {"ecs_instance": ["ecs.g6.large"]}


def test_the_count_runs_across_procedures_and_a_refusal_counts_nothing():
    made = provisioner(max_paid_resources=3)
    render(made, needs("ecs_instance"), task_id="a")
    render(made, needs("eip"), task_id="b")
    with pytest.raises(EnvironmentProblem) as refused:
        render(made, needs("nat_gateway", "eip"), task_id="c")
    message = str(refused.value)
    assert "c needs 2 paid resource(s) (alicloud_eip_address.eip_1, alicloud_nat_gateway.nat_gateway_1)" in message
    assert "2 already created in this run" in message and "over the limit of 3" in message
    assert made.paid.made == ["alicloud_instance.ecs_instance_1 (a)", "alicloud_eip_address.eip_1 (b)"]
    render(made, needs("vpc", "security_group"), task_id="d")  # free: always
    render(made, needs("disk"), task_id="e")
    assert len(made.paid.made) == 3


def test_a_resourcecoder_run_shares_the_count():
    from docverify_terraform.resourcecoder.provisioner import ResourceCoderProvisioner

    coder = ResourceCoderProvisioner(ResourceCoderProvisioner.Options(max_paid_resources=1))
    inner = coder.sharing_run(coder.options.model_copy(update={"templates": None}))
    render(inner, needs("eip"))
    assert inner.run_id == coder.run_id and inner.paid is coder.paid
    with pytest.raises(EnvironmentProblem, match="1 already created in this run"):
        render(coder, needs("eip"), task_id="t2")


def test_sizes_are_named_from_the_allow_list_and_held_to_it():
    made = provisioner(max_paid_resources=5, allowed_rds_classes=["mysql.n2.small.1"])
    main = render(made, needs("rds_instance")).files["main.tf"]
    assert 'instance_type            = "mysql.n2.small.1"' in main and "alicloud_db_instance_classes" not in main
    assert 'instance_storage         = 20' in main
    mongo = render(made, needs("mongodb_instance")).files["main.tf"]  # the template's own literal, allowed
    assert 'db_instance_class   = "dds.mongo.mid"' in mongo
    with pytest.raises(EnvironmentProblem, match=r"instance class dds\.mongo\.xlarge is not in the allow-list "
                                                 r"\(\[provisioner.terraform\] allowed_mongodb_classes: dds\.mongo\.mid\)"):
        render(made, needs("mongodb_instance", db_instance_class="dds.mongo.xlarge"))
    ecs = render(made, needs("ecs_instance", instance_type="ecs.t5-lc1m1.small")).files["main.tf"]
    assert 'instance_type              = "ecs.t5-lc1m1.small"' in ecs


def test_a_size_chosen_at_apply_time_is_refused():
    """A stack whose instance type a data source picks (rendered without the guard) cannot pass it."""
    stack = render_stack(needs("ecs_instance"), "alicloud", suffix="ab12cd")
    assert "data.alicloud_instance_types.ecs_instance_1.instance_types[0].id" in stack.files["main.tf"]
    guard = CostGuard(None, {"ecs_instance": CHEAP_INSTANCE_TYPES})
    with pytest.raises(EnvironmentProblem, match="its instance type would be chosen at apply time") as refused:
        guard.check_sizes(stack)
    assert "instance_type: ecs.t6-c1m1.large" in refused.value.hint


def test_the_block_reader_sees_top_level_arguments_only():
    text = ('resource "alicloud_instance" "a" {\n  instance_type = "ecs.t6-c1m1.large"\n  tags = { k = "v" }\n'
            '  data_disks {\n    size = 20\n  }\n  description = "x}{"\n}\n'
            'resource "alicloud_instance" "b" {\n  instance_type = data.x.id\n}\n')
    assert resource_block(text, "alicloud_instance", "a") == {"instance_type": '"ecs.t6-c1m1.large"',
                                                               "tags": '{ k = "v" }', "description": '"x}{"'}
    assert resource_block(text, "alicloud_instance", "b") == {"instance_type": "data.x.id"}
    assert resource_block(text, "alicloud_instance", "c") is None


def test_tag_values_every_product_accepts():
    assert tag_value("20261205T013103.998889Z-1133001d") == "dv-20261205T013103.998889Z-1133001d"
    assert tag_value("docs/ecs.md#stop an instance") == "docs_ecs.md_stop_an_instance"
    assert len(tag_value("x" * 300)) == 128


# -- end to end on the sandbox, with real Terraform ------------------------------------------

NEEDS = """\
    # {title}

    <!-- docverify:
    id: {id}
    requires:
      - type: {type}
    -->

    1. Log on to the ECS console.
    2. Click **Start**.
"""


def sandbox_task(meta_type: str):
    text = textwrap.dedent(NEEDS).format(title=f"Use a {meta_type}", id=f"use-{meta_type}", type=meta_type)
    return make_task(parse_text(text, f"docs/{meta_type}.md").procedures[0])


def eips(api) -> list[str]:
    data = api.call("DescribeEipAddresses", "2016-04-28", {"RegionId": "cn-hangzhou", "PageSize": "100"})
    return [e["AllocationId"] for e in data["EipAddresses"]["EipAddress"]]


@pytest.mark.terraform
@pytest.mark.slow
def test_on_the_sandbox_when_configured(terraform, sandbox_url, api, tmp_path):
    made = TerraformProvisioner(TerraformProvisioner.Options(
        work_dir=str(tmp_path / "tf"), state_dir=str(tmp_path / "stacks"), max_paid_resources=1,
        allowed_instance_types=["ecs.t5-lc1m1.small"]))
    endpoint = SandboxConsole.endpoint(sandbox_url, None)
    before = eips(api)
    with made.provision(sandbox_task("ecs_instance"), endpoint) as provisioned:
        instance = provisioned.outputs["ecs_instance_1_id"]
        described = api.call("DescribeInstances", "2014-05-26", {"RegionId": "cn-hangzhou",
                                                                 "InstanceIds": json.dumps([instance])})
        assert described["Instances"]["Instance"][0]["InstanceType"] == "ecs.t5-lc1m1.small"
        with pytest.raises(EnvironmentProblem, match="over the limit of 1 paid resource"), \
                made.provision(sandbox_task("eip"), endpoint):
            pass
        assert eips(api) == before  # refused before anything was applied
    assert not list((tmp_path / "stacks").glob("*.json"))


def test_what_a_check_creates_is_tagged_with_its_run_in_the_results_store(tmp_path):
    from docverify.config import load_config
    from docverify.plugins import load_plugins
    from docverify.run.check import CheckOptions, CheckRun

    def provisioner_of(**overrides):
        config = load_config(cwd=tmp_path, environ={}, overrides={"provisioner.use": "terraform", **overrides})
        run = CheckRun(config, load_plugins(), CheckOptions(output=tmp_path / "out"), [])
        return run, run.stages.provisioner

    run, provisioner = provisioner_of()
    assert provisioner.run_id == run.run_id
    assert provisioner.tags(SimpleNamespace(id="t1"))["docverify-run"] == tag_value(run.run_id)
    run, provisioner = provisioner_of(**{"provisioner.terraform.run_id": "ci-42"})
    assert provisioner.run_id == "ci-42" != run.run_id  # a CI run's id, configured, is kept


@pytest.mark.terraform
@pytest.mark.browser
@pytest.mark.slow
def test_the_option_of_check_reaches_the_guard(tmp_path, sandbox_url, chromium):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "eip.md").write_text(textwrap.dedent(NEEDS).format(title="Use an EIP", id="use-eip",
                                                                           type="eip"))
    args = [sys.executable, "-m", "docverify", "check", "docs", "--no-store", "--report", "json", "--output", "out",
            "--browser-path", str(chromium.path), "--provisioner", "terraform", "--max-paid-resources", "0",
            "-O", f"console.sandbox.url={sandbox_url}"]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    [result] = json.loads((tmp_path / "out" / "docverify.json").read_text())["results"]
    assert done.returncode == 3, done.stderr
    assert result["verdict"] == "ENV_ERROR"
    assert "over the limit of 0 paid resource(s) per run (--max-paid-resources" in result["reason"]
    none = subprocess.run([*args[:-4], "--provisioner", "none", "--max-paid-resources", "1", "--dry-run"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert none.returncode == 2 and "--max-paid-resources: the provisioner 'none' creates nothing" in none.stderr
