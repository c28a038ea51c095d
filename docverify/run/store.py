"""The results store: every procedure's result, kept as soon as it is known.

One SQLite file (``.docverify/results.db`` by default) holds the runs and their
results. Each :meth:`ResultStore.save` commits at once, so a run that is
interrupted or crashes loses nothing, and ``--resume`` takes over the results whose
procedure has not changed since (same :func:`fingerprint`). The file is opened in
WAL mode with a busy timeout, so several processes (parallel runs, CI shards) and
several threads, each with its own ``ResultStore``, can write to it at once.

Tables (schema version in ``PRAGMA user_version``)::

    runs(run_id PK, started_at, finished_at NULL while running, interrupted,
         options JSON, console, policy)
    results(run_id, procedure_id, fingerprint, verdict, result JSON, saved_at,
            PRIMARY KEY (run_id, procedure_id))
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

from docverify.check.verdict import Verdict
from docverify.errors import ConfigError
from docverify.parse.decoding import decode
from docverify.parse.model import Procedure
from docverify.report.trajectory import ProcedureResult

SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 30.0  #: how long a writer waits for another one before giving up

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    interrupted INTEGER NOT NULL DEFAULT 0,
    options     TEXT NOT NULL DEFAULT '{}',
    console     TEXT NOT NULL DEFAULT '',
    policy      TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS results (
    run_id       TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    procedure_id TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    verdict      TEXT NOT NULL,
    result       TEXT NOT NULL,
    saved_at     TEXT NOT NULL,
    PRIMARY KEY (run_id, procedure_id)
);
"""

_REMEDY = "delete it (it only holds the results of earlier runs) or upgrade docverify"


def default_store_path(cwd: Path) -> Path:
    """Where the store lives unless told otherwise: ``<cwd>/.docverify/results.db``."""
    return Path(cwd) / ".docverify" / "results.db"


_last_id_time = datetime.min.replace(tzinfo=UTC)
_id_lock = threading.Lock()


def new_run_id() -> str:
    """A run id that sorts by start time: ``20260314T101502.123456Z-3f9a1c2b``.

    Within one process each id is later than the one before, even in the same
    microsecond; the random part keeps ids from different machines apart.
    """
    global _last_id_time
    with _id_lock:
        now = max(datetime.now(UTC), _last_id_time + timedelta(microseconds=1))
        _last_id_time = now
    return f"{now:%Y%m%dT%H%M%S.%f}Z-{secrets.token_hex(4)}"


def read_source_lines(path: str | Path) -> list[str]:
    """A file's lines, numbered as the parser numbers them (BOM dropped, any line ending)."""
    with open(path, "rb") as handle:
        text, _problems = decode(handle.read(), str(path))
    return text.split("\n")


def fingerprint(procedure: Procedure, source_lines: list[str] | None = None) -> str:
    """What identifies this version of a procedure: a sha256 hex digest.

    It covers the procedure's id, its source text (lines ``line``..``end_line`` of
    ``source_lines``, the whole file's lines, read from ``procedure.path`` when not
    given) and what it inherits from elsewhere in the file: product, region and the
    effective annotation (front-matter defaults included). Editing the procedure, or
    the defaults it uses, changes the fingerprint; editing the rest of the file, or
    moving the procedure, does not. Raises ``OSError`` if the file cannot be read.
    """
    lines = read_source_lines(procedure.path) if source_lines is None else source_lines
    body = lines[max(procedure.line - 1, 0) : max(procedure.end_line, procedure.line)]
    inherited: dict[str, Any] = {"product": procedure.product, "region": procedure.region}
    if procedure.annotation is not None:
        annotation = asdict(procedure.annotation)
        annotation.pop("line", None)
        inherited["annotation"] = annotation
    digest = hashlib.sha256()
    for part in (procedure.id, json.dumps(inherited, sort_keys=True, default=str), *body):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass
class RunRecord:
    """One run as the store knows it."""

    run_id: str
    started_at: str  #: ISO time, UTC
    finished_at: str | None  #: None while running, or when the process died
    interrupted: bool
    options: dict[str, Any] = field(default_factory=dict)
    console: str = ""
    policy: str = ""

    @property
    def complete(self) -> bool:
        """Finished without interruption: nothing left to resume."""
        return self.finished_at is not None and not self.interrupted


