"""Explicit ``docverify:`` annotations that override what the parser infers.

Two places hold them:

- an HTML comment whose body starts with ``docverify:`` followed by a YAML
  mapping::

      <!-- docverify:
        id: create-bucket
        product: oss
        region: cn-hangzhou
        requires:
          - type: ecs_instance
            count: 1
        expect:
          - {event: PutBucket, service: Oss}
        skip: "needs a real-name verified account"
      -->

  The shorthand ``<!-- docverify: skip -->`` means ``skip: true``.
- a ``docverify:`` key in the front matter (always document level).

Keys: ``id``, ``product``, ``region``, ``requires`` (list of mappings: the
Resource META), ``expect`` (list of mappings: expected audit events), ``skip``
(bool or reason). Keys starting with ``x-`` go to ``Annotation.extra`` for
plugins. Any other key, a wrong type or invalid YAML is an error diagnostic on
the file's own line.

Where a comment applies is decided by `procedures.py`: before the document's
first heading (or anywhere before the first procedure, not right before one)
it gives document-level defaults; right before a heading, a "To ..." title or
an ordered list it belongs to the next procedure. A procedure's annotation
overrides the document's key by key; ``id`` is never inherited.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from docverify.spec.model import Annotation, Diagnostic, Severity

KEYS = ("id", "product", "region", "requires", "expect", "skip")
_VALID = ", ".join(KEYS) + ", x-<name>"
_COMMENT = re.compile(r"^\s*<!--\s*docverify\s*:", re.IGNORECASE)
_SHORTHAND_SKIP = "skip"


@dataclass
class ParsedAnnotation:
    """An annotation and the keys it actually set (for key-by-key overriding)."""

    annotation: Annotation
    keys: set[str] = field(default_factory=set)


def is_annotation_comment(html: str) -> bool:
    return bool(_COMMENT.match(html))


def parse_comment(html: str, line: int, path: str) -> tuple[ParsedAnnotation | None, list[Diagnostic]]:
    """Parse ``<!-- docverify: ... -->`` found at `line` (1-based)."""
    start = _COMMENT.match(html)
    assert start is not None
    end = html.find("-->", start.end())
    if end < 0:
        message = "docverify annotation comment is never closed with '-->'"
        return None, [Diagnostic(path, line, Severity.ERROR, message)]
    body = html[start.end() : end]
    body_line = line + html.count("\n", 0, start.end())
    first, newline, rest = body.partition("\n")
    if newline and not first.strip():  # "docverify:" alone on its line: a block mapping follows
        body, body_line = textwrap.dedent(rest), body_line + 1
    return parse_body(body, body_line, line, path)


def parse_body(body: str, body_line: int, line: int, path: str) -> tuple[ParsedAnnotation | None, list[Diagnostic]]:
    """Parse YAML `body` starting on `body_line`; `line` is where the annotation is."""
    try:
        data = yaml.safe_load(body) if body.strip() else None
        node = yaml.compose(body, Loader=yaml.SafeLoader) if isinstance(data, dict) else None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        error_line = body_line + mark.line if mark is not None else line
        problem = getattr(error, "problem", None) or "syntax error"
        return None, [Diagnostic(path, error_line, Severity.ERROR, f"docverify annotation is not valid YAML: {problem}")]
    except Exception as error:  # noqa: BLE001 - odd input can make yaml raise anything
        return None, [Diagnostic(path, line, Severity.ERROR, f"docverify annotation could not be read: {error}")]
    if data is None:
        return None, [Diagnostic(path, line, Severity.WARNING, "empty docverify annotation; ignored")]
    if isinstance(data, str) and data.strip().lower() == _SHORTHAND_SKIP:
        return ParsedAnnotation(Annotation(line=line, skip=True), {"skip"}), []
    if not isinstance(data, dict):
        message = f"docverify annotation must be a mapping of keys ({_VALID}) or 'skip', not a YAML {type(data).__name__}"
        return None, [Diagnostic(path, line, Severity.ERROR, message)]
    key_lines = _key_lines(node, body_line)
    return build(data, key_lines, line, path)


def from_front_matter(value: Any, front_matter_text: str, path: str) -> tuple[ParsedAnnotation | None, list[Diagnostic]]:
    """The front matter's ``docverify:`` value (front matter YAML starts on line 2)."""
    line, key_lines = 1, {}
    try:
        node = yaml.compose(front_matter_text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        node = None
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if getattr(key_node, "value", None) == "docverify":
                line = key_node.start_mark.line + 2
                key_lines = _key_lines(value_node, 2)
    if isinstance(value, str) and value.strip().lower() == _SHORTHAND_SKIP:
        return ParsedAnnotation(Annotation(line=line, skip=True), {"skip"}), []
    if not isinstance(value, dict):
        message = f"front matter 'docverify' must be a mapping of keys ({_VALID}) or 'skip'"
        return None, [Diagnostic(path, line, Severity.ERROR, message)]
    return build(value, key_lines, line, path)


def _key_lines(node: Any, base_line: int) -> dict[str, int]:
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            lines.setdefault(str(getattr(key_node, "value", "")), base_line + key_node.start_mark.line)
    return lines


def build(data: dict, key_lines: dict[str, int], line: int, path: str) -> tuple[ParsedAnnotation, list[Diagnostic]]:
    annotation = Annotation(line=line)
    keys: set[str] = set()
    problems: list[Diagnostic] = []

    def error(key: str, message: str) -> None:
        problems.append(Diagnostic(path, key_lines.get(key, line), Severity.ERROR, message))

    for raw_key, value in data.items():
        key = str(raw_key)
        if key.startswith("x-"):
            annotation.extra[key] = value
            continue
        if key not in KEYS:
            error(key, f"unknown docverify annotation key '{key}'; valid keys: {_VALID}")
            continue
        if key in ("id", "product", "region"):
            if isinstance(value, (dict, list)) or value is None or value == "":
                error(key, f"docverify annotation '{key}' must be a non-empty string")
                continue
            setattr(annotation, key, str(value))
        elif key in ("requires", "expect"):
            items, message = _items(key, value)
            if message is not None:
                error(key, message)
                continue
            setattr(annotation, key, items)
        elif key == "skip":
            if not isinstance(value, (bool, str)):
                error(key, "docverify annotation 'skip' must be true/false or a reason string")
                continue
            annotation.skip = value
        keys.add(key)
    return ParsedAnnotation(annotation, keys), problems


#: Keys of one ``requires:`` item (Resource META) and of one ``expect:`` item (an audit event).
REQUIRE_KEYS = ("type", "count", "attributes", "name")
EXPECT_KEYS = ("event", "service", "resource", "params", "eventName", "serviceName", "resourceName")
_EXAMPLE = {"requires": "'- type: ecs_instance' or '- vpc'", "expect": "'- {event: PutBucket, service: Oss}' or '- Oss:PutBucket'"}


def _items(key: str, value: Any) -> tuple[list[dict[str, Any]], str | None]:
    """The items of ``requires:`` or ``expect:``, each a mapping: a bare string is
    shorthand (``- vpc`` is ``{type: vpc}``; ``- Oss:PutBucket`` is ``{service: Oss,
    event: PutBucket}``). An unknown or missing key is an error, never a silently
    lost criterion (``{evnt: PutBucket}``)."""
    raw = [value] if isinstance(value, (dict, str)) else value
    if not isinstance(raw, list) or not raw:
        return [], f"docverify annotation '{key}' must be a list, e.g. {_EXAMPLE[key]}"
    valid = REQUIRE_KEYS if key == "requires" else EXPECT_KEYS
    first = "type" if key == "requires" else "event"
    items: list[dict[str, Any]] = []
    for index, item in enumerate(raw):
        where = f"docverify annotation '{key}' item {index + 1}"
        if isinstance(item, str) and item.strip():
            if key == "requires":
                items.append({"type": item.strip()})
            else:
                service, _, event = item.strip().rpartition(":")
                items.append({"event": event.strip(), **({"service": service.strip()} if service.strip() else {})})
            continue
        if not isinstance(item, dict):
            return [], f"{where} must be a mapping or a name, e.g. {_EXAMPLE[key]}"
        mapping = {str(k): v for k, v in item.items()}
        unknown = [k for k in mapping if k not in valid]
        if unknown:
            return [], f"{where} has an unknown key '{unknown[0]}'; valid keys: {', '.join(valid[:4 if key == 'expect' else None])}"
        if not any(mapping.get(k) not in (None, "") for k in (first, f"{first}Name")):
            return [], f"{where} needs '{first}:', e.g. {_EXAMPLE[key]}"
        if key == "expect" and "params" in mapping and not isinstance(mapping["params"], dict):
            return [], f"{where}: 'params' must be a mapping of request parameters, e.g. {{BucketName: docs-bucket}}"
        items.append(mapping)
    return items, None


def combine(base: ParsedAnnotation | None, override: ParsedAnnotation | None) -> ParsedAnnotation | None:
    """`override`'s keys win over `base`'s, key by key."""
    if base is None or override is None:
        return override or base
    merged = replace(base.annotation, line=override.annotation.line)
    for key in override.keys:
        setattr(merged, key, getattr(override.annotation, key))
    merged.extra = {**base.annotation.extra, **override.annotation.extra}
    return ParsedAnnotation(merged, base.keys | override.keys)


def for_procedure(document: ParsedAnnotation | None, procedure: ParsedAnnotation | None) -> Annotation | None:
    """The effective annotation of a procedure: document defaults, then its own."""
    if document is not None:
        inherited = ParsedAnnotation(replace(document.annotation, id=None), document.keys - {"id"})
    else:
        inherited = None
    merged = combine(inherited, procedure)
    if merged is None:
        return None
    return replace(
        merged.annotation,
        requires=list(merged.annotation.requires),
        expect=list(merged.annotation.expect),
        extra=dict(merged.annotation.extra),
    )
