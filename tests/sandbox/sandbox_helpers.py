"""Helpers shared by the sandbox tests (imported by name: tests/sandbox is on sys.path)."""

from __future__ import annotations


def sdk_config(endpoint, ak, secret, **kw):
    from alibabacloud_tea_openapi import models as open_api_models

    return open_api_models.Config(access_key_id=ak, access_key_secret=secret,
                                  endpoint=endpoint.audit_url, protocol="http", **kw)


def login(p, url, user, password):
    p.goto(url + "/signin")
    p.get_by_label("User Name").fill(user)
    p.get_by_label("Password").fill(password)
    p.get_by_role("button", name="Log On").click()
    p.wait_for_url("**/console")


def chinese_context(browser, sandbox, account):
    """A browser context signed in as ``account``'s administrator (after a reset of the
    account) that asks for Chinese pages, as docverify opens one for a Chinese doc: the
    sign-in happens in English and sets no language cookie, so Accept-Language: zh-CN decides."""
    from docverify_sandbox.client import SandboxClient

    SandboxClient(sandbox.url, account.access_key_id, account.access_key_secret).call("ResetAccount", "sandbox")
    signed = browser.new_context(locale="en-US")
    page = signed.new_page()
    login(page, sandbox.url, f"{account.admin_user}@{account.alias}.onaliyun.com", account.admin_password)
    state = signed.storage_state()
    signed.close()
    assert "aliyun_lang" not in {c["name"] for c in state["cookies"]}
    return browser.new_context(locale="zh-CN", storage_state=state)