class ResultStore:
    """The SQLite results store; a context manager, safe to share between threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._make_parent()
        try:
            self._connection = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            self._prepare(self._connection)
        except sqlite3.DatabaseError as error:
            self.close()
            raise self._unreadable(error) from None
        except BaseException:
            self.close()
            raise

    # -- lifecycle -----------------------------------------------------------

    def close(self) -> None:
        """Close the file; closing twice is harmless."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"

    # -- runs ----------------------------------------------------------------

    def start_run(self, run_id: str, *, options: dict[str, Any], console: str, policy: str) -> None:
        """Record a run as started. Starting a known run id again continues that run:
        its results stay, it is marked running again with the new options."""
        self._execute(
            """INSERT INTO runs (run_id, started_at, finished_at, interrupted, options, console, policy)
               VALUES (?, ?, NULL, 0, ?, ?, ?)
               ON CONFLICT (run_id) DO UPDATE SET finished_at = NULL, interrupted = 0,
                   options = excluded.options, console = excluded.console, policy = excluded.policy""",
            (run_id, _now(), json.dumps(options, sort_keys=True, default=str), console, policy),
        )

    def finish_run(self, run_id: str, *, interrupted: bool) -> None:
        """Record the end of a run; ``interrupted`` when it stopped before every procedure ran."""
        cursor = self._execute(
            "UPDATE runs SET finished_at = ?, interrupted = ? WHERE run_id = ?", (_now(), int(interrupted), run_id)
        )
        if cursor.rowcount == 0:
            raise KeyError(f"no run {run_id!r} in {self.path}")

    def run(self, run_id: str) -> RunRecord | None:
        """The run with this id, or None."""
        rows = self._query("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        return _record(rows[0]) if rows else None

    def latest_run(self) -> RunRecord | None:
        """The run started last, or None when the store is empty."""
        rows = self._query("SELECT * FROM runs ORDER BY started_at DESC, run_id DESC LIMIT 1")
        return _record(rows[0]) if rows else None

    # -- results -------------------------------------------------------------

    def save(self, run_id: str, fingerprint: str, result: ProcedureResult) -> None:
        """Keep one procedure's result (replacing an earlier one of the same run); committed at once."""
        try:
            self._execute(
                """INSERT OR REPLACE INTO results (run_id, procedure_id, fingerprint, verdict, result, saved_at)
                   VALUES (?, ?, ?, ?, ?, ?)""",
                (run_id, result.id, fingerprint, result.verdict.value, json.dumps(result.to_dict()), _now()),
            )
        except sqlite3.IntegrityError:
            raise KeyError(f"no run {run_id!r} in {self.path}: call start_run first") from None

    def results(self, run_id: str) -> dict[str, tuple[str, ProcedureResult]]:
        """A run's results in the order they were saved: procedure id -> (fingerprint, result)."""
        rows = self._query(
            "SELECT procedure_id, fingerprint, result FROM results WHERE run_id = ? ORDER BY saved_at, rowid",
            (run_id,),
        )
        return {row["procedure_id"]: (row["fingerprint"], self._result(row)) for row in rows}

    def resumable(
        self, run_id: str, fingerprints: dict[str, str], *, rerun: Collection[Verdict] = ()
    ) -> dict[str, ProcedureResult]:
        """The results of ``run_id`` that still hold: procedure id -> result.

        ``fingerprints`` maps each procedure to run now to its :func:`fingerprint`; a
        stored result counts only when its procedure is still wanted and unchanged
        (a doc edited since is run again). Results whose verdict is in ``rerun``
        (e.g. ENV_ERROR) are left out too, so those procedures run again.
        """
        wanted = set(rerun)
        return {
            procedure_id: result
            for procedure_id, (stored, result) in self.results(run_id).items()
            if fingerprints.get(procedure_id) == stored and result.verdict not in wanted
        }

    def durations(self, procedure_ids: Collection[str], *, recent: int = 5) -> dict[str, list[float]]:
        """How long each of ``procedure_ids`` took in the runs kept here: procedure id ->
        its last ``recent`` durations in seconds, latest first (ids without any left out).

        Results taken over by ``--resume`` (a copy of an earlier one), ENV_ERROR results
        (the environment's time, not the procedure's) and the results of a shard's own
        run (``--shard``: each shard of a run would otherwise see the store its
        predecessors changed) do not count; a merged run (``docverify merge``) does.
        The same store contents always give the same answer (``--shard-balance store``)."""
        wanted = set(procedure_ids)
        rows = self._query(
            """SELECT results.procedure_id, json_extract(results.result, '$.duration_s') AS seconds
               FROM results JOIN runs ON runs.run_id = results.run_id
               WHERE results.verdict != ? AND json_extract(results.result, '$.resumed_from') IS NULL
                   AND json_extract(runs.options, '$.shard') IS NULL
               ORDER BY results.saved_at DESC, results.rowid DESC""",
            (Verdict.ENV_ERROR.value,),
        )
        out: dict[str, list[float]] = {}
        for row in rows:
            seconds = row["seconds"]
            if row["procedure_id"] in wanted and isinstance(seconds, (int, float)) and seconds >= 0:
                kept = out.setdefault(row["procedure_id"], [])
                if len(kept) < recent:
                    kept.append(float(seconds))
        return out

    # -- internals -----------------------------------------------------------

    def _make_parent(self) -> None:
        parent = self.path.parent
        if parent.is_dir():
            return
        try:
            parent.mkdir(parents=True, exist_ok=True)
            if parent.name == ".docverify":
                # like .pytest_cache: keep run state out of the user's commits
                (parent / ".gitignore").write_text("# created by docverify\n*\n", encoding="utf-8")
        except OSError as error:
            raise ConfigError(
                f"cannot create the results store folder {parent}: {error.strerror or error}",
                hint="choose a writable location for the results store",
            ) from None

    def _prepare(self, connection: sqlite3.Connection) -> None:
        connection.row_factory = sqlite3.Row
        connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        connection.execute("PRAGMA foreign_keys = ON")
        # Switching to WAL while another connection opens the same new file can answer
        # "database is locked" at once, without waiting: try again until the timeout.
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        delay = 0.005
        while True:
            try:
                self._prepare_schema(connection)
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _prepare_schema(self, connection: sqlite3.Connection) -> None:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            self._wal(connection)
            return
        if version != 0:
            raise ConfigError(
                f"{self.path}: results store schema version {version} is not the one this docverify "
                f"reads ({SCHEMA_VERSION}); it was written by another docverify version",
                hint=_REMEDY,
            )
        self._wal(connection)
        connection.execute("BEGIN IMMEDIATE")  # one process creates the tables, the others wait
        try:
            if connection.execute("PRAGMA user_version").fetchone()[0] == 0:
                tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if tables - {"runs", "results"}:
                    raise ConfigError(
                        f"{self.path} is an SQLite file but not a docverify results store "
                        f"(it holds tables {', '.join(sorted(tables))})",
                        hint="choose another path for the results store, or delete the file",
                    )
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise

    @staticmethod
    def _wal(connection: sqlite3.Connection) -> None:
        mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            connection.execute("PRAGMA journal_mode = WAL")

    def _unreadable(self, error: sqlite3.DatabaseError) -> ConfigError:
        text = str(error)
        if "not a database" in text or "malformed" in text:
            return ConfigError(f"{self.path} is not a readable docverify results store ({text})", hint=_REMEDY)
        return ConfigError(
            f"cannot open the results store {self.path}: {text}",
            hint="check that the file and its folder are writable, or choose another path",
        )

    def _connected(self) -> sqlite3.Connection:
        if self._connection is None:
            raise RuntimeError(f"{self!r} is closed")
        return self._connection

    def _execute(self, sql: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        with self._lock:
            try:
                return self._connected().execute(sql, parameters)
            except sqlite3.IntegrityError:
                raise
            except sqlite3.DatabaseError as error:
                raise self._unreadable(error) from None

    def _query(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._connected().execute(sql, parameters).fetchall()
            except sqlite3.DatabaseError as error:
                raise self._unreadable(error) from None

    def _result(self, row: sqlite3.Row) -> ProcedureResult:
        try:
            return ProcedureResult.from_dict(json.loads(row["result"]))
        except (ValueError, KeyError, TypeError) as error:
            raise ConfigError(
                f"{self.path}: the stored result of {row['procedure_id']} cannot be read ({error})", hint=_REMEDY
            ) from None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _record(row: sqlite3.Row) -> RunRecord:
    try:
        options = json.loads(row["options"] or "{}")
    except ValueError:
        options = {}
    return RunRecord(
        run_id=row["run_id"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        interrupted=bool(row["interrupted"]),
        options=options if isinstance(options, dict) else {},
        console=row["console"],
        policy=row["policy"],
    )
