"""The console in Chinese: the locale of a request, the zh catalog, pages rendered in zh.

The catalog checks need no server; the page checks use the ASGI app in process
(Starlette's TestClient), the last ones a real Chromium in a zh-CN context.
"""

from __future__ import annotations

import copy
import re
from urllib.parse import urlencode

import pytest
from starlette.testclient import TestClient

from docverify_sandbox import catalog, i18n
from docverify_sandbox.app import create_app, templates
from docverify_sandbox.state import DEFAULT_ACCOUNTS, Store

#: the products of the Chinese AlibabaCloudDocs (oss, slb/ALB, ecs, ram)
ZH_DOC_PRODUCTS = ("oss", "ecs", "vpc", "slb", "alb", "ram")


def releases() -> list[catalog.Catalog]:
    return [catalog.load(release.name) for release in catalog.releases()]


def english_ui() -> tuple[dict[str, set[str]], set[str]]:
    """Per product, every string its pages show in some release; and the chrome's."""
    per_product: dict[str, set[str]] = {}
    for cat in releases():
        for key in cat.products:
            per_product.setdefault(key, set()).update(i18n.product_strings(cat, key))
    return per_product, i18n.chrome_strings(templates())


def english_scopes(kind: str) -> dict[tuple[str, str], set[str]]:
    """(product, field or wizard step) -> the strings that scope shows, in some release."""
    out: dict[tuple[str, str], set[str]] = {}
    for cat in releases():
        for key, product in cat.products.items():
            if kind == "fields":
                for name, strings in i18n.field_strings(product).items():
                    out.setdefault((key, name), set()).update(strings)
                continue
            for res in product.get("resources", {}).values():
                for step_key, step in ((res.get("create") or {}).get("steps") or {}).items():
                    out.setdefault((key, step_key), set()).update((*step.get("buttons", ()), *step.get("links", ())))
    return out


# ------------------------------------------------------------------ the locale


@pytest.mark.parametrize(("cookie", "header", "locale"), [
    (None, None, "en"),
    (None, "zh-CN", "zh"),
    (None, "zh-CN,zh;q=0.9,en;q=0.8", "zh"),
    (None, "zh-TW", "zh"),
    (None, "en-US,en;q=0.9,zh-CN;q=0.8", "en"),
    (None, "en;q=0.5, zh;q=0.8", "zh"),
    (None, "fr-FR, de;q=0.9", "en"),
    (None, "zh;q=0, en", "en"),
    ("zh", None, "zh"),
    ("zh", "en-US", "zh"),
    ("en", "zh-CN", "en"),
    ("fr", "zh-CN", "zh"),  # a cookie naming no known language is ignored
])
def test_the_cookie_wins_over_accept_language(cookie, header, locale):
    assert i18n.choose_locale(cookie, header) == locale


# ------------------------------------------------------------------ the zh catalog


def test_every_zh_key_is_a_string_of_the_english_ui():
    """A key that no release shows is a typo or a label renamed without its translation."""
    per_product, chrome = english_ui()
    everything = chrome.union(*per_product.values())
    data = i18n.locale_data("zh")
    unknown = [f"common: {k}" for k in data["common"] if k not in everything]
    unknown += [f"messages: {k}" for k in data["messages"] if k not in i18n.MESSAGES]
    fields, steps = english_scopes("fields"), english_scopes("steps")
    for key, own in data["products"].items():
        assert key in per_product, f"products.{key}: no such product"
        unknown += [f"{key}: {k}" for k in own.get("labels", {}) if k not in per_product[key] | chrome]
        for kind, scopes in (("fields", fields), ("steps", steps)):
            for name, strings in own.get(kind, {}).items():
                assert (key, name) in scopes, f"products.{key}.{kind}.{name}: no such {kind[:-1]}"
                unknown += [f"{key}.{kind}.{name}: {k}" for k in strings if k not in scopes[(key, name)]]
    assert not unknown, "zh keys the English UI does not show:\n" + "\n".join(unknown)


