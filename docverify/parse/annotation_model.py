"""The models of the ``docverify:`` annotation: every key it accepts and its type.

pydantic, ``extra="forbid"`` at every level, so a typo (``evnt:`` in an ``expect:``
item) is an error, never a silently lost criterion. `spec/annotations.py`
validates each annotation with :class:`AnnotationModel` (and turns its errors into
diagnostics with :func:`describe`); ``docverify.provision.meta`` and ``docverify.task`` read
``requires:`` and ``expect:`` items through :class:`RequiredResource` and
:class:`ExpectedAuditEvent`; ``docverify.schemas`` makes the JSON Schema of it.
Kept apart from `annotations.py` so a document without an annotation is parsed
without loading pydantic.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any, Callable, Iterable

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator
from pydantic_core import ErrorDetails, PydanticCustomError

_EXAMPLE = {"requires": "'- type: ecs_instance' or '- vpc'", "expect": "'- {event: PutBucket, service: Oss}' or '- Oss:PutBucket'"}


# --- the models: every key an annotation accepts, and its type ---------------------------------


def _problem(message: str) -> PydanticCustomError:
    return PydanticCustomError("docverify_annotation", message)


def _text(value: Any) -> Any:
    """A name written as YAML: any scalar, read as text (``region: 2024`` is "2024")."""
    if value is None or value == "" or isinstance(value, (dict, list)):
        raise _problem("must be a non-empty string")
    return str(value)


def _optional_text(value: Any) -> Any:
    """As :func:`_text`, with null and "" meaning "not given"."""
    return None if value is None or value == "" else _text(value)


Text = Annotated[str, BeforeValidator(_text, json_schema_input_type=str)]
OptionalText = Annotated[str | None, BeforeValidator(_optional_text, json_schema_input_type=str | None)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RequiredResource(_Model):
    """One ``requires:`` item: a Resource META entry (``- vpc`` is ``{type: vpc}``)."""

    model_config = ConfigDict(title="requires item")

    type: Text = Field(description="a META type (vpc, vswitch, ecs_instance, oss_bucket, ...) or an alias of one")
    count: int = Field(1, ge=0, description="how many; 0: the procedure needs none (inference does not add it)")
    attributes: dict[str, Any] = Field(default_factory=dict, description="e.g. {status: Running}")
    name: Text | None = Field(None, description="the resource's name; <suffix> is the run suffix")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"type": value.strip()} if isinstance(value, str) and value.strip() else value

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> Any:
        if value is None or value == "" or isinstance(value, (dict, list)):
            raise _problem("needs 'type:'")
        return value

    @field_validator("count", mode="before")
    @classmethod
    def _count(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _problem(f"'count' must be a whole number >= 0, not {value!r}")
        return value

    @field_validator("attributes", mode="before")
    @classmethod
    def _attributes(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise _problem("'attributes' must be a mapping such as '{status: Running}'")
        return {str(key): item for key, item in value.items()}

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, value: Any) -> Any:
        if value is not None and (value == "" or isinstance(value, (dict, list))):
            raise _problem("'name' must be a non-empty string (use <suffix> for the run suffix)")
        return value


class ExpectedAuditEvent(_Model):
    """One ``expect:`` item: an audit event (ActionTrail) that proves success
    (``- Oss:PutBucket`` is ``{service: Oss, event: PutBucket}``)."""

    model_config = ConfigDict(title="expect item")

    event: OptionalText = Field(None, description="eventName, e.g. PutBucket")
    service: OptionalText = Field(None, description="serviceName, e.g. Oss")
    resource: OptionalText = Field(None, description="a resource name the event must name")
    params: dict[str, Any] = Field(default_factory=dict, description="request parameters the event must carry")
    eventName: OptionalText = Field(None, description="the same as event (ActionTrail's spelling)")
    serviceName: OptionalText = Field(None, description="the same as service")
    resourceName: OptionalText = Field(None, description="the same as resource")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip():
            service, _, event = value.strip().rpartition(":")
            return {"event": event.strip(), **({"service": service.strip()} if service.strip() else {})}
        return value

    @field_validator("params", mode="before")
    @classmethod
    def _params(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise _problem("'params' must be a mapping of request parameters, e.g. {BucketName: docs-bucket}")
        return {str(key): item for key, item in value.items()}

    @model_validator(mode="after")
    def _needs_event(self) -> ExpectedAuditEvent:
        if not (self.event or self.eventName):
            raise _problem("needs 'event:'")
        return self

    @property
    def event_name(self) -> str:
        return self.event or self.eventName or ""

    @property
    def service_name(self) -> str | None:
        return self.service or self.serviceName

    @property
    def resource_name(self) -> str | None:
        return self.resource or self.resourceName


def _items(key: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        raw = [value] if isinstance(value, (dict, str)) else value
        if not isinstance(raw, list) or not raw:
            raise _problem(f"must be a list, e.g. {_EXAMPLE[key]}")
        for index, item in enumerate(raw):
            if not isinstance(item, dict) and not (isinstance(item, str) and item.strip()):
                raise _problem(f"item {index + 1} must be a mapping or a name, e.g. {_EXAMPLE[key]}")
        return raw

    return check


class AnnotationModel(_Model):
    """``<!-- docverify: ... -->`` (or the front matter's ``docverify:``): what
    overrides or completes what the parser infers. Keys starting with ``x-`` are
    kept for plugins; any other key is an error."""

    model_config = ConfigDict(
        title="docverify annotation",
        json_schema_extra={"patternProperties": {"^x-": {"description": "kept for plugins"}}},
    )

    id: Text | None = Field(None, description="stable id used in reports, --resume and -k")
    product: Text | None = Field(None, description="the console product, e.g. OSS")
    region: Text | None = Field(None, description="the region to run in, e.g. cn-hangzhou")
    requires: Annotated[
        list[RequiredResource],
        BeforeValidator(_items("requires"), json_schema_input_type=list[RequiredResource | str] | RequiredResource | str),
    ] = Field(default_factory=list, description="Resource META: what must exist before the procedure runs")
    expect: Annotated[
        list[ExpectedAuditEvent],
        BeforeValidator(_items("expect"), json_schema_input_type=list[ExpectedAuditEvent | str] | ExpectedAuditEvent | str),
    ] = Field(default_factory=list, description="success criteria: audit events (ActionTrail)")
    skip: bool | str = Field(False, description="true, or the reason to skip the procedure")

    @field_validator("skip", mode="before")
    @classmethod
    def _skip(cls, value: Any) -> Any:
        if not isinstance(value, (bool, str)):
            raise _problem("must be true/false or a reason string")
        return value


#: The keys an annotation accepts (besides ``x-<name>``).
KEYS = tuple(AnnotationModel.model_fields)
_VALID = ", ".join(KEYS) + ", x-<name>"
#: The keys of one ``requires:`` item (Resource META) and of one ``expect:`` item (an audit event).
REQUIRE_KEYS = tuple(RequiredResource.model_fields)
EXPECT_KEYS = tuple(ExpectedAuditEvent.model_fields)
#: What an unknown key's message lists (the ActionTrail spellings are accepted, not advertised).
_SHOWN_KEYS = {"requires": REQUIRE_KEYS, "expect": EXPECT_KEYS[:4]}



def describe(detail: ErrorDetails) -> str:
    """One pydantic error of :class:`AnnotationModel` as a docverify message: where
    (the key, the item), what is wrong, and the closest valid key for a typo."""
    loc = [str(part) for part in detail["loc"]]
    key = loc[0] if loc else ""
    if detail["type"] == "extra_forbidden" and len(loc) == 1:
        return f"unknown docverify annotation key '{key}'; valid keys: {_VALID}" + _did_you_mean(key, KEYS)
    message = detail["msg"] if detail["type"] == "docverify_annotation" else _pydantic_message(detail)
    if key not in ("requires", "expect") or len(loc) < 2:
        return f"docverify annotation '{key}' {message}"
    where = f"docverify annotation '{key}' item {int(loc[1]) + 1}"
    field_name = loc[2] if len(loc) > 2 else None
    valid = REQUIRE_KEYS if key == "requires" else EXPECT_KEYS
    if detail["type"] == "extra_forbidden" and field_name is not None:
        return (f"{where} has an unknown key '{field_name}'; valid keys: {', '.join(_SHOWN_KEYS[key])}"
                + _did_you_mean(field_name, valid))
    if detail["type"] == "missing" and field_name == "type":
        return f"{where} needs 'type:', e.g. {_EXAMPLE[key]}"
    if message.startswith("needs "):
        return f"{where} {message}, e.g. {_EXAMPLE[key]}"
    if field_name is not None and not message.startswith("'"):
        return f"{where}: '{field_name}' {message}"
    return f"{where}: {message}"


def _pydantic_message(detail: ErrorDetails) -> str:
    text = detail["msg"]
    return text[0].lower() + text[1:] if text else text


def _did_you_mean(key: str, valid: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(valid), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
