"""A create flow's variants: the security group's Quick Add, one panel that adds a rule per port.

"Add security group rules", Method 1: click **Quick Add**, set **Action** and
**Authorization Object**, select one or more ports, click **OK**. Followed in a real
Chromium by the English and the Chinese labels; the rules are read back in the list and in
the audit trail (LookupEvents): one AuthorizeSecurityGroup event per port, as the normal
Add Rule panel leaves one per rule. The last tests drive the ASGI app in process: a variant
is catalog data, so one added to another resource works without code.
"""

from __future__ import annotations

import copy
import re

import pytest
from starlette.testclient import TestClient

from docverify_sandbox import catalog
from docverify_sandbox.app import create_app
from docverify_sandbox.state import DEFAULT_ACCOUNTS, Store

ECS, TRAIL = "2014-05-26", "2020-07-06"
R = {"RegionId": "cn-hangzhou"}

#: the labels the procedure follows, as the English and the Chinese consoles show them
EN = {"security_groups": "Security Groups", "add_rules": "Add Rules", "quick_add": "Quick Add", "action": "Action",
      "ports": "Port Range", "object": "Authorization Object", "ok": "OK", "rules": "Security Group Rules",
      "created": "Security Group Rule created successfully."}
ZH = {"security_groups": "安全组", "add_rules": "配置规则", "quick_add": "快速添加", "action": "授权策略",
      "ports": "端口范围", "object": "授权对象", "ok": "确定", "rules": "安全组规则",
      "created": "安全组规则创建成功。"}


def default_group(client) -> dict:
    """The seeded security group the rules are added to."""
    groups = client.call("DescribeSecurityGroups", ECS, R)["SecurityGroups"]["SecurityGroup"]
    return next(g for g in groups if g["SecurityGroupName"] == "default-sg")


def authorize_events(client) -> list[dict]:
    """The account's AuthorizeSecurityGroup events, oldest first."""
    params = {"MaxResults": "50", "LookupAttribute.1.Key": "EventName",
              "LookupAttribute.1.Value": "AuthorizeSecurityGroup"}
    return list(reversed(client.call("LookupEvents", TRAIL, params)["Events"]))


def rules_of(client, group_id: str) -> list[dict]:
    found = client.call("DescribeSecurityGroupAttribute", ECS, {**R, "SecurityGroupId": group_id})
    return found["Permissions"]["Permission"]


def open_quick_add(page, sandbox, ui: dict[str, str]):
    """From the ECS console to the Quick Add panel of default-sg, by the doc's steps."""
    page.goto(f"{sandbox.url}/console/ecs")
    page.get_by_role("link", name=ui["security_groups"], exact=True).click()
    page.get_by_role("row").filter(has_text="default-sg").get_by_role("link", name=ui["add_rules"]).click()
    page.get_by_role("button", name=ui["quick_add"], exact=True).click()
    return page.get_by_role("dialog", name=ui["quick_add"])


def rows_with(page, ui: dict[str, str], text: str):
    return page.get_by_role("table", name=ui["rules"]).get_by_role("row").filter(has_text=text)


# ------------------------------------------------------------------ in a browser


