"""Signing in to the real console: the RAM user logon pages, or AccessKey federation.

:class:`AliyunLogin` is the endpoint's :class:`~docverify.console.LoginForm` with the
console's own logon flow: the playwright executor hands it browser contexts
(``browser_sign_in``) instead of filling a one-page form. Either way the answer is a
Playwright storage state, reused for every procedure of the account and kept, where
sessions are kept, in a private folder (:mod:`docverify_aliyun.sessions`).

- **password**: the RAM User Logon page (``login.htm``): the logon name
  (``USER@ALIAS.onaliyun.com`` or ``USER@UID.onaliyun.com``), **Next**, the password,
  **Log On**, then the console home. A page that stops an unattended logon (MFA, the
  slider captcha, an expired password, a locked user: :mod:`docverify_aliyun.logon_pages`)
  is an ENV_ERROR that names it and what the account needs; a wrong password is
  :class:`~docverify.errors.CredentialsRejected` (the pool quarantines the account).
- **federated**: STS AssumeRole with the account's AccessKey, then the STS sign-in
  (:mod:`docverify_aliyun.federation`): no password, no MFA, no captcha.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from docverify.console import LoginForm
from docverify.errors import CredentialsRejected, EnvironmentProblem
from docverify_aliyun import federation as sts
from docverify_aliyun.federation import Federation
from docverify_aliyun.logon_pages import (
    ERROR_MESSAGE,
    LOG_ON_BUTTON,
    LOGON_NAME_FIELDS,
    LOGON_NAME_LABEL,
    NEXT_BUTTON,
    PASSWORD_FIELD,
    STOPS,
    Stop,
)
from docverify_aliyun.sessions import SessionStore

#: Opens a browser context for signing in, from a storage state (None: nobody's); closed when left.
Contexts = Callable[..., AbstractAsyncContextManager[Any]]
#: how often a page is looked at while waiting for the next one
POLL_S = 0.1
#: a RAM user's logon name: USER@ALIAS.onaliyun.com, USER@UID.onaliyun.com, USER@ALIAS or USER@DOMAIN-ALIAS
LOGON_NAME_HELP = "USER@ALIAS.onaliyun.com or USER@UID.onaliyun.com (the Logon Name the RAM console lists)"


def check_logon_name(name: str, where: str) -> None:
    """A RAM user's logon name (``USER@ALIAS.onaliyun.com``); anything else (an
    Alibaba Cloud account's own e-mail logon, a bare user name) is refused, saying what
    to configure."""
    user, at, domain = name.partition("@")
    if not at or not user or not domain or "@" in domain or any(c.isspace() for c in name):
        raise CredentialsRejected(
            f"{where}: {name!r} is not a RAM user's logon name",
            hint=f"the aliyun console signs in RAM users: {LOGON_NAME_HELP}; an Alibaba Cloud account's own "
                 "logon is not supported (create a RAM user for docverify, docs/aliyun-ram-policy.json)")


@dataclass(frozen=True)
class AliyunLogin(LoginForm):
    """The console's sign-in: the RAM user logon page at ``url`` as ``user``/``password``,
    or, without them, ``federation``; without either, nobody (each procedure then
    signs in as the account it leases)."""

    home: str = ""  #: the console home: where a signed-in browser lands
    site: str = "international"
    console_domain: str = ""  #: the site's consoles' domain (console.aliyun.com): a page there is signed in
    federation: Federation | None = None
    sessions: str | None = None  #: the private folder of kept sessions; None: none kept
    #: how an account signs in (``[console.aliyun] sign_in``): ``password``, ``federated``,
    #: or ``auto`` (its password when it has one, else federated)
    prefer: str = "auto"
    #: the console's federation settings (STS and sign-in endpoints, session name and length,
    #: its default ``role_arn``) that an account's own AccessKey and role are filled into
    federation_settings: Federation | None = None

    def as_account(self, account: Any) -> "AliyunLogin":
        """This sign-in as a leased ``account`` (``Account.on``): its logon name and
        password, or federated with its AccessKey through its ``role_arn`` (else the
        console's), as ``prefer`` says. An account that can do neither is refused, saying
        what to add (:class:`CredentialsRejected`: the pool sets it aside)."""
        has_password = bool(account.login_user and account.password is not None)
        has_key = account.access_key_id is not None and account.access_key_secret is not None
        settings = self.federation_settings
        role = account.role_arn or (settings.role_arn if settings is not None else "") or None
        federated = self.prefer == "federated" or (self.prefer == "auto" and not has_password and has_key)
        if not federated:
            if not has_password:
                raise CredentialsRejected(
                    f"account {account.name} has no logon name and password to sign in to the aliyun console with",
                    hint="add them to the account (docverify accounts add --login-user ... --password-ref ...), "
                         "or its AccessKey and a role_arn to sign in federated")
            return replace(self, user=account.login_user, password=account.password.reveal(), federation=None)
        if not has_key or not role or settings is None:
            missing = " and ".join(f"no {what}" for what, ok in (("AccessKey", has_key), ("role_arn", role)) if not ok)
            raise CredentialsRejected(
                f"account {account.name} cannot sign in federated: it has {missing or 'no federation settings'}",
                hint="give the account access_key_id/access_key_secret references and role_arn (a RAM role its "
                     "key may assume: sts:AssumeRole, docs/aliyun-ram-policy.json), or [console.aliyun] role_arn")
        federation = replace(settings, access_key_id=account.access_key_id.reveal(),
                             access_key_secret=account.access_key_secret.reveal(), role_arn=role)
        return replace(self, user="", password="", federation=federation)

    @property
    def method(self) -> str | None:
        if self.user and self.password:
            return "password"
        return "federated" if self.federation is not None else None

    @property
    def identity(self) -> str:
        """Who signs in, for messages: the logon name, or the role assumed."""
        if self.method == "federated" and self.federation is not None:
            return f"role {self.federation.role_arn}"
        return self.user or "nobody"

    async def browser_sign_in(self, contexts: Contexts, timeout_s: float) -> dict[str, Any]:
        """Sign in with browser contexts from ``contexts``; the storage state. A kept
        session that is still signed in is used instead (and kept fresh)."""
        method = self.method
        if method is None:
            return {"cookies": [], "origins": []}
        if method == "password":
            check_logon_name(self.user, f"signing in at {self.url}")
        store = SessionStore(self.sessions)
        key = store.key(self.site, self.url, method, self.user if method == "password" else
                        f"{self.federation.role_arn}|{self.federation.access_key_id}")  # type: ignore[union-attr]
        kept = store.load(key)
        if kept is not None:
            state = await self.still_signed_in(contexts, kept, timeout_s)
            if state is not None:
                store.save(key, state)
                return state
            store.drop(key)
        state = await (self.password_logon(contexts, timeout_s) if method == "password"
                       else self.federated_logon(contexts, timeout_s))
        store.save(key, state)
        return state

    # -- a kept session --------------------------------------------------------------

    async def still_signed_in(self, contexts: Contexts, state: dict[str, Any], timeout_s: float
                              ) -> dict[str, Any] | None:
        """The kept session's fresh state when the console home still opens with it; None
        when it sends the browser to the logon page (expired, signed out elsewhere)."""
        async with contexts(state) as context:
            page = await context.new_page()
            try:
                await page.goto(self.home, timeout=timeout_s * 1000)
            except Exception:  # the console is unreachable: the logon says so, with a clear message
                return None
            return await context.storage_state() if self.at_console(page.url) else None

    # -- the RAM user logon pages ----------------------------------------------------

    async def password_logon(self, contexts: Contexts, timeout_s: float) -> dict[str, Any]:
        async with contexts() as context:
            page = await context.new_page()
            await self.open(page, self.url, timeout_s)
            name_field = await self.wait_for(page, timeout_s, "the logon-name field", ready=self.logon_name_field,
                                             stops=("captcha", "locked"))
            await name_field.fill(self.user)
            await self.press(page, NEXT_BUTTON, "Next")
            password = await self.wait_for(page, timeout_s, "the password field", ready=self.password_field,
                                           stops=("captcha", "locked"), errors=True)
            await password.fill(self.password)
            await self.press(page, LOG_ON_BUTTON, "Log On")
            await self.wait_for(page, timeout_s, "the console home", ready=self.console_reached, errors=True)
            return await context.storage_state()

    async def logon_name_field(self, page: Any) -> Any | None:
        labelled = page.get_by_role("textbox", name=LOGON_NAME_LABEL)
        for candidate in (labelled, page.locator(LOGON_NAME_FIELDS)):
            if await candidate.count() and await candidate.first.is_visible():
                return candidate.first
        return None

    async def password_field(self, page: Any) -> Any | None:
        field = page.locator(PASSWORD_FIELD)
        return field.first if await field.count() and await field.first.is_visible() else None

    async def console_reached(self, page: Any) -> Any | None:
        return page if self.at_console(page.url) else None

    def at_console(self, url: str) -> bool:
        """Whether ``url`` is a console page, where only a signed-in browser gets: under
        the home's folder on its host, or on a host of the site's consoles. (A session
        that is not signed in is sent to a logon page: this one's, or another's.)"""
        here, home = urlsplit(url), urlsplit(self.home)
        if here.scheme not in ("http", "https"):
            return False
        folder = home.path.rpartition("/")[0] + "/"
        if here.netloc == home.netloc and here.path.startswith(folder) and self.left_logon(url):
            return True
        return bool(self.console_domain) and (here.hostname or "").endswith("." + self.console_domain)

    def left_logon(self, url: str) -> bool:
        """Whether ``url`` is past the logon pages: outside the logon page's folder on
        its host (signin.aliyun.com/: the whole host) and not the federation API."""
        here, logon = urlsplit(url), urlsplit(self.url)
        if not here.scheme.startswith("http"):
            return False
        folder = logon.path.rpartition("/")[0] + "/"
        inside = here.netloc == logon.netloc and here.path.startswith(folder)
        if self.federation is not None:
            api = urlsplit(self.federation.url)
            inside = inside or (here.netloc == api.netloc and here.path == api.path)
        return not inside

    async def open(self, page: Any, url: str, timeout_s: float, *, shown: str | None = None) -> None:
        try:
            await page.goto(url, timeout=timeout_s * 1000)
        except Exception as error:
            raise EnvironmentProblem(f"the Alibaba Cloud logon page {shown or url} is unreachable: {_first_line(error)}",
                                     hint="check the network, or [console.aliyun] site / signin_url") from None

    async def press(self, page: Any, name: Any, label: str) -> None:
        button = page.get_by_role("button", name=name)
        if not await button.count():
            button = page.locator('button[type="submit"], input[type="submit"]')
        try:
            await button.first.click()
        except Exception as error:
            raise EnvironmentProblem(f"signing in at {self.url}: cannot click **{label}**: {_first_line(error)}",
                                     hint="the logon page changed: see docverify_aliyun/logon_pages.py") from None

    async def wait_for(self, page: Any, timeout_s: float, what: str, *, ready: Callable[[Any], Any],
                       stops: tuple[str, ...] | None = None, errors: bool = False) -> Any:
        """Wait until ``ready(page)`` gives something; raise at a page that stops the logon
        (``stops``: those kinds; None: every kind), at an error the form shows (``errors``),
        or when ``timeout_s`` passes."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                found = await ready(page)
                # past the logon pages, only a stop's own elements count: the console's
                # text may well mention MFA or a password
                stop = await stopped_by(page, stops, text=not self.left_logon(page.url))
                if found is not None and stop is None:
                    return found
            except EnvironmentProblem:
                raise
            except Exception:  # the page is navigating: look again
                found = stop = None
            if stop is not None:
                raise self.stopped(stop)
            if errors and (message := await error_shown(page)):
                raise CredentialsRejected(f"signing in at {self.url} as {self.user} failed: {message}",
                                          hint="check the logon name and the password the account pool holds")
            if time.monotonic() > deadline:
                raise EnvironmentProblem(f"signing in at {self.url} as {self.user}: {what} did not appear within "
                                         f"{timeout_s:g}s (the page is at {page.url})",
                                         hint="the logon page is slow or changed: see docverify_aliyun/logon_pages.py")
            await asyncio.sleep(POLL_S)

    def stopped(self, stop: Stop) -> EnvironmentProblem:
        message = f"signing in at {self.url} as {self.identity} stopped at {stop.what}"
        return (CredentialsRejected if stop.rejects else EnvironmentProblem)(message, hint=stop.needs)

    # -- federated -------------------------------------------------------------------

    async def federated_logon(self, contexts: Contexts, timeout_s: float) -> dict[str, Any]:
        assert self.federation is not None
        key = await asyncio.to_thread(sts.assume_role, self.federation, timeout_s)
        token = await asyncio.to_thread(sts.signin_token, self.federation, key, timeout_s)
        url = sts.login_url(self.federation, token, destination=self.home, login_page=self.url)
        async with contexts() as context:
            page = await context.new_page()
            await self.open(page, url, timeout_s, shown=f"{self.federation.url}?Action=Login")
            await self.wait_for(page, timeout_s, "the console home", ready=self.console_reached,
                                stops=("captcha",), errors=True)
            return await context.storage_state()


async def stopped_by(page: Any, kinds: tuple[str, ...] | None = None, *, text: bool = True) -> Stop | None:
    """The page that stops the logon, if this is one (of ``kinds``; ``text``: by its
    words too, not only by its elements)."""
    shown: str | None = None
    for stop in STOPS:
        if kinds is not None and stop.kind not in kinds:
            continue
        for selector in stop.selectors:
            found = page.locator(selector)
            if await found.count() and await found.first.is_visible():
                return stop
        if text and stop.text is not None:
            if shown is None:
                shown = await page.locator("body").inner_text(timeout=2000)
            if stop.text.search(shown):
                return stop
    return None


async def error_shown(page: Any) -> str | None:
    """The error message the logon form shows, if any."""
    shown = page.locator(ERROR_MESSAGE)
    for index in range(await shown.count()):
        item = shown.nth(index)
        if await item.is_visible():
            text = " ".join((await item.inner_text()).split())
            if text:
                return text[:300]
    return None


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