def test_the_chrome_and_every_composed_message_are_translated():
    data = i18n.locale_data("zh")
    missing = sorted(i18n.template_strings(templates()) - set(data["common"]))
    assert not missing, f"template strings without zh: {missing}"
    assert set(data["messages"]) == set(i18n.MESSAGES)
    for english, chinese in data["messages"].items():  # the same slots on both sides
        assert set(re.findall(r"\{(\w+)\}", chinese)) <= set(re.findall(r"\{(\w+)\}", english)), english


@pytest.mark.parametrize("product", ZH_DOC_PRODUCTS)
def test_labels_the_2026_release_renamed_have_their_chinese(product):
    """The products of the Chinese docs: what the current release shows that 2021 did
    not is translated too (the current console's Chinese wording)."""
    old, new = catalog.load("2021-06"), catalog.load("2026-03")
    t = i18n.translator(new, "zh")
    added = i18n.product_strings(new, product) - i18n.product_strings(old, product)
    fields = list(i18n.field_strings(new.products[product]))
    untranslated = sorted(s for s in added if t(s, product) == s and all(t(s, product, field=f) == s for f in fields))
    assert not untranslated, f"{product}: 2026-03 labels without zh: {untranslated}"


def test_translation_is_scoped_by_product_field_and_step():
    t = i18n.translator(catalog.load("2021-06"), "zh")
    assert t("Region") == "地域"  # the top bar
    assert t("Region", "oss", field="RegionId") == "区域"  # the Create Bucket panel (创建存储空间)
    assert (t("Enable", "oss", field="Versioning"), t("Enable", "oss", field="DataRedundancyType")) == ("开通", "启用")
    assert t("Create Security Group", "ecs") == "创建安全组"
    assert t("Create Security Group", "ecs", step="networking") == "新建安全组"  # the wizard's button
    assert t("Standard", "oss") == "标准存储" and t("Standard", "alb") == "标准版"
    assert t("Next: Networking", "ecs") == "下一步：网络和安全组设置"


def test_composed_messages_are_translated_slot_by_slot():
    t = i18n.translator(catalog.load("2021-06"), "zh")
    assert t("Instance created successfully.", "ecs") == "实例创建成功。"
    assert t("Delete Bucket: the operation succeeded.", "oss") == "删除Bucket：操作成功。"
    assert t("The specified Bucket 'b-1' does not exist.", "oss") == "指定的Bucket“b-1”不存在。"
    assert t('The input parameter "BucketName" that is mandatory for processing this request is not supplied.',
             "oss") == "Bucket名称不能为空。"  # the API parameter is shown as its field's label
    assert t('The specified parameter "PortRange" is not valid. It must be at most 5 characters long.',
             "ecs") == "端口范围的值无效。长度不能超过5个字符。"
    assert t("Total 12 items, page 2 of 2") == "共12条，第2/2页"


def test_a_string_without_translation_falls_back_to_english():
    t = i18n.translator(catalog.load("2021-06"), "zh")
    for text in ("ecs.g6.large (2 vCPU 8 GiB)", "No such label anywhere", "{not a key}"):
        assert t(text, "ecs") == text
    english = i18n.translator(catalog.load("2021-06"), "en")
    assert english("Create Bucket", "oss") == "Create Bucket" and english.html_lang == "en"


# ------------------------------------------------------------------ pages (in process)


