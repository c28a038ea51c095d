"""``docverify cleanup --console aliyun``: what runs left, found by the ``docverify-run`` tag
in each product's ListTagResources and deleted in order — and never a resource without
that tag. Against the recorded product APIs (tests/aliyun/api_recordings.py: answers of
the documented shape, served locally, requests signed by the official client)."""

from __future__ import annotations

import json

import pytest
from aliyun_recordings import KEY_ID, KEY_SECRET, own_env, serving
from api_recordings import ProductApiFake
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import EnvironmentProblem
from docverify_aliyun.console import AliyunConsole
from docverify_aliyun.leftovers import KINDS, CleanupAccount, TaggedLeftovers, cleanup_accounts

pytest.importorskip("alibabacloud_tea_openapi", reason="pip install -e '.[aliyun]'")

RUN, OTHER = "dv-20261205T010000.000001Z-aaaa0001", "dv-20261205T020000.000002Z-bbbb0002"


def tags(run: str = RUN, task: str = "docs_vpc.md_create-a-vswitch") -> dict[str, str]:
    return {"docverify-run": run, "docverify-task": task}


@pytest.fixture
def cloud(keys):
    fake = ProductApiFake(keys)
    with serving(fake.app) as url:
        fake.url = url
        yield fake


@pytest.fixture(autouse=True)
def no_process_reaping(monkeypatch):
    """``cleanup`` also stops stray Terraform processes machine-wide (tests/terraform/test_strays.py):
    not here, where other tests' processes may be running."""
    monkeypatch.setattr("docverify_terraform.strays.find_strays", list)


def a_run_left(cloud: ProductApiFake) -> None:
    """Two VPCs, a vSwitch, a security group and an instance in one; an EIP, an ALB, an RDS
    instance of another run; and the account's own, untagged VPC (someone's production)."""
    cloud.add("vpc", "VPC", "vpc-bp1docverify01", tags())
    cloud.add("vpc", "VPC", "vpc-bp1docverify03", tags(task="docs_vpc.md_delete-a-vpc"))
    cloud.add("vpc", "VSWITCH", "vsw-bp1docverify01", tags(), parent="vpc-bp1docverify01")
    cloud.add("ecs", "securitygroup", "sg-bp1docverify01", tags(), parent="vpc-bp1docverify01")
    cloud.add("ecs", "instance", "i-bp1docverify01", tags(task="docs_ecs.md_stop"), parent="vsw-bp1docverify01",
              linger=5)  # released asynchronously: its vSwitch cannot go in the same round
    cloud.add("vpc", "EIP", "eip-bp1docverify01", tags())
    cloud.add("alb", "loadbalancer", "alb-docverify01", tags(OTHER))
    cloud.add("rds", "INSTANCE", "rm-bp1docverify01", tags(OTHER))
    cloud.add("vpc", "VPC", "vpc-bp1production", {"env": "prod", "owner": "payments"})


def finder(**more) -> TaggedLeftovers:
    console = AliyunConsole(AliyunConsole.Options(**more))
    return console.leftovers(environ=own_env(), config_file=None)


def test_every_tagged_resource_is_found_in_every_product_and_page(cloud):
    a_run_left(cloud)
    cloud.add("vpc", "VPC", "vpc-bp1shanghai01", tags(), region="cn-shanghai")
    found = finder(openapi_url=cloud.url).find()
    assert {left.id for left in found} == cloud.ids() - {"vpc-bp1production", "vpc-bp1shanghai01"}
    assert all(left.tagged and left.region == "cn-hangzhou" for left in found)
    by_id = {left.id: left for left in found}
    assert by_id["alb-docverify01"].run == OTHER and by_id["alb-docverify01"].kind.what == "ALB instance"
    assert by_id["i-bp1docverify01"].task == "docs_ecs.md_stop"
    assert [left.kind.order for left in found] == sorted(left.kind.order for left in found)  # instances first
    # each product at its documented version, asked by the docverify-run key alone, signed with the account's key
    listed = [(product, params) for product, action, params, key in cloud.calls if action == "ListTagResources"]
    assert {product for product, _ in listed} == {"ecs", "vpc", "slb", "alb", "rds", "dds"}
    assert all(params["Tag.1.Key"] == "docverify-run" and "Tag.1.Value" not in params for _, params in listed)
    assert any(params.get("NextToken") for _, params in listed)  # pages followed
    assert {key for *_, key in cloud.calls} == {KEY_ID}
    assert {(product, params["ResourceType"]) for product, params in listed} == {(k.product, k.tag_type) for k in KINDS}
    # other regions when asked
    assert "vpc-bp1shanghai01" in {left.id for left in finder(openapi_url=cloud.url).find(["cn-shanghai"])}


