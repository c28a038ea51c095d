"""Where the shared corpus is: ``$DOCVERIFY_CORPUS`` or ``<repo>/../shared/corpus``.

Imported by name by the test suites (tests/ is on sys.path through its conftest).
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def corpus_root() -> Path | None:
    given = os.environ.get("DOCVERIFY_CORPUS")
    root = Path(given) if given else REPO.parent / "shared" / "corpus"
    return root if root.is_dir() else None


def real_docs_root() -> Path | None:
    root = corpus_root()
    folder = root / "real-docs" if root else None
    return folder if folder is not None and folder.is_dir() else None
