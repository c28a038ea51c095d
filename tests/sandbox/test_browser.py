"""Playwright through the console pages: log on, create, modify, delete — by the docs' labels."""

from __future__ import annotations

import re

import pytest

from docverify_sandbox.client import SandboxClient

expect = pytest.importorskip("playwright.sync_api", reason="the browser extra: pip install -e '.[browser]'").expect

pytestmark = pytest.mark.browser


def nav(page, sandbox, product):
    page.goto(f"{sandbox.url}/console/{product}")


def open_menu(row, *path):
    row.get_by_role("button", name=path[0], exact=True).click()
    for item in path[1:]:
        row.get_by_role("menuitem", name=item, exact=True).click()


def test_ecs_instance_wizard_and_lifecycle(page, sandbox):
    nav(page, sandbox, "ecs")
    page.get_by_role("navigation", name="Elastic Compute Service navigation").get_by_role("link", name="Instances").click()
    page.get_by_role("button", name="Create Instance").click()
    page.get_by_role("radio", name="Pay-As-You-Go").check()
    page.get_by_role("button", name="Next: Networking").click()
    page.get_by_label("Security Group").select_option(index=1)
    page.get_by_role("button", name="Next: System Configurations").click()
    page.get_by_role("radio", name="Password", exact=True).check()
    page.get_by_label("Logon Password").fill("Sandbox-Passw0rd")
    page.get_by_label("Instance Name").fill("docs-web-01")
    page.get_by_label("Prevent users from releasing the instance inadvertently by using the console or API").check()
    page.get_by_role("button", name="Next: Grouping").click()
    page.get_by_role("button", name="Next: Preview").click()
    page.get_by_role("checkbox", name="ECS Terms of Service and Product Terms of Service").check()
    page.get_by_role("button", name="Create Instance").click()
    page.get_by_role("status").filter(has_text="created").wait_for()
    row = page.get_by_role("row").filter(has_text="docs-web-01")
    assert "Running" in row.inner_text()
    open_menu(row, "More", "Instance Status", "Stop")
    dialog = page.get_by_role("dialog", name="Stop Instance")
    dialog.get_by_role("radio", name="Stop", exact=True).check()
    dialog.get_by_role("button", name="OK").click()
    row = page.get_by_role("row").filter(has_text="docs-web-01")
    assert "Stopped" in row.inner_text()
    # release protection blocks release
    open_menu(row, "More", "Instance Status", "Release")
    page.get_by_role("dialog", name="Release").get_by_role("radio", name="Release Now").check()
    page.get_by_role("dialog", name="Release").get_by_role("button", name="Next").click()
    page.get_by_role("dialog", name="Release").get_by_role("button", name="OK").click()
    assert "InvalidOperation.DeletionProtection" in page.get_by_role("dialog").get_by_role("alert").inner_text()
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    row = page.get_by_role("row").filter(has_text="docs-web-01")
    open_menu(row, "More", "Instance Settings", "Change Release Protection Setting")
    dialog = page.get_by_role("dialog", name="Change Release Protection Setting")
    dialog.get_by_role("switch", name="Release Protection").uncheck()
    dialog.get_by_role("button", name="OK").click()
    row = page.get_by_role("row").filter(has_text="docs-web-01")
    open_menu(row, "More", "Instance Status", "Release")
    page.get_by_role("dialog", name="Release").get_by_role("button", name="Next").click()
    page.get_by_role("dialog", name="Release").get_by_role("button", name="OK").click()
    page.get_by_role("status").filter(has_text="succeeded").wait_for()
    assert page.get_by_role("row").filter(has_text="docs-web-01").count() == 0


def test_ecs_wizard_shows_validation_errors(page, sandbox):
    page.goto(f"{sandbox.url}/console/ecs/instance/create")
    page.get_by_role("button", name="Next: Networking").click()
    page.get_by_role("button", name="Next: System Configurations").click()
    alert = page.get_by_role("alert")
    assert "SecurityGroupId" in alert.inner_text()
    assert page.get_by_label("Security Group").get_attribute("aria-invalid") == "true"


