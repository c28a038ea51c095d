"""Language detection: "zh" when CJK characters dominate, else "en"."""

from __future__ import annotations

import re

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def detect_language(text: str) -> str:
    """"zh" if there are at least as many CJK characters as Latin words."""
    cjk = len(_CJK.findall(text))
    return "zh" if cjk and cjk >= len(_LATIN_WORD.findall(text)) else "en"
