"""Helpers shared by the accounts tests (imported by name: tests/accounts is on sys.path)."""

from __future__ import annotations

import os
from pathlib import Path


def write_secret(path: Path, value: str, mode: int = 0o600) -> Path:
    """A secret file as a user would make it: the value on one line, mode 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value + "\n", encoding="utf-8")
    os.chmod(path, mode)
    return path


POOL_FILE = """\
[accounts.a]
console = "sandbox"
tags = ["ecs"]

[accounts.b]
console = "aliyun"
tags = ["ecs", "nightly"]
"""

#: a separate process that leases an account, says so, and holds it until its stdin gets a line
HOLDER = """\
import sys
from docverify.lease import open_pool
pool = open_pool(accounts_file=sys.argv[1], lease_dir=sys.argv[2], environ={})
lease = pool.acquire(None if sys.argv[3] == "-" else sys.argv[3], timeout=float(sys.argv[4]), label="holder")
print("held", lease.name, flush=True)
sys.stdin.readline()
lease.release()
print("released", flush=True)
"""

#: a separate process that leases any account N times and logs "name start end" for each lease
WORKER = """\
import os, sys, time
from docverify.lease import open_pool
pool = open_pool(accounts_file=sys.argv[1], lease_dir=sys.argv[2], environ={})
for _ in range(int(sys.argv[4])):
    with pool.lease(timeout=60, label="worker") as lease:
        start = time.time()
        time.sleep(0.02)
        end = time.time()
    with open(sys.argv[3], "a") as log:
        log.write(f"{lease.name} {start!r} {end!r} {os.getpid()}\\n")
"""


class FakeKeyring:
    """Stands in for the ``keyring`` package (put it in ``sys.modules``): a dict of
    (service, user) -> password; ``refuse`` names users whose writes fail."""

    def __init__(self) -> None:
        self.__name__ = "keyring"
        self.store: dict[tuple[str, str], str] = {}
        self.refuse: set[str] = set()

    def get_password(self, service, user):
        return self.store.get((service, user))

    def set_password(self, service, user, value):
        if user in self.refuse:
            raise RuntimeError("the keyring is locked")
        self.store[(service, user)] = value


def rotation_file(folder: Path, url: str, *, console: str = "sandbox", key_user: str | None = None,
                  id_ref: str = "file:keys/rot.id", secret_ref: str = "file:keys/rot.secret") -> Path:
    """An accounts file with one account, ``rot``, whose key is behind the given references."""
    lines = ["[accounts.rot]", f'console = "{console}"', f'api_url = "{url}"',
             f'access_key_id = "{id_ref}"', f'access_key_secret = "{secret_ref}"']
    if key_user:
        lines.append(f'access_key_user = "{key_user}"')
    path = folder / "docverify-accounts.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