def test_security_group_and_rules(page, sandbox):
    nav(page, sandbox, "ecs")
    page.get_by_text("Network & Security").click()  # collapse/expand group, as the docs' menu path
    page.get_by_text("Network & Security").click()
    page.get_by_role("link", name="Security Groups").click()
    page.get_by_role("button", name="Create Security Group").click()
    page.get_by_label("Security Group Name").fill("web-sg")
    page.get_by_label("Network").select_option(index=1)
    page.get_by_role("button", name="OK").click()
    page.get_by_role("row").filter(has_text="web-sg").get_by_role("link", name="Add Rules").click()
    page.get_by_role("button", name="Add Rule").click()
    dialog = page.get_by_role("dialog", name="Add Security Group Rule")
    dialog.get_by_label("Protocol Type").select_option(label="Custom TCP")
    dialog.get_by_label("Port Range").fill("80/80")
    dialog.get_by_label("Authorization Object").fill("0.0.0.0/0")
    dialog.get_by_role("button", name="Save").click()
    rules = page.get_by_role("table", name="Security Group Rules")
    assert "80/80" in rules.inner_text()
    rules.get_by_role("row").filter(has_text="80/80").get_by_role("button", name="Delete").click()
    page.get_by_role("dialog", name="Delete Security Group Rule").get_by_role("button", name="OK").click()
    assert "80/80" not in page.get_by_role("table", name="Security Group Rules").inner_text()


def test_vpc_create_edit_delete(page, sandbox):
    nav(page, sandbox, "vpc")
    page.get_by_label("Region").select_option(label="China (Hohhot)")
    page.wait_for_url(re.compile("/console/vpc/vpc"))
    page.get_by_role("button", name="Create VPC").click()
    page.get_by_label("Name", exact=True).fill("docs-vpc")
    page.get_by_label("IPv4 CIDR Block").fill("10.0.0.0/8")
    page.get_by_role("button", name="OK").click()
    row = page.get_by_role("row").filter(has_text="docs-vpc")
    row.get_by_role("button", name="Edit").click()
    dialog = page.get_by_role("dialog", name="Edit VPC")
    dialog.get_by_label("Description").fill("edited by test")
    dialog.get_by_role("button", name="OK").click()
    assert "edited by test" in page.get_by_role("row").filter(has_text="docs-vpc").inner_text()
    page.get_by_role("row").filter(has_text="docs-vpc").get_by_role("button", name="Delete").click()
    page.get_by_role("dialog", name="Delete VPC").get_by_role("button", name="OK").click()
    expect(page.get_by_role("status").filter(has_text="succeeded")).to_be_visible()  # the page after it
    assert page.get_by_role("row").filter(has_text="docs-vpc").count() == 0
    page.get_by_label("Region").select_option(label="China (Hangzhou)")


def test_vpc_create_rejects_bad_cidr_in_page(page, sandbox):
    page.goto(f"{sandbox.url}/console/vpc/vpc/create")
    page.get_by_label("IPv4 CIDR Block").fill("10.0.0.0/99")
    page.get_by_role("button", name="OK").click()
    assert "not a valid CIDR block" in page.get_by_role("alert").inner_text()


