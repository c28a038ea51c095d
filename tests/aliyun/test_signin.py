"""Signing in to the real console, against the recorded logon flow (aliyun_recordings.LogonSite:
pages reconstructed from Alibaba Cloud's documentation), through the playwright executor."""

from __future__ import annotations

import asyncio
import stat

import pytest
from aliyun_recordings import KEY_SECRET, PASSWORD, ROLE, USER, endpoint_of, own_env, recorded_console

from docverify.errors import CredentialsRejected, EnvironmentProblem
from docverify.scrub import known
from docverify_playwright.executor import PlaywrightExecutor

pytestmark = pytest.mark.browser

FAST = PlaywrightExecutor.Options(navigation_timeout_s=10, action_timeout_s=5)


def ref(observation, role: str, name: str) -> str:
    return next(e.ref for e in observation.elements if e.role == role and e.name == name and e.ref)


async def open_console(endpoint, artifacts, product: str = "ECS console"):
    """Open the executor (it signs in), start a procedure's session, open ``product``
    from the page it starts on; the page then, and the run's session state."""
    async with PlaywrightExecutor(FAST).open(endpoint, artifacts) as xrun:
        async with xrun.session("one") as session:
            start = await session.observe()
            result = await session.apply(action("click", ref(start, "link", product)))
            assert result.ok, result.error
            opened = await session.observe()
        return start, opened, xrun.storage_state


def action(kind: str, ref_: str):
    from docverify.execute.actions import Action, ActionKind

    return Action(ActionKind(kind), ref=ref_)


def signed_in_with(endpoint, tmp_path):
    async def scenario():
        async with PlaywrightExecutor(FAST).open(endpoint, tmp_path / "artifacts") as xrun:
            return xrun.storage_state
    return asyncio.run(scenario())


def test_a_ram_user_signs_in_through_the_logon_pages_and_opens_a_console(site, tmp_path, chromium):
    sessions = tmp_path / "sessions"
    sessions.mkdir(mode=0o700)
    endpoint = endpoint_of(recorded_console(site), own_env(), str(sessions))
    start, opened, state = asyncio.run(open_console(endpoint, tmp_path / "artifacts"))
    assert start.url.startswith("data:text/html") and "Alibaba Cloud consoles" in start.snapshot
    assert opened.url == f"{site.url}/console/ecs/server/region/cn-hangzhou"
    assert f"Signed in as {USER}" in opened.snapshot
    assert site.logons == 1
    ticket = next(c["value"] for c in state["cookies"] if c["name"] == "login_aliyunid_ticket")
    assert ticket in known()  # the session is a secret: scrubbed from reports, logs and traces
    [kept] = sessions.iterdir()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert ticket in kept.read_text() and USER not in kept.name and PASSWORD not in kept.read_text()
    assert not any(PASSWORD in path.read_text(errors="replace") for path in (tmp_path / "artifacts").rglob("*")
                   if path.is_file())


def test_a_kept_session_is_reused_until_it_expires(site, tmp_path, chromium):
    sessions = tmp_path / "sessions"
    endpoint = endpoint_of(recorded_console(site, session_dir=str(sessions)), own_env(), str(sessions))
    first = signed_in_with(endpoint, tmp_path)
    second = signed_in_with(endpoint, tmp_path)  # the next run: no logon, the same session
    assert site.logons == 1
    assert {c["name"]: c["value"] for c in first["cookies"]}["login_aliyunid_ticket"] == \
        {c["name"]: c["value"] for c in second["cookies"]}["login_aliyunid_ticket"]
    site.expire_sessions()  # signed out elsewhere, or timed out: the next run logs on again
    signed_in_with(endpoint, tmp_path)
    assert site.logons == 2


@pytest.mark.parametrize("site", ["china"], indirect=True)
def test_the_china_sites_chinese_logon_pages(site, tmp_path, chromium):
    endpoint = endpoint_of(recorded_console(site), own_env())
    assert endpoint.extra["aliyun_site"] == "china"
    _, opened, _ = asyncio.run(open_console(endpoint, tmp_path, "云服务器ECS控制台"))
    assert opened.url == f"{site.url}/console/ecs/server/region/cn-hangzhou" and site.logons == 1


