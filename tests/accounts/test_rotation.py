"""AccessKey rotation on a live sandbox: the new key works, the old one is refused,
and every failure leaves the account with a working key."""

from __future__ import annotations

import dataclasses
import sys

import pytest
from accounts_helpers import FakeKeyring, rotation_file, write_secret

import docverify.plugins
from docverify.console import Console
from docverify.errors import UsageError
from docverify.hookspecs import hookimpl
from docverify.lease import open_pool, secret_values
from docverify.lease.rotation import AlibabaAccessKeys, RamCallError, access_key_api, rotate
from docverify.lease.state import fingerprint
from docverify.plugins import load_plugins
from docverify_sandbox.client import SandboxApiError, SandboxClient

RAM = "2015-05-01"


def keys_of(client: SandboxClient, user: str) -> list[str]:
    return [k["AccessKeyId"] for k in client.call("ListAccessKeys", RAM, {"UserName": user})["AccessKeys"]["AccessKey"]]


def refused_code(url: str, key_id: str, secret: str) -> str | None:
    try:
        SandboxClient(url, key_id, secret).call("GetUser", RAM, {"UserName": "alice"})
    except SandboxApiError as error:
        return error.code
    return None


@pytest.fixture()
def alice_files(workdir, tenant):
    write_secret(workdir / "keys/rot.id", tenant.admin_access_key_id)
    write_secret(workdir / "keys/rot.secret", tenant.admin_access_key_secret)
    return workdir / "keys/rot.id", workdir / "keys/rot.secret"


class CloudConsole(Console):
    """A console of the real Alibaba Cloud (a stand-in: it is never started)."""

    name = "cloud"
    cloud = "alibaba"
    ram_endpoint = "https://ram.aliyuncs.com"


class CloudPlugin:
    @hookimpl
    def register_consoles(self, register):
        register(CloudConsole)


@pytest.fixture()
def real_cloud(monkeypatch):
    """The installed plugins plus a console ``cloud`` that declares the real cloud's RAM endpoint."""
    monkeypatch.setattr(docverify.plugins, "installed_plugins", lambda: load_plugins(extra=[CloudPlugin()]))


def leased(workdir, path, environ=None):
    pool = open_pool(accounts_file=path, lease_dir=workdir / "leases", environ=environ or {})
    return pool, pool.acquire("rot")


def test_rotation_end_to_end_on_the_sandbox(sandbox, tenant, root_client, workdir, alice_files):
    path = rotation_file(workdir, sandbox.url)
    pool, lease = leased(workdir, path)
    with lease:
        outcome = rotate(lease, max_age_days=90)  # the seeded key dates from 2021: due
    assert outcome.status == "rotated", outcome.message
    assert outcome.age_days > 365 and outcome.old_key == "LTAI****key1" and not outcome.warnings
    id_file, secret_file = alice_files
    new_id, new_secret = id_file.read_text().strip(), secret_file.read_text().strip()
    assert new_id != tenant.admin_access_key_id and secret_file.stat().st_mode & 0o777 == 0o600
    # the new key works, the old one is gone with the proper error code
    assert keys_of(root_client, "alice") == [new_id]
    assert refused_code(sandbox.url, new_id, new_secret) is None
    assert refused_code(sandbox.url, tenant.admin_access_key_id, tenant.admin_access_key_secret) == \
        "InvalidAccessKeyId.NotFound"
    # the new secret counts among the values to scrub; the state knows the key's age
    assert new_secret in secret_values() and tenant.admin_access_key_secret in secret_values()
    state = pool.state.read("rot")
    assert state.key.fingerprint == fingerprint(new_id) and state.key.source == "rotation"
    assert state.pending_delete == [] and new_id not in pool.state.path("rot").read_text()
    (status,) = pool.status()
    assert status.key_age_days() < 0.01
    # a second run: not due
    with pool.lease("rot") as again:
        assert again.account.access_key_id.reveal() == new_id
        assert rotate(again, max_age_days=90).status == "not-due"