def test_oss_bucket_settings(page, sandbox):
    nav(page, sandbox, "oss")
    page.get_by_role("link", name="Buckets").click()
    page.get_by_role("button", name="Create Bucket").click()
    dialog = page.get_by_role("dialog", name="Create Bucket")
    dialog.get_by_label("Bucket Name").fill("docverify-test-bucket")
    dialog.get_by_role("radio", name="Public Read", exact=True).check()
    dialog.get_by_role("button", name="OK").click()
    page.get_by_role("link", name="docverify-test-bucket").click()
    page.get_by_role("tab", name="Basic Settings").click()
    page.get_by_role("region", name="Static Pages").get_by_role("button", name="Configure").click()
    dialog = page.get_by_role("dialog", name="Static Pages")
    dialog.get_by_label("Default Homepage").fill("index.html")
    dialog.get_by_role("radio", name="Enable").check()
    dialog.get_by_role("button", name="Save").click()
    assert "index.html" in page.get_by_role("region", name="Static Pages").inner_text()
    page.get_by_role("region", name="Bucket Tag").get_by_role("button", name="Configure").click()
    page.get_by_role("dialog", name="Bucket Tag").get_by_label("Bucket Tag").fill("owner=docs")
    page.get_by_role("dialog", name="Bucket Tag").get_by_role("button", name="Save").click()
    page.get_by_role("button", name="Delete Bucket").click()
    page.get_by_role("dialog", name="Delete Bucket").get_by_role("button", name="OK").click()
    expect(page.get_by_role("status").filter(has_text="succeeded")).to_be_visible()  # the page after it
    assert page.get_by_role("link", name="docverify-test-bucket").count() == 0


def test_ram_user_accesskey_and_group(page, sandbox):
    nav(page, sandbox, "ram")
    page.get_by_role("link", name="Users").click()
    page.get_by_role("button", name="Create User").click()
    page.get_by_label("Logon Name").fill("writer")
    page.get_by_label("Display Name").fill("Tech Writer")
    page.get_by_role("checkbox", name="Console Access").check()
    page.get_by_label("Password", exact=True).fill("Writer-Passw0rd")
    page.get_by_role("button", name="OK").click()
    page.get_by_role("link", name="writer", exact=True).click()
    page.get_by_role("button", name="Create AccessKey").click()
    dialog = page.get_by_role("dialog", name="Create AccessKey")
    assert "AccessKeySecret" in dialog.inner_text()
    dialog.get_by_role("button", name="Close").click()
    expect(page.get_by_role("table", name="User AccessKeys").get_by_role("row")).to_have_count(2)
    page.get_by_role("link", name="Groups").click()
    page.get_by_role("button", name="Create Group").click()
    dialog = page.get_by_role("dialog", name="Create Group")
    dialog.get_by_label("Group Name").fill("writers")
    dialog.get_by_label("Note").fill("docs team")
    dialog.get_by_role("button", name="OK").click()
    row = page.get_by_role("row").filter(has_text="docs team")
    row.get_by_role("button", name="Delete").click()
    page.get_by_role("dialog", name="Delete Group").get_by_role("button", name="OK").click()
    expect(page.get_by_role("status").filter(has_text="succeeded")).to_be_visible()  # the page after it
    assert page.get_by_role("row").filter(has_text="docs team").count() == 0


def test_eip_create_bind_release(page, sandbox):
    nav(page, sandbox, "eip")
    page.get_by_role("button", name="Create EIP").click()
    page.get_by_label("Name", exact=True).fill("docs-eip")
    page.get_by_role("button", name="Buy Now").click()
    row = page.get_by_role("row").filter(has_text="docs-eip")
    row.get_by_role("button", name="Bind Resource").click()
    dialog = page.get_by_role("dialog", name="Bind Elastic IP Address to Resources")
    dialog.get_by_role("radio", name="ECS Instance").check()
    dialog.get_by_label("Select an instance to bind").select_option(index=1)
    dialog.get_by_role("button", name="OK").click()
    row = page.get_by_role("row").filter(has_text="docs-eip")
    assert "In Use" in row.inner_text()
    row.get_by_role("button", name="Unbind").click()
    page.get_by_role("dialog", name="Unbind EIP").get_by_role("button", name="OK").click()
    open_menu(page.get_by_role("row").filter(has_text="docs-eip"), "More", "Release")
    page.get_by_role("dialog", name="Release EIP").get_by_role("button", name="OK").click()
    expect(page.get_by_role("status").filter(has_text="succeeded")).to_be_visible()  # the page after it
    assert page.get_by_role("row").filter(has_text="docs-eip").count() == 0


