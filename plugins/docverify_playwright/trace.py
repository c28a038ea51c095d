"""A saved Playwright trace, scrubbed of every registered secret.

A trace keeps what the page showed three ways: text (the actions' parameters and
results, DOM snapshots, network bodies in ``trace.trace``, ``trace.network`` and
``resources/``), and pictures (the screencast frames in ``screencast/``). Text is
rewritten through :func:`docverify.scrub.scrub`. A picture cannot be scrubbed
textually, so a screencast frame taken while a secret may have been on screen is
dropped with its event; the trace viewer shows the frames before and after it.

When was a secret on screen? The trace says so itself: a DOM snapshot or an
action result (an accessibility snapshot, the page's text) that holds a secret
shows it then; an accessibility snapshot (the whole page's text, taken at every
observation) without one shows it is gone. A frame is dropped when the nearest
such evidence before it or after it holds a secret: between two observations the
page may have shown it at any moment.
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import zipfile
from pathlib import Path

from docverify.scrub import known, scrub

log = logging.getLogger(__name__)

#: The trace viewer's event lists (``trace.trace``; ``trace-1.trace`` for later chunks).
EVENTS_SUFFIX = ".trace"


def holds_secret(text: str) -> bool:
    return scrub(text) != text


def scrub_trace(path: Path) -> int:
    """Rewrite the trace zip at ``path`` without a registered secret; returns the
    number of screencast frames dropped. Written to a temporary file beside it, then
    moved over it: a reader never sees half a trace. A trace that cannot be scrubbed
    is deleted (a trace is worth less than a secret)."""
    secrets = known()
    if not secrets:
        return 0
    partial = path.with_name(path.name + ".partial")
    try:
        return _rewrite(path, partial, secrets)
    except Exception as error:
        path.unlink(missing_ok=True)
        partial.unlink(missing_ok=True)
        log.warning("deleted the trace %s: it could not be scrubbed of secrets (%s)", path, error)
        return 0


def _rewrite(path: Path, partial: Path, secrets: frozenset[str]) -> int:
    with zipfile.ZipFile(path) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist()]
    dropped = frames_to_drop({info.filename: data for info, data in entries if info.filename.endswith(EVENTS_SUFFIX)})
    encoded = sorted({s.encode() for s in secrets}, key=len, reverse=True)
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as out:
        for info, data in entries:
            if info.filename in dropped:  # a picture of the secret: no text to scrub, so it goes
                continue
            if info.filename.endswith(EVENTS_SUFFIX) and dropped:
                data = b"".join(line for line in data.splitlines(keepends=True) if not _drops(line, dropped))
            out.writestr(info, _scrubbed(data, encoded))
    os.replace(partial, path)
    return len(dropped)


def _scrubbed(data: bytes, encoded: list[bytes]) -> bytes:
    """Text through :func:`scrub`; anything else with each secret's bytes overwritten
    (the same length, so a binary format stays whole)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for secret in encoded:
            data = data.replace(secret, b"*" * len(secret))
        return data
    return scrub(text).encode("utf-8")


def _drops(line: bytes, dropped: set[str]) -> bool:
    if b'"screencast-frame"' not in line:
        return False
    try:
        event = json.loads(line)
    except ValueError:
        return False
    return _frame_file(event) in dropped


def _frame_file(event: dict) -> str | None:
    if event.get("file"):
        return str(event["file"])
    if event.get("sha1"):  # traces of older Playwright versions
        return f"resources/{event['sha1']}"
    return None


def frames_to_drop(event_files: dict[str, bytes]) -> set[str]:
    """The files of screencast frames taken while a secret may have been on screen,
    from the trace's event lists (see the module's docstring)."""
    evidence: list[tuple[float, bool]] = []  # (time, a secret is shown)
    frames: list[tuple[float, str]] = []
    methods: dict[str, str] = {}
    for data in event_files.values():
        for raw in data.decode("utf-8", "replace").splitlines():
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            kind = event.get("type")
            if kind == "screencast-frame":
                name = _frame_file(event)
                if name is not None:
                    frames.append((float(event.get("timestamp") or 0), name))
            elif kind == "before":
                methods[event.get("callId", "")] = event.get("method", "")
            elif kind == "frame-snapshot":
                snapshot = event.get("snapshot") or {}
                if holds_secret(raw):  # snapshots are incremental: only what one holds says anything
                    evidence.append((float(snapshot.get("timestamp") or 0), True))
            elif kind == "after" and "result" in event:
                shown = holds_secret(raw)
                whole_page = methods.get(event.get("callId", "")) == "ariaSnapshot"
                if shown or whole_page:
                    evidence.append((float(event.get("endTime") or 0), shown))
    if not any(shown for _, shown in evidence):
        return set()
    evidence.sort()
    times = [t for t, _ in evidence]
    dropped = set()
    for at, name in frames:
        i = bisect.bisect_right(times, at)
        before = evidence[i - 1][1] if i > 0 else False
        after = evidence[i][1] if i < len(evidence) else False
        if before or after:
            dropped.add(name)
    return dropped
