"""Signing in over HTTP where the sign-in is a plain HTML form (the sandbox's): the
session's cookies, a refused password, a console that is not there."""

from __future__ import annotations

import dataclasses
import socket
import urllib.request

import pytest

from docverify.errors import CredentialsRejected, EnvironmentProblem
from docverify_playwright.form_sign_in import sign_in_over_http


def test_the_form_opens_a_session_the_console_accepts(sandbox):
    state = sign_in_over_http(sandbox.login, timeout=10)
    assert state["origins"] == [] and state["cookies"]
    cookie = "; ".join(f"{c['name']}={c['value']}" for c in state["cookies"])
    assert all(c["domain"] == "127.0.0.1" and c["path"] == "/" for c in state["cookies"])
    page = urllib.request.urlopen(urllib.request.Request(sandbox.url + "/console/oss/bucket",
                                                         headers={"Cookie": cookie}), timeout=10)
    assert page.status == 200 and "/signin" not in page.url  # signed in: not sent back to the form
    assert "Create Bucket" in page.read().decode()


def test_a_wrong_password_is_rejected_credentials(sandbox):
    wrong = dataclasses.replace(sandbox.login, password="Wrong-Passw0rd")
    with pytest.raises(CredentialsRejected) as caught:
        sign_in_over_http(wrong, timeout=10)
    assert sandbox.login.user in str(caught.value) and "Wrong-Passw0rd" not in str(caught.value)


def test_a_console_that_is_not_there_is_an_environment_problem(sandbox):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gone = dataclasses.replace(sandbox.login, url=f"http://127.0.0.1:{port}/signin")
    with pytest.raises(EnvironmentProblem, match="unreachable"):
        sign_in_over_http(gone, timeout=5)
