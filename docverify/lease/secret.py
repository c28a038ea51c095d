"""Secrets: references in the accounts file, masked values in memory, scrubbing.

An accounts file never holds a secret, only a reference to where it is kept:

- ``env:VAR`` — an environment variable (a CI secret); read-only for docverify;
- ``keyring:SERVICE/USER`` — the system keyring, through the optional
  ``keyring`` package (imported only when such a reference is used);
- ``file:PATH`` — a file only its owner can read (mode 0600); a relative PATH
  is relative to the accounts file.

A resolved value lives in a :class:`Secret`, whose ``repr`` and ``str`` are
masked, and is registered with :mod:`docverify.scrub`, so reporters and logs
remove it from what they write (:func:`scrub`, :func:`secret_values`,
:class:`ScrubFilter`).
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from docverify.errors import ConfigError, UsageError
from docverify.scrub import MASK, ScrubFilter, known, register, scrub

__all__ = ["MASK", "ScrubFilter", "Secret", "SecretError", "SecretRef", "mask_id", "remember", "scrub",
           "secret_values", "write_private"]

SCHEMES = ("env", "keyring", "file")
REFERENCE_FORMS = "env:VAR, keyring:SERVICE/USER or file:PATH (mode 0600)"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SecretError(ConfigError):
    """A secret reference is malformed, or what it points to cannot be read or written."""


class Secret:
    """A secret value that does not show itself: ``repr``/``str`` are masked.

    ``reveal()`` returns the value, for the one place that needs it (signing a
    request, filling a password field).
    """

    __slots__ = ("_value", "reference")

    def __init__(self, value: str, reference: str = "") -> None:
        self._value = value
        self.reference = reference  #: where it came from, e.g. ``env:CI_PASSWORD``
        remember(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({self.reference!r})" if self.reference else f"Secret({MASK})"

    def __str__(self) -> str:
        return MASK

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self):  # pickling (multiprocessing) keeps the value, and remembers it there
        return (Secret, (self._value, self.reference))


def remember(value: str) -> None:
    """Count ``value`` among the secrets every report and log is scrubbed of."""
    register(value)


def secret_values() -> frozenset[str]:
    """Every secret value registered in this process (resolved, or created by
    rotation), for reporters and logs to scrub; see :mod:`docverify.scrub`."""
    return known()


def mask_id(value: str) -> str:
    """An identifier shown so a person recognises it without the log holding it:
    ``LTAI****key1``."""
    if len(value) <= 8:
        return "****"
    return f"{value[:4]}****{value[-4:]}"


@dataclass(frozen=True)
class SecretRef:
    """Where a secret is kept. ``text`` is the reference as written in the file."""

    scheme: str
    target: str
    base: Path | None = None  #: folder relative ``file:`` paths start from
    builtin: str | None = None  #: for ``builtin:`` references: the value itself (never from a file)

    @property
    def text(self) -> str:
        return f"{self.scheme}:{self.target}"

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"SecretRef({self.text!r})"

    @classmethod
    def parse(cls, text: str, *, base: Path | None = None) -> "SecretRef":
        """Parse a reference; raises ``ValueError`` whose message never repeats
        ``text`` (it may be a secret pasted by mistake)."""
        scheme, sep, target = text.partition(":")
        if not sep or scheme not in SCHEMES:  # never echo it: it may be a secret pasted by mistake
            raise ValueError(
                "not a secret reference (a literal secret is not allowed here; the known schemes are env:, "
                f"keyring: and file:): keep the secret elsewhere and write {REFERENCE_FORMS}")
        if scheme == "env" and not _ENV_NAME.match(target):
            raise ValueError("env: needs a variable name, e.g. env:DOCVERIFY_CI_PASSWORD")
        if scheme == "keyring":
            service, _, user = target.rpartition("/")
            if not service or not user:
                raise ValueError("keyring: needs SERVICE/USER, e.g. keyring:docverify/ci-1")
        if scheme == "file" and not target.strip():
            raise ValueError("file: needs a path, e.g. file:secrets/ci-1.secret")
        return cls(scheme, target, base)

    @classmethod
    def fixed(cls, label: str, value: str) -> "SecretRef":
        """A value docverify itself supplies (the sandbox's seeded credentials)."""
        return cls("builtin", label, None, value)

    # ------------------------------------------------------------- reading
    def resolve(self, environ: Mapping[str, str] | None = None, *, what: str = "secret") -> Secret:
        """Read the secret. ``what`` names it in errors ("password of account ci-1")."""
        environ = os.environ if environ is None else environ
        if self.scheme == "builtin":
            return Secret(self.builtin or "", self.text)
        if self.scheme == "env":
            value = environ.get(self.target)
            if not value:
                state = "is empty" if self.target in environ else "is not set"
                raise SecretError(f"{what}: environment variable {self.target} {state}",
                                  hint=f"set {self.target} (in CI: from the secret store) or change the reference")
            return Secret(value, self.text)
        if self.scheme == "keyring":
            service, _, user = self.target.rpartition("/")
            value = _keyring(what).get_password(service, user)
            if not value:
                raise SecretError(f"{what}: the keyring holds nothing for service {service!r}, user {user!r}",
                                  hint=f"store it: keyring set {service} {user}")
            return Secret(value, self.text)
        path = self.path
        try:
            info = path.stat()
        except FileNotFoundError:
            raise SecretError(f"{what}: {self.text}: {path} does not exist",
                              hint="create it with the secret as its only line, then chmod 600") from None
        except OSError as error:
            raise SecretError(f"{what}: {self.text}: cannot read {path}: {error.strerror}") from None
        if not stat.S_ISREG(info.st_mode):
            raise SecretError(f"{what}: {self.text}: {path} is not a regular file")
        if info.st_mode & 0o077:
            raise SecretError(
                f"{what}: {self.text}: {path} can be read by others (mode {stat.S_IMODE(info.st_mode):04o})",
                hint=f"chmod 600 {path}")
        try:
            value = path.read_text(encoding="utf-8").rstrip("\r\n")
        except (OSError, UnicodeDecodeError) as error:
            raise SecretError(f"{what}: {self.text}: cannot read {path}: {error}") from None
        if not value:
            raise SecretError(f"{what}: {self.text}: {path} is empty")
        return Secret(value, self.text)

    @property
    def path(self) -> Path:
        path = Path(self.target).expanduser()
        return path if path.is_absolute() or self.base is None else self.base / path

    # ------------------------------------------------------------- writing
    def why_not_writable(self) -> str | None:
        """None when docverify can store a new value here; else why it cannot."""
        if self.scheme == "env":
            return (f"{self.text} is an environment variable: docverify cannot change it where it comes from "
                    "(a CI secret store, a shell profile), so a rotated key would be lost when this process ends "
                    "while the old key is already deleted; keep the secret behind keyring: or file: (0600) to "
                    "rotate it here, or rotate it in the secret store")
        if self.scheme == "builtin":
            return (f"{self.text} is a built-in sandbox credential, stored nowhere; add the account to the "
                    "accounts file with keyring: or file: references to rotate it")
        return None

    def store(self, value: str, *, what: str = "secret") -> None:
        """Replace the secret with ``value`` (keyring, or the file atomically, mode 0600)."""
        if (reason := self.why_not_writable()) is not None:
            raise SecretError(f"{what}: cannot store a new value: {reason}")
        remember(value)
        if self.scheme == "keyring":
            service, _, user = self.target.rpartition("/")
            try:
                _keyring(what).set_password(service, user, value)
            except Exception as error:  # keyring backends raise their own types
                raise SecretError(f"{what}: cannot write to the keyring ({service}/{user}): {error}") from None
            return
        path = self.path
        try:
            write_private(path, value + "\n")
        except OSError as error:
            raise SecretError(f"{what}: cannot write {self.text} ({path}): {error.strerror or error}") from None


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # mkstemp: mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _keyring(what: str):
    try:
        import keyring
    except ImportError:
        raise UsageError(f"{what}: a keyring: reference needs the keyring package",
                         hint="pip install keyring, or use env: or file: references") from None
    return keyring