@pytest.mark.browser
def test_quick_add_adds_one_rule_and_one_event_per_port(page, sandbox, client):
    group = default_group(client)
    before = len(rules_of(client, group["SecurityGroupId"]))
    dialog = open_quick_add(page, sandbox, EN)
    dialog.get_by_label("Action").select_option(label="Forbid")
    ports = dialog.get_by_role("group", name="Port Range")
    ports.get_by_role("checkbox", name="SSH (22)").check()
    ports.get_by_role("checkbox", name="All ICMP (IPv4)").check()
    dialog.get_by_label("Authorization Object").fill("192.168.10.0/24")
    dialog.get_by_label("Description").fill("quick add test")
    dialog.get_by_role("button", name="OK").click()

    page.get_by_role("status").filter(has_text=EN["created"]).wait_for()
    assert page.get_by_role("dialog").count() == 0
    added = rows_with(page, EN, "192.168.10.0/24")
    assert added.count() == 2
    texts = added.all_inner_texts()
    assert all("Forbid" in text and "quick add test" in text for text in texts)
    assert sum("Custom TCP" in text and "22/22" in text for text in texts) == 1
    assert sum("All ICMP (IPv4)" in text and "-1/-1" in text for text in texts) == 1

    rules = rules_of(client, group["SecurityGroupId"])
    assert len(rules) == before + 2
    ours = {(r["IpProtocol"], r["PortRange"], r["Policy"], r["Direction"]) for r in rules
            if r["SourceCidrIp"] == "192.168.10.0/24"}
    assert ours == {("tcp", "22/22", "drop", "ingress"), ("icmp", "-1/-1", "drop", "ingress")}

    events = authorize_events(client)
    assert [(e["requestParameters"]["IpProtocol"], e["requestParameters"]["PortRange"]) for e in events] == [
        ("tcp", "22/22"), ("icmp", "-1/-1")]  # the options' order, one call each
    for event in events:
        assert event["eventType"] == "ConsoleOperation" and "errorCode" not in event
        assert event["serviceName"] == "Ecs" and event["eventRW"] == "Write"
        params = event["requestParameters"]
        assert (params["SecurityGroupId"], params["SourceCidrIp"], params["Policy"]) == (
            group["SecurityGroupId"], "192.168.10.0/24", "drop")
        assert not any(name.startswith("QuickPorts") for name in params), "the panel's own field reached the API"


@pytest.mark.browser
def test_quick_add_shows_what_is_wrong_in_the_panel(page, sandbox, client):
    group = default_group(client)
    before = len(rules_of(client, group["SecurityGroupId"]))
    dialog = open_quick_add(page, sandbox, EN)
    dialog.get_by_label("Authorization Object").fill("0.0.0.0/0")
    dialog.get_by_role("button", name="OK").click()  # no port selected

    dialog = page.get_by_role("dialog", name="Quick Add")
    ports = dialog.get_by_role("group", name="Port Range")
    assert ports.get_attribute("aria-invalid") == "true"
    alert = dialog.get_by_role("alert")
    assert alert.count() == 1
    assert re.fullmatch(r'The input parameter "QuickPorts" that is mandatory for processing this request is not '
                        r"supplied\.", alert.inner_text().strip())
    assert dialog.get_by_label("Authorization Object").input_value() == "0.0.0.0/0"  # what was entered stays

    ports.get_by_role("checkbox", name="HTTPS (443)").check()
    dialog.get_by_label("Authorization Object").fill("10.0.0.0/99")
    dialog.get_by_role("button", name="OK").click()
    dialog = page.get_by_role("dialog", name="Quick Add")
    assert "not a valid CIDR block" in dialog.get_by_role("alert").inner_text()
    assert dialog.get_by_label("Authorization Object").get_attribute("aria-invalid") == "true"
    assert dialog.get_by_role("checkbox", name="HTTPS (443)").is_checked()  # the choice survives the error
    assert len(rules_of(client, group["SecurityGroupId"])) == before and authorize_events(client) == []

    dialog.get_by_label("Authorization Object").fill("10.0.0.0/8")
    dialog.get_by_role("button", name="OK").click()
    page.get_by_role("status").filter(has_text=EN["created"]).wait_for()
    assert rows_with(page, EN, "443/443").count() == 1
    assert [e["requestParameters"]["PortRange"] for e in authorize_events(client)] == ["443/443"]