def test_actiontrail_event_query_shows_console_operations(page, sandbox):
    nav(page, sandbox, "vpc")
    page.get_by_role("button", name="Create VPC").click()
    page.get_by_label("IPv4 CIDR Block").fill("192.168.0.0/16")
    page.get_by_role("button", name="OK").click()
    nav(page, sandbox, "actiontrail")
    page.get_by_role("link", name="Event Detail Query").click()
    page.get_by_label("Lookup Attribute").select_option(label="Service Name")
    page.get_by_label("Value").fill("Vpc")
    page.get_by_role("button", name="Search").click()
    table = page.get_by_role("table", name="Events")
    assert "CreateVpc" in table.inner_text()
    table.locator("summary", has_text="Event Detail").first.click()
    assert '"eventType": "ConsoleOperation"' in table.inner_text()


def test_signin_failure_and_signin_event(browser, sandbox, account, trail_client):
    ctx = browser.new_context()
    p = ctx.new_page()
    p.goto(sandbox.url + "/console")
    p.get_by_label("User Name").fill(f"{account.admin_user}@{account.alias}.onaliyun.com")
    p.get_by_label("Password").fill("wrong")
    p.get_by_role("button", name="Log On").click()
    assert "incorrect" in p.get_by_role("alert").inner_text()
    ctx.close()
    from alibabacloud_actiontrail20200706 import models

    body = trail_client.lookup_events(models.LookupEventsRequest(lookup_attribute=[
        models.LookupEventsRequestLookupAttribute(key="EventName", value="ConsoleSignin")])).body
    assert any(e.get("errorCode") == "InvalidPassword" for e in body.events)


def test_eight_concurrent_contexts(browser, chromium, sandbox, account):
    """8 browser contexts create VPCs at once; every one exists afterwards, ids unique."""
    import asyncio

    from playwright.async_api import async_playwright

    from docverify_playwright.browser import CHROMIUM_ARGS

    root = SandboxClient(sandbox.url, account.access_key_id, account.access_key_secret)
    root.call("ResetAccount", "sandbox")

    async def one(b, n):
        ctx = await b.new_context()
        p = await ctx.new_page()
        await p.goto(sandbox.url + "/signin")
        await p.get_by_label("User Name").fill(f"{account.admin_user}@{account.alias}.onaliyun.com")
        await p.get_by_label("Password").fill(account.admin_password)
        await p.get_by_role("button", name="Log On").click()
        await p.wait_for_url("**/console")
        for k in range(2):
            await p.goto(sandbox.url + "/console/vpc/vpc/create")
            await p.get_by_label("Name", exact=True).fill(f"conc-{n}-{k}")
            await p.get_by_label("IPv4 CIDR Block").fill("10.0.0.0/8")
            await p.get_by_role("button", name="OK").click()
            await p.get_by_role("status").wait_for()
        await ctx.close()

    async def main():
        async with async_playwright() as pw:
            b = await pw.chromium.launch(executable_path=chromium.path, args=list(CHROMIUM_ARGS))
            await asyncio.gather(*(one(b, n) for n in range(8)))
            await b.close()

    import threading

    errors = []
    # the session's sync Playwright owns this thread's event loop: run the async one in a thread
    worker = threading.Thread(target=lambda: errors.extend(_capture(lambda: asyncio.run(main()))))
    worker.start()
    worker.join(timeout=120)
    assert not errors, errors
    vpcs = root.call("DescribeVpcs", "2016-04-28", {"RegionId": "cn-hangzhou", "PageSize": "100"})["Vpcs"]["Vpc"]
    names = sorted(v["VpcName"] for v in vpcs if v["VpcName"].startswith("conc-"))
    assert names == sorted(f"conc-{n}-{k}" for n in range(8) for k in range(2))
    assert len({v["VpcId"] for v in vpcs}) == len(vpcs)