@pytest.mark.parametrize("setup, error, words, hint", [
    ({"mfa": True}, CredentialsRejected, "stopped at a multi-factor authentication (MFA) page",
     "disable MFA for this RAM user"),
    ({"expired": True}, CredentialsRejected, "stopped at a password-expired page", "set a new password"),
    ({"failures": 5}, CredentialsRejected, "stopped at a locked-account page", "RAM unlocks the user"),
    ({"captcha": True}, EnvironmentProblem, "stopped at a slider captcha (risk control)", "sign_in = \"federated\""),
    ({"password": "another-password-9"}, CredentialsRejected, "failed: The username or password is incorrect.",
     "check the logon name and the password"),
])
def test_a_page_that_stops_the_logon_is_an_environment_error_saying_what_the_account_needs(
        site, tmp_path, chromium, setup, error, words, hint):
    user = site.users[USER.lower()]
    site.captcha = setup.pop("captcha", False)
    for key, value in setup.items():
        setattr(user, key, value)
    endpoint = endpoint_of(recorded_console(site), own_env())
    with pytest.raises(EnvironmentProblem) as raised:
        signed_in_with(endpoint, tmp_path)
    problem = raised.value
    assert type(problem) is error  # a captcha passes with time: not the account's fault, never quarantined
    assert words in problem.message and hint in (problem.hint or "")
    assert f"as {USER}" in problem.message and PASSWORD not in str(problem)
    assert site.logons == 0


def test_federated_sign_in_assumes_the_role_and_needs_no_password(site, sts, tmp_path, chromium):
    env = own_env()
    del env["DOCVERIFY_ALIYUN_PASSWORD"], env["DOCVERIFY_ALIYUN_LOGIN_USER"]
    endpoint = endpoint_of(recorded_console(site, sts=sts, role_arn=ROLE), env)
    assert endpoint.login.method == "federated"
    _, opened, _ = asyncio.run(open_console(endpoint, tmp_path, "VPC console"))
    assert opened.url == f"{site.url}/console/vpc/vpc/cn-hangzhou/vpcs"
    assert f"Signed in as {ROLE}" in opened.snapshot
    assert sts.calls == 1 and site.logons == 1
    temporary = next(iter(site.keys.temporary.values()))
    assert temporary[0] in known() and temporary[1] in known()  # the role's key and token are secrets


def test_federated_sign_in_without_sts_assume_role_is_refused_clearly(site, sts, tmp_path, chromium):
    sts.allowed.clear()  # the key's RAM user may not assume the role
    env = own_env(DOCVERIFY_ALIYUN_ROLE_ARN=ROLE)
    endpoint = endpoint_of(recorded_console(site, sts=sts, sign_in="federated"), env)
    with pytest.raises(CredentialsRejected) as raised:
        signed_in_with(endpoint, tmp_path)
    problem = raised.value
    assert f"STS AssumeRole of {ROLE} refused: NoPermission" in problem.message
    assert "sts:AssumeRole" in problem.hint and "docs/aliyun-ram-policy.json" in problem.hint
    assert KEY_SECRET not in str(problem) and site.logons == 0


def test_without_an_account_of_its_own_the_run_opens_and_each_procedure_says_what_to_set(site, tmp_path, chromium):
    console = recorded_console(site)
    endpoint = endpoint_of(console, {})
    state = signed_in_with(endpoint, tmp_path)  # nobody to sign in at the start: each procedure leases one
    assert state == {"cookies": [], "origins": []}
    with pytest.raises(EnvironmentProblem, match="has no account to sign in with") as raised:
        console.task_account(endpoint, "doc#one")
    assert "DOCVERIFY_ALIYUN_LOGIN_USER" in raised.value.hint and 'console = "aliyun"' in raised.value.hint


def test_a_leased_accounts_password_logon_uses_the_consoles_flow(site, tmp_path, chromium):
    """An account of the pool signs in with its own logon name and password, through
    the same logon pages (Account.on keeps the console's own flow)."""
    from docverify.lease.account import Account
    from docverify.lease.secret import Secret

    other = "writer@example-alias.onaliyun.com"
    site.add_user(other, "Writer-pw-2")
    endpoint = endpoint_of(recorded_console(site), {})
    leased = Account(name="ci-1", console="aliyun", login_user=other, password=Secret("Writer-pw-2")).on(endpoint)

    async def scenario():
        async with PlaywrightExecutor(FAST).open(endpoint, tmp_path) as xrun, \
                xrun.session("leased", leased.login) as session:
            start = await session.observe()
            await session.apply(action("click", ref(start, "link", "RAM console")))
            return await session.observe()

    opened = asyncio.run(scenario())
    assert f"Signed in as {other}" in opened.snapshot and site.logons == 1