@pytest.mark.browser
def test_quick_add_by_the_chinese_labels(browser, sandbox, account, client):
    from sandbox_helpers import chinese_context

    context = chinese_context(browser, sandbox, account)  # Accept-Language: zh-CN
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        dialog = open_quick_add(page, sandbox, ZH)
        assert page.locator("html").get_attribute("lang") == "zh-CN"
        dialog.get_by_label(ZH["object"]).fill("172.16.0.0/12")
        dialog.get_by_role("button", name=ZH["ok"]).click()  # no port selected
        dialog = page.get_by_role("dialog", name=ZH["quick_add"])
        assert dialog.get_by_role("alert").inner_text().strip() == "端口范围不能为空。"

        dialog.get_by_label(ZH["action"]).select_option(label="拒绝")
        ports = dialog.get_by_role("group", name=ZH["ports"])
        ports.get_by_role("checkbox", name="HTTP (80)").check()
        ports.get_by_role("checkbox", name="全部ICMP（IPv4）").check()
        dialog.get_by_role("button", name=ZH["ok"]).click()
        page.get_by_role("status").filter(has_text=ZH["created"]).wait_for()
        added = rows_with(page, ZH, "172.16.0.0/12")
        assert added.count() == 2
        texts = added.all_inner_texts()
        assert all("拒绝" in text for text in texts)
        assert sum("自定义TCP" in text and "80/80" in text for text in texts) == 1
        assert sum("全部ICMP（IPv4）" in text and "-1/-1" in text for text in texts) == 1
    finally:
        context.close()
    events = authorize_events(client)  # the audit trail is language-neutral
    assert [(e["requestParameters"]["IpProtocol"], e["requestParameters"]["PortRange"],
             e["requestParameters"]["Policy"]) for e in events] == [("tcp", "80/80", "drop"), ("icmp", "-1/-1", "drop")]


# ------------------------------------------------------------------ in process


@pytest.fixture()
def console_of():
    """A signed-in TestClient of a (possibly edited) catalog; stores closed afterwards."""
    stores = []

    def start(cat: catalog.Catalog) -> TestClient:
        client = TestClient(create_app(cat, Store(None, latency_ms=0)))
        stores.append(client.app.state.sandbox.store)
        acct = DEFAULT_ACCOUNTS[0]
        client.post("/signin", data={"user_name": f"{acct.admin_user}@{acct.alias}.onaliyun.com",
                                     "password": acct.admin_password})
        return client

    yield start
    for store in stores:
        store.close()


def test_the_2026_release_keeps_quick_add_next_to_the_renamed_add_button(console_of):
    console = console_of(catalog.load("2026-03"))
    group = re.search(r'data-id="(sg-[^"]+)"', console.get("/console/ecs/security_group").text).group(1)
    page = console.get(f"/console/ecs/security_group/{group}").text
    assert ">Add Security Group Rule</button>" in page and ">Quick Add</button>" in page
    assert ">Add Rule</button>" not in page
    panel = console.get(f"/console/ecs/security_group/{group}",
                        params={"dialog": "create_child", "child": "security_group_rule", "variant": "quick"}).text
    assert 'aria-label="Quick Add"' in panel and 'name="_variant" value="quick"' in panel


def test_an_unknown_variant_opens_nothing_and_posts_nowhere(console_of):
    console = console_of(catalog.load("2021-06"))
    group = re.search(r'data-id="(sg-[^"]+)"', console.get("/console/ecs/security_group").text).group(1)
    page = console.get(f"/console/ecs/security_group/{group}",
                       params={"dialog": "create_child", "child": "security_group_rule", "variant": "bulk"})
    assert page.status_code == 200 and 'role="dialog"' not in page.text
    posted = console.post("/console/ecs/security_group_rule/create",
                          data={"_variant": "bulk", "SecurityGroupId": group, "SourceCidrIp": "0.0.0.0/0"})
    assert posted.status_code == 404


