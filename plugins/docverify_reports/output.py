"""Where file reporters write: the run's output directory, and whole files only.

A file reporter names its files under ``--output DIR``; a run without one is a
usage error. Files are written to a temporary name and renamed, so an
interrupted run never leaves half a report behind.
"""

from __future__ import annotations

import os
from pathlib import Path

from docverify.errors import UsageError


def output_dir(reporter: str, output: Path | None) -> Path:
    """``output``, created if missing; :class:`UsageError` when it is None."""
    if output is None:
        raise UsageError(
            f"--report {reporter} needs --output DIR",
            hint="add --output DIR, e.g. --output docverify-report",
        )
    path = Path(output)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return ``path``."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8", newline="\n")
    os.replace(partial, path)
    return path
