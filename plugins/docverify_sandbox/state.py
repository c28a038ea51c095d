"""The sandbox's state: one SQLite database per server, shared by all tenants.

Every resource of every product is a row of ``resources`` (its attributes as
JSON); accounts, sessions and audit events have their own tables. One lock
serialises access, so concurrent browser contexts cannot interleave writes.
Asynchronous states are stored as ``status`` plus ``target_status``/``ready_at``
and resolved when read, so no background timer is needed.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import sqlite3
import string
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from docverify_sandbox.catalog import REGION_ID_CODES

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
  account_id TEXT PRIMARY KEY, alias TEXT UNIQUE, root_password TEXT,
  root_ak TEXT UNIQUE, root_secret TEXT);
CREATE TABLE IF NOT EXISTS resources (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL, account_id TEXT NOT NULL, product TEXT NOT NULL, rtype TEXT NOT NULL,
  region TEXT NOT NULL, name TEXT, parent_id TEXT, status TEXT, target_status TEXT,
  ready_at REAL, attrs TEXT NOT NULL, created REAL NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS res_key ON resources(account_id, product, rtype, id, parent_id);
CREATE INDEX IF NOT EXISTS res_list ON resources(account_id, product, rtype, region);
CREATE INDEX IF NOT EXISTS res_id ON resources(id);
CREATE TABLE IF NOT EXISTS sessions (token TEXT PRIMARY KEY, account_id TEXT, principal TEXT, created REAL);
CREATE TABLE IF NOT EXISTS nonces (nonce TEXT PRIMARY KEY, seen REAL);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT, account_id TEXT, event_time REAL,
  event_name TEXT, service_name TEXT, event_rw TEXT, event_type TEXT, resource_name TEXT,
  resource_type TEXT, user_name TEXT, access_key_id TEXT, body TEXT);
CREATE INDEX IF NOT EXISTS ev_acct ON events(account_id, event_time);
"""


@dataclass(frozen=True)
class DefaultAccount:
    """A seeded tenant with known, sandbox-only credentials."""

    account_id: str
    alias: str
    root_password: str
    access_key_id: str
    access_key_secret: str
    admin_user: str
    admin_password: str
    admin_access_key_id: str
    admin_access_key_secret: str
    readonly_user: str
    readonly_password: str


#: the default tenants; the first is the one documented for users
DEFAULT_ACCOUNTS = (
    DefaultAccount("1234567890123456", "sandbox", "Sandbox-Root-1", "LTAIsandboxROOTkey01", "sandboxRootSecret0000000000000001",
                   "alice", "Alice-Passw0rd", "LTAIsandboxALICEkey1", "sandboxAliceSecret00000000000001",
                   "bob", "Bob-Passw0rd1"),
    DefaultAccount("6543210987654321", "tenant2", "Tenant2-Root-1", "LTAItenant2ROOTkey01", "tenant2RootSecret000000000000001",
                   "carol", "Carol-Passw0rd", "LTAItenant2CAROLkey1", "tenant2CarolSecret0000000000001",
                   "dave", "Dave-Passw0rd1"),
)