def test_a_variant_is_catalog_data_for_any_resource(console_of):
    """A variant added to the VPC list by data alone: its button, its panel, one call per
    value checked, and its errors in its own panel."""
    edited = copy.deepcopy(catalog.load("2021-06"))
    vpc = edited.products["vpc"]["resources"]["vpc"]
    vpc["extra_fields"] = {"Blocks": {"label": "Common CIDR Blocks", "type": "checkboxes", "required": True,
                                      "options": {"10.0.0.0/8": "10.0.0.0/8", "172.16.0.0/12": "172.16.0.0/12"}}}
    vpc["create"]["variants"] = {"common": {"button": "Create from Common Blocks", "title": "Common Blocks",
                                            "fields": ["Blocks", "Description"], "submit": "Create",
                                            "each": {"field": "Blocks", "params": ["CidrBlock"]}}}
    console = console_of(edited)
    listing = console.get("/console/vpc/vpc").text
    assert ">Create from Common Blocks</button>" in listing and 'name="variant" value="common"' in listing
    panel = console.get("/console/vpc/vpc", params={"dialog": "create", "variant": "common"}).text
    assert 'aria-label="Common Blocks"' in panel and ">Create</button>" in panel and "Common CIDR Blocks" in panel

    refused = console.post("/console/vpc/vpc/create", data={"_variant": "common", "Description": "x"})
    assert refused.status_code == 400 and 'aria-label="Common Blocks"' in refused.text  # the panel, not the page
    assert 'id="f-Blocks-err"' in refused.text and 'id="f-Description-err"' in refused.text
    assert ">x</textarea>" in refused.text

    made = console.post("/console/vpc/vpc/create", data={"_variant": "common", "Blocks.1": "10.0.0.0/8",
                                                        "Blocks.2": "172.16.0.0/12", "Description": "by variant"})
    assert made.status_code == 200 and "VPC created successfully." in made.text
    store = console.app.state.sandbox.store
    account = DEFAULT_ACCOUNTS[0].account_id
    made_by_variant = sorted(r["attrs"]["CidrBlock"] for r in store.find(account, "vpc", "vpc")
                             if r["attrs"].get("Description") == "by variant")
    assert made_by_variant == ["10.0.0.0/8", "172.16.0.0/12"]


@pytest.mark.parametrize("release", [r.name for r in catalog.releases()])
def test_every_variant_names_an_operation_and_fields_that_exist(release):
    """A variant's operation is one of its product's; its fields are the resource's; the
    values of its ``each`` field split into exactly the parameters it names."""
    cat = catalog.load(release)
    seen = 0
    for pkey, product in cat.products.items():
        for rkey, res in product["resources"].items():
            create = res.get("create") or {}
            for key, variant in (create.get("variants") or {}).items():
                seen += 1
                where = (pkey, rkey, key)
                assert cat.op_in_product(pkey, variant.get("op", create["op"])), where
                assert variant["button"] and variant["title"] and variant["fields"], where
                for name in variant["fields"]:
                    assert cat.field_spec(pkey, rkey, name) is not None, (*where, name)
                each = variant.get("each")
                if each:
                    spec = cat.field_spec(pkey, rkey, each["field"])
                    assert each["field"] in variant["fields"] and spec["type"] == "checkboxes", where
                    for value in spec["options"]:
                        assert len(str(value).split(":", len(each["params"]) - 1)) == len(each["params"]), (*where, value)
    assert seen >= 1


def test_an_outbound_rule_from_the_add_rule_panel_is_the_egress_call(console_of):
    console = console_of(catalog.load("2021-06"))
    group = re.search(r'data-id="(sg-[^"]+)"', console.get("/console/ecs/security_group").text).group(1)
    for direction in ("egress", "ingress"):
        made = console.post("/console/ecs/security_group_rule/create", data={
            "SecurityGroupId": group, "Direction": direction, "Policy": "accept", "Priority": "1",
            "IpProtocol": "tcp", "PortRange": "8080/8080", "SourceCidrIp": f"10.{len(direction)}.0.0/16"})
        assert made.status_code == 200, made.text
    store = console.app.state.sandbox.store
    account = DEFAULT_ACCOUNTS[0].account_id
    rules = {r["attrs"]["SourceCidrIp"]: r["attrs"]["Direction"] for r in store.find(account, "ecs", "security_group_rule")
             if r["attrs"].get("PortRange") == "8080/8080"}
    assert rules == {"10.6.0.0/16": "egress", "10.7.0.0/16": "ingress"}
    from docverify_sandbox.audit import lookup_events

    events = [e["eventName"] for e in lookup_events(store, account, {"MaxResults": "50"})["Events"]]
    assert "AuthorizeSecurityGroupEgress" in events and "AuthorizeSecurityGroup" in events
