"""Records: the data a run writes out (results, findings, usage), validated both ways.

A record is a pydantic dataclass that forbids unknown keys. :class:`Record` gives
every record the same ``to_dict`` (JSON-ready) and ``from_dict`` (strict: a
mistyped or unknown key is an error naming it), so the JSON a run writes, the
results store and the shipped schema of ``docverify.json`` come from one
definition.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, TypeVar

from pydantic import ConfigDict, Field, TypeAdapter
from pydantic.dataclasses import dataclass

T = TypeVar("T")

RECORD_CONFIG = ConfigDict(extra="forbid")


def record(cls: type[T]) -> type[T]:
    """Make ``cls`` a record: a pydantic dataclass that forbids unknown keys."""
    return dataclass(config=RECORD_CONFIG)(cls)


def _is_none(value: object) -> bool:
    return value is None


def optional(default: Any = None, *, compare: bool = True) -> Any:
    """A field left out of the JSON while it is None."""
    return dataclasses.field(default=Field(default=default, exclude_if=_is_none), compare=compare)


def rounded(digits: int) -> Callable[[Any], Any]:
    """A serializer that rounds a number (seconds, money) for the JSON. (Its return
    type is left to the field's, which the schema then shows.)"""
    def serialize(value):  # type: ignore[no-untyped-def]
        return None if value is None else round(value, digits)
    return serialize


@functools.cache
def adapter(cls: type) -> TypeAdapter[Any]:
    return TypeAdapter(cls)


class Record:
    """``to_dict``/``from_dict`` for a record class (see :func:`record`)."""

    def to_dict(self) -> dict[str, Any]:
        return adapter(type(self)).dump_python(self, mode="json", by_alias=True)

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        """Back from ``to_dict``; raises pydantic's ValidationError naming each bad key."""
        return adapter(cls).validate_python(data)
