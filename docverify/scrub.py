"""Secret values a run holds, and scrubbing them out of everything it writes.

Whoever resolves a secret (a console plugin's sign-in password, an account's
AccessKey, an API key of a model endpoint) registers its value here; every
prompt, log record and report passes through :func:`scrub` before it leaves the
process, so a secret that slipped into a page, an error message or a model's
output is still never written. Registration is process-wide and cheap; values
shorter than :data:`MIN_LENGTH` are ignored (masking "a" everywhere would ruin
every report and protect nothing).

A plugin that holds secrets of its own and writes them into no shared output (an
AccessKey in a Terraform log, in an audit log's error) masks them where it writes
with :func:`scrub_values`, without registering them.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import re
import threading
from collections.abc import Iterable
from enum import Enum
from typing import TypeVar

T = TypeVar("T")

MASK = "••••••"
#: the mask of the plain-text logs and one-line errors a plugin writes (:func:`scrub_values`)
ASCII_MASK = "***"
MIN_LENGTH = 6

_lock = threading.Lock()
_values: set[str] = set()
_pattern: re.Pattern[str] | None = None


def register(*values: str | None) -> None:
    """Remember ``values`` as secrets (None and short values are skipped)."""
    global _pattern
    fresh = {v for v in values if v and len(v) >= MIN_LENGTH} - _values
    if not fresh:
        return
    with _lock:
        _values.update(fresh)
        _pattern = _compile()


def forget(*values: str | None) -> None:
    """Drop ``values`` (a rotated key that no longer exists anywhere)."""
    global _pattern
    with _lock:
        _values.difference_update(v for v in values if v)
        _pattern = _compile()


def _compile() -> re.Pattern[str] | None:
    return _pattern_of(_values)


def _pattern_of(values: Iterable[str | None]) -> re.Pattern[str] | None:
    """One pattern for every value, longest first (a secret containing another is masked whole)."""
    ordered = sorted({v for v in values if v}, key=len, reverse=True)
    if not ordered:
        return None
    return re.compile("|".join(re.escape(v) for v in ordered))


def known() -> frozenset[str]:
    """Every registered secret value (for tests that scan outputs)."""
    return frozenset(_values)


def scrub(text: str) -> str:
    """``text`` with every registered secret replaced by :data:`MASK`."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


def scrub_values(text: str, values: Iterable[str | None], mask: str = MASK) -> str:
    """``text`` with each of ``values`` replaced by ``mask``: for secrets a plugin holds
    itself (its AccessKey), masked where it writes them.

    Unlike :func:`scrub`, nothing is registered and no value is too short: every one
    given is masked (None and empty ones are skipped), the longest first.
    """
    pattern = _pattern_of(values)
    if pattern is None or not text:
        return text
    return pattern.sub(mask, text)


def scrub_all(texts: Iterable[str]) -> list[str]:
    return [scrub(text) for text in texts]


def scrub_argv(argv: Iterable[str]) -> list[str]:
    """A command line as it may be written down (a results file, the results store, a
    model card): the value of every ``KEY=VALUE`` whose key names a secret
    (``-O checker.actiontrail.access_key_secret=...``) masked, and every registered secret."""
    from docverify.execute.revealed import is_secret_key

    shown = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and value and is_secret_key(key.rsplit(".", 1)[-1]):
            arg = f"{key}={MASK}"
        shown.append(scrub(arg))
    return shown


def scrub_object(value: T) -> T:
    """A copy of ``value`` (dataclasses, dicts, lists, tuples and strings, nested) with
    every string scrubbed; other values (numbers, enums, None) as they are. For results
    as they leave the run: scrubbed as objects, not through their JSON form."""
    if _pattern is None:
        return value
    if isinstance(value, Enum):  # before str: a verdict is a str enum
        return value
    if isinstance(value, str):
        return scrub(value)  # type: ignore[return-value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        clean = copy.copy(value)
        for item in dataclasses.fields(value):
            object.__setattr__(clean, item.name, scrub_object(getattr(value, item.name)))
        return clean
    if isinstance(value, dict):
        return {key: scrub_object(item) for key, item in value.items()}  # type: ignore[return-value]
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_object(item) for item in value)  # type: ignore[return-value]
    return value


class ScrubFilter(logging.Filter):
    """A logging filter that masks secrets in the formatted message."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _pattern is not None:
            message = record.getMessage()
            clean = scrub(message)
            if clean != message:
                record.msg, record.args = clean, None
        return True
