"""Secrets the console reveals stay out of every artifact (issue 18): a procedure that
creates an AccessKey runs in real Chromium against the sandbox, with a trace and every
report, and no file it leaves behind holds the new AccessKey secret."""

from __future__ import annotations

import asyncio
import logging
import os
import textwrap
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from docverify import scrub as registry
from docverify.cli import cli
from docverify.execute import revealed
from docverify_playwright.browser import CHROMIUM_ARGS
from docverify_playwright.reveal import MARKED, RevealedSecrets
from docverify_sandbox.client import SandboxClient
from docverify_sandbox.server import build_app, running
from docverify_sandbox.state import DEFAULT_ACCOUNTS

CREATE_ACCESS_KEY = """\
    ---
    product: RAM
    ---

    # Create an AccessKey pair for a RAM user

    This topic describes how to create an AccessKey pair for a Resource Access Management \\(RAM\\) user. An
    AccessKey pair is a long-term credential for a RAM user.

    <!-- docverify:
    id: ram-create-access-key
    expect:
      - {event: CreateAccessKey, service: Ram}
    -->

    1.  Log on to the [RAM console](https://ram.console.aliyun.com/) by using your Alibaba Cloud account.

    2.  In the left-side navigation pane, choose **Identities** \\> **Users**.

    3.  On the Users page, click **alice**.

    4.  In the **User AccessKeys** section, click **Create AccessKey**.

    5.  In the Create AccessKey dialog box, view the AccessKey ID and AccessKey secret.

        **Note:** The AccessKey secret is displayed only when you create an AccessKey pair, and is unavailable
        for subsequent queries. We recommend that you save the AccessKey secret for subsequent use.

    6.  Click **Close**.
"""


@pytest.fixture
def sandbox():
    """A sandbox of the 2021 console this doc was written for, whose state the test reads."""
    app = build_app("2021-06", latency_ms=0)
    with running(app) as url:
        yield app, url


def hits(root: Path, secret: str) -> dict[str, int]:
    """Where ``secret`` occurs under ``root``: every file, and every entry of every zip."""
    found: dict[str, int] = {}
    needle = secret.encode()
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if data.count(needle):
            found[str(path.relative_to(root))] = data.count(needle)
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for name in archive.namelist():
                    if count := archive.read(name).count(needle):
                        found[f"{path.relative_to(root)}!{name}"] = count
    return found


@pytest.mark.browser
def test_a_created_accesskey_secret_is_in_no_artifact(tmp_path, chromium, sandbox, caplog):
    app, url = sandbox
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "create-access-key.md").write_text(textwrap.dedent(CREATE_ACCESS_KEY), encoding="utf-8")
    caplog.set_level(logging.DEBUG, logger="docverify_playwright.reveal")
    old = os.getcwd()
    os.chdir(tmp_path)  # the results store is .docverify/results.db here
    try:
        result = CliRunner().invoke(cli, [
            "check", str(docs), "--set", f"console.sandbox.url={url}", "--set", "console.sandbox.release=2021-06",
            "--set", "executor.playwright.trace=on", "--pass-screenshots", "--report", "html,json,junit",
            "--output", "out"])
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output

    # the secret, from the sandbox: the key the procedure created (API), its secret (state)
    admin = DEFAULT_ACCOUNTS[0]
    client = SandboxClient(url, admin.access_key_id, admin.access_key_secret)
    keys = client.call("ListAccessKeys", "2015-05-01", {"UserName": admin.admin_user})["AccessKeys"]["AccessKey"]
    [created] = [key["AccessKeyId"] for key in keys if key["AccessKeyId"] != admin.admin_access_key_id]
    secret = app.state.sandbox.store.access_key(created)["secret"]

    out = tmp_path / "out"
    trace = out / "artifacts" / "ram-create-access-key.trace.zip"
    shots = sorted((out / "artifacts" / "ram-create-access-key").glob("*.jpg"))
    assert trace.exists() and shots and (tmp_path / ".docverify" / "results.db").exists()
    assert {"report.html", "docverify.json", "junit.xml"} <= {p.name for p in out.iterdir()}
    assert hits(tmp_path, secret) == {}
    assert secret not in result.output
    # it was shown and is gone: the trace has the mask where the page had the secret
    with zipfile.ZipFile(trace) as archive:
        assert registry.MASK in archive.read("trace.trace").decode()
        assert created in archive.read("trace.trace").decode()  # the AccessKey ID is no secret
    # and the screenshot of the dialog was taken with the secret's element masked
    masked = [r.getMessage() for r in caplog.records if r.getMessage().startswith("masking")]
    assert masked and all(int(message.split()[1]) >= 1 for message in masked), masked


PAGE = """
<main>
  <dl><dt>AccessKeyId</dt><dd id="id">LTAI5tQ7exampleKeyId</dd>
      <dt>AccessKey Secret</dt><dd><code id="dl">{dl}</code></dd></dl>
  <label for="pw">Logon Password</label><input id="pw" readonly value="{field}">
  <label><input type="radio" checked> Custom Logon Password</label>
  <label for="typed">Password</label><input id="typed" type="password">
  <table><thead><tr><th>User</th><th>初始密码</th></tr></thead>
         <tbody><tr><td>bob</td><td id="column">{column}</td></tr></tbody></table>
  <p id="colon">Password: {colon}</p>
  <div><span>Password</span><span id="withheld">********</span></div>
  <textarea id="pem">{pem}</textarea>
  <p id="elsewhere">The key {api} was sent to the pipeline.</p>
</main>
"""


@pytest.mark.browser
def test_the_page_recogniser_registers_and_masks(chromium):
    """Labelled values of every shape are registered; every element that shows a secret
    (one known from an API response too) is marked for the screenshot's mask."""
    from playwright.async_api import async_playwright

    pem = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
           "QyNTUxOQAAACBJ0/aYR2XMnd2mqp+7rP9dF4KT6Dcb0zbEQT0sKf0LPwAAAJg8vNmQPLzZ\n"
           "-----END OPENSSH PRIVATE KEY-----")
    values = {"dl": "qdZ6J6afU1zT0YQOaNF03vpUuT3em6", "field": "Gen3rated-Passw0rd", "column": "Zx9-initial-Pw",
              "colon": "Colon-Passw0rd9", "pem": pem, "api": "Api5ecretFromJsonResponse77"}
    before = registry.known()
    revealed.remember([values["api"]])  # as the response watch does

    async def scenario():
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium.path, args=list(CHROMIUM_ARGS))
            try:
                page = await browser.new_page()
                await page.set_content(PAGE.format(**values))
                await page.fill("#typed", "Typed-From-The-D0c")  # what the procedure types is not revealed
                watch = RevealedSecrets()
                masks = await watch.before_capture(page)
                marked = await page.eval_on_selector_all(f"[{MARKED}]", "els => els.map(e => e.id)")
                await page.screenshot(mask=masks)
                return watch, masks, marked
            finally:
                await browser.close()

    try:
        watch, masks, marked = asyncio.run(scenario())
        known = registry.known()
        assert {values["dl"], values["field"], values["column"], values["colon"], values["pem"]} <= known
        assert {"LTAI5tQ7exampleKeyId", "********", "Custom Logon Password", "Typed-From-The-D0c"}.isdisjoint(known)
        assert set(marked) == {"dl", "pw", "column", "colon", "pem", "elsewhere"}
        assert len(masks) == 1 and watch.masked == [6]
    finally:
        registry.forget(*(registry.known() - before))
