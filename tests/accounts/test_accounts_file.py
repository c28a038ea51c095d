"""The accounts file and DOCVERIFY_ACCOUNT_* variables: good input, bad input, writing."""

from __future__ import annotations

from pathlib import Path

import pytest
from accounts_helpers import write_secret

import docverify.plugins
from docverify.errors import UsageError
from docverify.lease import AccountsFileError, open_pool
from docverify.lease.file import add_account, load_accounts

GOOD = """\
# the CI pool
max_key_age_days = 30

[accounts.ci-1]
console = "aliyun"
account_id = "1234567890123456"
alias = "docs-ci"
login_user = "docverify@docs-ci.onaliyun.com"
password = "env:CI1_PASSWORD"
access_key_id = "file:secrets/ci-1.id"
access_key_secret = "file:secrets/ci-1.secret"
region = "cn-shanghai"
tags = ["ecs", "nightly"]

[accounts.local]
console = "sandbox"
"""


def write(folder: Path, text: str, name: str = "docverify-accounts.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_loads_and_resolves(workdir):
    path = write(workdir, GOOD)
    write_secret(workdir / "secrets/ci-1.id", "LTAIfileid0000001")
    write_secret(workdir / "secrets/ci-1.secret", "file-secret-0000001")
    source = load_accounts(path, environ={})
    assert [spec.name for spec in source.specs] == ["ci-1", "local"]
    assert source.max_key_age_days == 30
    spec = source.get("ci-1")
    assert spec.tags == ["ecs", "nightly"] and spec.origin == "docverify-accounts.toml:4"
    account = spec.resolve({"CI1_PASSWORD": "env-password-001"})
    assert account.password.reveal() == "env-password-001"
    assert account.access_key_id.reveal() == "LTAIfileid0000001"  # relative to the accounts file
    assert account.region == "cn-shanghai"


def test_unknown_key_names_file_line_and_field(workdir):
    path = write(workdir, GOOD.replace('region = "cn-shanghai"', 'regoin = "cn-shanghai"'))
    with pytest.raises(AccountsFileError) as info:
        load_accounts(path, environ={})
    message = str(info.value)
    assert "docverify-accounts.toml:12: accounts.ci-1.regoin: unknown key (did you mean 'region'?)" in message
    assert "valid keys:" in message


def test_a_literal_secret_is_an_error_that_does_not_repeat_it(workdir):
    path = write(workdir, GOOD.replace('"env:CI1_PASSWORD"', '"Hunter2-password!"'))
    with pytest.raises(AccountsFileError) as info:
        load_accounts(path, environ={})
    message = str(info.value)
    assert message.startswith("docverify-accounts.toml:9: accounts.ci-1.password: not a secret reference")
    assert "env:VAR" in message and "Hunter2-password!" not in message


@pytest.mark.parametrize("change, expected", [
    (lambda t: t.replace('console = "sandbox"\n', 'region = "x"\n'), "accounts.local.console is required"),
    (lambda t: t.replace("max_key_age_days = 30", "max_age = 30"), "unknown key 'max_age' (did you mean 'max_key_age_days'?)"),
    (lambda t: t.replace('access_key_id = "file:secrets/ci-1.id"\n', ""), "access_key_id is required when access_key_secret is set"),
    (lambda t: t.replace('"file:secrets/ci-1.id"', '"file:secrets/ci-1.secret"'), "two different references"),
    (lambda t: t.replace("[accounts.local]", "[accounts.'bad name']"), "account name 'bad name' is not valid"),
    (lambda t: t.replace('tags = ["ecs", "nightly"]', 'tags = "ecs"'), "accounts.ci-1.tags: Input should be a valid list"),
    (lambda t: t + "[accounts", "invalid TOML"),
])
def test_bad_files_say_what_and_where(workdir, change, expected):
    path = write(workdir, change(GOOD))
    with pytest.raises(AccountsFileError) as info:
        load_accounts(path, environ={})
    assert expected in str(info.value)
    assert "docverify-accounts.toml" in str(info.value)


def test_accounts_from_the_environment(workdir):
    env = {"DOCVERIFY_ACCOUNT_CI__CONSOLE": "aliyun", "DOCVERIFY_ACCOUNT_CI__TAGS": "ecs, nightly",
           "DOCVERIFY_ACCOUNT_CI__ACCESS_KEY_ID": "env:AK_ID", "DOCVERIFY_ACCOUNT_CI__ACCESS_KEY_SECRET": "env:AK_SECRET",
           "AK_ID": "LTAIenvid00000001", "AK_SECRET": "env-secret-000001"}
    source = load_accounts(workdir / "docverify-accounts.toml", environ=env)
    (spec,) = source.specs
    assert spec.name == "ci" and spec.tags == ["ecs", "nightly"] and spec.origin == "env DOCVERIFY_ACCOUNT_CI__*"
    assert spec.resolve(env).access_key_secret.reveal() == "env-secret-000001"


def test_a_literal_in_the_environment_names_the_variable(workdir):
    env = {"DOCVERIFY_ACCOUNT_CI__CONSOLE": "aliyun", "DOCVERIFY_ACCOUNT_CI__LOGIN_USER": "u@a",
           "DOCVERIFY_ACCOUNT_CI__PASSWORD": "plain-text-pw-1"}
    with pytest.raises(AccountsFileError) as info:
        load_accounts(workdir / "docverify-accounts.toml", environ=env)
    assert str(info.value).startswith("env DOCVERIFY_ACCOUNT_CI__PASSWORD: DOCVERIFY_ACCOUNT_CI__PASSWORD: not a")
    assert "plain-text-pw-1" not in str(info.value)


def test_the_same_name_twice_is_an_error(workdir):
    path = write(workdir, GOOD)
    with pytest.raises(AccountsFileError, match="defined twice"):
        load_accounts(path, environ={"DOCVERIFY_ACCOUNT_LOCAL__CONSOLE": "sandbox"})


def test_an_explicit_file_must_exist(workdir):
    with pytest.raises(AccountsFileError, match="does not exist"):
        open_pool(accounts_file=workdir / "nope.toml", environ={})


def test_no_file_and_the_sandbox_gives_the_seeded_tenants(workdir):
    from docverify_sandbox.state import DEFAULT_ACCOUNTS

    pool = open_pool(console="sandbox", cwd=workdir, environ={})
    assert pool.names == [a.alias for a in DEFAULT_ACCOUNTS]
    account = pool.get("sandbox").resolve({})
    first = DEFAULT_ACCOUNTS[0]
    assert account.login_user == f"{first.admin_user}@{first.alias}.onaliyun.com"
    assert account.access_key_secret.reveal() == first.admin_access_key_secret
    assert account.extra["root_access_key_id"].reveal() == first.access_key_id
    assert pool.lease_dir == workdir / ".docverify" / "leases"
    assert open_pool(console="aliyun", cwd=workdir, environ={}).names == []


def test_a_third_party_console_plugin_offers_its_own_pool_and_ram_api(workdir, monkeypatch):
    """Nothing in the accounts package names a console: any plugin can offer both."""
    import dataclasses

    import docverify.lease.rotation as rotation
    from docverify.console import Console
    from docverify.hookspecs import hookimpl
    from docverify.lease.account import AccountSpec
    from docverify.lease.secret import SecretRef
    from docverify.plugins import load_plugins

    class Lab(Console):
        name = "lab"

        @classmethod
        def default_accounts(cls):
            return [AccountSpec.built_in("built-in (lab)", fixed={"password": SecretRef.fixed("lab/pw", "lab-pw-1")}, extra={},
                                         name="lab-1", console="lab", login_user="u@lab")]

        @classmethod
        def access_key_api(cls, account, url, key_id, secret):
            return ("lab-ram", account.name, url, key_id)

    class LabPlugin:
        @hookimpl
        def register_consoles(self, register):
            register(Lab)

    monkeypatch.setattr(docverify.plugins, "installed_plugins", lambda: load_plugins(extra=[LabPlugin()]))
    pool = open_pool(console="lab", cwd=workdir, environ={})
    assert pool.names == ["lab-1"] and pool.source == "the lab console's built-in accounts"
    account = pool.get("lab-1").resolve({})
    assert rotation.access_key_api(account, "http://lab", "K1", "S1") == ("lab-ram", "lab-1", "http://lab", "K1")
    assert open_pool(console="nowhere", cwd=workdir, environ={}).names == []
    with pytest.raises(UsageError, match="cannot rotate keys of console 'nowhere'"):
        rotation.access_key_api(dataclasses.replace(account, console="nowhere"), None, "K1", "S1")


def test_add_appends_a_table_and_keeps_comments(workdir):
    path = write(workdir, GOOD)
    add_account(path, {"name": "ci-2", "console": "aliyun", "login_user": "u@ci2.onaliyun.com",
                       "password": "env:CI2_PW", "tags": ["ecs"], "max_key_age_days": 7})
    text = path.read_text()
    assert text.startswith("# the CI pool")
    assert '[accounts.ci-2]\nconsole = "aliyun"\nlogin_user = "u@ci2.onaliyun.com"\npassword = "env:CI2_PW"\n' in text
    assert load_accounts(path, environ={}).get("ci-2").max_key_age_days == 7


def test_add_creates_the_file_and_refuses_literals_and_duplicates(workdir):
    path = workdir / "docverify-accounts.toml"
    add_account(path, {"name": "a", "console": "sandbox"})
    assert path.stat().st_mode & 0o777 == 0o600 and "Secrets are references" in path.read_text()
    with pytest.raises(AccountsFileError, match="exists already"):
        add_account(path, {"name": "a", "console": "sandbox"})
    with pytest.raises(AccountsFileError) as info:
        add_account(path, {"name": "b", "console": "sandbox", "login_user": "x", "password": "topsecret99"})
    assert "--password: not a secret reference" in str(info.value) and "topsecret99" not in str(info.value)
    assert "topsecret99" not in path.read_text()


def test_an_account_signs_an_endpoint_in(workdir, sandbox):
    from docverify_sandbox.state import DEFAULT_ACCOUNTS

    second = DEFAULT_ACCOUNTS[1]
    pool = open_pool(console="sandbox", cwd=workdir, environ={})
    endpoint = pool.get("tenant2").resolve({}).on(sandbox)
    assert endpoint.login.user == f"{second.admin_user}@{second.alias}.onaliyun.com"
    assert endpoint.login.password == second.admin_password and endpoint.login.url == sandbox.login.url
    assert endpoint.extra["access_key_id"] == second.admin_access_key_id
    assert endpoint.extra["root_access_key_id"] == second.access_key_id
    assert endpoint.extra["account_id"] == second.account_id
    assert endpoint.extra["audit_delay_s"] == sandbox.extra["audit_delay_s"]  # console keys stay
    # an account without root keys does not inherit another tenant's
    path = write(workdir, '[accounts.x]\nconsole = "sandbox"\nlogin_user = "u@x"\npassword = "env:X_PW"\n')
    other = load_accounts(path, environ={}).get("x").resolve({"X_PW": "x-password-1"}).on(sandbox)
    assert other.login.user == "u@x" and "root_access_key_id" not in other.extra
    assert "access_key_id" not in other.extra
