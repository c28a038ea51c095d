"""Putting the shards of one run back together (``docverify merge``).

Each shard of a sharded run (``docverify check --shard INDEX/COUNT``) writes its own
``docverify.json``, whose ``shard`` (:class:`~docverify.report.trajectory.ShardInfo`)
says which part it ran and what the whole run selected. :func:`merge` reads them back
into one :class:`~docverify.report.trajectory.RunSummary`, in the order the procedures
were selected, as if one machine had run them all, and says what it lacks: the shards
no folder holds, the selected procedures without a result (their shard is missing, was
interrupted or stopped by ``--maxfail``).

Shards of different runs are refused (a :class:`MergeRefused`): different COUNT, a
different selection (other docs, other ``-k``), a different split (``--shard-balance
store`` over different results stores), another commit or policy, or one shard twice.
``force`` merges them anyway, the first folder's result winning where two hold one
procedure, and records what it let through.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from docverify.errors import UsageError
from docverify.report.trajectory import MergedShard, MergeInfo, ProcedureResult, RunSummary
from docverify.run.shard import missing_shards, procedure_key
from docverify.run.store import new_run_id

#: the file ``docverify check --report json`` writes into its output folder
RESULTS_FILE = "docverify.json"


class MergeRefused(UsageError):
    """The folders hold shards that are not of one run."""


@dataclass
class ShardRun:
    """One folder's run, as read back."""

    source: Path  #: the docverify.json
    summary: RunSummary

    @property
    def folder(self) -> Path:
        return self.source.parent

    @property
    def name(self) -> str:
        return str(self.folder)

    def key_of(self, result: ProcedureResult) -> str:
        root = self.summary.shard.root if self.summary.shard is not None else os.getcwd()
        return procedure_key(result.path, result.id, root)


@dataclass
class Merged:
    """The merged run and what the merge had to say about it."""

    summary: RunSummary
    runs: list[ShardRun]
    warnings: list[str] = field(default_factory=list)

    @property
    def info(self) -> MergeInfo:
        assert self.summary.merged is not None
        return self.summary.merged


def results_files(paths: Iterable[Path]) -> list[Path]:
    """The docverify.json of each PATH: PATH itself when it is a file; PATH/docverify.json;
    else each PATH/*/docverify.json (a folder of downloaded artifacts). A PATH with none
    is a UsageError naming it."""
    found: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.is_file():
            found.append(path)
        elif (path / RESULTS_FILE).is_file():
            found.append(path / RESULTS_FILE)
        elif path.is_dir() and (inner := sorted(path.glob(f"*/{RESULTS_FILE}"))):
            found.extend(inner)
        elif not path.exists():
            raise UsageError(f"{path}: no such file or folder", hint="give the folders the shards' --output wrote")
        else:
            raise UsageError(f"{path}: no {RESULTS_FILE} in it nor in a folder under it",
                             hint="run each shard with --report json --output DIR, and give those folders")
    return list(dict.fromkeys(path.resolve() for path in found))


