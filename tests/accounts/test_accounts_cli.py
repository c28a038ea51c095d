"""``docverify accounts ...`` as a user and a CI script meet it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from accounts_helpers import HOLDER, POOL_FILE, rotation_file, write_secret
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import ExitCode
from docverify.lease import open_pool

SECRETS = {"CLI_PW": "cli-password-0001", "CLI_AK_ID": "LTAIclikeyid000001", "CLI_AK_SECRET": "cli-secret-00000001"}


@pytest.fixture()
def runner():
    return CliRunner()


@pytest.fixture()
def pool_file(workdir):
    path = workdir / "docverify-accounts.toml"
    path.write_text(POOL_FILE, encoding="utf-8")
    return path


def invoke(runner, *args, env=None):
    return runner.invoke(cli, list(args), env=env, catch_exceptions=False)


def test_list_shows_references_and_never_secrets(runner, workdir, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    result = invoke(runner, "accounts", "add", "ci-1", "--console", "aliyun", "--account-id", "1234567890123456",
                    "--login-user", "docs@ci.onaliyun.com", "--password-ref", "env:CLI_PW",
                    "--access-key-id-ref", "env:CLI_AK_ID", "--access-key-secret-ref", "env:CLI_AK_SECRET",
                    "--tag", "ecs")
    assert result.exit_code == 0, result.output
    assert "added account ci-1" in result.output
    with pool_lease(workdir, "ci-1"):  # leased: secrets resolved in this process
        text = invoke(runner, "accounts", "list")
        data = invoke(runner, "accounts", "list", "--json")
    for output in (text.output, data.output, (workdir / "docverify-accounts.toml").read_text()):
        for value in SECRETS.values():
            assert value not in output
    assert "ci-1  aliyun  1234567890123456  cn-hangzhou tags=ecs" in text.output
    assert "login: docs@ci.onaliyun.com, password env:CLI_PW" in text.output
    assert "leased by pid" in text.output
    (row,) = json.loads(data.output)["accounts"]
    assert row["references"] == {"password": "env:CLI_PW", "access_key_id": "env:CLI_AK_ID",
                                 "access_key_secret": "env:CLI_AK_SECRET"}
    assert row["leased"] is True and row["holder"]["label"] == "test"


def pool_lease(workdir, name):
    return open_pool(cwd=workdir).lease(name, label="test")


def test_add_accepts_a_reference_that_resolves_only_in_ci(runner, workdir):
    result = runner.invoke(cli, ["accounts", "add", "ci", "--console", "aliyun", "--login-user", "u",
                                 "--password-ref", "env:ONLY_IN_CI_PW"])
    assert result.exit_code == 0 and "added account ci" in result.output
    assert "note: password of account ci" in result.output and "ONLY_IN_CI_PW is not set" in result.output


def test_add_takes_a_role_to_sign_in_federated_and_checks_it(runner, workdir):
    role = "acs:ram::1234567890123456:role/docverify"
    result = runner.invoke(cli, ["accounts", "add", "ci-2", "--console", "aliyun", "--access-key-id-ref", "env:K",
                                 "--access-key-secret-ref", "env:S", "--role-arn", role])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(invoke(runner, "accounts", "list", "--json").output)["accounts"]
    assert row["role_arn"] == role
    account = open_pool(cwd=workdir).specs[0].resolve({"K": "LTAIk", "S": "s"})
    assert account.role_arn == role
    bad = runner.invoke(cli, ["accounts", "add", "ci-3", "--console", "aliyun", "--role-arn", "docverify-role"])
    assert bad.exit_code == ExitCode.USAGE and "--role-arn" in bad.output and "is not a RAM role's ARN" in bad.output


def test_add_refuses_a_literal_secret(runner, workdir):
    result = runner.invoke(cli, ["accounts", "add", "x", "--console", "aliyun", "--login-user", "u",
                                 "--password-ref", "Sup3rSecret!"])
    assert result.exit_code == ExitCode.USAGE
    assert "--password: not a secret reference" in result.output and "Sup3rSecret!" not in result.output


def test_quarantine_and_release_from_the_command_line(runner, pool_file):
    result = invoke(runner, "accounts", "quarantine", "a", "--reason", "login refused")
    assert result.exit_code == 0 and "quarantined a since" in result.output
    listing = invoke(runner, "accounts", "list")
    assert "QUARANTINED since" in listing.output and "login refused" in listing.output
    leased = runner.invoke(cli, ["accounts", "lease", "a", "--", "true"])
    assert leased.exit_code == ExitCode.ENVIRONMENT and "is quarantined" in leased.output
    result = invoke(runner, "accounts", "release-quarantine", "a")
    assert "released a (quarantined since" in result.output
    assert "state: free" in invoke(runner, "accounts", "list").output


def test_lease_runs_the_command_with_the_account_and_returns_its_code(runner, pool_file, workdir):
    out = workdir / "child.txt"
    script = ("import os, sys; open(sys.argv[1], 'w').write(os.environ['DOCVERIFY_LEASED_ACCOUNT'] + ' ' "
              "+ os.environ['DOCVERIFY_ACCOUNT_CONSOLE']); sys.exit(7)")
    result = runner.invoke(cli, ["accounts", "lease", "--console", "aliyun", "--", sys.executable, "-c", script,
                                 str(out)])
    assert result.exit_code == 7
    assert out.read_text() == "b aliyun"


def test_a_docverify_child_uses_the_inherited_lease(runner, pool_file, workdir):
    """The child's own pool holds only the parent's account, and leases it without waiting for the parent."""
    out = workdir / "child.txt"
    script = ("import sys; from docverify.lease import open_pool; pool = open_pool(); "
              "lease = pool.acquire(timeout=0); second = None\n"
              "try: pool.acquire(timeout=0)\n"
              "except Exception as e: second = type(e).__name__\n"
              "open(sys.argv[1], 'w').write(f'{pool.names} {lease.name} {second}')")
    result = runner.invoke(cli, ["accounts", "lease", "b", "--", sys.executable, "-c", script, str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == "['a', 'b'] b PoolExhausted"


def test_an_exhausted_pool_exits_3_with_the_holders(runner, pool_file, workdir):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(pool_file), str(workdir / ".docverify/leases"), "a",
                               "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().startswith("held a")
        result = runner.invoke(cli, ["accounts", "lease", "a", "--lease-timeout", "0.2", "--", "true"])
        assert result.exit_code == ExitCode.ENVIRONMENT
        assert f"account pool exhausted: 1 account, leased (holders: a by pid {holder.pid} (holder)" in result.output
        assert "waited 0.2s" in result.output
    finally:
        holder.kill()
        holder.wait()


def test_an_unknown_account_is_a_usage_error(runner, pool_file):
    result = runner.invoke(cli, ["accounts", "lease", "nope", "--", "true"])
    assert result.exit_code == ExitCode.USAGE and "no account named 'nope'" in result.output


def test_lease_without_a_command_prints_and_holds_until_sigterm(pool_file, workdir):
    proc = subprocess.Popen([sys.executable, "-m", "docverify", "accounts", "lease", "a", "--json"], cwd=workdir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        info = json.loads(proc.stdout.readline())
        assert info["name"] == "a" and info["holder_pid"] == proc.pid
        assert "password" not in json.dumps(info["references"])
        pool = open_pool(cwd=workdir)
        assert pool.holder("a")[0] is True
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert pool.holder("a") == (False, None)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_rotate_from_the_command_line(runner, sandbox, tenant, root_client, workdir):
    write_secret(workdir / "keys/rot.id", tenant.admin_access_key_id)
    write_secret(workdir / "keys/rot.secret", tenant.admin_access_key_secret)
    rotation_file(workdir, sandbox.url)
    dry = invoke(runner, "accounts", "rotate", "--dry-run")
    assert dry.exit_code == 0 and "rot: would-rotate: the AccessKey is" in dry.output
    result = invoke(runner, "accounts", "rotate", "rot", "--json")
    assert result.exit_code == 0, result.output
    (outcome,) = json.loads(result.output)
    assert outcome["status"] == "rotated" and outcome["old_key"] == "LTAI****key1"
    new_secret = (workdir / "keys/rot.secret").read_text().strip()
    assert new_secret not in result.output
    listing = invoke(runner, "accounts", "list")
    assert "0 days old, rotated after 90" in listing.output
    again = invoke(runner, "accounts", "rotate", "--max-age", "30")
    assert again.exit_code == 0 and "rot: not-due" in again.output


def test_rotate_refuses_env_references_with_exit_2(runner, sandbox, workdir, monkeypatch):
    monkeypatch.setenv("ROT_ID", "LTAIsomething00001")
    monkeypatch.setenv("ROT_SECRET", "something-secret-01")
    rotation_file(workdir, sandbox.url, id_ref="env:ROT_ID", secret_ref="env:ROT_SECRET")
    result = runner.invoke(cli, ["accounts", "rotate"])
    assert result.exit_code == ExitCode.USAGE
    assert "rot: refused: access_key_id: env:ROT_ID is an environment variable" in result.output


def test_rotate_skips_the_built_in_sandbox_tenants(runner, workdir):
    result = invoke(runner, "accounts", "rotate")
    assert result.exit_code == 0
    assert "sandbox: skipped: built-in sandbox credentials are not rotated" in result.output


def test_rotate_never_changes_a_key_under_a_running_task(runner, sandbox, tenant, root_client, workdir):
    write_secret(workdir / "keys/rot.id", tenant.admin_access_key_id)
    write_secret(workdir / "keys/rot.secret", tenant.admin_access_key_secret)
    path = rotation_file(workdir, sandbox.url)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(workdir / ".docverify/leases"), "rot",
                               "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().startswith("held rot")
        result = runner.invoke(cli, ["accounts", "rotate", "--force", "--lease-timeout", "0"])
        assert result.exit_code == ExitCode.ENVIRONMENT
        assert "rot: failed: account pool exhausted" in result.output and "nothing changed" in result.output
    finally:
        holder.kill()
        holder.wait()
    assert (workdir / "keys/rot.id").read_text().strip() == tenant.admin_access_key_id
