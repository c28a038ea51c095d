"""Placeholders: values the reader must substitute before running a step.

Recognised forms, in the order found:

- angle brackets ``<your-name>``, ``<InstanceId>``;
- braces ``{bucket-name}``;
- upper-case names with underscores ``YOUR_BUCKET``, ``MY_REGION``;
- masked identifiers ``i-bp67acfmxazb4p****`` and masked secrets such as
  ``AccessKey ID ****`` (three or more asterisks).
"""

from __future__ import annotations

import re

_PATTERN = re.compile(
    r"(<[A-Za-z][\w\-. ]{0,40}>)"  # <your-name>
    r"|(\{[A-Za-z_][\w\-.]{0,40}\})"  # {bucket-name}
    r"|\b([A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+)\b"  # YOUR_BUCKET
    r"|([A-Za-z0-9][\w\-.:/]{0,80}\*{3,})"  # i-bp67acfmxazb4p****
    r"|((?:\b[A-Z][\w]*\s){1,2}\*{3,})"  # AccessKey ID ****
)


def find_placeholders(text: str) -> list[str]:
    """Placeholders in `text`, deduplicated, in order of appearance."""
    if not text or not ("<" in text or "{" in text or "_" in text or "***" in text):
        return []  # every form needs one of these: most step text has none
    found: dict[str, None] = {}
    for match in _PATTERN.finditer(text):
        value = next(group for group in match.groups() if group)
        found[value.strip()] = None
    return list(found)