def _capture(fn):
    try:
        fn()
    except Exception as exc:  # reported by the test
        return [exc]
    return []


def test_release_2026_renders_the_changes(browser, account):
    """Docs written for 2021 meet the 2026 console: renamed button, split wizard step, moved menu."""
    from sandbox_helpers import login

    from docverify_sandbox.console import SandboxConsole

    with SandboxConsole(SandboxConsole.Options(latency_ms=0, release="2026-03")).start() as ep:
        ctx = browser.new_context()
        p = ctx.new_page()
        p.set_default_timeout(10_000)
        login(p, ep.url, f"{account.admin_user}@{account.alias}.onaliyun.com", account.admin_password)
        p.goto(ep.url + "/console/ecs/instance")
        assert p.get_by_role("button", name="Create Instance", exact=True).count() == 0
        p.get_by_role("button", name="Create ECS Instance").click()
        expect(p.get_by_role("button", name="Next: Image and Storage")).to_be_visible()  # the wizard, loaded
        assert p.get_by_role("button", name="Next: Networking").count() == 0
        nav = p.get_by_role("navigation", name="Elastic Compute Service navigation")
        group = nav.locator("details").filter(has=p.get_by_role("link", name="Security Groups"))
        assert group.locator("summary").inner_text() == "Network"
        ctx.close()


def row_of(page, text):
    return page.get_by_role("row").filter(has_text=text)


def confirm(page, title, button="OK"):
    page.get_by_role("dialog", name=title).get_by_role("button", name=button).click()


def test_nat_gateway_create_edit_delete(page, sandbox):
    nav(page, sandbox, "nat")
    page.get_by_role("button", name="Create NAT Gateway").click()
    page.get_by_label("VPC ID").select_option(index=1)
    page.get_by_label("VSwitch ID").select_option(index=1)
    page.get_by_label("Instance Name").fill("docs-nat")
    page.get_by_role("button", name="Buy Now").click()
    page.get_by_role("button", name="Activate Now").click()
    assert "Available" in row_of(page, "docs-nat").inner_text()
    row_of(page, "docs-nat").get_by_role("button", name="Edit").click()
    page.get_by_role("dialog", name="Edit").get_by_label("Description").fill("egress for docs")
    confirm(page, "Edit")
    open_menu(row_of(page, "docs-nat"), "More", "Delete")
    confirm(page, "Delete Gateway")
    assert row_of(page, "docs-nat").count() == 0


def test_slb_instance_listener_and_release(page, sandbox):
    nav(page, sandbox, "slb")
    page.get_by_role("button", name="Create Instance").click()
    page.get_by_label("Instance name").fill("docs-slb")
    page.get_by_role("button", name="Buy Now").click()
    assert "Active" in row_of(page, "docs-slb").inner_text()
    # the row's Configure Listener opens the listener wizard for that instance, as the 2021 console did
    row_of(page, "docs-slb").get_by_role("link", name="Configure Listener").click()
    page.get_by_label("Listening Port").fill("80")
    for _ in range(3):
        page.get_by_role("button", name="Next", exact=True).click()
    page.get_by_role("button", name="Submit").click()
    assert "Running" in page.get_by_role("table", name="Listeners").inner_text()
    nav(page, sandbox, "slb")
    row_of(page, "docs-slb").get_by_role("button", name="Edit Name").click()
    page.get_by_role("dialog", name="Edit Name").get_by_label("Instance name").fill("docs-slb-2")
    confirm(page, "Edit Name")
    open_menu(row_of(page, "docs-slb-2"), "More", "Release")
    confirm(page, "Release")
    assert row_of(page, "docs-slb-2").count() == 0


