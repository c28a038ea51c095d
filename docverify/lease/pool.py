"""Leasing: one task holds one account at a time, across threads and processes.

A lease is an exclusive ``flock`` on ``<lease dir>/<name>.lock``; the file also
says who holds it (pid, host, label, since). The operating system drops the lock
when its holder ends, however it ends, so a crashed run never strands an account.
Quarantined accounts (see :mod:`docverify.lease.state`) are skipped.

A process started by ``docverify accounts lease NAME -- COMMAND`` inherits the
lease: ``DOCVERIFY_LEASED_ACCOUNT`` names the account and ``DOCVERIFY_LEASE_FD``
is the open lock file. Its pool then holds that one account, leased in turn by
its own tasks, and never waits for the parent that holds it for them.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import socket
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Iterator, Mapping, Sequence

from docverify.errors import EnvironmentProblem, UsageError
from docverify.lease.account import Account, AccountSpec
from docverify.lease.state import AccountState, KeyRecord, Quarantine, StateStore, iso, parse_time, utcnow
from docverify.scrub import scrub

LEASE_DIR_ENV = "DOCVERIFY_LEASE_DIR"
LEASE_TIMEOUT_ENV = "DOCVERIFY_LEASE_TIMEOUT"
LEASED_ACCOUNT_ENV = "DOCVERIFY_LEASED_ACCOUNT"
LEASE_FD_ENV = "DOCVERIFY_LEASE_FD"

_POLL_FIRST, _POLL_MAX = 0.05, 1.0
_inherited_locks: dict[str, threading.Lock] = {}
_inherited_guard = threading.Lock()


class PoolExhausted(EnvironmentProblem):
    """Every matching account stayed leased or quarantined for the whole wait."""


class AccountQuarantined(EnvironmentProblem):
    """The account asked for by name is quarantined."""


class NoSuchAccount(UsageError):
    """No account of the pool has that name or matches the filter."""


def default_lease_dir(*, config_file: Path | None = None, cwd: Path | None = None,
                      environ: Mapping[str, str] | None = None) -> Path:
    """``DOCVERIFY_LEASE_DIR``, else ``.docverify/leases`` next to docverify.toml (or here).

    Every process that shares the accounts must use the same folder (on one
    machine: flock is not reliable over network file systems)."""
    environ = os.environ if environ is None else environ
    if environ.get(LEASE_DIR_ENV):
        return Path(environ[LEASE_DIR_ENV])
    base = config_file.parent if config_file is not None else (cwd or Path.cwd())
    return base / ".docverify" / "leases"


@dataclass(frozen=True)
class Holder:
    """Who holds a lease."""

    pid: int
    host: str
    since: str
    label: str = ""

    def describe(self) -> str:
        here = socket.gethostname()
        text = f"pid {self.pid}" + (f" on {self.host}" if self.host and self.host != here else "")
        if self.label:
            text += f" ({self.label})"
        return text + (f" since {self.since}" if self.since else "")

    @classmethod
    def read(cls, path: Path) -> "Holder | None":
        try:
            data = json.loads(path.read_text(encoding="utf-8") or "null")
            return cls(int(data["pid"]), str(data.get("host", "")), str(data.get("since", "")),
                       str(data.get("label", "")))
        except (OSError, ValueError, TypeError, KeyError):
            return None


class Lease:
    """An account held exclusively until :meth:`release` (or the end of a ``with``)."""

    def __init__(self, pool: "AccountPool", spec: AccountSpec, account: Account, holder: Holder,
                 fd: int | None, inherited: threading.Lock | None = None) -> None:
        self.pool = pool
        self.spec = spec
        self.account = account
        self.holder = holder
        self._fd = fd
        self._inherited = inherited
        self._released = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def released(self) -> bool:
        return self._released

    @property
    def lock_fd(self) -> int | None:
        """The open lock file (a child process given it keeps the lease while it runs)."""
        return self._fd

    def release(self) -> None:
        """Give the account back (idempotent)."""
        if self._released:
            return
        self._released = True
        if self._inherited is not None:
            self._inherited.release()
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    def quarantine(self, reason: str) -> Quarantine:
        """Take the account out of the pool (bad credentials, login refused) and release it."""
        try:
            return self.pool.quarantine(self.name, reason)
        finally:
            self.release()

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    async def __aenter__(self) -> "Lease":
        return self

    async def __aexit__(self, *exc) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"Lease({self.name!r}, {self.holder.describe()}{', released' if self._released else ''})"


@dataclass
class AccountStatus:
    """One account as ``docverify accounts list`` shows it."""

    spec: AccountSpec
    holder: Holder | None  #: None: free
    leased: bool
    quarantine: Quarantine | None
    key: KeyRecord | None
    pending_delete: int = 0

    def key_age_days(self, now=None) -> float | None:
        created = parse_time(self.key.created) if self.key else None
        if created is None:
            return None
        return ((now or utcnow()) - created).total_seconds() / 86_400


class AccountPool:
    """The accounts tasks lease from (see the module docstring)."""

    def __init__(self, specs: Sequence[AccountSpec], lease_dir: Path, *,
                 environ: Mapping[str, str] | None = None, max_key_age_days: int = 90,
                 source: str = "") -> None:
        self.specs = list(specs)
        self.lease_dir = Path(lease_dir)
        self.environ = dict(os.environ if environ is None else environ)
        self.max_key_age_days = max_key_age_days
        self.source = source  #: where the accounts came from, for messages
        self.state = StateStore(self.lease_dir)
        self.inherited = self._inherited_account()

    # ------------------------------------------------------------- lookups
    @property
    def names(self) -> list[str]:
        return [spec.name for spec in self.specs]

    def get(self, name: str) -> AccountSpec:
        for spec in self.specs:
            if spec.name == name:
                return spec
        listing = ", ".join(self.names) or "none"
        raise NoSuchAccount(f"no account named {name!r} in the pool ({self.source or 'accounts'}); accounts: {listing}")

    def _inherited_account(self) -> str | None:
        """The account a parent ``docverify accounts lease`` holds for this process, if real."""
        name, fd_text = self.environ.get(LEASED_ACCOUNT_ENV), self.environ.get(LEASE_FD_ENV)
        if not name or not fd_text or name not in self.names:
            return None
        try:
            held, lock = os.fstat(int(fd_text)), (self.lease_dir / f"{name}.lock").stat()
        except (OSError, ValueError):
            return None
        return name if (held.st_dev, held.st_ino) == (lock.st_dev, lock.st_ino) else None

    # ------------------------------------------------------------- leasing
    def acquire(self, name: str | None = None, *, console: str | None = None, tags: Sequence[str] = (),
                timeout: float | None = 0.0, label: str = "", include_quarantined: bool = False) -> Lease:
        """Lease one matching account, waiting up to ``timeout`` seconds (None: no limit;
        0: fail at once) for one to be free. Raises :class:`PoolExhausted`."""
        for outcome in self._attempts(name, console, tags, timeout, label, include_quarantined):
            if isinstance(outcome, Lease):
                return outcome
            time.sleep(outcome)
        raise AssertionError("unreachable: _attempts ends with a lease or raises")

    async def acquire_async(self, name: str | None = None, *, console: str | None = None,
                            tags: Sequence[str] = (), timeout: float | None = 0.0, label: str = "",
                            include_quarantined: bool = False) -> Lease:
        """:meth:`acquire` for an event loop: waits with ``asyncio.sleep``."""
        for outcome in self._attempts(name, console, tags, timeout, label, include_quarantined):
            if isinstance(outcome, Lease):
                return outcome
            await asyncio.sleep(outcome)
        raise AssertionError("unreachable: _attempts ends with a lease or raises")

    def _attempts(self, name: str | None, console: str | None, tags: Sequence[str], timeout: float | None,
                  label: str, include_quarantined: bool) -> Iterator["Lease | float"]:
        """Try to lease; between tries, yield how long to wait; yield the lease when one
        is taken, or raise :class:`PoolExhausted` at the deadline."""
        candidates = self._candidates(name, console, tags, include_quarantined)
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        pause = _POLL_FIRST
        while True:
            if (lease := self._attempt(candidates, label, include_quarantined)) is not None:
                yield lease
                return
            if deadline is not None and time.monotonic() >= deadline:
                raise self._exhausted(candidates, timeout, name, console, tags)
            yield pause if deadline is None else min(pause, max(0.0, deadline - time.monotonic()))
            pause = min(pause * 1.5, _POLL_MAX)

    @contextmanager
    def lease(self, name: str | None = None, **options) -> Iterator[Lease]:
        """``with pool.lease(timeout=60) as lease: ... lease.account ...``"""
        held = self.acquire(name, **options)
        try:
            yield held
        finally:
            held.release()

    @asynccontextmanager
    async def lease_async(self, name: str | None = None, **options) -> AsyncIterator[Lease]:
        """``async with pool.lease_async(timeout=60) as lease: ...``"""
        held = await self.acquire_async(name, **options)
        try:
            yield held
        finally:
            held.release()

    def _candidates(self, name: str | None, console: str | None, tags: Sequence[str],
                    include_quarantined: bool) -> list[AccountSpec]:
        if self.inherited is not None:
            if name is not None and name != self.inherited:
                raise NoSuchAccount(f"this process runs under a lease of account {self.inherited!r} "
                                    f"({LEASED_ACCOUNT_ENV}); it cannot lease {name!r} too")
            name = self.inherited
        if name is not None:
            spec = self.get(name)
            if not spec.matches(console=console, tags=tags):
                raise NoSuchAccount(f"account {name!r} ({spec.console}, tags {spec.tags or 'none'}) does not match "
                                    f"{_filter_text(console, tags)}")
            if not include_quarantined and (q := self.state.read(name).quarantine) is not None:
                raise AccountQuarantined(f"account {name!r} is quarantined since {q.since}: {q.reason}",
                                         hint=f"fix it, then: docverify accounts release-quarantine {name}")
            return [spec]
        found = [spec for spec in self.specs if spec.matches(console=console, tags=tags)]
        if not found:
            if not self.specs:
                raise NoSuchAccount(f"the account pool is empty ({self.source or 'no accounts configured'})",
                                    hint="add one: docverify accounts add NAME --console ...")
            listing = ", ".join(f"{s.name} ({s.console}{', tags ' + ','.join(s.tags) if s.tags else ''})"
                                for s in self.specs)
            raise NoSuchAccount(f"no account matches {_filter_text(console, tags)}; accounts: {listing}")
        return found

    def _attempt(self, candidates: list[AccountSpec], label: str, include_quarantined: bool) -> Lease | None:
        self.lease_dir.mkdir(parents=True, exist_ok=True)
        for spec in candidates:
            if not include_quarantined and self.state.read(spec.name).quarantine is not None:
                continue
            lease = self._take(spec, label)
            if lease is not None:
                return lease
        return None

    def _take(self, spec: AccountSpec, label: str) -> Lease | None:
        label = scrub(label)  # a command line may carry a secret; lock files are readable by the pool's users
        holder = Holder(os.getpid(), socket.gethostname(), iso(utcnow()), label)
        if spec.name == self.inherited:
            with _inherited_guard:
                lock = _inherited_locks.setdefault(spec.name, threading.Lock())
            if not lock.acquire(blocking=False):
                return None
            try:
                account = spec.resolve(self.environ)
            except BaseException:
                lock.release()
                raise
            return Lease(self, spec, account, holder, None, lock)
        fd = os.open(self.lease_dir / f"{spec.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            data = json.dumps({"pid": holder.pid, "host": holder.host, "since": holder.since, "label": label})
            os.ftruncate(fd, 0)
            os.pwrite(fd, data.encode(), 0)
            account = spec.resolve(self.environ)
        except BaseException:
            os.ftruncate(fd, 0)
            os.close(fd)
            raise
        return Lease(self, spec, account, holder, fd)

    def _exhausted(self, candidates: list[AccountSpec], timeout: float | None, name: str | None,
                   console: str | None, tags: Sequence[str]) -> PoolExhausted:
        holders, quarantined = [], []
        for spec in candidates:
            status = self.status_of(spec)
            if status.quarantine is not None:
                quarantined.append(f"{spec.name}: {status.quarantine.reason}")
            elif status.leased:
                holders.append(f"{spec.name} by " + (status.holder.describe() if status.holder else "an unknown process"))
        count = len(candidates)
        what = f"{count} account{'s' if count != 1 else ''}"
        if console or tags:
            what += f" matching {_filter_text(console, tags)}"
        if not quarantined:
            state = "all leased" if count > 1 else "leased"
            parts = f"{state} (holders: {'; '.join(holders) or 'released just now'})"
        else:
            parts = ", ".join(filter(None, [
                f"{len(holders)} leased (holders: {'; '.join(holders)})" if holders else "",
                f"{len(quarantined)} quarantined ({'; '.join(quarantined)})"]))
        waited = "did not wait (--lease-timeout 0)" if not timeout else f"waited {timeout:g}s"
        return PoolExhausted(f"account pool exhausted: {what}, {parts}; {waited}",
                             hint=f"raise --lease-timeout ({LEASE_TIMEOUT_ENV}) or add accounts")

    # --------------------------------------------------------------- status
    def holder(self, name: str) -> tuple[bool, Holder | None]:
        """(leased?, who) for one account, without taking it."""
        path = self.lease_dir / f"{name}.lock"
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False, None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True, Holder.read(path)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False, None
        finally:
            os.close(fd)

    def status_of(self, spec: AccountSpec) -> AccountStatus:
        state: AccountState = self.state.read(spec.name)
        leased, holder = self.holder(spec.name)
        return AccountStatus(spec, holder, leased, state.quarantine, state.key, len(state.pending_delete))

    def status(self) -> list[AccountStatus]:
        return [self.status_of(spec) for spec in self.specs]

    # ------------------------------------------------------------ quarantine
    def quarantine(self, name: str, reason: str) -> Quarantine:
        """Keep ``name`` out of every lease until :meth:`release_quarantine`."""
        self.get(name)
        return self.state.quarantine(name, reason)

    def release_quarantine(self, name: str) -> Quarantine | None:
        self.get(name)
        return self.state.release_quarantine(name)


def _filter_text(console: str | None, tags: Sequence[str]) -> str:
    parts = []
    if console:
        parts.append(f"console={console}")
    if tags:
        parts.append(f"tags={','.join(tags)}")
    return " ".join(parts) or "any account"
