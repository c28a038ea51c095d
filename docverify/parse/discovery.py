"""Which files to parse: files and folders -> sorted, deduplicated Markdown paths.

A folder is searched recursively for names matching `include` (``*.md``,
``*.mdx``); folders and files matching `exclude` (``.git``, ``node_modules``,
virtual environments, caches) are skipped, as are symbolic-link loops. A file
given explicitly is always taken, whatever its name. A path that does not exist
is an error diagnostic on line 0 naming it.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from pathlib import Path

from docverify.parse.model import Diagnostic, Severity

DEFAULT_INCLUDE = ("*.md", "*.mdx")
DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".docverify",
    "site-packages",
)


def discover(
    paths: Iterable[str | Path],
    *,
    include: Iterable[str] = DEFAULT_INCLUDE,
    exclude: Iterable[str] = DEFAULT_EXCLUDE,
) -> tuple[list[Path], list[Diagnostic]]:
    include, exclude = tuple(include), tuple(exclude)
    found: dict[Path, Path] = {}  # resolved -> as given
    problems: list[Diagnostic] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.setdefault(path.resolve(), path)
        elif path.is_dir():
            for file in _walk(path, include, exclude):
                found.setdefault(file.resolve(), file)
        else:
            what = "does not exist" if not path.exists() and not path.is_symlink() else "is not a file or folder"
            problems.append(Diagnostic(str(raw), 0, Severity.ERROR, f"path {what}: {raw}"))
    return sorted(found.values(), key=lambda p: str(p)), problems


def _walk(root: Path, include: tuple[str, ...], exclude: tuple[str, ...]) -> list[Path]:
    files: list[Path] = []
    seen: set[tuple[int, int]] = set()
    for folder, subfolders, names in os.walk(root, followlinks=True):
        try:
            stat = os.stat(folder)
        except OSError:
            subfolders[:] = []
            continue
        key = (stat.st_dev, stat.st_ino)
        if key in seen:
            subfolders[:] = []
            continue
        seen.add(key)
        subfolders[:] = sorted(name for name in subfolders if not _matches(name, exclude))
        for name in names:
            if _matches(name, include) and not _matches(name, exclude):
                files.append(Path(folder) / name)
    return files


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern.lower()) for pattern in patterns)