def test_alb_instance_listener_and_delete(page, sandbox):
    nav(page, sandbox, "alb")
    page.get_by_role("button", name="Create ALB Instance").click()
    page.get_by_label("VPC").select_option(index=1)
    page.get_by_role("radio", name="Standard").check()
    page.get_by_label("Instance Name").fill("docs-alb")
    page.get_by_role("button", name="Buy Now").click()
    page.get_by_role("button", name="Activate Now").click()
    assert "Active" in row_of(page, "docs-alb").inner_text()
    row_of(page, "docs-alb").get_by_role("link", name="Create Listener").click()  # the wizard, for that instance
    page.get_by_label("Listener Port").fill("443")
    page.get_by_role("radio", name="HTTPS").check()
    page.get_by_role("button", name="Next", exact=True).click()
    page.get_by_role("button", name="Next", exact=True).click()
    page.get_by_role("button", name="Submit").click()
    listeners = page.get_by_role("table", name="Listeners")
    assert "443" in listeners.inner_text() and "Running" in listeners.inner_text()
    listeners.get_by_role("row").filter(has_text="443").get_by_role("button", name="Stop").click()
    confirm(page, "Stop Listener")
    assert "Stopped" in page.get_by_role("table", name="Listeners").inner_text()
    nav(page, sandbox, "alb")
    row_of(page, "docs-alb").get_by_role("button", name="Edit Name").click()
    page.get_by_role("dialog", name="Edit Name").get_by_label("Instance Name").fill("docs-alb-2")
    confirm(page, "Edit Name")
    open_menu(row_of(page, "docs-alb-2"), "More", "Delete")
    confirm(page, "Delete Instance")
    assert row_of(page, "docs-alb-2").count() == 0


@pytest.mark.parametrize(("product", "name", "order_ok", "edit_name", "release"), [
    pytest.param("rds", "docs-rds", None, ("More", "Edit Name"), ("More", "Release Instance"), id="rds"),
    pytest.param("mongodb", "docs-mongo", "Create Instance", ("Edit Name",), ("More", "Release"), id="mongodb"),
])
def test_database_instance_create_rename_release(page, sandbox, product, name, order_ok, edit_name, release):
    """The same flow in each database console; they differ (as their catalogs say) in an
    order page to confirm and where the row's Edit Name and Release sit."""
    nav(page, sandbox, product)
    page.get_by_role("button", name="Create Instance").click()
    page.get_by_label("Instance Name").fill(name)
    page.get_by_role("button", name="Buy Now").click()
    if order_ok:
        page.get_by_role("button", name=order_ok).click()
    assert "Running" in row_of(page, name).inner_text()
    open_menu(row_of(page, name), *edit_name)
    page.get_by_role("dialog", name="Edit Name").get_by_label("Instance Name").fill(f"{name}-2")
    confirm(page, "Edit Name")
    open_menu(row_of(page, f"{name}-2"), *release)
    confirm(page, "Release Instance")
    assert row_of(page, f"{name}-2").count() == 0


def test_actiontrail_trail_create_enable_modify_delete(page, sandbox):
    nav(page, sandbox, "actiontrail")
    page.get_by_role("link", name="Trails").click()
    page.get_by_role("button", name="Create Trail").click()
    page.get_by_label("Trail Name").fill("docs-trail")
    page.get_by_role("button", name="Submit").click()
    row_of(page, "docs-trail").get_by_role("button", name="Enable Logging").click()
    confirm(page, "Enable Logging")
    assert "Enabled" in row_of(page, "docs-trail").inner_text()
    row_of(page, "docs-trail").get_by_role("button", name="Modify").click()
    page.get_by_role("dialog", name="Modify Trail").get_by_role("radio", name="Write").check()
    confirm(page, "Modify Trail")
    assert "Write" in row_of(page, "docs-trail").inner_text()
    row_of(page, "docs-trail").get_by_role("button", name="Delete").click()
    confirm(page, "Delete Trail")
    assert row_of(page, "docs-trail").count() == 0


