"""Sharding: ``--shard INDEX/COUNT`` runs one of COUNT disjoint parts of the selected
procedures, so that COUNT machines (a CI matrix) check a docs repository together.

A procedure is named by its key, ``PATH#ID``: its doc's path relative to the working
folder (``./docs/a.md``, ``docs/a.md`` and ``$PWD/docs/a.md`` are one key) and its id.
Every shard selects as the others do, then keeps its part. Two ways to split
(``--shard-balance``):

- ``hash`` (the default): a procedure goes to shard ``sha256(key) mod COUNT + 1``. Its
  shard depends on its key alone: not on the order of files, not on which other docs
  exist or are selected, not on the machine. Adding a doc never moves another
  procedure. Shards hold about as many procedures each, on average: a few procedures
  can fall unevenly, and one shard may get the slow ones.
- ``store``: balanced by expected time. Each procedure's cost is the median of its
  last durations in the results store (:meth:`~docverify.run.store.ResultStore.durations`);
  one without history costs the median of those with one. The longest go first, each
  to the shard with the least time so far (ties: the lower hash, the lower shard).
  Shards then take about as long as each other, but a procedure's shard depends on
  every selected procedure and on the store's contents: every shard must select the
  same docs and read the same store (restore one store, under one cache key, on
  every machine). The durations are those of unsharded and merged runs, never of a
  shard's own run (shards run one after another in one folder would otherwise each
  see another store). When no selected procedure has history, it splits by hash.

Either way the split is complete (every selected procedure in exactly one shard) and
deterministic. Each shard's ``docverify.json`` records it (:class:`ShardInfo`): every
selected key and digests of the selection and of the split, so ``docverify merge``
(:mod:`docverify.run.merge`) can tell which shards and procedures are missing and
refuse shards of different runs.
"""

from __future__ import annotations

import hashlib
import os
import re
import statistics
import subprocess
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from docverify.errors import UsageError
from docverify.report.trajectory import ShardInfo

T = TypeVar("T")

#: ``--shard-balance`` choices
BALANCES = ("hash", "store")
_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
SPEC_HINT = "COUNT machines each run one INDEX from 1 to COUNT: 1/4, 2/4, 3/4 and 4/4 cover everything"