def test_an_env_reference_is_refused_before_any_call(sandbox, tenant, root_client, workdir):
    path = rotation_file(workdir, sandbox.url, id_ref="env:ROT_ID", secret_ref="env:ROT_SECRET")
    env = {"ROT_ID": tenant.admin_access_key_id, "ROT_SECRET": tenant.admin_access_key_secret}
    _, lease = leased(workdir, path, env)
    with lease:
        outcome = rotate(lease, max_age_days=90, force=True)
    assert outcome.status == "refused"
    assert "env:ROT_ID is an environment variable" in outcome.message and "keyring: or file:" in outcome.message
    assert keys_of(root_client, "alice") == [tenant.admin_access_key_id]


def test_a_second_key_over_the_limit_changes_nothing(sandbox, tenant, root_client, workdir, alice_files):
    root_client.call("CreateAccessKey", RAM, {"UserName": "alice"})  # alice now has the maximum: 2
    path = rotation_file(workdir, sandbox.url)
    _, lease = leased(workdir, path)
    with lease:
        outcome = rotate(lease, max_age_days=90)
    assert outcome.status == "failed"
    assert "LimitExceeded.User.AccessKey" in outcome.message and "nothing changed" in outcome.message
    assert alice_files[0].read_text().strip() == tenant.admin_access_key_id
    assert refused_code(sandbox.url, tenant.admin_access_key_id, tenant.admin_access_key_secret) is None


class FaultyApi:
    """The real sandbox API with faults injected in chosen calls."""

    def __init__(self, fail: dict[str, int]) -> None:
        self.fail = dict(fail)  # call name -> how many times to fail

    def __call__(self, account, url, key_id, secret):
        real = access_key_api(account, url, key_id, secret)
        outer = self

        class Wrapped:
            def __getattr__(self, name):
                method = getattr(real, name)

                def call(*args):
                    if outer.fail.get(name, 0) > 0:
                        outer.fail[name] -= 1
                        raise RamCallError(name, "ServiceUnavailable", "injected fault")
                    return method(*args)

                return call

        return Wrapped()


def test_a_new_key_that_does_not_work_is_deleted_again(sandbox, tenant, root_client, workdir, alice_files):
    path = rotation_file(workdir, sandbox.url)
    _, lease = leased(workdir, path)
    with lease:
        outcome = rotate(lease, max_age_days=90, api=FaultyApi({"check": 1}))
    assert outcome.status == "failed"
    assert "did not work" in outcome.message and "it was deleted again" in outcome.message
    assert keys_of(root_client, "alice") == [tenant.admin_access_key_id]
    assert alice_files[0].read_text().strip() == tenant.admin_access_key_id


def test_an_old_key_that_cannot_be_deleted_is_deleted_by_the_next_rotation(sandbox, tenant, root_client, workdir,
                                                                           alice_files):
    path = rotation_file(workdir, sandbox.url)
    pool, lease = leased(workdir, path)
    with lease:
        outcome = rotate(lease, max_age_days=90, api=FaultyApi({"delete": 1}))
    assert outcome.status == "rotated" and "could not be deleted" in outcome.warnings[0]
    new_id = alice_files[0].read_text().strip()
    assert sorted(keys_of(root_client, "alice")) == sorted([tenant.admin_access_key_id, new_id])
    assert len(pool.state.read("rot").pending_delete) == 1
    (status,) = pool.status()
    assert status.pending_delete == 1
    with pool.lease("rot") as again:
        outcome = rotate(again, max_age_days=90)
    assert outcome.status == "not-due" and "deleted the old AccessKey" in outcome.warnings[0]
    assert keys_of(root_client, "alice") == [new_id]
    assert pool.state.read("rot").pending_delete == []


def test_a_failed_store_puts_the_old_values_back(sandbox, tenant, root_client, workdir, monkeypatch):
    ring = FakeKeyring()
    ring.store[("docverify", "rot-id")] = tenant.admin_access_key_id
    ring.store[("docverify", "rot-secret")] = tenant.admin_access_key_secret
    ring.refuse.add("rot-secret")
    monkeypatch.setitem(sys.modules, "keyring", ring)
    path = rotation_file(workdir, sandbox.url, id_ref="keyring:docverify/rot-id",
                        secret_ref="keyring:docverify/rot-secret")
    _, lease = leased(workdir, path)
    with lease:
        outcome = rotate(lease, max_age_days=90)
    assert outcome.status == "failed"
    assert "could not store the new key" in outcome.message and "the keyring is locked" in outcome.message
    assert ring.store[("docverify", "rot-id")] == tenant.admin_access_key_id  # written back
    assert keys_of(root_client, "alice") == [tenant.admin_access_key_id]