def test_one_run_only(cloud):
    a_run_left(cloud)
    found = finder(openapi_url=cloud.url).find(run=OTHER)
    assert {left.id for left in found} == {"alb-docverify01", "rm-bp1docverify01"}
    assert all(params.get("Tag.1.Value") == OTHER for _, action, params, _ in cloud.calls
               if action == "ListTagResources")


def test_deletes_in_order_in_rounds_and_leaves_the_untagged(cloud):
    a_run_left(cloud)
    leftovers = finder(openapi_url=cloud.url, cleanup_pause_s=0)
    done = leftovers.delete(leftovers.find())
    assert all(d.deleted for d in done), [d.error for d in done if not d.deleted]
    assert cloud.ids() == {"vpc-bp1production"}
    deletes = cloud.deletes()
    assert deletes.index("ecs:DeleteInstance") < deletes.index("vpc:DeleteVSwitch") < len(deletes) - 1
    assert deletes[-1] == "vpc:DeleteVpc"  # tried once too early (its vSwitch still there), then again
    vpc_01 = [params for _, action, params, _ in cloud.calls if params.get("VpcId") == "vpc-bp1docverify01"]
    assert deletes.count("vpc:DeleteVSwitch") == 2 and len(vpc_01) == 2
    force = [params for product, action, params, _ in cloud.calls if action == "DeleteInstance"]
    assert force == [{**force[0], "InstanceId": "i-bp1docverify01", "Force": "true"}]
    assert not any(params.get("VpcId") == "vpc-bp1production" for *_, params, _ in cloud.calls)


def test_an_untagged_resource_in_a_listing_is_never_deleted(cloud):
    """An answer listing more than was asked for (every VPC, tagged or not): the cleanup
    looks at each resource's own tags and leaves alone what does not carry docverify-run."""
    a_run_left(cloud)
    cloud.add("vpc", "VPC", "vpc-bp1bare", {})  # no tag at all
    cloud.ignore_filter = True
    leftovers = finder(openapi_url=cloud.url, cleanup_pause_s=0)
    found = leftovers.find()
    untagged = {left.id for left in found if not left.tagged}
    assert untagged == {"vpc-bp1production", "vpc-bp1bare"}
    done = {d.leftover.id: d for d in leftovers.delete(found)}
    assert not done["vpc-bp1production"].deleted and "no docverify-run tag" in done["vpc-bp1production"].error
    assert cloud.ids() == {"vpc-bp1production", "vpc-bp1bare"}
    assert not any(params.get("VpcId") in untagged for *_, params, _ in cloud.calls)


def test_a_tagged_resource_that_something_else_uses_is_reported_not_forced(cloud):
    cloud.add("vpc", "VPC", "vpc-bp1docverify02", tags())
    cloud.add("vpc", "VSWITCH", "vsw-bp1someone", {"team": "web"}, parent="vpc-bp1docverify02")  # not docverify's
    leftovers = finder(openapi_url=cloud.url, cleanup_pause_s=0, cleanup_passes=3)
    [done] = leftovers.delete(leftovers.find())
    assert not done.deleted and "DependencyViolation" in done.error
    assert cloud.deletes() == ["vpc:DeleteVpc"] * 3
    assert cloud.ids() == {"vpc-bp1docverify02", "vsw-bp1someone"}


def test_the_accounts_looked_at(monkeypatch, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    pool = tmp_path / "docverify-accounts.toml"
    pool.write_text('[accounts.ci-2]\nconsole = "aliyun"\naccess_key_id = "env:CI2_ID"\n'
                    'access_key_secret = "env:CI2_SECRET"\nregion = "cn-shanghai"\n\n'
                    '[accounts.local]\nconsole = "sandbox"\naccess_key_id = "env:SB_ID"\naccess_key_secret = "env:SB"\n')
    environ = {**own_env(), "CI2_ID": "LTAI5tSecondAccount01", "CI2_SECRET": "second-secret", "SB_ID": "x", "SB": "y",
               "DOCVERIFY_ACCOUNTS": str(pool)}
    from docverify_aliyun.console import own_account

    accounts = cleanup_accounts(own_account(environ, "cn-hangzhou"), environ, None)
    assert [(a.access_key_id, a.region) for a in accounts] == [(KEY_ID, "cn-hangzhou"),
                                                              ("LTAI5tSecondAccount01", "cn-shanghai")]
    assert KEY_SECRET not in repr(accounts)
    assert TaggedLeftovers(accounts).regions() == ["cn-hangzhou", "cn-shanghai"]
    # without the console's own account: the provider's variables
    monkeypatch.chdir(tmp_path / "elsewhere")  # no accounts file here
    env_only = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "LTAI5tFromTheEnv0001", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "s"}
    assert [a.name for a in cleanup_accounts(None, env_only, None)] == ["ALIBABA_CLOUD_ACCESS_KEY_ID"]
    with pytest.raises(EnvironmentProblem, match="no AccessKey of an aliyun account"):
        cleanup_accounts(None, {}, None)
    assert CleanupAccount("x", "LTAI5tAbcdefgh", "s").shown == "x (LTAI****efgh)"


