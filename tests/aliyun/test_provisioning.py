"""The ``terraform`` provisioner on the aliyun console: the real aliyun/alicloud provider, from
the registry or ``provider_mirror``, the AccessKey only in Terraform's environment, every
taggable resource tagged with the run and the procedure, and the cost guard before anything
is written. No provider binary can be downloaded here: ``terraform init`` against an empty
mirror is as far as a stack gets (the live test applies one: tests/aliyun/test_live.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from aliyun_recordings import KEY_ID, KEY_SECRET, endpoint_of, own_env

from docverify.errors import EnvironmentProblem
from docverify.parse.parser import parse_text
from docverify.task import make_task
from docverify_aliyun.console import AliyunConsole
from docverify_terraform.provisioner import TerraformProvisioner, tag_value

NEEDS = """\
    # {title}

    <!-- docverify:
    id: {id}
    requires:
      - type: {type}{attributes}
    -->

    1. Log on to the {console} console.
    2. Click **{button}**.
"""


def task_needing(meta_type: str, **attributes):
    extra = "".join(f"\n      {key}: {value}" for key, value in attributes.items())
    text = textwrap.dedent(NEEDS).format(
        title=f"Use a {meta_type}", id=f"use-{meta_type.replace('_', '-')}", type=meta_type,
        attributes=f"\n    attributes:{extra}" if attributes else "", console="VPC", button="Create vSwitch")
    [procedure] = parse_text(text, f"docs/{meta_type}.md").procedures
    return make_task(procedure, suffix="s1x2y3", default_region="cn-hangzhou")


@pytest.fixture
def endpoint():
    return endpoint_of(AliyunConsole(), own_env())


@pytest.fixture
def folders(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # Terraform's CLI configuration, launchers
    (tmp_path / "mirror").mkdir()
    return tmp_path


def provisioner(folders: Path, **options) -> TerraformProvisioner:
    options.setdefault("provider_mirror", str(folders / "mirror"))
    return TerraformProvisioner(TerraformProvisioner.Options(
        work_dir=str(folders / "tf"), state_dir=str(folders / "stacks"), **options))


def every_file(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@pytest.mark.terraform
def test_a_stack_is_tagged_and_reaches_terraform_with_the_key_in_its_environment_only(folders, endpoint):
    pytest.importorskip("python_terraform", reason="pip install -e '.[terraform]'")
    task = task_needing("vpc")
    made = provisioner(folders)
    with pytest.raises(EnvironmentProblem) as refused, made.provision(task, endpoint):
        pass
    # init found no aliyun/alicloud in the (empty) mirror: a clear ENV_ERROR, nothing applied
    assert "Failed to query available provider packages: the aliyun/alicloud provider could not be installed from " \
           f"the provider mirror {(folders / 'mirror').resolve()}" in str(refused.value), str(refused.value)
    assert "terraform providers mirror DIR" in refused.value.hint
    assert not every_file(folders / "stacks")  # the ledger records a stack only from apply on
    [workdir] = (folders / "tf").iterdir()
    main = (workdir / "main.tf").read_text()
    assert 'resource "alicloud_vpc" "vpc_1"' in main and 'vpc_name    = "docverify-vpc-s1x2y3"' in main
    assert f'tags        = {{ docverify-run = "{tag_value(made.run_id)}", docverify-task = "use-vpc" }}' in main
    provider = (workdir / "provider.tf").read_text()
    assert 'source  = "aliyun/alicloud"' in provider and 'region = "cn-hangzhou"' in provider
    assert not [p for p in every_file(folders) if KEY_SECRET.encode() in p.read_bytes()]  # nowhere on disk
    # the key and region reach Terraform as the provider reads them (>= 1.228.0); the mirror in its CLI config
    terraform = made.terraform(endpoint, "cn-hangzhou", "alicloud")
    env = terraform.environment()
    assert (env["ALIBABA_CLOUD_ACCESS_KEY_ID"], env["ALIBABA_CLOUD_ACCESS_KEY_SECRET"],
            env["ALIBABA_CLOUD_REGION"]) == (KEY_ID, KEY_SECRET, "cn-hangzhou")
    assert "DOCVERIFY_SANDBOX_API_URL" not in env and env["TF_PLUGIN_CACHE_DIR"]
    rc = Path(env["TF_CLI_CONFIG_FILE"]).read_text()
    assert f'path = "{(folders / "mirror").resolve()}"' in rc
    assert 'include = ["registry.terraform.io/aliyun/alicloud"]' in rc
    assert 'exclude = ["registry.terraform.io/docverify/sandbox", "registry.terraform.io/aliyun/alicloud"]' in rc


def test_a_paid_resource_is_refused_before_anything_exists(folders, endpoint):
    """On the real cloud no paid resource is made unless the run allows it."""
    task = task_needing("ecs_instance")
    with pytest.raises(EnvironmentProblem) as refused, provisioner(folders).provision(task, endpoint):
        pass
    message = str(refused.value)
    assert "needs 1 paid resource(s) (alicloud_instance.ecs_instance_1)" in message
    assert "over the limit of 0 paid resource(s) per run" in message and "--max-paid-resources" in message
    assert "nothing was created" in message
    assert not (folders / "tf").exists() and not (folders / "stacks").exists()


def test_an_instance_type_outside_the_allow_list_is_refused_naming_it(folders, endpoint):
    task = task_needing("ecs_instance", instance_type="ecs.g7.2xlarge")
    with pytest.raises(EnvironmentProblem) as refused, \
            provisioner(folders, max_paid_resources=3).provision(task, endpoint):
        pass
    message = str(refused.value)
    assert "instance type ecs.g7.2xlarge is not in the allow-list" in message
    assert "[provisioner.terraform] allowed_instance_types: ecs.t6-c1m1.large" in message
    assert not (folders / "tf").exists()


def test_an_allowed_stack_names_its_sizes_and_the_zone_that_sells_them(folders):
    made = provisioner(folders, max_paid_resources=2)
    spec = made.render(task_needing("ecs_instance"), _closed("ecs_instance"), "alicloud", suffix="s1x2y3",
                       region="cn-hangzhou", templates=None)
    main = spec.files["main.tf"]
    assert 'instance_type              = "ecs.t6-c1m1.large"' in main and "alicloud_instance_types" not in main
    assert 'available_instance_type     = "ecs.t6-c1m1.large"' in main  # the vSwitch's zone sells it
    assert 'system_disk_category       = "cloud_efficiency"' in main
    assert [r.tf_address for r in spec.paid()] == ["alicloud_instance.ecs_instance_1"]
    assert made.paid.made == ["alicloud_instance.ecs_instance_1 (use-ecs-instance)"]


def _closed(meta_type: str):
    from docverify.provision.meta import Requirement, close

    return close([Requirement(type=meta_type)])


def test_the_ledger_labels_find_the_stack_again_without_a_secret(folders, endpoint, monkeypatch):
    """What the ledger records lets `docverify cleanup` destroy a killed run's stack: which key
    (its secret found again in the console's own variables), the run, the provider mirror."""
    from docverify_terraform.provisioner import credentials_for

    made = provisioner(folders, run_id="ci-4711")
    terraform = made.terraform(endpoint, "cn-hangzhou", "alicloud")
    labels = made.labels(task_needing("vpc"), "alicloud", endpoint, terraform)
    assert labels == {"task": "use-vpc", "path": "docs/vpc.md", "provider": "alicloud", "run": "ci-4711",
                      "access_key_id": KEY_ID, "provider_mirror": str((folders / "mirror").resolve())}
    assert made.tags(task_needing("vpc")) == {"docverify-run": "ci-4711", "docverify-task": "use-vpc"}
    for name in ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"):
        monkeypatch.delenv(name, raising=False)
    for name, value in own_env().items():
        monkeypatch.setenv(name, value)
    credentials = credentials_for(KEY_ID, {"ALIBABA_CLOUD_REGION": "cn-hangzhou"}, config_file=None)
    assert (credentials.access_key_id, credentials.access_key_secret, credentials.region) == \
        (KEY_ID, KEY_SECRET, "cn-hangzhou")
    with pytest.raises(EnvironmentProblem, match="no secret for AccessKey LTAI5tSomeOtherKey"):
        credentials_for("LTAI5tSomeOtherKey", {}, config_file=None)


def test_a_provider_mirror_that_is_not_there_is_said(folders, endpoint):
    made = provisioner(folders, provider_mirror=str(folders / "nowhere"))
    with pytest.raises(EnvironmentProblem, match="provider_mirror .*nowhere.* is neither an https:// URL nor a folder"):
        made.terraform(endpoint, "cn-hangzhou", "alicloud")
    with pytest.raises(EnvironmentProblem, match="a network mirror must be an https:// URL"):
        provisioner(folders, provider_mirror="http://mirror.example.com/").terraform(endpoint, "cn-hangzhou",
                                                                                    "alicloud")
    https = provisioner(folders, provider_mirror="https://mirror.example.com/terraform")
    rc = Path(https.terraform(endpoint, "cn-hangzhou", "alicloud").cli_config).read_text()
    assert 'network_mirror {\n    url = "https://mirror.example.com/terraform/"' in rc
