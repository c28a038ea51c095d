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


def check(tmp_path: Path, site, trail, chromium, *options: str, doc: str = DOC) -> dict:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "ram.md").write_text(textwrap.dedent(doc), encoding="utf-8")
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


# -- safety: a dry run, and the protection of what docverify did not create ----------------

CREATE_GROUP = """\
    # Create a RAM user group

    <!-- docverify:
    id: ram-group
    expect:
      - {event: CreateGroup, service: Ram}
    -->

    1. Log on to the [RAM console](https://ram.console.aliyun.com/).
    2. Click **Create Group**.
    3. Enter `ops-<suffix>` in the **Group Name** field.
    4. Click **OK**.
"""
STOP_INSTANCE = """\
    # Stop an instance

    <!-- docverify:
    id: ecs-stop
    expect:
      - {event: StopInstance, service: Ecs}
    -->

    1. Log on to the [ECS console](https://ecs.console.aliyun.com/).
    2. Find the instance and click **Stop** in the **Actions** column.
"""
INSTANCES = ('<table aria-label="Instances"><thead><tr><th>Instance ID/Name</th><th>Status</th><th>Actions</th></tr>'
             '</thead><tbody><tr><td><a href="#i">i-bp1theirs00000000001</a> web-01</td><td>Running</td>'
             '<td><button type="button">Stop</button></td></tr></tbody></table>')


def test_a_dry_run_signs_in_follows_and_stops_before_the_first_change(tmp_path, site, trail, chromium):
    site.pages["ram"] = ('<button type="button">Create Group</button>'
                         '<label>Group Name <input name="GroupName"></label><button type="button">OK</button>')
    report = check(tmp_path, site, trail, chromium, "--dry-run=browse", doc=CREATE_GROUP)
    [result] = report["results"]
    assert result["verdict"] == "INCONCLUSIVE" and report["dry_run"] is True, report["output"]
    assert result["reason"].startswith("dry run: stopped before step 4 at ")
    assert result["reason"].endswith(":12 (click button 'OK': submits the page's form); steps 1-3 followed as written")
    assert report["exit_code"] == 0  # a stop before the first change, nothing wrong on the way
    assert site.logons == 1 and trail.calls == 0  # signed in; no audit log read


def test_on_the_real_console_the_protection_is_on_by_default(tmp_path, site, trail, chromium):
    site.pages["ecs"] = INSTANCES
    report = check(tmp_path, site, trail, chromium, doc=STOP_INSTANCE)
    [result] = report["results"]
    assert result["verdict"] == "ENV_ERROR", report["output"]
    assert result["reason"].startswith("refused at step 2 ("), result["reason"]
    assert "i-bp1theirs00000000001 · web-01" in result["reason"], result["reason"]
    assert "[console.aliyun] protect_unowned = false (-O console.aliyun.protect_unowned=false)" in result["reason"]
    assert result["stopped"]["by"] == "protection" and trail.calls == 0
    # turned off, the Stop is clicked (and the audit log asked)
    off = check(tmp_path, site, trail, chromium, "-O", "console.aliyun.protect_unowned=false",
                "-O", "console.aliyun.audit_deadline_s=0", doc=STOP_INSTANCE)
    [result] = off["results"]
    assert "stopped" not in result and any(t["description"] == "click button 'Stop'" for t in result["turns"])
    assert trail.calls >= 1
