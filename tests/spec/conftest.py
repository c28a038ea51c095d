"""Fixtures for the parser tests: the real-docs corpus, found on its own.

The corpus is ``$DOCVERIFY_CORPUS`` or the vendored ``tests/corpus``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_location import real_docs_root


@pytest.fixture(scope="session")
def real_docs() -> Path:
    """``<corpus>/real-docs``."""
    return real_docs_root()
