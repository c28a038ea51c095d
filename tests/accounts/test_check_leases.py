"""`docverify check` with an account pool: each procedure leases an account of its
own, signs in as it and is checked in its audit log; an account that cannot sign in
is quarantined; a pool that stays busy is an ENV_ERROR after --lease-timeout."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from docverify_sandbox.client import SandboxClient
from docverify_sandbox.server import build_app, running
from docverify_sandbox.state import DEFAULT_ACCOUNTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BUCKET = """\
    # Create a bucket {n}

    <!-- docverify:
    id: bucket-{n}
    expect:
      - {{event: PutBucket, service: Oss}}
    -->

    1. Log on to the OSS console.
    2. In the left-side navigation pane, click **Buckets**.
    3. Click **Create Bucket**.
    4. Configure the following parameters.

        |Parameter|Value|
        |---|---|
        |**Bucket Name**|`lease-{n}-<suffix>`|

    5. Click **OK**.
"""


def account_env(name: str, tenant, *, password: str | None = None) -> dict[str, str]:
    prefix = f"DOCVERIFY_ACCOUNT_{name.upper()}__"
    secret = f"SECRET_{name.upper()}_"
    return {
        prefix + "CONSOLE": "sandbox", prefix + "ACCOUNT_ID": tenant.account_id, prefix + "ALIAS": tenant.alias,
        prefix + "LOGIN_USER": f"{tenant.admin_user}@{tenant.alias}.onaliyun.com",
        prefix + "PASSWORD": f"env:{secret}PASSWORD", prefix + "ACCESS_KEY_ID": f"env:{secret}KEY_ID",
        prefix + "ACCESS_KEY_SECRET": f"env:{secret}KEY_SECRET",
        secret + "PASSWORD": password or tenant.admin_password, secret + "KEY_ID": tenant.admin_access_key_id,
        secret + "KEY_SECRET": tenant.admin_access_key_secret,
    }


def run(tmp_path: Path, url: str, chromium, env: dict[str, str], *options: str) -> tuple[subprocess.CompletedProcess, dict]:
    args = [sys.executable, "-m", "docverify", "check", "docs", "--no-store", "--report", "json", "--output", "out",
            "--browser-path", str(chromium.path), "-O", f"console.sandbox.url={url}", *options]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env})
    return done, json.loads((tmp_path / "out" / "docverify.json").read_text())


def buckets(url: str, tenant) -> set[str]:
    api = SandboxClient(url, tenant.admin_access_key_id, tenant.admin_access_key_secret)
    listed = api.call("ListBuckets", "2019-05-17", {"RegionId": "cn-hangzhou"})
    found = listed.get("Buckets", {}).get("Bucket", []) if isinstance(listed.get("Buckets"), dict) else listed.get("Buckets", [])
    return {b.get("BucketName") or b.get("Name") or "" for b in found}


@pytest.fixture
def docs(tmp_path) -> Path:
    (tmp_path / "docs").mkdir()
    for n in (1, 2):
        (tmp_path / "docs" / f"bucket-{n}.md").write_text(textwrap.dedent(BUCKET.format(n=n)))
    return tmp_path


def test_two_procedures_in_parallel_each_run_in_an_account_of_their_own(docs, chromium):
    first, second = DEFAULT_ACCOUNTS
    env = {**account_env("one", first), **account_env("two", second)}
    with running(build_app()) as url:
        done, report = run(docs, url, chromium, env, "--jobs", "2")
        made = {tenant.alias: {b for b in buckets(url, tenant) if b.startswith("lease-")} for tenant in DEFAULT_ACCOUNTS}
    assert done.returncode == 0, done.stderr
    assert [r["verdict"] for r in report["results"]] == ["PASS", "PASS"]
    # one bucket in each tenant: each procedure signed in (and was audited) as its own account
    assert len(made[first.alias]) == 1 and len(made[second.alias]) == 1, made


def test_an_account_that_cannot_sign_in_is_quarantined_and_the_next_lease_takes_another(docs, chromium):
    first, second = DEFAULT_ACCOUNTS
    broken = account_env("broken", first, password="Wrong-Passw0rd")
    env = {**broken, **account_env("good", second)}
    (docs / "docs" / "bucket-2.md").unlink()
    with running(build_app()) as url:
        done, report = run(docs, url, chromium, broken, "--jobs", "1")  # the pool holds only the broken one
        assert report["results"][0]["verdict"] == "ENV_ERROR" and "signing in" in report["results"][0]["reason"]
        listing = subprocess.run([sys.executable, "-m", "docverify", "accounts", "list", "--json"], cwd=docs,
                                 capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(docs), **env})
        again, report = run(docs, url, chromium, env, "--jobs", "1")
    quarantined = {a["name"]: a.get("quarantine") for a in json.loads(listing.stdout)["accounts"]}
    assert quarantined["broken"] and not quarantined["good"]
    assert again.returncode == 0 and report["results"][0]["verdict"] == "PASS"  # leased "good": broken is skipped
    assert "Wrong-Passw0rd" not in done.stdout + done.stderr + json.dumps(report)


def test_a_pool_that_stays_busy_is_an_environment_error_after_the_lease_timeout(docs, chromium):
    first, _ = DEFAULT_ACCOUNTS
    env = account_env("only", first)
    with running(build_app()) as url:
        holder = subprocess.Popen([sys.executable, "-m", "docverify", "accounts", "lease", "only", "--",
                                   "sh", "-c", "echo held; exec sleep 60"],
                                  cwd=docs, env={"PATH": "/usr/bin:/bin", "HOME": str(docs), **env},
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"  # the holder has its lease (its command runs)
            done, report = run(docs, url, chromium, env, "--lease-timeout", "1")
        finally:
            holder.terminate()
            holder.wait(timeout=20)
    assert done.returncode == 3 and report["results"]
    for result in report["results"]:
        assert result["verdict"] == "ENV_ERROR" and "account pool exhausted" in result["reason"]
