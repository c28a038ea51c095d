"""``docverify check --console aliyun`` end to end, against the recorded Alibaba Cloud: the
RAM user logs on through the (reconstructed) logon pages, the procedure opens its console
from the start page, the audit log delivers the real event late."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from aliyun_recordings import KEY_SECRET, PASSWORD, corpus_event, own_env
from click.testing import CliRunner

from docverify.cli import cli

pytestmark = [pytest.mark.browser, pytest.mark.slow]
pytest.importorskip("alibabacloud_actiontrail20200706", reason="pip install -e '.[aliyun]'")

DOC = """\
    # Create a RAM user group

    <!-- docverify:
    id: ram-group
    expect:
      - {event: CreateGroup, service: Ram}
    -->

    1. Log on to the [RAM console](https://ram.console.aliyun.com/).
"""


def check(tmp_path: Path, site, trail, chromium, *options: str) -> dict:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "ram.md").write_text(textwrap.dedent(DOC), encoding="utf-8")
    output = tmp_path / "out"
    args = ["check", str(docs), "--console", "aliyun", "--no-store", "--report", "json", "--output", str(output),
            "--browser-path", str(chromium.path),
            "-O", f"console.aliyun.signin_url={site.url}/signin/login.htm",
            "-O", f"console.aliyun.console_url={site.url}/console",
            "-O", f"console.aliyun.audit_url={trail.url}",
            "-O", "console.aliyun.audit_poll_cap_s=0.5", *options]
    env = {"DOCVERIFY_CONFIG": None, "DOCVERIFY_CONSOLE": None, "DOCVERIFY_POLICY": None, "DOCVERIFY_JOBS": None,
           "DOCVERIFY_ACCOUNTS": None, "HOME": str(tmp_path), **own_env()}
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    report = output / "docverify.json"
    assert report.exists(), result.output
    data = json.loads(report.read_text(encoding="utf-8"))
    data["exit_code"], data["output"] = result.exit_code, result.output
    texts = [path.read_text(errors="replace") for path in output.rglob("*") if path.is_file()]
    assert not any(secret in text for text in (*texts, result.output) for secret in (PASSWORD, KEY_SECRET))
    return data


def test_a_doc_passes_once_the_audit_log_delivers_its_event(tmp_path, site, trail, chromium):
    trail.undelivered = 2
    trail.record(corpus_event("02_ApiCall_RAM_CreateGroup"))
    report = check(tmp_path, site, trail, chromium, "-O", "console.aliyun.audit_deadline_s=30")
    [result] = report["results"]
    assert result["verdict"] == "PASS", report["output"]
    assert report["exit_code"] == 0
    assert result["check"]["reason"].startswith("audit log: Ram:CreateGroup (event id 234ef3c7")
    assert trail.calls == 3 and site.logons == 1
    assert any(t["action"]["kind"] == "click" and "RAM console" in t["action"]["target"] for t in result["turns"])


def test_an_event_the_log_never_delivers_leaves_the_doc_inconclusive(tmp_path, site, trail, chromium):
    trail.undelivered = 10_000
    trail.record(corpus_event("02_ApiCall_RAM_CreateGroup"))
    report = check(tmp_path, site, trail, chromium, "-O", "console.aliyun.audit_deadline_s=2")
    [result] = report["results"]
    assert result["verdict"] == "INCONCLUSIVE", report["output"]
    assert report["exit_code"] == 3
    assert "it may not have arrived yet" in result["reason"] or "it may not have arrived yet" in \
        result["check"]["reason"]
