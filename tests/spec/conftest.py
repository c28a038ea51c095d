"""Fixtures for the parser tests: the real-docs corpus, found on its own.

The corpus is ``$DOCVERIFY_CORPUS`` or ``<repo>/../shared/corpus``; tests that
need it skip with a reason when it is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_location import real_docs_root


@pytest.fixture(scope="session")
def real_docs() -> Path:
    """``<corpus>/real-docs``; skips when the corpus is absent."""
    folder = real_docs_root()
    if folder is None:
        pytest.skip("corpus not found: set DOCVERIFY_CORPUS or place it at <repo>/../shared/corpus")
    return folder
