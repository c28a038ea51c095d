"""The aliyun console plugin: registered like any plugin, configured in [console.aliyun],
its own account from DOCVERIFY_ALIYUN_*, its endpoint as the later stages see it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from aliyun_recordings import ACCOUNT_ID, KEY_ID, KEY_SECRET, PASSWORD, ROLE, USER, endpoint_of, own_env

from docverify.config import load_config
from docverify.errors import ConfigError
from docverify.plugins import load_plugins
from docverify.scrub import known
from docverify_aliyun.console import AliyunConsole
from docverify_aliyun.signin import AliyunLogin
from docverify_playwright.executor import _origin_pattern


def test_registered_as_a_console_the_sandbox_stays_the_default():
    plugins = load_plugins()
    assert plugins.get("consoles", "aliyun") is AliyunConsole
    assert plugins.registry("consoles").default() == "sandbox"
    assert AliyunConsole.cloud == "alibaba"


def test_options_come_from_the_console_aliyun_table_and_the_environment(tmp_path):
    (tmp_path / "docverify.toml").write_text(
        '[console]\nuse = "aliyun"\n[console.aliyun]\nsite = "china"\nregion = "cn-shanghai"\n'
        "audit_deadline_s = 900\nsession_reuse = false\n", encoding="utf-8")
    config = load_config(cwd=tmp_path, environ={"DOCVERIFY_CONSOLE__ALIYUN__ROLE_ARN": ROLE})
    options = config.plugin_options("console", "aliyun", AliyunConsole)
    assert (options.site, options.region, options.audit_deadline_s, options.session_reuse, options.role_arn) == \
        ("china", "cn-shanghai", 900, False, ROLE)


@pytest.mark.parametrize("table, words", [
    ('site = "europe"', "console.aliyun.site"),
    ('region = "Hangzhou"', "console.aliyun.region"),
    ('role_arn = "docverify-console"', "console.aliyun.role_arn"),
    ("audit_deadline_s = -1", "console.aliyun.audit_deadline_s"),
    ("session_duration_s = 60", "console.aliyun.session_duration_s"),
    ('sign_in = "sso"', "console.aliyun.sign_in"),
    ('colour = "red"', "console.aliyun.colour"),
])
def test_a_bad_setting_names_itself(tmp_path, table, words):
    (tmp_path / "docverify.toml").write_text(f"[console.aliyun]\n{table}\n", encoding="utf-8")
    config = load_config(cwd=tmp_path, environ={})
    with pytest.raises(ConfigError) as raised:
        config.plugin_options("console", "aliyun", AliyunConsole)
    assert words in str(raised.value)


def test_the_endpoint_as_the_later_stages_see_it():
    endpoint = endpoint_of(AliyunConsole(AliyunConsole.Options(site="china", region="cn-beijing")), own_env())
    assert endpoint.url == "https://home.console.aliyun.com"
    assert endpoint.default_region == "cn-beijing" and endpoint.home.startswith("data:text/html")
    assert endpoint.audit_url == "https://actiontrail.{region}.aliyuncs.com"
    login = endpoint.login
    assert isinstance(login, AliyunLogin) and login.method == "password"
    assert (login.url, login.user, login.password, login.home) == \
        ("https://signin.aliyun.com/login.htm", USER, PASSWORD, "https://home.console.aliyun.com/")
    extra = endpoint.extra
    assert (extra["account_id"], extra["access_key_id"], extra["access_key_secret"]) == (ACCOUNT_ID, KEY_ID, KEY_SECRET)
    assert (extra["audit_delay_s"], extra["audit_poll_cap_s"], extra["audit_undelivered"]) == ("600", "30",
                                                                                               "inconclusive")
    assert extra["terraform_provider"] == "alicloud"  # provisioned with the real provider, behind the cost guard
    assert {PASSWORD, KEY_SECRET} <= known()  # read through env: references, so masked everywhere
    assert PASSWORD not in repr(endpoint) and KEY_SECRET not in repr(endpoint)
    assert endpoint.links == ()  # the real console: a doc's link opens as it is
    for url in ("https://ecs.console.aliyun.com/server", "https://g.alicdn.com/x.js", "https://signin.aliyun.com/x",
                "https://actiontrail.cn-beijing.aliyuncs.com/", "https://ecs.console.alibabacloud.com/"):
        assert any(re.match(_origin_pattern(o) + "(?:[/?#]|$)", url) for o in endpoint.origins), url
    assert not any(re.match(_origin_pattern(o) + "(?:[/?#]|$)", "https://evil.example.com/aliyun.com")
                   for o in endpoint.origins)


def test_the_protection_of_what_docverify_did_not_create_is_on_and_can_be_turned_off(tmp_path):
    assert endpoint_of(AliyunConsole(), own_env()).protect_unowned is True
    assert endpoint_of(AliyunConsole(AliyunConsole.Options(protect_unowned=False)), own_env()).protect_unowned is False
    (tmp_path / "docverify.toml").write_text("[console.aliyun]\nprotect_unowned = false\n", encoding="utf-8")
    assert load_config(cwd=tmp_path, environ={}).plugin_options("console", "aliyun",
                                                                 AliyunConsole).protect_unowned is False
    # the sandbox: off by default (its benchmark deletes seeded resources), on when asked
    from docverify_sandbox.console import SandboxConsole

    assert SandboxConsole.Options().protect_unowned is False
    on = load_config(cwd=tmp_path, environ={"DOCVERIFY_CONSOLE__SANDBOX__PROTECT_UNOWNED": "true"})
    assert on.plugin_options("console", "sandbox", SandboxConsole).protect_unowned is True


def test_the_wildcard_origin_is_a_whole_host_label():
    pattern = re.compile("^(?:" + _origin_pattern("https://*.alicdn.com") + ")(?:[/?#]|$)")
    assert pattern.match("https://g.alicdn.com/a.js") and pattern.match("https://a.b.alicdn.com")
    assert not pattern.match("https://alicdn.com.evil.net/") and not pattern.match("https://evilalicdn.com/")
    assert not pattern.match("http://g.alicdn.com/")


def test_a_stand_in_console_gets_the_docs_links():
    console = AliyunConsole(AliyunConsole.Options(console_url="http://127.0.0.1:9/console"))
    endpoint = endpoint_of(console, own_env())
    assert endpoint.local("https://vpc.console.aliyun.com/eip") == "http://127.0.0.1:9/console/eip/eip/cn-hangzhou/eips"
    assert endpoint.local("https://ecs.console.aliyun.com") == \
        "http://127.0.0.1:9/console/ecs/server/region/cn-hangzhou"


def test_federated_when_there_is_no_password_and_a_role():
    env = own_env(DOCVERIFY_ALIYUN_ROLE_ARN=ROLE)
    del env["DOCVERIFY_ALIYUN_PASSWORD"], env["DOCVERIFY_ALIYUN_LOGIN_USER"]
    login = endpoint_of(AliyunConsole(), env).login
    assert login.method == "federated" and login.federation.role_arn == ROLE
    assert login.federation.url == "https://signin.alibabacloud.com/federation"
    assert KEY_SECRET not in repr(login)
    # asked for, with a password at hand: federated all the same
    chosen = endpoint_of(AliyunConsole(AliyunConsole.Options(sign_in="federated", role_arn=ROLE)), own_env()).login
    assert chosen.method == "federated" and chosen.password == ""


@pytest.mark.parametrize("options, env, words", [
    ({}, {"DOCVERIFY_ALIYUN_LOGIN_USER": USER}, "DOCVERIFY_ALIYUN_LOGIN_USER is set but DOCVERIFY_ALIYUN_PASSWORD"),
    ({}, {"DOCVERIFY_ALIYUN_LOGIN_USER": "docs-ci", "DOCVERIFY_ALIYUN_PASSWORD": PASSWORD},
     "'docs-ci' is not a RAM user's logon name"),
    ({"sign_in": "federated"}, {"DOCVERIFY_ALIYUN_ACCESS_KEY_ID": KEY_ID, "DOCVERIFY_ALIYUN_ACCESS_KEY_SECRET": KEY_SECRET},
     "federated sign-in needs [console.aliyun] role_arn"),
    ({"sign_in": "federated", "role_arn": ROLE}, {"DOCVERIFY_ALIYUN_LOGIN_USER": USER, "DOCVERIFY_ALIYUN_PASSWORD": PASSWORD},
     "federated sign-in needs DOCVERIFY_ALIYUN_ACCESS_KEY_ID/_SECRET"),
    ({}, {"DOCVERIFY_ALIYUN_ACCESS_KEY_ID": KEY_ID, "DOCVERIFY_ALIYUN_ACCESS_KEY_SECRET": KEY_SECRET,
          "DOCVERIFY_ALIYUN_ROLE_ARN": "docverify-console"}, "DOCVERIFY_ALIYUN_ROLE_ARN: 'docverify-console' is not"),
])
def test_a_bad_own_account_is_a_clear_configuration_error(options, env, words):
    with pytest.raises(ConfigError) as raised:
        endpoint_of(AliyunConsole(AliyunConsole.Options(**options)), env)
    assert words in str(raised.value)
    assert PASSWORD not in str(raised.value)


def test_the_sessions_folder_is_private(tmp_path):
    from docverify_aliyun.sessions import private_folder

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    with pytest.raises(ConfigError, match="can be opened by others") as raised:
        private_folder(shared)
    assert f"chmod 700 {shared}" in raised.value.hint
    made = private_folder(tmp_path / "new" / "sessions")
    assert made.stat().st_mode & 0o777 == 0o700


def test_the_runs_own_sessions_folder_goes_when_the_console_stops():
    with AliyunConsole().start() as endpoint:
        folder = endpoint.login.sessions
        assert folder is not None
        assert Path(folder).is_dir() and Path(folder).stat().st_mode & 0o077 == 0
    assert not Path(folder).exists()
    with AliyunConsole(AliyunConsole.Options(session_reuse=False)).start() as endpoint:
        assert endpoint.login.sessions is None


def test_the_policy_documents_the_messages_point_to():
    """docs/aliyun-ram-policy.json grants what the code calls: the audit log, the federated
    role, rotation on the user's own keys, every ListTagResources and delete action of the
    cleanup; "*" only for what reads."""
    import json

    from docverify_aliyun.leftovers import KINDS

    root = Path(__file__).resolve().parents[2] / "docs"
    policy = json.loads((root / "aliyun-ram-policy.json").read_text(encoding="utf-8"))
    assert policy["Version"] == "1"

    def listed(value):
        return [value] if isinstance(value, str) else value

    granted: dict[str, set[str]] = {}
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow"
        for action in listed(statement["Action"]):
            granted.setdefault(action, set()).update(listed(statement["Resource"]))
    assert granted["actiontrail:LookupEvents"] == {"*"}
    assert all(re.match(r"^acs:ram::<ACCOUNT_ID>:role/docverify-console$", r) for r in granted["sts:AssumeRole"])
    for action in ("ram:ListAccessKeys", "ram:CreateAccessKey", "ram:UpdateAccessKey", "ram:DeleteAccessKey"):
        assert granted[action] == {"acs:ram:*:<ACCOUNT_ID>:user/<USER_NAME>"}, action  # its own user's keys only
    for kind in KINDS:
        assert "*" in granted[f"{kind.product}:ListTagResources"]
        deleting = granted[f"{kind.product}:{kind.delete}"]  # in the account and region only
        assert f"acs:{kind.product}:cn-hangzhou:<ACCOUNT_ID>:*" in deleting and "*" not in deleting
    everywhere = {action for action, resources in granted.items() if "*" in resources}
    assert everywhere <= {"actiontrail:LookupEvents"} | {f"{k.product}:ListTagResources" for k in KINDS}
    trust = json.loads((root / "aliyun-ram-role-trust.json").read_text(encoding="utf-8"))
    assert trust["Statement"][0]["Action"] == "sts:AssumeRole"


def test_the_paid_products_policy_covers_every_paid_type_the_templates_make():
    """docs/aliyun-ram-policy-paid.json: one statement per ``paid: true`` type of the alicloud
    templates (its Sid), with an action that makes it, one that removes it and one that
    tags it (the templates tag what they make), limited to the account and the region."""
    import json

    import yaml

    root = Path(__file__).resolve().parents[2]
    types = yaml.safe_load((root / "terraform_templates" / "alicloud" / "types.yaml").read_text(encoding="utf-8"))
    paid = {name for name, spec in types.items() if isinstance(spec, dict) and spec.get("paid")}
    policy = json.loads((root / "docs" / "aliyun-ram-policy-paid.json").read_text(encoding="utf-8"))
    assert policy["Version"] == "1"
    statements = {statement["Sid"]: statement for statement in policy["Statement"]}
    assert paid <= set(statements), paid - set(statements)
    for name in paid:
        actions = [action.split(":", 1)[1] for action in statements[name]["Action"]]
        assert any(a.startswith(("Create", "Run", "Allocate")) for a in actions), name
        assert any(a.startswith(("Delete", "Release", "ScheduleKeyDeletion")) for a in actions), name
        assert any(a.startswith(("TagResource", "TagResources")) for a in actions), name
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow"
        assert all(re.fullmatch(r"acs:[a-z]+:cn-hangzhou:<ACCOUNT_ID>:\*", r) for r in statement["Resource"]), statement


@pytest.mark.parametrize("url, signed_in", [
    ("https://home.console.aliyun.com/", True),
    ("https://homenew.console.aliyun.com/home/dashboard", True),
    ("https://ecs.console.aliyun.com/server/region/cn-hangzhou", True),
    ("https://signin.aliyun.com/login.htm", False),
    ("https://signin.aliyun.com/federation?Action=Login", False),
    # the Alibaba Cloud account's own logon, where the console sends a session that is not signed in
    ("https://account.aliyun.com/login/login.htm?oauth_callback=https%3A%2F%2Fhome.console.aliyun.com%2F", False),
    ("https://home.console.alibabacloud.com/", False),  # the other site
    ("data:text/html,x", False),
])
def test_a_page_counts_as_signed_in_only_on_the_sites_consoles(url, signed_in):
    login = endpoint_of(AliyunConsole(AliyunConsole.Options(site="china")), own_env()).login
    assert login.at_console(url) is signed_in
