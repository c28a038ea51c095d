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