def test_a_leased_account_without_a_password_signs_in_federated_through_its_own_role(site, sts, keys, tmp_path,
                                                                                    chromium):
    """A pool account with an AccessKey and a role_arn, no password: the console's
    federation settings with the account's key and role (AliyunLogin.as_account)."""
    from docverify.lease.account import Account
    from docverify.lease.secret import Secret

    other_role = f"acs:ram::{ROLE.split(':')[3]}:role/docverify-pool"
    keys.secrets["LTAIpool0000000001"] = "pool-secret-value-1"
    sts.allowed["LTAIpool0000000001"] = {other_role}
    endpoint = endpoint_of(recorded_console(site, sts=sts), {})  # the console has no account of its own
    leased = Account(name="ci-2", console="aliyun", access_key_id=Secret("LTAIpool0000000001"),
                     access_key_secret=Secret("pool-secret-value-1"), role_arn=other_role).on(endpoint)
    assert leased.login.method == "federated" and leased.login.identity == f"role {other_role}"

    async def scenario():
        async with PlaywrightExecutor(FAST).open(endpoint, tmp_path) as xrun, \
                xrun.session("leased", leased.login) as session:
            start = await session.observe()
            await session.apply(action("click", ref(start, "link", "RAM console")))
            return await session.observe()

    opened = asyncio.run(scenario())
    assert f"Signed in as {other_role}" in opened.snapshot
    assert sts.calls == 1 and site.logons == 1


def test_a_leased_account_that_can_sign_in_neither_way_is_set_aside_saying_what_to_add(site, sts):
    from docverify.lease.account import Account
    from docverify.lease.secret import Secret

    endpoint = endpoint_of(recorded_console(site, sts=sts), {})
    keys_only = Account(name="ci-3", console="aliyun", access_key_id=Secret("LTAIx"), access_key_secret=Secret("s"))
    with pytest.raises(CredentialsRejected, match="account ci-3 cannot sign in federated: it has no role_arn") as raised:
        keys_only.on(endpoint)
    assert "role_arn" in raised.value.hint
    console_role = endpoint_of(recorded_console(site, sts=sts, role_arn=ROLE), {})
    assert keys_only.on(console_role).login.federation.role_arn == ROLE  # the console's role, when it has one
    password_only = Account(name="ci-4", console="aliyun", login_user=USER, password=Secret(PASSWORD))
    with pytest.raises(CredentialsRejected, match="account ci-4 cannot sign in federated: it has no AccessKey"):
        password_only.on(endpoint_of(recorded_console(site, sts=sts, sign_in="federated", role_arn=ROLE), {}))
    nothing = Account(name="ci-5", console="aliyun")
    with pytest.raises(CredentialsRejected, match="account ci-5 has no logon name and password"):
        nothing.on(endpoint)


def test_the_session_cookies_are_scrubbed_from_the_procedures_trace(site, tmp_path, chromium):
    import zipfile

    endpoint = endpoint_of(recorded_console(site), own_env())
    traced = PlaywrightExecutor.Options(navigation_timeout_s=10, trace="on")

    async def scenario():
        async with PlaywrightExecutor(traced).open(endpoint, tmp_path / "artifacts") as xrun:
            async with xrun.session("traced") as session:
                start = await session.observe()
                await session.apply(action("click", ref(start, "link", "RAM console")))
                await session.observe()
            return xrun.storage_state

    state = asyncio.run(scenario())
    ticket = next(c["value"] for c in state["cookies"] if c["name"] == "login_aliyunid_ticket")
    [trace] = (tmp_path / "artifacts").glob("*.trace.zip")
    with zipfile.ZipFile(trace) as archive:
        contents = b"".join(archive.read(name) for name in archive.namelist())
    assert b"login_aliyunid_ticket" in contents  # the console's requests are in it, with their cookie header...
    assert ticket.encode() not in contents  # ...but not the session itself
