"""AccessKey rotation: create a new key, prove it works, switch the stored secret,
delete the old key — and on any failure leave the account working and say what
happened.

The RAM calls go through an :class:`AccessKeyApi`: the one the account's console
plugin offers (`Console.access_key_api`; the sandbox's own), else, for a console
of the real Alibaba Cloud (its plugin sets `Console.ram_endpoint`), the official
``alibabacloud_ram20150501`` SDK (imported only when used).

Order and guarantees:

1. both references (AccessKey ID and secret) must be writable — ``env:`` is
   refused before any call, with the reason;
2. ``CreateAccessKey`` — on failure nothing changed;
3. a cheap authenticated call with the new key (retried while the cloud
   propagates it) — on failure the new key is deleted again, nothing changed;
4. the new ID and secret are written and read back — on failure the old values
   are written back and the new key deleted;
5. ``DeleteAccessKey`` of the old key, signed with the new one — on failure the
   account already works with the new key; the old key is deactivated where the API
   can (``UpdateAccessKey`` ``Status=Inactive``: the real RAM API), recorded, and the
   next rotation deletes it.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Iterator, Protocol
from urllib.parse import urlsplit

from docverify.errors import EnvironmentProblem, UsageError
from docverify.lease.account import Account
from docverify.lease.pool import Lease
from docverify.lease.secret import SecretError, mask_id, remember
from docverify.lease.state import AccountState, KeyRecord, PendingDelete, fingerprint, iso, parse_time, utcnow

if TYPE_CHECKING:
    from docverify.console import Console

RAM_VERSION = "2015-05-01"
#: error codes that mean "the key was accepted, the action was not allowed"
_AUTHENTICATED_CODES = ("Forbidden", "NoPermission")
#: error codes that mean the AccessKey itself is bad: a caller seeing one should
#: quarantine the account (``lease.quarantine(...)``)
CREDENTIAL_ERROR_CODES = frozenset({
    "InvalidAccessKeyId.NotFound", "InvalidAccessKeyId.Inactive", "InvalidAccessKeyId", "SignatureDoesNotMatch",
    "IncompleteSignature",
})
#: error codes a just-created key may answer with until it has propagated
_NOT_YET_CODES = ("InvalidAccessKeyId.NotFound", "InvalidAccessKeyId.Inactive")


class RamCallError(Exception):
    """A RAM API call answered with an error code."""

    def __init__(self, action: str, code: str, message: str) -> None:
        super().__init__(f"{action}: {code}: {message}")
        self.action = action
        self.code = code
        self.message = message


class AccessKeyApi(Protocol):
    """The RAM calls rotation makes, signed with one AccessKey (the key being
    rotated, or the new one). ``user`` is the RAM user owning the key; None means
    the caller itself (the real API's default; the sandbox needs a name)."""

    def owner(self) -> str | None:
        """The RAM user that owns the signing key; None when it is the root's (or unknown)."""

    def created(self, user: str | None) -> datetime | None:
        """When the signing key was created, as the API reports it."""

    def create(self, user: str | None) -> tuple[str, str]:
        """``CreateAccessKey``: (ID, secret) of a new key of ``user``."""

    def check(self, key_id: str, secret: str, user: str | None) -> None:
        """One cheap call signed with that key; raises :class:`RamCallError` when
        the key is refused (a permission error still proves the key)."""

    def delete(self, key_id: str, user: str | None) -> None:
        """``DeleteAccessKey`` of ``key_id``."""


@contextmanager
def authenticated(action: str) -> Iterator[None]:
    """Accept a permission error: the signature was verified, the key works."""
    try:
        yield
    except RamCallError as error:
        if not error.code.startswith(_AUTHENTICATED_CODES):
            raise


class AlibabaAccessKeys:
    """:class:`AccessKeyApi` on Alibaba Cloud RAM with ``alibabacloud_ram20150501``.

    ``url`` is the endpoint (the console's ``ram_endpoint``, ``https://ram.aliyuncs.com``
    when None; ``http://HOST:PORT`` reaches a sandbox, which the tests use).
    """

    def __init__(self, url: str | None, key_id: str, secret: str) -> None:
        try:
            from alibabacloud_ram20150501 import models
            from alibabacloud_ram20150501.client import Client
            from alibabacloud_tea_openapi import models as open_api_models
        except ImportError:
            raise UsageError("rotating Alibaba Cloud AccessKeys needs the RAM SDK, which is not installed",
                             hint="pip install alibabacloud-ram20150501") from None
        self.models = models
        self.key_id = key_id
        parts = urlsplit(url or "https://ram.aliyuncs.com")
        self.endpoint, self.protocol = parts.netloc or parts.path, parts.scheme or "https"
        self._client_class, self._config_class = Client, open_api_models.Config
        self.client = self._client(key_id, secret)

    def _client(self, key_id: str, secret: str):
        return self._client_class(self._config_class(
            access_key_id=key_id, access_key_secret=secret, endpoint=self.endpoint, protocol=self.protocol,
            connect_timeout=10_000, read_timeout=30_000))

    def _call(self, action: str, method: str, request, client=None):
        try:
            return getattr(client or self.client, method)(request).body
        except Exception as error:  # Tea raises its own exception types
            code = getattr(error, "code", None)
            if not code:
                raise EnvironmentProblem(f"RAM {action} at {self.endpoint} failed: {error}") from None
            raise RamCallError(action, str(code), str(getattr(error, "message", "") or error)) from None

    def owner(self) -> str | None:
        return None  # the API acts on the caller's own keys when UserName is left out

    def created(self, user: str | None) -> datetime | None:
        body = self._call("ListAccessKeys", "list_access_keys", self.models.ListAccessKeysRequest(user_name=user))
        for key in (body.access_keys.access_key if body.access_keys else None) or []:
            if key.access_key_id == self.key_id:
                return parse_time(key.create_date)
        return None

    def create(self, user: str | None) -> tuple[str, str]:
        body = self._call("CreateAccessKey", "create_access_key", self.models.CreateAccessKeyRequest(user_name=user))
        return body.access_key.access_key_id, body.access_key.access_key_secret

    def check(self, key_id: str, secret: str, user: str | None) -> None:
        with authenticated("ListAccessKeys"):
            self._call("ListAccessKeys", "list_access_keys", self.models.ListAccessKeysRequest(user_name=user),
                       client=self._client(key_id, secret))

    def delete(self, key_id: str, user: str | None) -> None:
        self._call("DeleteAccessKey", "delete_access_key",
                   self.models.DeleteAccessKeyRequest(user_access_key_id=key_id, user_name=user))

    def deactivate(self, key_id: str, user: str | None) -> None:
        """``UpdateAccessKey`` to ``Inactive``: a key that could not be deleted stops working."""
        self._call("UpdateAccessKey", "update_access_key",
                   self.models.UpdateAccessKeyRequest(user_access_key_id=key_id, status="Inactive", user_name=user))


def console_plugin(name: str) -> "type[Console] | None":
    """The installed console plugin class called ``name``, if any."""
    from docverify.plugins import installed_plugins

    registry = installed_plugins().registry("consoles")
    return registry.get(name) if name in registry else None


def access_key_api(account: Account, url: str | None, key_id: str, secret: str) -> AccessKeyApi:
    """The RAM API of ``account``'s console, signed with the given key: the one its
    plugin offers, else the official SDK's at the plugin's ``ram_endpoint`` (a console
    of the real Alibaba Cloud; ``account.api_url`` or ``url`` overrides it)."""
    plugin = console_plugin(account.console)
    api = plugin.access_key_api(account, url, key_id, secret) if plugin is not None else None
    if api is None and plugin is not None and plugin.ram_endpoint:
        api = AlibabaAccessKeys(account.api_url or url or plugin.ram_endpoint, key_id, secret)
    if api is None:
        known = "not installed" if plugin is None else "installed, but it offers no RAM API"
        raise UsageError(f"account {account.name}: cannot rotate keys of console {account.console!r} (its plugin is "
                         f"{known})",
                         hint="rotation works on consoles whose plugin offers a RAM API (the sandbox) or talks to "
                              "the real Alibaba Cloud (Console.ram_endpoint)")
    return api


# ----------------------------------------------------------------- rotation
@dataclass
class RotationOutcome:
    """What rotating one account did."""

    name: str
    #: rotated | not-due | would-rotate | skipped | refused | failed
    status: str
    message: str
    age_days: float | None = None
    old_key: str | None = None  #: masked IDs (LTAI****abcd)
    new_key: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status in ("rotated", "not-due", "would-rotate", "skipped")


def rotate(lease: Lease, *, max_age_days: float, api_url: str | None = None, force: bool = False,
           dry_run: bool = False, verify_timeout: float = 30.0,
           api: Callable[[Account, str | None, str, str], AccessKeyApi] = access_key_api) -> RotationOutcome:
    """Rotate the AccessKey of a leased account when it is older than ``max_age_days``
    (or ``force``). Never raises for a failed RAM call: the outcome says what happened."""
    spec, account, store = lease.spec, lease.account, lease.pool.state
    name = spec.name
    if account.access_key_id is None or account.access_key_secret is None:
        return RotationOutcome(name, "refused", "the account has no AccessKey")
    refs = {field_name: spec.ref(field_name) for field_name in ("access_key_id", "access_key_secret")}
    for field_name, ref in refs.items():
        if ref is not None and (reason := ref.why_not_writable()) is not None:
            return RotationOutcome(name, "refused", f"{field_name}: {reason}")
    old_id, old_secret = account.access_key_id.reveal(), account.access_key_secret.reveal()
    outcome = RotationOutcome(name, "failed", "", old_key=mask_id(old_id))
    caller = api(account, api_url, old_id, old_secret)
    state = store.read(name)
    _finish_pending_deletes(store, name, state, caller, outcome)

    try:
        user = spec.access_key_user or caller.owner()
        record = state.key if state.key and state.key.fingerprint == fingerprint(old_id) else None
        created = parse_time(record.created) if record else caller.created(user)
    except (RamCallError, EnvironmentProblem) as error:
        outcome.message = f"cannot read the key's owner or age ({error}); nothing changed"
        return outcome
    now = utcnow()
    if created is not None:
        outcome.age_days = (now - created).total_seconds() / 86_400
        if record is None:
            store.update(name, lambda s: setattr(s, "key", KeyRecord(fingerprint(old_id), iso(created), "api")))
    due = force or created is None or outcome.age_days >= max_age_days
    age_text = "of unknown age" if outcome.age_days is None else f"{outcome.age_days:.0f} days old"
    if not due:
        outcome.status, outcome.message = "not-due", f"the AccessKey is {age_text} (rotated after {max_age_days:g})"
        return outcome
    if dry_run:
        outcome.status, outcome.message = "would-rotate", f"the AccessKey is {age_text}; it would be rotated"
        return outcome

    # 2. create
    try:
        new_id, new_secret = caller.create(user)
    except (RamCallError, EnvironmentProblem) as error:
        hint = (" (a RAM user has at most 2 AccessKeys: delete the unused one in the RAM console)"
                if "LimitExceeded" in error.code else "")
        outcome.message = f"could not create a new AccessKey: {error}{hint}; nothing changed, the current key stays"
        return outcome
    remember(new_id)
    remember(new_secret)
    outcome.new_key = mask_id(new_id)

    # 3. prove it
    try:
        _verify(caller, new_id, new_secret, user, verify_timeout)
    except (RamCallError, EnvironmentProblem) as error:
        outcome.message = (f"the new AccessKey {mask_id(new_id)} did not work ({error}); "
                           + _undo_create(caller, new_id, user) + "; the current key stays")
        return outcome

    # 4. switch
    id_ref, secret_ref = refs["access_key_id"], refs["access_key_secret"]
    written: list = []
    try:
        for ref, value, what in ((id_ref, new_id, "AccessKey ID"), (secret_ref, new_secret, "AccessKey secret")):
            ref.store(value, what=f"{what} of account {name}")
            written.append((ref, what))
            if ref.resolve(lease.pool.environ, what=f"{what} of account {name}").reveal() != value:
                raise SecretError(f"{what} of account {name}: {ref.text} does not return the value just stored")
    except SecretError as error:
        restored = _restore(written, {id_ref: old_id, secret_ref: old_secret})
        if restored is not None:
            outcome.message = (f"could not store the new key ({error}) nor put the old values back ({restored}); "
                               f"the new AccessKey {mask_id(new_id)} and the old one both stay active: fix "
                               f"{id_ref.text} / {secret_ref.text} by hand")
            return outcome
        outcome.message = f"could not store the new key ({error}); " + _undo_create(caller, new_id, user) + \
            "; the current key stays"
        return outcome
    lease.account = spec.resolve(lease.pool.environ)

    def switched(s: AccountState) -> None:
        s.key = KeyRecord(fingerprint(new_id), iso(now), "rotation", rotated_from=fingerprint(old_id))
        s.pending_delete.append(PendingDelete(old_id, user, iso(now)))

    store.update(name, switched)

    # 5. delete the old key, signed with the new one
    outcome.status = "rotated"
    outcome.message = f"AccessKey {mask_id(old_id)} ({age_text}) replaced by {mask_id(new_id)}"
    signed_new = api(account, api_url, new_id, new_secret)
    try:
        signed_new.delete(old_id, user)
    except (RamCallError, EnvironmentProblem) as error:
        problem = str(error)
        outcome.warnings.append(f"the old AccessKey {mask_id(old_id)} could not be deleted ({problem}); the account "
                                f"uses the new key; {_deactivate(signed_new, old_id, user)}; the next rotation "
                                "deletes it (or delete it in the RAM console)")
        store.update(name, lambda s: _note_pending_error(s, old_id, problem))
        return outcome
    store.update(name, lambda s: setattr(s, "pending_delete", [p for p in s.pending_delete if p.key_id != old_id]))
    return outcome


def _verify(caller: AccessKeyApi, key_id: str, secret: str, user: str | None, timeout: float) -> None:
    deadline, pause = time.monotonic() + timeout, 0.5
    while True:
        try:
            caller.check(key_id, secret, user)
            return
        except RamCallError as error:
            if error.code not in _NOT_YET_CODES or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 5.0)


