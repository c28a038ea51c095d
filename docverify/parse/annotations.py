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

The keys and their types are :class:`~docverify.parse.annotation_model.AnnotationModel` (pydantic, ``extra="forbid"``
at every level; ``docverify schema annotation`` prints it as JSON Schema): ``id``,
``product``, ``region``, ``requires`` (list of ``RequiredResource``: the
Resource META), ``expect`` (list of ``ExpectedAuditEvent``: expected audit
events), ``skip`` (bool or reason). Keys starting with ``x-`` go to
``Annotation.extra`` for plugins. Any other key (``evnt:`` in an ``expect:``
item included), a wrong type or invalid YAML is an error diagnostic on the file's
own line, naming the closest valid key; the key is left out, never half-read.

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

from docverify.errors import yaml_error_at
from docverify.parse.model import Annotation, Diagnostic, Severity

_COMMENT = re.compile(r"^\s*<!--\s*docverify\s*:", re.IGNORECASE)
_SHORTHAND_SKIP = "skip"
#: The keys an annotation accepts (annotation_model.KEYS; pydantic loads only for a file that has one).
_VALID = "id, product, region, requires, expect, skip, x-<name>"
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
        at, problem = yaml_error_at(error)
        error_line = body_line + at if at is not None else line
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
    """Validate a mapping of annotation keys with :class:`AnnotationModel`: each key
    that is unknown or of the wrong type is an error on its line and is left out;
    the others are kept."""
    from pydantic import ValidationError

    from docverify.parse.annotation_model import AnnotationModel, describe

    annotation = Annotation(line=line)
    extra = {str(key): value for key, value in data.items() if str(key).startswith("x-")}
    body = {str(key): value for key, value in data.items() if not str(key).startswith("x-")}
    problems: list[Diagnostic] = []
    try:
        model = AnnotationModel.model_validate(body)
    except ValidationError as error:
        bad: set[str] = set()
        for detail in error.errors():
            key = str(detail["loc"][0]) if detail["loc"] else ""
            bad.add(key)
            problems.append(Diagnostic(path, key_lines.get(key, line), Severity.ERROR, describe(detail)))
        body = {key: value for key, value in body.items() if key not in bad}
        model = AnnotationModel.model_validate(body)  # the keys are independent: the rest is valid
    for key in ("id", "product", "region", "skip"):
        if key in body:
            setattr(annotation, key, getattr(model, key))
    # requires/expect keep the mappings as written (shorthand expanded), as `parse --json` shows them
    if "requires" in body:
        annotation.requires = [_as_written(item, raw) for item, raw in zip(model.requires, _listed(body["requires"]))]
    if "expect" in body:
        annotation.expect = [_as_written(item, raw) for item, raw in zip(model.expect, _listed(body["expect"]))]
    annotation.extra = extra
    return ParsedAnnotation(annotation, set(body)), problems


def _listed(value: Any) -> list[Any]:
    return [value] if isinstance(value, (dict, str)) else list(value)


def _as_written(item: Any, raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return {str(key): value for key, value in raw.items()}
    return item.model_dump(exclude_unset=True)


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
