"""An account of the pool: as configured (:class:`AccountSpec`, secrets as
references) and as leased (:class:`Account`, secrets resolved and masked)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from docverify.console import ConsoleEndpoint, LoginForm
from docverify.lease.secret import Secret, SecretRef

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
#: a RAM role's ARN: acs:ram::<account id>:role/<role name>
ROLE_ARN = re.compile(r"acs:ram::\d+:role/[\w.@+=,-]+")
#: fields whose value is a secret reference, never the secret
SECRET_FIELDS = ("password", "access_key_id", "access_key_secret")
DEFAULT_MAX_KEY_AGE_DAYS = 90


class AccountSpec(BaseModel):
    """One ``[accounts.NAME]`` table of the accounts file (or ``DOCVERIFY_ACCOUNT_NAME__*``)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN, description="the account's name in the pool (letters, digits, - and _)")
    console: str = Field(pattern=r"^[a-z][a-z0-9_-]*$",
                         description="the console plugin this account belongs to: sandbox, aliyun, ...")
    account_id: str | None = Field(None, description="the cloud account's ID (UID)")
    alias: str | None = Field(None, description="the account alias (logins look like USER@ALIAS.onaliyun.com)")
    login_user: str | None = Field(None, description="console logon name, e.g. docs-ci@example.onaliyun.com")
    password: str | None = Field(None, description="reference to the console password")
    access_key_id: str | None = Field(None, description="reference to the AccessKey ID")
    access_key_secret: str | None = Field(None, description="reference to the AccessKey secret")
    access_key_user: str | None = Field(
        None, description="RAM user that owns the AccessKey (rotation finds it through the API when unset)")
    role_arn: str | None = Field(
        None,
        description="a RAM role the AccessKey may assume (sts:AssumeRole), acs:ram::<uid>:role/<name>: a console "
                    "that signs in federated (aliyun) signs this account in through it, with no password")
    region: str = Field("cn-hangzhou", description="default region for this account's tasks")
    tags: list[str] = Field(default_factory=list, description="labels tasks can ask for, e.g. ecs, nightly")
    api_url: str | None = Field(
        None, pattern=r"^https?://[^/\s]+/?$",
        description="the console's API for rotation: a served sandbox (http://127.0.0.1:8123), or a RAM endpoint")
    max_key_age_days: int | None = Field(None, ge=1, le=3650,
                                         description="rotate the AccessKey once it is older (default: the file's)")

    @field_validator("role_arn")
    @classmethod
    def _role_arn(cls, value: str | None) -> str | None:
        if value is not None and not ROLE_ARN.fullmatch(value):
            raise ValueError(f"{value!r} is not a RAM role's ARN: acs:ram::<account id>:role/<role name> "
                             "(RAM console > Roles > the role's ARN)")
        return value

    _origin: str = PrivateAttr("")
    _base: Path | None = PrivateAttr(None)
    _fixed: dict[str, SecretRef] = PrivateAttr(default_factory=dict)
    _extra: dict[str, SecretRef | str] = PrivateAttr(default_factory=dict)

    @property
    def origin(self) -> str:
        """Where it was defined: ``docverify-accounts.toml:12``, ``env DOCVERIFY_ACCOUNT_CI__*``, ``built-in``."""
        return self._origin

    def ref(self, field_name: str) -> SecretRef | None:
        """The parsed reference of a secret field (None when unset)."""
        if field_name in self._fixed:
            return self._fixed[field_name]
        text = getattr(self, field_name)
        return None if text is None else SecretRef.parse(text, base=self._base)

    def references(self) -> dict[str, str]:
        """Secret field -> its reference as text, for listings."""
        return {name: ref.text for name in SECRET_FIELDS if (ref := self.ref(name)) is not None}

    def matches(self, *, console: str | None = None, tags: tuple[str, ...] | list[str] = ()) -> bool:
        return (console is None or self.console == console) and set(tags) <= set(self.tags)

    def resolve(self, environ: Mapping[str, str] | None = None) -> "Account":
        """Read every secret; raises :class:`~docverify.lease.secret.SecretError`."""
        secrets: dict[str, Secret | None] = {}
        for name in SECRET_FIELDS:
            ref = self.ref(name)
            what = f"{name.replace('_', ' ')} of account {self.name} ({self.origin or 'accounts'})"
            secrets[name] = None if ref is None else ref.resolve(environ, what=what)
        extra = {key: (value.resolve(environ) if isinstance(value, SecretRef) else value)
                 for key, value in self._extra.items()}
        return Account(
            name=self.name, console=self.console, account_id=self.account_id, alias=self.alias,
            login_user=self.login_user, password=secrets["password"], access_key_id=secrets["access_key_id"],
            access_key_secret=secrets["access_key_secret"], access_key_user=self.access_key_user,
            role_arn=self.role_arn, region=self.region, tags=tuple(self.tags), api_url=self.api_url, extra=extra,
        )

    @classmethod
    def built_in(cls, origin: str, fixed: Mapping[str, SecretRef], extra: Mapping[str, SecretRef | str],
                 **values) -> "AccountSpec":
        """An account docverify supplies itself, with fixed (``builtin:``) secrets."""
        spec = cls(**values)
        spec._origin = origin
        spec._fixed = dict(fixed)
        spec._extra = dict(extra)
        return spec


@dataclass(frozen=True)
class Account:
    """A leased account with its secrets resolved (masked in ``repr``)."""

    name: str
    console: str
    account_id: str | None = None
    alias: str | None = None
    login_user: str | None = None
    password: Secret | None = None
    access_key_id: Secret | None = None
    access_key_secret: Secret | None = None
    access_key_user: str | None = None
    role_arn: str | None = None  #: a RAM role the AccessKey may assume (federated sign-in)
    region: str = "cn-hangzhou"
    tags: tuple[str, ...] = ()
    api_url: str | None = None
    #: further values a console may need (the sandbox's root key), secrets masked
    extra: Mapping[str, Secret | str] = field(default_factory=dict)

    def endpoint_extra(self) -> dict[str, str]:
        """The account as :attr:`ConsoleEndpoint.extra` keys (values revealed)."""
        out: dict[str, str] = {}
        for key, value in (("account_id", self.account_id), ("account_alias", self.alias),
                           ("login_user", self.login_user), ("login_password", self.password),
                           ("access_key_id", self.access_key_id), ("access_key_secret", self.access_key_secret),
                           ("region", self.region)):
            if value is not None:
                out[key] = value.reveal() if isinstance(value, Secret) else value
        for key, value in self.extra.items():
            out[key] = value.reveal() if isinstance(value, Secret) else value
        return out

    def on(self, endpoint: ConsoleEndpoint) -> ConsoleEndpoint:
        """``endpoint`` signed in as this account: its login form and its keys.

        Keys of ``endpoint.extra`` that describe another account (``root_*``, the
        credentials) are dropped unless this account supplies them."""
        kept = {key: value for key, value in endpoint.extra.items()
                if key not in _ACCOUNT_KEYS and not key.startswith("root_")}
        extra = {**kept, **self.endpoint_extra()}
        login = endpoint.login
        if login is None and self.login_user and self.password is not None:
            login = LoginForm(endpoint.extra.get("signin_url", endpoint.url), "", "")
        if login is not None:
            login = login.as_account(self)
        return dataclasses.replace(endpoint, login=login, extra=extra, default_region=self.region)


_ACCOUNT_KEYS = frozenset({"account_id", "account_alias", "login_user", "login_password", "access_key_id",
                           "access_key_secret", "region"})
