"""What the pool remembers about each account, next to the leases:
``<lease dir>/<name>.json`` holds its quarantine and its AccessKey's age.

Every process of a pool reads and writes these files; a write happens under
``<lease dir>/.state.lock`` and replaces the file atomically (mode 0600).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from docverify.lease.secret import write_private


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def iso(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> datetime | None:
    """``2026-01-02T03:04:05Z`` (or any ISO 8601 time) -> aware datetime; None when unreadable."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def fingerprint(key_id: str) -> str:
    """A stable, non-reversible name for an AccessKey ID (state files never hold the ID itself)."""
    return hashlib.sha256(key_id.encode()).hexdigest()[:16]


def who() -> str:
    return f"pid {os.getpid()} on {socket.gethostname()}"


@dataclass
class Quarantine:
    reason: str
    since: str  #: ISO time
    by: str = ""  #: the process that quarantined it


@dataclass
class KeyRecord:
    """The age of the AccessKey an account uses."""

    fingerprint: str  #: of the key's ID
    created: str  #: ISO time the key was created
    source: str = "rotation"  #: how ``created`` is known: rotation, api
    rotated_from: str | None = None  #: fingerprint of the key it replaced


@dataclass
class PendingDelete:
    """An old AccessKey a rotation replaced but could not delete yet."""

    key_id: str
    user: str | None
    since: str
    error: str = ""


@dataclass
class AccountState:
    quarantine: Quarantine | None = None
    key: KeyRecord | None = None
    pending_delete: list[PendingDelete] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict) -> "AccountState":
        q, k = data.get("quarantine"), data.get("key")
        return cls(
            quarantine=Quarantine(**q) if isinstance(q, dict) else None,
            key=KeyRecord(**k) if isinstance(k, dict) else None,
            pending_delete=[PendingDelete(**item) for item in data.get("pending_delete", []) if isinstance(item, dict)],
        )

    def to_json(self) -> dict:
        return asdict(self)


class StateStore:
    """Account state files in one folder (the lease folder)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def path(self, name: str) -> Path:
        return self.folder / f"{name}.json"

    def read(self, name: str) -> AccountState:
        try:
            data = json.loads(self.path(name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return AccountState()
        except (OSError, ValueError, TypeError):
            return AccountState()  # a damaged file is no reason to stop a run; the next write repairs it
        try:
            return AccountState.from_json(data)
        except TypeError:
            return AccountState()

    def update(self, name: str, change: Callable[[AccountState], None]) -> AccountState:
        """Read, ``change`` in place and write back, under the state lock."""
        with self._locked():
            state = self.read(name)
            change(state)
            write_private(self.path(name), json.dumps(state.to_json(), indent=2) + "\n")
            return state

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / ".state.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing drops the lock

    # ------------------------------------------------------------ quarantine
    def quarantine(self, name: str, reason: str, *, when: datetime | None = None) -> Quarantine:
        record = Quarantine(reason=reason.strip() or "no reason given", since=iso(when or utcnow()), by=who())

        def change(state: AccountState) -> None:
            state.quarantine = record

        self.update(name, change)
        return record

    def release_quarantine(self, name: str) -> Quarantine | None:
        """Bring an account back; returns the quarantine it was under (None: it was not)."""
        previous: list[Quarantine | None] = [None]

        def change(state: AccountState) -> None:
            previous[0] = state.quarantine
            state.quarantine = None

        self.update(name, change)
        return previous[0]