def cleanup(tmp_path, cloud, *args: str):
    (tmp_path / "docverify.toml").write_text(
        f'[console.aliyun]\nopenapi_url = "{cloud.url}"\ncleanup_pause_s = 0\n', encoding="utf-8")
    env = {"HOME": str(tmp_path), "DOCVERIFY_CONFIG": None, "DOCVERIFY_ACCOUNTS": None, "DOCVERIFY_LEASE_DIR": None,
           "DOCVERIFY_CLEANUP_CONSOLE": None, **own_env()}
    return CliRunner().invoke(cli, ["cleanup", *args], env=env, catch_exceptions=False)


def test_the_cleanup_command_lists_then_deletes(tmp_path, monkeypatch, cloud):
    monkeypatch.chdir(tmp_path)
    a_run_left(cloud)
    listed = cleanup(tmp_path, cloud, "--console", "aliyun", "--dry-run", "--json")
    assert listed.exit_code == 0, listed.output
    data = json.loads(listed.output)
    assert data["stacks"] == [] and data["tag_problems"] == []
    rows = {row["id"]: row for row in data["tagged"]}
    assert set(rows) == cloud.ids() - {"vpc-bp1production"}
    assert rows["i-bp1docverify01"]["access_key_id"] == "LTAI****tKey" and KEY_SECRET not in listed.output
    assert cloud.deletes() == []  # a dry run deletes nothing

    text = cleanup(tmp_path, cloud, "--console", "aliyun", "--dry-run")
    assert "tagged VPC vpc-bp1docverify01 in cn-hangzhou" in text.output and "run " + RUN in text.output

    one_run = cleanup(tmp_path, cloud, "--console", "aliyun", "--run", OTHER.removeprefix("dv-"))
    assert one_run.exit_code == 0, one_run.output
    assert "deleted ALB instance alb-docverify01" in one_run.output
    assert {"alb-docverify01", "rm-bp1docverify01"}.isdisjoint(cloud.ids()) and "vpc-bp1docverify01" in cloud.ids()

    deleted = cleanup(tmp_path, cloud, "--console", "aliyun")
    assert deleted.exit_code == 0, deleted.output
    assert cloud.ids() == {"vpc-bp1production"}
    assert "deleted VPC vpc-bp1docverify01" in deleted.output
    assert "no tagged leftovers" in cleanup(tmp_path, cloud, "--console", "aliyun").output


def test_a_resource_that_cannot_be_deleted_fails_the_command(tmp_path, monkeypatch, cloud):
    monkeypatch.chdir(tmp_path)
    cloud.add("vpc", "VPC", "vpc-bp1docverify02", tags())
    cloud.add("vpc", "VSWITCH", "vsw-bp1someone", {"team": "web"}, parent="vpc-bp1docverify02")
    result = cleanup(tmp_path, cloud, "--console", "aliyun")
    assert result.exit_code == 3
    assert "NOT deleted VPC vpc-bp1docverify02" in result.output and "DependencyViolation" in result.output


def test_console_and_region_mistakes_are_usage_errors(tmp_path, monkeypatch, cloud):
    monkeypatch.chdir(tmp_path)
    sandbox = cleanup(tmp_path, cloud, "--console", "sandbox", "--dry-run")
    assert sandbox.exit_code == 2 and "cannot find what runs left by tag" in sandbox.output
    region = cleanup(tmp_path, cloud, "--region", "cn-hangzhou", "--dry-run")
    assert region.exit_code == 2 and "--region: only with --console" in region.output
    unknown = cleanup(tmp_path, cloud, "--console", "nowhere", "--dry-run")
    assert unknown.exit_code != 0 and "aliyun" in unknown.output  # the error lists the known consoles
