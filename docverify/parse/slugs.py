"""Stable procedure ids: ``<path-stem-slug>#<title-slug>``.

A slug is lower case; accents are removed, CJK and other letters kept; every run
of characters that are neither letters nor digits becomes one ``-``. So
"Step 1: Create an ECS instance" -> ``step-1-create-an-ecs-instance`` and
"创建RAM用户" -> ``创建ram用户``.
"""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[\W_]+")


def slugify(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    without_accents = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NON_WORD.sub("-", without_accents.lower()).strip("-")


class IdAllocator:
    """Hands out ids unique within one document (``-2``, ``-3`` on collisions)."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def reserve(self, procedure_id: str) -> None:
        self._taken.add(procedure_id)

    def allocate(self, stem: str, title: str) -> str:
        base = f"{slugify(stem) or 'doc'}#{slugify(title) or 'procedure'}"
        candidate, suffix = base, 2
        while candidate in self._taken:
            candidate = f"{base}-{suffix}"
            suffix += 1
        self._taken.add(candidate)
        return candidate