@dataclass(frozen=True)
class ShardSpec:
    """``--shard INDEX/COUNT``: the INDEX-th (1-based) of COUNT parts."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str, option: str = "--shard") -> "ShardSpec":
        """``"2/4"`` -> ShardSpec(2, 4); a :class:`UsageError` naming ``option`` otherwise."""
        spec = cls.read(text)
        if isinstance(spec, str):
            raise UsageError(f"{option} {text!r}: {spec}", hint=SPEC_HINT)
        return spec

    @classmethod
    def read(cls, text: str) -> "ShardSpec | str":
        """``"2/4"`` -> ShardSpec(2, 4), or what is wrong with ``text``."""
        match = _SPEC.fullmatch(text or "")
        if match is None:
            return "expected INDEX/COUNT, e.g. 1/4 (four machines run 1/4, 2/4, 3/4 and 4/4)"
        index, count = int(match[1]), int(match[2])
        if count < 1:
            return "COUNT must be 1 or more"
        if not 1 <= index <= count:
            return f"INDEX must be from 1 to {count}: shards are numbered 1/{count} ... {count}/{count}"
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def procedure_key(path: str, procedure_id: str, root: str | Path) -> str:
    """``PATH#ID``: ``path`` relative to ``root`` when it lies under it (else absolute),
    with ``/`` separators; computed from the text alone (nothing is read)."""
    full = os.path.normpath(os.path.join(str(root), path))
    relative = os.path.relpath(full, str(root))
    shown = full if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative
    return f"{shown.replace(os.sep, '/')}#{procedure_id}"


def key_digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


def hash_shard(key: str, count: int) -> int:
    """The shard (1-based) of ``key`` among ``count`` by hash: its key alone decides."""
    return int.from_bytes(key_digest(key)[:8], "big") % count + 1


def split(keys: Iterable[str], count: int, costs: Mapping[str, float] | None = None) -> dict[str, int]:
    """Every key's shard (1-based): by hash without ``costs``; with them (one per key),
    longest first to the least-loaded shard (ties: lower key hash first, lower shard)."""
    unique = list(dict.fromkeys(keys))
    if costs is None:
        return {key: hash_shard(key, count) for key in unique}
    loads = [0.0] * count
    out: dict[str, int] = {}
    for key in sorted(unique, key=lambda key: (-costs[key], key_digest(key))):
        shard = min(range(count), key=lambda index: (loads[index], index))
        out[key] = shard + 1
        loads[shard] += costs[key]
    return out


def expected_costs(ids: Mapping[str, str], history: Mapping[str, Sequence[float]]) -> dict[str, float] | None:
    """Each key's expected seconds: the median of its procedure's ``history`` (``ids``:
    key -> procedure id; ``history``: procedure id -> seconds); a key without history
    gets the median of those with one. None when none has history."""
    known = {key: statistics.median(history[procedure_id]) for key, procedure_id in ids.items()
             if history.get(procedure_id)}
    if not known:
        return None
    default = statistics.median(sorted(known.values()))
    return {key: known.get(key, default) for key in ids}


def digest(lines: Iterable[str]) -> str:
    hasher = hashlib.sha256()
    for line in lines:
        hasher.update(line.encode("utf-8", "surrogatepass"))
        hasher.update(b"\n")
    return hasher.hexdigest()


def plan_digest(plan: Mapping[str, int]) -> str:
    """What identifies a split: the same on every shard of one run."""
    return digest(f"{plan[key]} {key}" for key in sorted(plan))


def git_commit(root: Path) -> str | None:
    """The commit checked out in ``root``; None outside a git checkout or without git."""
    try:
        done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "HEAD"], cwd=root, capture_output=True,
                              text=True, timeout=10, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.SubprocessError):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


@dataclass
class Sharded(Generic[T]):
    """One shard's part of a selection: its items (in the order given) and what its
    results record."""

    items: list[T]
    info: ShardInfo


def take_shard(items: Sequence[T], spec: ShardSpec, key_of: Callable[[T], str], *, root: str | Path,
               costs: Mapping[str, float] | None = None, commit: str | None = None) -> Sharded[T]:
    """The items of shard ``spec`` (``key_of`` names each); by ``costs`` (key ->
    seconds, every key) when given, else by hash."""
    keys = [key_of(item) for item in items]
    plan = split(keys, spec.count, costs)
    mine = [item for item, key in zip(items, keys) if plan[key] == spec.index]
    selected = list(dict.fromkeys(keys))
    info = ShardInfo(
        index=spec.index, count=spec.count, balance="hash" if costs is None else "store",
        selected=selected, assigned=[key for key in selected if plan[key] == spec.index],
        selected_digest=digest(sorted(selected)), plan_digest=plan_digest(plan), root=str(root), commit=commit,
    )
    return Sharded(mine, info)


def store_costs(store_path: Path | None, ids: Mapping[str, str]) -> dict[str, float] | None:
    """``--shard-balance store``: each key's expected seconds from the results store at
    ``store_path`` (``ids``: key -> procedure id); None when it holds no history for
    them, or there is no store yet."""
    if store_path is None or not Path(store_path).is_file():
        return None
    from docverify.run.store import ResultStore

    with ResultStore(store_path) as store:
        history = store.durations(set(ids.values()))
    return expected_costs(ids, history)


def check_balance(balance: str, store_path: Path | None, option: str = "--shard-balance") -> None:
    """``--shard-balance store`` needs a results store: a UsageError when there is none."""
    if balance not in BALANCES:
        raise UsageError(f"{option} {balance!r}: choose from {', '.join(BALANCES)}")
    if balance == "store" and store_path is None:
        raise UsageError(f"{option} store reads durations from the results store, which --no-store turns off",
                         hint=f"drop --no-store, or use {option} hash")


def missing_shards(present: Collection[int], count: int) -> list[int]:
    return [index for index in range(1, count + 1) if index not in present]
