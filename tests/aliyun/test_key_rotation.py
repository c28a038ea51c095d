"""``docverify accounts rotate`` for accounts of the aliyun console: RAM CreateAccessKey,
a check with the new key, the stored secret switched, DeleteAccessKey signed with the new
key — through the official RAM SDK (the console declares ``ram_endpoint``), against the
recorded RAM API (tests/aliyun/api_recordings.py: documented answers served locally)."""

from __future__ import annotations

import json
import os

import pytest
from aliyun_recordings import KEY_ID, KEY_SECRET, serving
from api_recordings import RamFake, RamKeys
from click.testing import CliRunner

from docverify.cli import cli
from docverify.lease import open_pool
from docverify.lease.account import Account
from docverify.lease.rotation import AlibabaAccessKeys, access_key_api, rotate
from docverify_aliyun.console import AliyunConsole

pytest.importorskip("alibabacloud_ram20150501", reason="pip install -e '.[aliyun]'")

USER = "docs-ci"


@pytest.fixture
def ram():
    fake = RamFake(RamKeys())
    fake.add_key(USER, KEY_ID, KEY_SECRET)  # created 2021: due
    with serving(fake.app) as url:
        fake.url = url
        yield fake


@pytest.fixture
def pool_file(tmp_path, ram):
    keys = tmp_path / "keys"
    keys.mkdir()
    for name, value in (("ci.id", KEY_ID), ("ci.secret", KEY_SECRET)):
        (keys / name).write_text(value + "\n")
        os.chmod(keys / name, 0o600)
    path = tmp_path / "docverify-accounts.toml"
    path.write_text(f'[accounts.ci-1]\nconsole = "aliyun"\napi_url = "{ram.url}"\nregion = "cn-hangzhou"\n'
                    'access_key_id = "file:keys/ci.id"\naccess_key_secret = "file:keys/ci.secret"\n')
    return path


def stored(tmp_path) -> tuple[str, str]:
    return tuple((tmp_path / "keys" / name).read_text().strip() for name in ("ci.id", "ci.secret"))  # type: ignore


def test_the_console_rotates_through_ram_at_its_endpoint():
    assert AliyunConsole.ram_endpoint == "https://ram.aliyuncs.com"
    api = access_key_api(Account(name="ci-1", console="aliyun"), None, KEY_ID, KEY_SECRET)
    assert isinstance(api, AlibabaAccessKeys) and (api.endpoint, api.protocol) == ("ram.aliyuncs.com", "https")


def test_accounts_rotate_replaces_the_key(tmp_path, ram, pool_file):
    result = CliRunner().invoke(cli, ["accounts", "rotate", "--accounts", str(pool_file), "--lease-dir",
                                      str(tmp_path / "leases"), "--json"], env={"HOME": str(tmp_path)},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [outcome] = json.loads(result.output)
    assert outcome["status"] == "rotated" and outcome["age_days"] > 365, outcome
    new_id, new_secret = stored(tmp_path)
    assert new_id != KEY_ID and new_id.startswith("LTAI5t") and new_secret not in result.output
    assert ram.keys_of(USER) == {new_id: "Active"}  # the old key is gone
    # created with the old key, proved and the old one deleted with the new one
    assert ram.calls == [("ListAccessKeys", KEY_ID), ("CreateAccessKey", KEY_ID), ("ListAccessKeys", new_id),
                         ("DeleteAccessKey", new_id)]
    again = CliRunner().invoke(cli, ["accounts", "rotate", "--accounts", str(pool_file), "--lease-dir",
                                     str(tmp_path / "leases")], env={"HOME": str(tmp_path)})
    assert again.exit_code == 0 and "not-due" in again.output


def test_an_old_key_that_cannot_be_deleted_is_deactivated_then_deleted_next_time(tmp_path, ram, pool_file):
    ram.fail["DeleteAccessKey"] = ["NoPermission"]
    pool = open_pool(accounts_file=pool_file, lease_dir=tmp_path / "leases", environ={})
    with pool.lease("ci-1") as lease:
        outcome = rotate(lease, max_age_days=90)
    assert outcome.status == "rotated", outcome.message
    assert "could not be deleted" in outcome.warnings[0] and "deactivated" in outcome.warnings[0]
    new_id, _ = stored(tmp_path)
    assert ram.keys_of(USER) == {KEY_ID: "Inactive", new_id: "Active"}  # UpdateAccessKey Status=Inactive
    assert ("UpdateAccessKey", new_id) in ram.calls
    with pool.lease("ci-1") as lease:
        outcome = rotate(lease, max_age_days=90)
    assert outcome.status == "not-due" and "deleted the old AccessKey" in outcome.warnings[0]
    assert ram.keys_of(USER) == {new_id: "Active"}


def test_a_user_with_two_keys_keeps_its_key(tmp_path, ram, pool_file):
    ram.add_key(USER, "LTAI5tSecondKeyOfUser", "second-secret")
    pool = open_pool(accounts_file=pool_file, lease_dir=tmp_path / "leases", environ={})
    with pool.lease("ci-1") as lease:
        outcome = rotate(lease, max_age_days=90)
    assert outcome.status == "failed"
    assert "LimitExceeded.User.AccessKey" in outcome.message and "nothing changed" in outcome.message
    assert stored(tmp_path) == (KEY_ID, KEY_SECRET)
    assert ram.keys_of(USER) == {KEY_ID: "Active", "LTAI5tSecondKeyOfUser": "Active"}


def test_a_new_key_that_is_refused_is_deleted_again(tmp_path, ram, pool_file):
    ram.fail["ListAccessKeys"] = [None, "SignatureDoesNotMatch"]  # the age is read; the new key's check is refused
    pool = open_pool(accounts_file=pool_file, lease_dir=tmp_path / "leases", environ={})
    with pool.lease("ci-1") as lease:
        outcome = rotate(lease, max_age_days=90)
    assert outcome.status == "failed"
    assert "did not work" in outcome.message and "it was deleted again" in outcome.message
    assert stored(tmp_path) == (KEY_ID, KEY_SECRET)
    assert ram.keys_of(USER) == {KEY_ID: "Active"} and ram.calls[-1] == ("DeleteAccessKey", KEY_ID)