def _deactivate(caller: AccessKeyApi, key_id: str, user: str | None) -> str:
    """Deactivate ``key_id`` where the API can (an optional ``deactivate``); what happened."""
    deactivate = getattr(caller, "deactivate", None)
    if deactivate is None:
        return "it stays active meanwhile"
    try:
        deactivate(key_id, user)
    except (RamCallError, EnvironmentProblem) as error:
        return f"deactivating it failed too ({error}): it stays active meanwhile"
    return "it was deactivated meanwhile (it no longer signs anything)"


def _undo_create(caller: AccessKeyApi, new_id: str, user: str | None) -> str:
    try:
        caller.delete(new_id, user)
    except (RamCallError, EnvironmentProblem) as error:
        return f"deleting it again failed too ({error}): delete {mask_id(new_id)} in the RAM console"
    return "it was deleted again"


def _restore(written: list, old_values: dict) -> str | None:
    """Write the old values back; None when that worked, else what failed."""
    for ref, what in reversed(written):
        try:
            ref.store(old_values[ref], what=what)
        except SecretError as error:
            return str(error)
    return None


def _finish_pending_deletes(store, name: str, state: AccountState, caller: AccessKeyApi,
                            outcome: RotationOutcome) -> None:
    """Delete old keys an earlier rotation could not delete."""
    for pending in list(state.pending_delete):
        try:
            caller.delete(pending.key_id, pending.user)
        except (RamCallError, EnvironmentProblem) as error:
            if not getattr(error, "code", "").endswith("NotFound"):
                outcome.warnings.append(f"the old AccessKey {mask_id(pending.key_id)} (replaced {pending.since}) "
                                        f"still cannot be deleted: {error}")
                continue
        store.update(name, lambda s, key=pending.key_id: setattr(
            s, "pending_delete", [p for p in s.pending_delete if p.key_id != key]))
        outcome.warnings.append(f"deleted the old AccessKey {mask_id(pending.key_id)} left by an earlier rotation")


def _note_pending_error(state: AccountState, key_id: str, error: str) -> None:
    for pending in state.pending_delete:
        if pending.key_id == key_id:
            pending.error = error
