"""The console map: product consoles by the names docs give them, per site and region."""

from __future__ import annotations

import base64
import json
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import ConfigError
from docverify_aliyun.console_map import ConsoleMap, UnknownConsole
from docverify_aliyun.launcher import launcher_page, link_names

MAP = ConsoleMap.load()
CHINA, INTERNATIONAL = MAP.site("china"), MAP.site("international")


@pytest.mark.parametrize("name, key", [
    ("ECS console", "ecs"), ("the ECS console", "ecs"), ("Elastic Compute Service console", "ecs"),
    ("ECS管理控制台", "ecs"), ("云服务器ECS控制台", "ecs"), ("Alibaba Cloud ECS console", "ecs"),
    ("NAT Gateway console", "nat"), ("Elastic IP Address console", "eip"), ("ApsaraDB for MongoDB console", "mongodb"),
    ("负载均衡管理控制台", "slb"), ("Server Load Balancer console", "slb"), ("ALB console", "alb"),
    ("RAM console", "ram"), ("访问控制RAM", "ram"), ("ActionTrail console", "actiontrail"), ("kms", "kms"),
    ("ApsaraDB RDS console", "rds"), ("OSS管理控制台", "oss"), ("VPC console", "vpc"),
])
def test_a_console_is_found_by_the_names_docs_give_it(name, key):
    assert MAP.product(name).key == key


def test_an_unknown_console_is_refused_naming_the_known_ones():
    with pytest.raises(UnknownConsole) as raised:
        MAP.product("Function Compute console")
    error = raised.value
    assert "no console named 'Function Compute console'" in error.message
    for known in ("ECS console", "VPC console", "OSS console", "RAM console", "ApsaraDB RDS console", "SLB console",
                  "ALB console", "NAT Gateway console", "Elastic IP Address console", "KMS console",
                  "ApsaraDB for MongoDB console", "ActionTrail console"):
        assert known in error.hint
    assert "console_map" in error.hint
    assert error.exit_code == 2


def test_urls_per_site_and_region():
    assert MAP.url("ECS console", "china", "cn-shanghai") == "https://ecs.console.aliyun.com/server/region/cn-shanghai"
    assert MAP.url("ECS console", "international", "ap-southeast-1") == \
        "https://ecs.console.alibabacloud.com/server/region/ap-southeast-1"
    assert MAP.url("EIP", "china") == "https://vpc.console.aliyun.com/eip"
    assert MAP.url("EIP", "china", "cn-beijing") == "https://vpc.console.aliyun.com/eip/cn-beijing/eips"
    assert MAP.url("NAT Gateway console", "international", "cn-hangzhou") == \
        "https://vpc.console.alibabacloud.com/nat/cn-hangzhou/nats"
    assert MAP.url("ALB console", "china", "cn-hangzhou") == "https://slb.console.aliyun.com/alb/cn-hangzhou/albs"
    assert MAP.url("ApsaraDB RDS console", "china", "cn-hangzhou").startswith("https://rdsnext.console.aliyun.com/")
    # global consoles have no page per region
    assert MAP.url("RAM console", "china", "cn-shanghai") == "https://ram.console.aliyun.com"
    assert MAP.url("OSS console", "international", "cn-shanghai") == "https://oss.console.alibabacloud.com/bucket"
    # a stand-in server for every console (tests)
    assert MAP.url("VPC console", "china", "cn-hangzhou", base="http://127.0.0.1:9/console") == \
        "http://127.0.0.1:9/console/vpc/vpc/cn-hangzhou/vpcs"


def test_sites_sign_in_where_the_documentation_says():
    assert CHINA.signin == "https://signin.aliyun.com/login.htm"
    assert INTERNATIONAL.signin == "https://signin.alibabacloud.com/login.htm"
    assert CHINA.federation == "https://signin.aliyun.com/federation"
    with pytest.raises(ConfigError, match="unknown Alibaba Cloud site 'mars'"):
        MAP.site("mars")