def read_run(path: Path) -> ShardRun:
    """One docverify.json, strictly; a UsageError naming the file when it cannot be read."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"{path}: cannot read it ({error.strerror or error})") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: not a docverify.json ({error})",
                         hint="give the folders `docverify check --report json --output DIR` wrote") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a docverify.json (not a JSON object)")
    try:
        summary = RunSummary.from_dict(data)
    except (ValidationError, ValueError, TypeError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise UsageError(f"{path}: not a docverify.json this docverify reads ({first})",
                         hint="merge results written by the same docverify version") from None
    return ShardRun(Path(path), summary)


def merge(runs: Sequence[ShardRun], *, force: bool = False, output: Path | None = None) -> Merged:
    """One run of ``runs``' shards. Raises :class:`MergeRefused` for shards of different
    runs unless ``force``."""
    if not runs:
        raise UsageError("nothing to merge", hint="give the folders the shards wrote")
    problems = mismatches(runs)
    if problems and not force:
        raise MergeRefused(problems[0] + (f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})"
                                          if len(problems) > 1 else ""),
                           hint="merge the shards of one run only, or give --force to merge them anyway")
    warnings = [f"--force: {problem}" for problem in problems]
    sharded = [run for run in runs if run.summary.shard is not None]
    selected: list[str] = []
    for run in sharded:
        selected.extend(run.summary.shard.selected)  # type: ignore[union-attr]
    selected = list(dict.fromkeys(selected))
    results: dict[str, ProcedureResult] = {}
    order: list[str] = []
    for run in runs:
        for result in run.summary.results:
            key = run.key_of(result)
            if key in results:
                warnings.append(f"{key}: results in more than one folder; kept the one of "
                                f"{_holder(runs, results[key])}, not {run.name}'s")
                continue
            results[key] = result
            order.append(key)
    chosen = set(selected)
    ordered = [results[key] for key in selected if key in results]
    ordered += [results[key] for key in order if key not in chosen]  # runs without --shard (--force)
    counts = {run.summary.shard.count for run in sharded}  # type: ignore[union-attr]
    count = max(counts) if counts else None
    present = {run.summary.shard.index for run in sharded}  # type: ignore[union-attr]
    info = MergeInfo(
        count=count,
        shards=[MergedShard(source=run.name, run_id=run.summary.run_id,
                            index=run.summary.shard.index if run.summary.shard else None,
                            results=len(run.summary.results)) for run in runs],
        missing_shards=missing_shards(present, count) if count else [],
        missing=[key for key in selected if key not in results],
        forced=problems,
    )
    first = runs[0].summary
    starts = [(_time(run.summary.started_at), run.summary) for run in runs]
    known = [(start, summary) for start, summary in starts if start is not None]
    if known:  # from the first shard's start to the last one's end
        begin, earliest = min(known, key=lambda item: item[0])
        end = max(start.timestamp() + summary.duration_s for start, summary in known)
        started_at, duration = earliest.started_at, end - begin.timestamp()
    else:
        started_at, duration = first.started_at, max(run.summary.duration_s for run in runs)
    stopped = [f"shard {run.summary.shard.index}/{run.summary.shard.count}: {run.summary.stopped}"
               if run.summary.shard else run.summary.stopped for run in runs if run.summary.stopped]
    summary = RunSummary(
        run_id=new_run_id(), started_at=started_at, duration_s=duration,
        console=_distinct(run.summary.console for run in runs), policy=_distinct(run.summary.policy for run in runs),
        resumed=sum(run.summary.resumed for run in runs), interrupted=any(run.summary.interrupted for run in runs),
        output_dir=str(output) if output is not None else None,
        changed_since=next((run.summary.changed_since for run in runs if run.summary.changed_since), None),
        stopped="; ".join(stopped) or None, merged=info, results=ordered,
        dry_run=True if any(run.summary.dry_run for run in runs) else None,
    )
    return Merged(summary, list(runs), warnings)


def mismatches(runs: Sequence[ShardRun]) -> list[str]:
    """Why ``runs`` are not the shards of one run (empty when they are)."""
    problems: list[str] = []
    plain = [run for run in runs if run.summary.shard is None]
    problems += [f"{run.source}: not a shard (its run had no --shard INDEX/COUNT)" for run in plain]
    sharded = [run for run in runs if run.summary.shard is not None]
    if not sharded:
        return problems
    first = sharded[0]
    info = first.summary.shard
    assert info is not None
    by_index: dict[int, ShardRun] = {}
    for run in sharded:
        shard = run.summary.shard
        assert shard is not None
        where = f"{run.name} is shard {shard.index}/{shard.count}"
        if shard.count != info.count:
            problems.append(f"{where}, {first.name} is shard {info.index}/{info.count}: shards of different runs")
            continue
        if shard.index in by_index:
            problems.append(f"shard {shard.index}/{shard.count} is in two folders: {by_index[shard.index].name} "
                            f"(run {by_index[shard.index].summary.run_id}) and {run.name} (run {run.summary.run_id})")
            continue
        by_index[shard.index] = run
        if shard.selected_digest != info.selected_digest:
            problems.append(f"{where} of {len(shard.selected)} selected procedures, {first.name} of "
                            f"{len(info.selected)}: they selected different procedures ({_difference(shard, info, run.name, first.name)})")
        elif shard.plan_digest != info.plan_digest:
            problems.append(f"{where} split by {shard.balance}, {first.name} by {info.balance}: the shards split "
                            "the procedures differently (--shard-balance store over different results stores?)")
        if shard.commit and info.commit and shard.commit != info.commit:
            problems.append(f"{where} of commit {shard.commit[:12]}, {first.name} of commit {info.commit[:12]}")
        if run.summary.policy != first.summary.policy:
            problems.append(f"{where} with the policy {run.summary.policy}, {first.name} with "
                            f"{first.summary.policy}")
        if bool(run.summary.dry_run) != bool(first.summary.dry_run):
            dry = "a dry run (--dry-run=browse)"
            problems.append(f"{where} {dry if run.summary.dry_run else 'not ' + dry}, {first.name} "
                            f"{dry if first.summary.dry_run else 'not ' + dry}")
    return problems


def copy_artifacts(run: ShardRun, results: Iterable[ProcedureResult], output: Path) -> int:
    """Copy the screenshots and traces ``results`` name from the shard's folder into
    ``output`` (under the same names, which are relative to the run's output folder),
    so the merged reports find them; returns how many were copied."""
    source = run.folder.resolve()
    target = Path(output).resolve()
    if source == target:
        return 0
    copied = 0
    for name in dict.fromkeys(_artifact_names(results)):
        origin = (source / name).resolve()
        if not origin.is_relative_to(source) or not origin.exists():
            continue
        destination = target / origin.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, destination, dirs_exist_ok=True)
        else:
            shutil.copy2(origin, destination)
        copied += 1
    return copied


def _artifact_names(results: Iterable[ProcedureResult]) -> Iterable[str]:
    for result in results:
        yield from result.artifacts.values()
        for turn in result.turns:
            yield from (name for name in (turn.screenshot_before, turn.screenshot_after) if name)
        yield from (finding.screenshot for finding in result.findings if finding.screenshot)
        for step in result.steps:
            yield from (finding.screenshot for finding in step.findings if finding.screenshot)


def _difference(shard, other, name: str, other_name: str) -> str:
    """What one selection has that the other lacks, a few keys of each."""
    parts = []
    for holder, keys in ((name, set(shard.selected) - set(other.selected)),
                         (other_name, set(other.selected) - set(shard.selected))):
        if keys:
            shown = sorted(keys)
            parts.append(f"only in {holder}'s: {', '.join(shown[:3])}{' ...' if len(shown) > 3 else ''}")
    return "; ".join(parts)


def _holder(runs: Sequence[ShardRun], result: ProcedureResult) -> str:
    return next((run.name for run in runs if any(r is result for r in run.summary.results)), "another folder")


def _distinct(values: Iterable[str]) -> str:
    return "; ".join(dict.fromkeys(value for value in values if value))


def _time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None


#: what a merged result is stored under instead of its procedure's fingerprint: never resumed
MERGED_FINGERPRINT = "merged"


def store_merged(path: Path, summary: RunSummary) -> None:
    """Keep the merged run in the results store at ``path``, so that its durations
    balance the next sharded run (``--shard-balance store``: a shard's own results do
    not count, a merge's do). ``--resume`` never takes a merged result over."""
    from docverify.run.store import ResultStore

    merged = summary.merged
    with ResultStore(path) as store:
        store.start_run(summary.run_id, console=summary.console, policy=summary.policy, options={
            "merged": [shard.run_id for shard in merged.shards] if merged else [],
        })
        for result in summary.results:
            store.save(summary.run_id, MERGED_FINGERPRINT, result)
        store.finish_run(summary.run_id, interrupted=summary.interrupted or (merged is not None and not merged.complete))
