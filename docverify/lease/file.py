"""The accounts file (``docverify-accounts.toml``) and accounts from the environment.

File layout (secrets are references, never values)::

    max_key_age_days = 90                 # rotation schedule for every account (default 90)

    [accounts.ci-1]
    console = "aliyun"                    # the console plugin: sandbox, aliyun, ...
    account_id = "1234567890123456"
    alias = "docs-ci"
    login_user = "docverify@docs-ci.onaliyun.com"
    password = "env:DOCS_CI_PASSWORD"
    access_key_id = "file:secrets/ci-1.id"        # 0600, relative to this file
    access_key_secret = "keyring:docverify/ci-1"
    region = "cn-hangzhou"
    tags = ["ecs", "nightly"]

Found as ``--accounts FILE`` / ``DOCVERIFY_ACCOUNTS``, else next to docverify.toml
(or in the working directory when there is none).

An account can also come from the environment, one variable per key:
``DOCVERIFY_ACCOUNT_<NAME>__<KEY>`` (``<NAME>`` lower-cased), e.g.
``DOCVERIFY_ACCOUNT_CI__CONSOLE=aliyun``,
``DOCVERIFY_ACCOUNT_CI__ACCESS_KEY_SECRET=env:ALIYUN_SECRET``; ``TAGS`` is
comma-separated.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from docverify.config import display_path as _display
from docverify.config import read_toml
from docverify.errors import ConfigError
from docverify.lease.account import DEFAULT_MAX_KEY_AGE_DAYS, NAME_PATTERN, SECRET_FIELDS, AccountSpec
from docverify.lease.secret import SecretRef, write_private

ACCOUNTS_FILE_NAME = "docverify-accounts.toml"
ENV_FILE = "DOCVERIFY_ACCOUNTS"
ENV_ACCOUNT = re.compile(r"^DOCVERIFY_ACCOUNT_([A-Z0-9][A-Z0-9_-]*?)__([A-Z0-9_]+)$")

HEADER = """\
# docverify account pool: `docverify accounts list|add|lease|rotate`.
# Secrets are references, never values: env:VAR, keyring:SERVICE/USER, file:PATH (mode 0600).
"""


class AccountsFileError(ConfigError):
    """The accounts file or a DOCVERIFY_ACCOUNT_* variable is wrong."""


class _FileLayout(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_key_age_days: int = Field(DEFAULT_MAX_KEY_AGE_DAYS, ge=1, le=3650,
                                  description="rotate AccessKeys older than this many days")
    accounts: dict[str, dict[str, Any]] = Field(default_factory=dict, description="one table per account")


@dataclass
class AccountsSource:
    """Accounts as configured: the file's and the environment's."""

    specs: list[AccountSpec] = field(default_factory=list)
    file: Path | None = None  #: the accounts file, found or given (it may not exist yet)
    exists: bool = False
    max_key_age_days: int = DEFAULT_MAX_KEY_AGE_DAYS

    def get(self, name: str) -> AccountSpec | None:
        return next((spec for spec in self.specs if spec.name == name), None)


def accounts_file_path(given: str | Path | None = None, *, config_file: Path | None = None,
                       cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """Where the accounts file is: given, ``DOCVERIFY_ACCOUNTS``, next to docverify.toml, or here."""
    environ = os.environ if environ is None else environ
    given = given or environ.get(ENV_FILE) or None
    if given:
        return Path(given)
    folder = config_file.parent if config_file is not None else (cwd or Path.cwd())
    return folder / ACCOUNTS_FILE_NAME


def load_accounts(path: Path, *, environ: Mapping[str, str] | None = None, required: bool = False) -> AccountsSource:
    """Accounts from ``path`` (when it exists) and from ``DOCVERIFY_ACCOUNT_*``."""
    environ = os.environ if environ is None else environ
    source = AccountsSource(file=path)
    if path.is_file():
        source.exists = True
        layout, specs = _read_file(path)
        source.max_key_age_days = layout.max_key_age_days
        source.specs.extend(specs)
    elif required:
        raise AccountsFileError(f"accounts file {path} does not exist",
                                hint=f"check --accounts / {ENV_FILE}, or create it: docverify accounts add NAME ...")
    for spec in _from_environ(environ, path.parent):
        if (other := source.get(spec.name)) is not None:
            raise AccountsFileError(
                f"account {spec.name!r} is defined twice: {other.origin} and {spec.origin}; remove one")
        source.specs.append(spec)
    return source


def _read_file(path: Path) -> tuple[_FileLayout, list[AccountSpec]]:
    shown = _display(path)
    data, lines = read_toml(path, AccountsFileError)

    def where(dotted: str) -> str:
        parts = dotted.split(".")
        while parts:
            if (line := lines.get(".".join(parts))) is not None:
                return f"{shown}:{line}"
            parts.pop()
        return shown

    try:
        layout = _FileLayout.model_validate(data)
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            dotted = ".".join(str(part) for part in problem["loc"])
            if problem["type"] == "extra_forbidden":
                problems.append(f"{where(dotted)}: unknown key {dotted!r}"
                                + _suggest(dotted.split(".")[-1], list(_FileLayout.model_fields)))
            else:
                problems.append(f"{where(dotted)}: {dotted}: {problem['msg']}")
        raise AccountsFileError("\n".join(problems)) from None
    specs = []
    for name, table in layout.accounts.items():
        prefix = f"accounts.{name}"
        if not isinstance(table, dict):
            raise AccountsFileError(f"{where(prefix)}: {prefix} must be a table: [accounts.{name}]")
        specs.append(_spec(name, table, base=path.parent, origin=where(prefix), where=lambda key, p=prefix:
                           where(f"{p}.{key}") if key else where(p), label=lambda key, p=prefix: f"{p}.{key}"))
    return layout, specs


def _from_environ(environ: Mapping[str, str], base: Path) -> list[AccountSpec]:
    tables: dict[str, dict[str, Any]] = {}
    names: dict[str, dict[str, str]] = {}
    for variable in sorted(environ):
        match = ENV_ACCOUNT.match(variable)
        if not match:
            continue
        name, key = match.group(1).lower(), match.group(2).lower()
        value: Any = environ[variable]
        if key == "tags":
            value = [tag.strip() for tag in value.split(",") if tag.strip()]
        tables.setdefault(name, {})[key] = value
        names.setdefault(name, {})[key] = variable
    specs = []
    for name, table in tables.items():
        upper = name.upper()
        specs.append(_spec(name, table, base=base, origin=f"env DOCVERIFY_ACCOUNT_{upper}__*",
                           where=lambda key, n=names[name], u=upper: f"env {n.get(key, f'DOCVERIFY_ACCOUNT_{u}__*')}",
                           label=lambda key, u=upper: f"DOCVERIFY_ACCOUNT_{u}__{key.upper()}"))
    return specs


def _spec(name: str, table: dict[str, Any], *, base: Path, origin: str, where, label) -> AccountSpec:
    """Validate one account; errors say where, which field and what to do."""
    if not re.match(NAME_PATTERN, name):
        raise AccountsFileError(f"{origin}: account name {name!r} is not valid: use letters, digits, - and _ "
                                "(at most 64, starting with a letter or digit)")
    if "name" in table:
        raise AccountsFileError(f"{where('name')}: {label('name')}: unknown key (the table's name is the account's "
                                "name)")
    valid = sorted(set(AccountSpec.model_fields) - {"name"})
    try:
        spec = AccountSpec.model_validate({**table, "name": name})
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            key = ".".join(str(part) for part in problem["loc"])
            if problem["type"] == "extra_forbidden":
                problems.append(f"{where(key)}: {label(key)}: unknown key{_suggest(key, valid)}; valid keys: "
                                + ", ".join(valid))
            elif problem["type"] == "missing":
                problems.append(f"{where('')}: {label(key)} is required")
            else:
                problems.append(f"{where(key)}: {label(key)}: {problem['msg']}")
        raise AccountsFileError("\n".join(problems)) from None
    spec._origin = origin
    spec._base = base
    for key in SECRET_FIELDS:
        text = getattr(spec, key)
        if text is None:
            continue
        try:
            SecretRef.parse(text, base=base)
        except ValueError as error:
            raise AccountsFileError(f"{where(key)}: {label(key)}: {error}") from None
    for first, second in (("access_key_id", "access_key_secret"), ("login_user", "password")):
        if (getattr(spec, first) is None) != (getattr(spec, second) is None):
            missing = second if getattr(spec, second) is None else first
            raise AccountsFileError(f"{where('')}: {label(missing)} is required when "
                                    f"{first if missing == second else second} is set")
    if spec.access_key_id is not None and spec.ref("access_key_id") == spec.ref("access_key_secret"):
        raise AccountsFileError(f"{where('access_key_secret')}: {label('access_key_secret')}: the AccessKey ID and "
                                "secret need two different references")
    return spec


def _suggest(key: str, valid: list[str]) -> str:
    close = difflib.get_close_matches(key, valid, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# ------------------------------------------------------------------ writing
def add_account(path: Path, values: Mapping[str, Any]) -> AccountSpec:
    """Append ``[accounts.NAME]`` to the accounts file (created when missing),
    keeping its comments; the result is validated before anything is written."""
    name = values["name"]
    old = path.read_text(encoding="utf-8") if path.is_file() else HEADER
    if path.is_file():
        existing = load_accounts(path, environ={})
        if existing.get(name) is not None:
            raise AccountsFileError(f"{_display(path)}: account {name!r} exists already",
                                    hint="pick another name, or edit the file")
    lines = [f"[accounts.{name}]"]
    for key in AccountSpec.model_fields:
        value = values.get(key)
        if key == "name" or value is None or value == [] or value == ():
            continue
        lines.append(f"{key} = {_toml_value(value)}")
    new = old.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    try:
        data = tomllib.loads(new)
    except tomllib.TOMLDecodeError as error:  # only if the existing file was broken
        raise AccountsFileError(f"{_display(path)}: invalid TOML: {error}") from None
    table = data["accounts"][name]
    spec = _spec(name, table, base=path.parent, origin=f"{_display(path)} (new)",
                 where=lambda key: "account", label=lambda key: f"--{key.replace('_', '-')}" if key else "")
    write_private(path, new) if not path.exists() else _write_keeping_mode(path, new)
    return spec


def _write_keeping_mode(path: Path, text: str) -> None:
    mode = path.stat().st_mode & 0o777
    write_private(path, text)
    os.chmod(path, mode)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # a TOML basic string