def test_every_address_a_doc_links_to_is_one_of_a_console():
    addresses = {address: product.key for product in MAP.products.values() for address in product.own_addresses()}
    # the vendored docs' links (tests/corpus/real-docs)
    for address, key in {"ecs.console.aliyun.com": "ecs", "vpc.console.aliyun.com/eip": "eip",
                         "vpc.console.aliyun.com/nat": "nat", "slb.console.aliyun.com/slb": "slb",
                         "mongodb.console.aliyun.com": "mongodb", "kms.console.aliyun.com": "kms",
                         "actiontrail.console.aliyun.com": "actiontrail", "ram.console.aliyun.com": "ram",
                         "vpcnext.console.aliyun.com": "vpc", "ecs.console.alibabacloud.com": "ecs"}.items():
        assert addresses[address] == key, address


def test_a_users_map_adds_a_console_and_changes_one(tmp_path):
    extra = tmp_path / "consoles.yaml"
    extra.write_text("products:\n  fc:\n    console: Function Compute console\n    names: [函数计算FC]\n"
                     "    host: fc\n    region: /fc/overview/{region}\n  ecs:\n    region: /ecs/{region}\n"
                     "origins: [https://*.example.com]\n", encoding="utf-8")
    both = ConsoleMap.load(extra)
    assert both.url("函数计算FC", "china", "cn-hangzhou") == "https://fc.console.aliyun.com/fc/overview/cn-hangzhou"
    assert both.url("ECS console", "china", "cn-hangzhou") == "https://ecs.console.aliyun.com/ecs/cn-hangzhou"
    assert both.product("ECS").names == MAP.product("ECS").names  # the fields it does not give stay
    assert "https://*.example.com" in both.origins and "https://*.alicdn.com" in both.origins


@pytest.mark.parametrize("text, message", [
    ("products:\n  fc: {names: [FC], host: fc}\n", "product 'fc' needs `console`"),
    ("products:\n  fc: {console: FC console}\n", "product 'fc' needs `host`"),
    ("products:\n  fc: {console: FC console, host: fc, region: /fc}\n", "`region` must hold {region}"),
    ("products:\n  fc: {console: FC console, host: fc, colour: red}\n", "needs `console` and only"),
    ("consoles: []\n", "unknown key(s) consoles"),
    ("products: [\n", "not valid YAML"),
])
def test_a_bad_users_map_is_a_clear_error(tmp_path, text, message):
    extra = tmp_path / "bad.yaml"
    extra.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        ConsoleMap.load(extra)
    assert message in str(raised.value)
    with pytest.raises(ConfigError, match="does not exist"):
        ConsoleMap.load(tmp_path / "missing.yaml")


def test_the_launcher_links_every_console_by_every_name():
    assert link_names("ECS console", ("ECS", "Elastic Compute Service", "云服务器ECS")) == \
        ["ECS console", "Elastic Compute Service console", "云服务器ECS"]
    url = launcher_page(MAP, CHINA, "cn-shanghai")
    assert url.startswith("data:text/html;charset=utf-8;base64,")
    html = base64.b64decode(url.split(",", 1)[1]).decode()
    assert '<a href="https://ecs.console.aliyun.com/server/region/cn-shanghai">ECS console</a>' in html
    assert ">Elastic Compute Service console</a>" in html and ">云服务器ECS控制台</a>" in html
    assert '<a href="https://vpc.console.aliyun.com/nat/cn-shanghai/nats">NAT Gateway console</a>' in html


def test_the_consoles_command_lists_and_finds_consoles():
    runner = CliRunner()
    listed = runner.invoke(cli, ["aliyun", "consoles", "--site", "china"])
    assert listed.exit_code == 0, listed.output
    assert "ecs" in listed.output and "https://ecs.console.aliyun.com/server/region/cn-hangzhou" in listed.output
    found = runner.invoke(cli, ["aliyun", "consoles", "云服务器ECS控制台", "--region", "cn-beijing", "--json"])
    assert found.exit_code == 0, found.output
    [row] = json.loads(found.output)
    assert row["key"] == "ecs" and unquote(row["url"]) == "https://ecs.console.alibabacloud.com/server/region/cn-beijing"
    unknown = runner.invoke(cli, ["aliyun", "consoles", "Function Compute"])
    assert unknown.exit_code == 2
    assert "no console named 'Function Compute'" in unknown.output and "ECS console" in unknown.output
    bad = runner.invoke(cli, ["aliyun", "consoles", "--region", "Hangzhou"])
    assert bad.exit_code == 2 and "not a region id" in bad.output