def test_the_root_key_is_not_rotated_on_the_sandbox(sandbox, tenant, workdir):
    write_secret(workdir / "keys/rot.id", tenant.access_key_id)
    write_secret(workdir / "keys/rot.secret", tenant.access_key_secret)
    path = rotation_file(workdir, sandbox.url)
    _, lease = leased(workdir, path)
    with lease:
        outcome = rotate(lease, max_age_days=90, force=True)
    assert outcome.status == "failed" and "root key" in outcome.message and "nothing changed" in outcome.message


def test_a_console_of_the_real_cloud_rotates_through_the_official_sdk(real_cloud, workdir, monkeypatch):
    """The SDK is chosen because the console plugin declares a RAM endpoint, not by its name;
    the account's api_url overrides the endpoint, and a console without either has no API."""
    pytest.importorskip("alibabacloud_ram20150501", reason="pip install alibabacloud-ram20150501")
    path = rotation_file(workdir, "http://127.0.0.1:9", console="cloud", id_ref="env:CLOUD_ID",
                         secret_ref="env:CLOUD_SECRET")
    pool = open_pool(accounts_file=path, lease_dir=workdir / "leases", environ={})
    account = pool.get("rot").resolve({"CLOUD_ID": "LTAIcloud1", "CLOUD_SECRET": "cloud-secret"})
    api = access_key_api(account, None, "LTAIcloud1", "cloud-secret")
    assert isinstance(api, AlibabaAccessKeys) and (api.endpoint, api.protocol) == ("127.0.0.1:9", "http")
    api = access_key_api(dataclasses.replace(account, api_url=None), None, "LTAIcloud1", "cloud-secret")
    assert (api.endpoint, api.protocol) == ("ram.aliyuncs.com", "https")
    monkeypatch.setattr(CloudConsole, "ram_endpoint", None)
    with pytest.raises(UsageError, match="cannot rotate keys of console 'cloud'.*offers no RAM API"):
        access_key_api(account, None, "LTAIcloud1", "cloud-secret")
    with pytest.raises(UsageError, match="cannot rotate keys of console 'nowhere' \\(its plugin is not installed"):
        access_key_api(dataclasses.replace(account, console="nowhere"), None, "LTAIcloud1", "cloud-secret")


def test_the_alibaba_sdk_backend_rotates_against_the_sandbox(real_cloud, sandbox, tenant, root_client, workdir,
                                                             alice_files):
    pytest.importorskip("alibabacloud_ram20150501", reason="pip install alibabacloud-ram20150501")
    path = rotation_file(workdir, sandbox.url, console="cloud", key_user="alice")
    _, lease = leased(workdir, path)
    with lease:
        outcome = rotate(lease, max_age_days=90, force=True)
    assert outcome.status == "rotated", outcome.message
    new_id, new_secret = (p.read_text().strip() for p in alice_files)
    assert keys_of(root_client, "alice") == [new_id]
    assert refused_code(sandbox.url, new_id, new_secret) is None
    assert refused_code(sandbox.url, tenant.admin_access_key_id, tenant.admin_access_key_secret) == \
        "InvalidAccessKeyId.NotFound"


def test_without_the_ram_sdk_the_error_says_what_to_install(real_cloud, sandbox, workdir, alice_files, monkeypatch):
    monkeypatch.setitem(sys.modules, "alibabacloud_ram20150501", None)
    path = rotation_file(workdir, sandbox.url, console="cloud")
    _, lease = leased(workdir, path)
    with lease, pytest.raises(UsageError, match="pip install alibabacloud-ram20150501"):
        rotate(lease, max_age_days=90, force=True)


def test_a_dry_run_reads_the_age_and_changes_nothing(sandbox, tenant, root_client, workdir, alice_files):
    path = rotation_file(workdir, sandbox.url)
    pool, lease = leased(workdir, path)
    with lease:
        outcome = rotate(lease, max_age_days=90, dry_run=True)
    assert outcome.status == "would-rotate" and outcome.age_days > 365
    assert pool.state.read("rot").key.source == "api"  # the age, learned from the API, is kept
    assert keys_of(root_client, "alice") == [tenant.admin_access_key_id]