class Store:
    """Thread-safe access to the sandbox database."""

    def __init__(self, path: str | Path | None = None, *, seed: int = 0, latency_ms: int = 300) -> None:
        self.path = str(path) if path else ":memory:"
        self.conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        if self.path != ":memory:":
            self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=OFF")
        self.conn.executescript(SCHEMA)
        self.lock = threading.RLock()
        self.seed = seed
        self.latency = latency_ms / 1000.0
        self._rng = random.Random(seed)
        self.tenants: dict[str, DefaultAccount] = {}  #: accounts added while running (add_account)
        self._made = 0  #: accounts new_account made

    # --------------------------------------------------------------- plumbing
    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One transaction under the writer lock."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    # --------------------------------------------------------------------- ids
    def new_id(self, prefix: str, region: str, fmt: str | None = None) -> str:
        with self.lock:
            rng = self._rng
            if fmt == "numeric":
                return prefix + "".join(rng.choice(string.digits) for _ in range(15))
            if fmt == "access_key":
                return prefix + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(20))
            code = REGION_ID_CODES.get(region, "bp1")
            return prefix + code + "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(17))

    def token(self, n: int = 30) -> str:
        with self.lock:
            return "".join(self._rng.choice(string.ascii_letters + string.digits) for _ in range(n))

    # ---------------------------------------------------------------- accounts
    def account_by_alias(self, alias: str) -> sqlite3.Row | None:
        with self.lock:
            return self.conn.execute("SELECT * FROM accounts WHERE alias=?", (alias,)).fetchone()

    def account(self, account_id: str) -> sqlite3.Row | None:
        with self.lock:
            return self.conn.execute("SELECT * FROM accounts WHERE account_id=?", (account_id,)).fetchone()

    def accounts(self) -> list[sqlite3.Row]:
        with self.lock:
            return self.conn.execute("SELECT * FROM accounts ORDER BY account_id").fetchall()

    def access_key(self, ak: str) -> dict[str, Any] | None:
        """The owner of an AccessKey: account, principal and secret."""
        with self.lock:
            row = self.conn.execute("SELECT * FROM accounts WHERE root_ak=?", (ak,)).fetchone()
            if row:
                return {"account_id": row["account_id"], "secret": row["root_secret"], "user": None, "active": True}
            res = self.conn.execute(
                "SELECT * FROM resources WHERE id=? AND product='ram' AND rtype='access_key'", (ak,)).fetchone()
            if not res:
                return None
            attrs = json.loads(res["attrs"])
            return {"account_id": res["account_id"], "secret": attrs["AccessKeySecret"],
                    "user": attrs.get("UserName"), "active": self._status(res) == "Active"}

    def use_nonce(self, nonce: str) -> bool:
        """Record a signature nonce; False when it was seen in the last 15 minutes."""
        now = time.time()
        with self.tx() as db:
            db.execute("DELETE FROM nonces WHERE seen < ?", (now - 900,))
            try:
                db.execute("INSERT INTO nonces VALUES (?, ?)", (nonce, now))
            except sqlite3.IntegrityError:
                return False
        return True

    # --------------------------------------------------------------- sessions
    def new_session(self, account_id: str, principal: dict[str, Any]) -> str:
        token = hashlib.sha256(f"{self.token()}{time.time()}".encode()).hexdigest()
        with self.tx() as db:
            db.execute("INSERT INTO sessions VALUES (?,?,?,?)", (token, account_id, json.dumps(principal), time.time()))
        return token

    def session(self, token: str) -> dict[str, Any] | None:
        with self.lock:
            row = self.conn.execute("SELECT * FROM sessions WHERE token=?", (token,)).fetchone()
        if not row:
            return None
        return {"account_id": row["account_id"], "principal": json.loads(row["principal"])}

    def end_session(self, token: str) -> None:
        with self.tx() as db:
            db.execute("DELETE FROM sessions WHERE token=?", (token,))

    # -------------------------------------------------------------- resources
    def _status(self, row: sqlite3.Row) -> str | None:
        if row["target_status"] and row["ready_at"] is not None and row["ready_at"] <= time.time():
            return row["target_status"]
        return row["status"]

    def _to_dict(self, row: sqlite3.Row) -> dict[str, Any]:
        return {
            "id": row["id"], "account_id": row["account_id"], "product": row["product"],
            "rtype": row["rtype"], "region": row["region"], "name": row["name"],
            "parent_id": row["parent_id"], "status": self._status(row),
            "attrs": json.loads(row["attrs"]), "created": row["created"], "seq": row["seq"],
            #: on its way to another status (Pending -> Running): pages poll until it is there
            "settling": bool(row["target_status"]) and (row["ready_at"] is None or row["ready_at"] > time.time()),
        }

    def insert(self, db: sqlite3.Connection, rec: dict[str, Any]) -> None:
        db.execute(
            "INSERT INTO resources (id, account_id, product, rtype, region, name, parent_id, status,"
            " target_status, ready_at, attrs, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (rec["id"], rec["account_id"], rec["product"], rec["rtype"], rec["region"], rec.get("name"),
             rec.get("parent_id"), rec.get("status"), rec.get("target_status"), rec.get("ready_at"),
             json.dumps(rec.get("attrs", {})), rec.get("created", time.time())))

    def update(self, db: sqlite3.Connection, seq: int, **cols: Any) -> None:
        if "attrs" in cols:
            cols["attrs"] = json.dumps(cols["attrs"])
        sets = ", ".join(f"{k}=?" for k in cols)
        db.execute(f"UPDATE resources SET {sets} WHERE seq=?", (*cols.values(), seq))

    def delete(self, db: sqlite3.Connection, seq: int) -> None:
        db.execute("DELETE FROM resources WHERE seq=?", (seq,))

    def find(self, account_id: str, product: str, rtype: str, *, region: str | None = None,
             id: str | None = None, parent_id: str | None = None, name: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM resources WHERE account_id=? AND product=? AND rtype=?"
        args: list[Any] = [account_id, product, rtype]
        for col, val in (("region", region), ("id", id), ("parent_id", parent_id), ("name", name)):
            if val is not None:
                sql += f" AND {col}=?"
                args.append(val)
        with self.lock:
            rows = self.conn.execute(sql + " ORDER BY seq DESC", args).fetchall()
        return [self._to_dict(r) for r in rows]

    def exists_anywhere(self, product: str, rtype: str, id: str) -> bool:
        with self.lock:
            return self.conn.execute("SELECT 1 FROM resources WHERE product=? AND rtype=? AND id=?",
                                     (product, rtype, id)).fetchone() is not None

    def referencing(self, account_id: str, product: str, rtype: str, attr: str, value: str) -> int:
        with self.lock:
            return self.conn.execute(
                "SELECT COUNT(*) FROM resources WHERE account_id=? AND product=? AND rtype=?"
                " AND json_extract(attrs, ?)=?", (account_id, product, rtype, f"$.{attr}", value)).fetchone()[0]

    def referrers(self, account_id: str, product: str, rtype: str, attr: str, value: str) -> list[dict[str, Any]]:
        """The resources of a type whose attribute ``attr`` names ``value`` (EIPs bound to a NAT gateway)."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT * FROM resources WHERE account_id=? AND product=? AND rtype=? AND json_extract(attrs, ?)=?"
                " ORDER BY seq", (account_id, product, rtype, f"$.{attr}", value)).fetchall()
        return [self._to_dict(r) for r in rows]

    # ----------------------------------------------------------------- events
    def add_event(self, account_id: str, event: dict[str, Any], t: float) -> None:
        ui = event.get("userIdentity", {})
        with self.tx() as db:
            db.execute(
                "INSERT INTO events (event_id, account_id, event_time, event_name, service_name, event_rw,"
                " event_type, resource_name, resource_type, user_name, access_key_id, body)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (event["eventId"], account_id, t, event.get("eventName"), event.get("serviceName"),
                 event.get("eventRW"), event.get("eventType"), event.get("resourceName", ""),
                 event.get("resourceType", ""), ui.get("userName", ""), ui.get("accessKeyId", ""),
                 json.dumps(event)))

    # ------------------------------------------------------------ seed/reset
    def seed_accounts(self, seeder) -> None:
        """Create the default tenants and their seeded resources."""
        with self.tx() as db:
            for acct in DEFAULT_ACCOUNTS:
                self._add(db, acct, seeder)

    def new_account(self, seeder) -> DefaultAccount:
        """A new tenant with fresh credentials and the default tenants' user names
        (an administrator ``alice``, a read-only ``bob``), holding what ``seeder``
        gives it: one per procedure, so procedures never see each other's resources."""
        with self.lock:  # past any account a kept state (data_dir) still holds from an interrupted run
            self._made += 1
            while self.account(f"3{self._made:015d}") or self.account_by_alias(f"task{self._made}"):
                self._made += 1
            number = self._made
        token = secrets.token_hex
        acct = DefaultAccount(f"3{number:015d}", f"task{number}", "Root-" + token(8), "LTAI5t" + token(7),
                              token(16), "alice", "Alice-" + token(8), "LTAI5t" + token(7), token(16),
                              "bob", "Bob-" + token(8))
        self.add_account(acct, seeder)
        return acct

    def add_account(self, acct: DefaultAccount, seeder) -> None:
        """A new tenant, holding what ``seeder`` gives it (``reset`` returns it there)."""
        with self.tx() as db:
            if db.execute("SELECT 1 FROM accounts WHERE account_id=? OR alias=?",
                          (acct.account_id, acct.alias)).fetchone():
                raise ValueError(f"the sandbox already has an account {acct.account_id} or alias {acct.alias}")
            self._add(db, acct, seeder)
            self.tenants[acct.account_id] = acct

    def _add(self, db: sqlite3.Connection, acct: DefaultAccount, seeder) -> None:
        db.execute("INSERT OR IGNORE INTO accounts VALUES (?,?,?,?,?)",
                   (acct.account_id, acct.alias, acct.root_password, acct.access_key_id, acct.access_key_secret))
        if not db.execute("SELECT 1 FROM resources WHERE account_id=? LIMIT 1", (acct.account_id,)).fetchone():
            for rec in seeder(acct):
                self.insert(db, rec)

    def remove_account(self, account_id: str) -> None:
        """Delete a tenant and everything it holds: resources, sessions, events."""
        with self.tx() as db:
            for table in ("resources", "events", "sessions", "accounts"):
                db.execute(f"DELETE FROM {table} WHERE account_id=?", (account_id,))
        self.tenants.pop(account_id, None)

    def reset(self, account_id: str, seeder) -> None:
        """Return one account to its seeded state (resources, sessions, events)."""
        acct = next((a for a in DEFAULT_ACCOUNTS if a.account_id == account_id), None) or self.tenants.get(account_id)
        with self.tx() as db:
            db.execute("DELETE FROM resources WHERE account_id=?", (account_id,))
            db.execute("DELETE FROM events WHERE account_id=?", (account_id,))
            if acct is not None:
                for rec in seeder(acct):
                    self.insert(db, rec)