@pytest.fixture()
def console():
    """A fresh 2021-06 sandbox app and a client signed in as the seeded administrator."""
    acct = DEFAULT_ACCOUNTS[0]
    client = TestClient(create_app(catalog.load("2021-06"), Store(None, latency_ms=0)))
    signed = client.post("/signin", data={"user_name": f"{acct.admin_user}@{acct.alias}.onaliyun.com",
                                          "password": acct.admin_password}, follow_redirects=False)
    assert signed.status_code == 303 and "aliyun_lang" not in signed.cookies  # signing in picks no language
    yield client
    client.app.state.sandbox.store.close()


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_accept_language_zh_renders_the_chinese_console(console):
    page = console.get("/console/oss/bucket", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    assert page.status_code == 200 and '<html lang="zh-CN">' in page.text
    text = text_of(page.text)
    for label in ("对象存储OSS", "概览", "Bucket列表", "创建Bucket", "地域", "华东1（杭州）", "暂无数据", "退出登录"):
        assert label in text, label
    assert "Create Bucket" not in text and "Log Out" not in text
    english = console.get("/console/oss/bucket")
    assert '<html lang="en">' in english.text and "Create Bucket" in english.text and "创建Bucket" not in english.text


def test_the_cookie_overrides_accept_language(console):
    console.cookies.set("aliyun_lang", "en")
    page = console.get("/console/ecs/security_group", headers={"Accept-Language": "zh-CN"})
    assert '<html lang="en">' in page.text and "Create Security Group" in page.text and "创建安全组" not in page.text


def test_the_language_switch_sets_the_cookie_and_goes_back(console):
    switch = console.get("/console/lang", params={"lang": "zh", "back": "/console/ram/user?page=1"},
                         follow_redirects=False)
    assert switch.status_code == 303 and switch.headers["location"] == "/console/ram/user?page=1"
    assert switch.cookies.get("aliyun_lang") == "zh"
    page = console.get("/console/ram/user", headers={"Accept-Language": "en-US"})
    assert '<html lang="zh-CN">' in page.text and "人员管理" in page.text and "创建用户" in page.text
    links = re.findall(r'<a href="(/console/lang\?[^"]+)" lang="([^"]+)"[^>]*>([^<]+)</a>', page.text)
    assert [(lang, name) for _, lang, name in links] == [("en", "English"), ("zh-CN", "简体中文")]
    back = console.get(links[0][0].replace("&amp;", "&"), follow_redirects=True)
    assert '<html lang="en">' in back.text and "Create User" in back.text
    elsewhere = console.get("/console/lang", params={"lang": "xx", "back": "//evil.example"},
                            follow_redirects=False)
    assert elsewhere.headers["location"] == "/console" and "aliyun_lang" not in elsewhere.cookies


def test_the_sign_in_page_speaks_the_browser_language(console):
    console.cookies.clear()
    page = console.get("/signin", headers={"Accept-Language": "zh-CN"})
    assert "RAM用户登录" in page.text and "用户名" in page.text and ">登录<" in page.text
    assert "Log On" in console.get("/signin").text


def test_validation_errors_and_toasts_in_chinese(console):
    zh = {"Accept-Language": "zh-CN"}
    failed = console.post("/console/oss/bucket/create", data={"BucketName": ""}, headers=zh)
    assert failed.status_code == 400 and "Bucket名称不能为空。" in failed.text
    created = console.post("/console/oss/bucket/create", data={"BucketName": "docs-zh-bucket"}, headers=zh)
    assert created.status_code == 200 and "Bucket创建成功。" in text_of(created.text)
    english = console.post("/console/oss/bucket/create", data={"BucketName": ""})
    assert 'The input parameter "BucketName" that is mandatory' in english.text.replace("&#34;", '"')


def test_api_responses_and_audit_events_stay_english(console):
    """The RPC API and the audit trail are language-neutral, as in the real cloud: a
    browser that asks for Chinese changes the pages only."""
    from docverify_sandbox.client import SandboxClient

    acct = DEFAULT_ACCOUNTS[0]
    signer = SandboxClient("http://testserver", acct.admin_access_key_id, acct.admin_access_key_secret)
    zh = {"Accept-Language": "zh-CN", "Content-Type": "application/x-www-form-urlencoded"}
    rejected = console.post("/", headers=zh, content=urlencode(signer.signed_params(
        "PutBucket", "2019-05-17", {"BucketName": "", "RegionId": "cn-hangzhou"})))
    assert rejected.status_code == 400 and rejected.json()["Code"] == "MissingParameter"
    assert 'The input parameter "BucketName"' in rejected.json()["Message"]
    console.post("/console/oss/bucket/create", data={"BucketName": "docs-zh-audit"}, headers=zh)
    events = console.post("/", headers=zh, content=urlencode(signer.signed_params(
        "LookupEvents", "2020-07-06", {"LookupAttribute.1.Key": "EventName", "LookupAttribute.1.Value": "PutBucket"})))
    assert events.status_code == 200
    assert not re.search(r"[\u4e00-\u9fff]", rejected.text + events.text), "Chinese in an API response"
    assert any(e.get("resourceName") == "docs-zh-audit" for e in events.json()["Events"])


def test_an_untranslated_label_shows_in_english_not_as_a_key():
    """A release that renames a label without a zh entry: the page shows the new English label."""
    renamed = copy.deepcopy(catalog.load("2021-06"))
    renamed.products["oss"]["nav"]["buckets"]["label"] = "Bucket Inventory"
    client = TestClient(create_app(renamed, Store(None)))
    acct = DEFAULT_ACCOUNTS[0]
    try:
        client.post("/signin", data={"user_name": f"{acct.admin_user}@{acct.alias}.onaliyun.com",
                                     "password": acct.admin_password})
        text = text_of(client.get("/console/oss/bucket", headers={"Accept-Language": "zh-CN"}).text)
    finally:
        client.app.state.sandbox.store.close()
    assert "Bucket Inventory" in text and "概览" in text and "创建Bucket" in text


def test_pages_read_no_yaml_per_request(console):
    """Translators are prepared once per catalog and locale; a page is dict lookups."""
    sandbox = console.app.state.sandbox
    before = (i18n.locale_data.cache_info().misses, {k: id(t) for k, t in sandbox.translators.items()})
    for url in ("/console", "/console/ecs/instance", "/console/ecs/instance/create", "/console/ram/user/create"):
        assert console.get(url, headers={"Accept-Language": "zh-CN"}).status_code == 200
    assert (i18n.locale_data.cache_info().misses, {k: id(t) for k, t in sandbox.translators.items()}) == before


# ------------------------------------------------------------------ a browser in zh-CN


@pytest.mark.browser
def test_a_zh_cn_browser_creates_a_bucket_by_the_chinese_labels(browser, sandbox, account):
    from playwright.sync_api import expect
    from sandbox_helpers import chinese_context

    context = chinese_context(browser, sandbox, account)  # signed in, Accept-Language: zh-CN
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.goto(sandbox.url + "/console")
        assert page.locator("html").get_attribute("lang") == "zh-CN"
        page.get_by_role("link", name="对象存储OSS").first.click()
        nav = page.get_by_role("navigation", name="对象存储OSS导航")
        expect(nav.get_by_role("link", name="概览")).to_be_visible()  # waits for the page the click opens
        nav.get_by_role("link", name="Bucket列表").click()
        page.get_by_role("button", name="创建Bucket").click()
        dialog = page.get_by_role("dialog", name="创建Bucket")
        dialog.get_by_label("Bucket名称").fill("docs-zh-browser")
        dialog.get_by_role("radio", name="低频访问").check()
        dialog.get_by_role("group", name="版本控制").get_by_role("radio", name="开通", exact=True).check()
        dialog.get_by_role("button", name="确定").click()
        page.get_by_role("status").filter(has_text="Bucket创建成功").wait_for()
        row = page.get_by_role("table", name="Bucket列表").get_by_role("row").filter(has_text="docs-zh-browser")
        assert "低频访问" in row.inner_text()  # the storage class, as the Chinese list shows it
        page.get_by_role("navigation", name="语言").get_by_role("link", name="English").click()
        expect(page.get_by_role("button", name="Create Bucket")).to_be_visible()
        assert page.locator("html").get_attribute("lang") == "en"
    finally:
        context.close()


def test_times_are_shown_as_the_console_shows_them_in_each_language(console):
    """Not a raw Unix time: "Jan 1, 2021, 08:00:00" (China Standard Time), 2021年1月1日 in Chinese."""
    english = text_of(console.get("/console/ram/user").text)
    assert "bob read-only user Jan 1, 2021, 08:00:00" in english and "1609459200" not in english
    chinese = text_of(console.get("/console/ram/user", headers={"Accept-Language": "zh-CN"}).text)
    assert "2021年1月1日 08:00:00" in chinese and "1609459200" not in chinese
