"""Where the corpus is: ``$DOCVERIFY_CORPUS``, else the vendored copy in ``tests/corpus``.

Imported by name by the test suites (tests/ is on sys.path through its conftest).
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def corpus_root() -> Path:
    given = os.environ.get("DOCVERIFY_CORPUS")
    root = Path(given) if given else REPO / "tests" / "corpus"
    if not (root / "real-docs").is_dir():
        raise FileNotFoundError(f"no corpus at {root} (it needs a real-docs/ folder): "
                                "restore tests/corpus from git, or point $DOCVERIFY_CORPUS at a copy")
    return root


def real_docs_root() -> Path:
    return corpus_root() / "real-docs"
