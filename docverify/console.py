"""The console family: where a console is, how to reach it, its audit log.

A console plugin turns its options into a running :class:`ConsoleEndpoint`:
the embedded ``sandbox`` starts a local server; a console of the real cloud
(``aliyun``) points at it. Later stages (executor, checker, provisioner) only see the endpoint.
"""

from __future__ import annotations

import dataclasses
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import urlsplit

from docverify.registry import Plugin

if TYPE_CHECKING:
    from docverify.lease.account import Account, AccountSpec
    from docverify.lease.rotation import AccessKeyApi


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL: what an allowlist of consoles compares."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@dataclass(frozen=True)
class LoginForm:
    """How a browser signs in: a form with a user name and a password field."""

    url: str
    user: str
    password: str = field(repr=False)
    user_label: str = "User Name"  #: the fields' and button's accessible names
    password_label: str = "Password"
    submit_label: str = "Log On"
    #: the form's user-name and password field names, when it is a plain HTML form that
    #: signs in without JavaScript: then one HTTP POST signs in, not a browser
    form_fields: tuple[str, str] | None = None

    def as_account(self, account: "Account") -> "LoginForm":
        """This sign-in as ``account`` (:meth:`Account.on`): its logon name and password
        when it has them, else this one as it is. A console whose sign-in also takes
        other credentials (the aliyun console's federation through a RAM role) says how
        an account without a password signs in."""
        if account.login_user and account.password is not None:
            return dataclasses.replace(self, user=account.login_user, password=account.password.reveal())
        return self


@dataclass(frozen=True)
class ConsoleEndpoint:
    """How to reach a running console."""

    url: str  #: the console's base URL, e.g. http://127.0.0.1:8123
    api_url: str  #: the RPC API endpoint (Action=..., signed)
    audit_url: str  #: ActionTrail LookupEvents endpoint (host:port for the SDK)
    origins: tuple[str, ...] = ()  #: every origin the browser may reach
    release: str | None = None  #: the UI release it renders, where it has several
    default_region: str = "cn-hangzhou"
    home: str | None = None  #: where a browser session starts (the console's home page)
    login: LoginForm | None = None  #: None: no sign-in needed
    #: (address a doc links to, without scheme: "ecs.console.aliyun.com",
    #: "ecs-buy.aliyun.com/wizard"; the page that opens here): a console standing in
    #: for another (the sandbox for the real one) opens its own page for a doc's link
    links: tuple[tuple[str, str], ...] = ()
    #: refuse a destructive action on a resource the run did not create (the console's
    #: ``protect_unowned`` option; :mod:`docverify.execute.guard`)
    protect_unowned: bool = False
    extra: dict[str, str] = field(default_factory=dict, repr=False)

    def describe(self) -> str:
        """The console for report headers: URL and release."""
        return f"{self.url}" + (f" (release {self.release})" if self.release else "")

    def local(self, url: str) -> str | None:
        """The page here that a doc's absolute link opens: the longest address of
        :attr:`links` the link starts with (at a ``/``, ``#`` or ``?`` boundary); None
        when none does."""
        address = url.split("://", 1)[-1]
        best: tuple[int, str] | None = None
        for prefix, page in self.links:
            prefix = prefix.rstrip("/")
            if address.startswith(prefix) and address[len(prefix):len(prefix) + 1] in ("", "/", "#", "?") \
                    and (best is None or len(prefix) > best[0]):
                best = (len(prefix), page)
        return best[1] if best else None


class Console(Plugin):
    """Base class of console plugins. ``cloud`` says whose console it is ("alibaba"):
    a doc written for another cloud's console is not applicable to it.
    ``ram_endpoint``: set by a console of the real Alibaba Cloud, its RAM API
    (``https://ram.aliyuncs.com``); AccessKeys of its accounts then rotate through the
    official RAM SDK when :meth:`access_key_api` offers no API of its own."""

    cloud: ClassVar[str | None] = None
    ram_endpoint: ClassVar[str | None] = None

    def start(self) -> AbstractContextManager[ConsoleEndpoint]:
        """Start (or connect to) the console; leaving the context stops what was started."""
        raise NotImplementedError

    def task_account(self, endpoint: ConsoleEndpoint, task_id: str) -> AbstractContextManager[ConsoleEndpoint]:
        """The console as procedure ``task_id`` uses it when no account pool is
        configured: ``endpoint`` itself (its own account) by default. A console
        that can make accounts (the embedded sandbox) gives each procedure a new
        one, removed when the context is left, so procedures never share state."""
        return nullcontext(endpoint)

    @classmethod
    def default_accounts(cls) -> list["AccountSpec"]:
        """The account pool when none is configured (a sandbox's seeded tenants).
        None by default: a real cloud's test accounts are always configured."""
        return []

    @classmethod
    def access_key_api(cls, account: "Account", url: str | None, key_id: str, secret: str) -> "AccessKeyApi | None":
        """The RAM API that rotates ``account``'s AccessKey on this console, signed
        with the given key (``url``: the console's API, when configured); None
        when this console offers none."""
        return None