def test_kms_key_create_disable_schedule_deletion(page, sandbox):
    nav(page, sandbox, "kms")
    page.get_by_role("button", name="Create Key").click()
    dialog = page.get_by_role("dialog", name="Create Key")
    dialog.get_by_label("Key Type").select_option(label="Aliyun_SM4")
    dialog.get_by_label("Description").fill("docs-key")
    dialog.get_by_role("button", name="OK").click()
    assert "Enabled" in row_of(page, "docs-key").inner_text()
    row_of(page, "docs-key").get_by_role("button", name="Edit Description").click()
    page.get_by_role("dialog", name="Edit Description").get_by_label("Description").fill("docs-key-2")
    confirm(page, "Edit Description")
    open_menu(row_of(page, "docs-key-2"), "More", "Disable")
    confirm(page, "Disable Key")
    assert "Disabled" in row_of(page, "docs-key-2").inner_text()
    open_menu(row_of(page, "docs-key-2"), "More", "Schedule Key Deletion")
    page.get_by_role("dialog", name="Schedule Key Deletion").get_by_label("Pending Period (Days)").fill("7")
    confirm(page, "Schedule Key Deletion")
    assert "Pending Deletion" in row_of(page, "docs-key-2").inner_text()


def test_nat_snat_and_dnat_entries(page, sandbox, account):
    api = SandboxClient(sandbox.url, account.admin_access_key_id, account.admin_access_key_secret)
    vsw = api.call("DescribeVSwitches", "2016-04-28", {"RegionId": "cn-hangzhou"})["VSwitches"]["VSwitch"][0]
    api.call("CreateNatGateway", "2016-04-28", {"RegionId": "cn-hangzhou", "VpcId": vsw["VpcId"],
                                                "VSwitchId": vsw["VSwitchId"], "Name": "entries-nat"})
    nav(page, sandbox, "nat")
    row_of(page, "entries-nat").get_by_role("link", name="Manage").click()
    page.get_by_role("button", name="Create SNAT Entry").click()
    dialog = page.get_by_role("dialog", name="Create SNAT Entry")
    dialog.get_by_label("Select vSwitch").select_option(index=1)
    dialog.get_by_label("Select Public IP Address").fill("47.96.1.10")
    dialog.get_by_label("Entry Name").fill("snat-web")
    dialog.get_by_role("button", name="OK").click()
    assert "47.96.1.10" in page.get_by_role("table", name="SNAT Entries").inner_text()
    page.get_by_role("button", name="Create DNAT Entry").click()
    dialog = page.get_by_role("dialog", name="Create DNAT Entry")
    dialog.get_by_label("Select Public IP Address").fill("47.96.1.10")
    dialog.get_by_label("Select Private IP Address").fill("192.168.1.5")
    dialog.get_by_label("Public Port").fill("8080")
    dialog.get_by_label("Private Port").fill("80")
    dialog.get_by_label("Entry Name").fill("dnat-web")
    dialog.get_by_role("button", name="OK").click()
    dnat = page.get_by_role("table", name="DNAT Entries")
    dnat.get_by_role("row").filter(has_text="dnat-web").get_by_role("button", name="Edit").click()
    page.get_by_role("dialog", name="Edit DNAT Entry").get_by_label("Private Port").fill("8000")
    confirm(page, "Edit DNAT Entry")
    assert "8000" in page.get_by_role("table", name="DNAT Entries").inner_text()
    page.get_by_role("table", name="DNAT Entries").get_by_role("row").filter(has_text="dnat-web") \
        .get_by_role("button", name="Delete").click()
    confirm(page, "Delete DNAT Entry")
    page.get_by_role("table", name="SNAT Entries").get_by_role("row").filter(has_text="snat-web") \
        .get_by_role("button", name="Delete").click()
    confirm(page, "Delete SNAT Entry")
    assert "dnat-web" not in page.get_by_role("table", name="DNAT Entries").inner_text()
    assert "snat-web" not in page.get_by_role("table", name="SNAT Entries").inner_text()
