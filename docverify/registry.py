"""Plugin families and their registries (name -> class).

A registry refuses duplicates and answers an unknown name with an error that
lists the valid ones.
"""

from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Iterator, TypeVar

from pydantic import BaseModel, ConfigDict

from docverify.errors import PluginError


class Plugin:
    """Base of every plugin class of the class-based families.

    Subclasses set ``name`` (unique within the family) and may nest an ``Options``
    pydantic model: the table ``[<family>.<name>]`` of docverify.toml is validated
    against it.
    """

    name: ClassVar[str]

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

    def __init__(self, options: "Plugin.Options | None" = None) -> None:
        self.options = options if options is not None else self.Options()

    @classmethod
    def summary(cls) -> str:
        """One line describing the plugin: its docstring's first line."""
        doc = inspect.getdoc(cls) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""


@dataclass(frozen=True)
class Family:
    """A plugin family of docs/architecture.md: its plural name (the hook and config table)
    and the singular used in messages."""

    name: str
    singular: str

    @property
    def hook(self) -> str:
        return f"register_{self.name}"


FAMILIES: tuple[Family, ...] = (
    Family("consoles", "console"),
    Family("provisioners", "provisioner"),
    Family("executors", "executor"),
    Family("policies", "policy"),
    Family("checkers", "checker"),
    Family("reporters", "reporter"),
    Family("commands", "command"),
)
FAMILY_BY_NAME = {family.name: family for family in FAMILIES}

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered plugin: its name, the object registered and the plugin
    module (entry point) that registered it."""

    name: str
    obj: T
    plugin: str


class Registry(Generic[T]):
    """The plugins of one family, by name."""

    def __init__(self, family: Family) -> None:
        self.family = family
        self._entries: dict[str, Entry[T]] = {}

    def add(self, obj: T, *, plugin: str) -> None:
        name = plugin_name(obj, self.family)
        existing = self._entries.get(name)
        if existing is not None:
            raise PluginError(
                f"two {self.family.name} are named {name!r}: one from plugin "
                f"{existing.plugin!r}, one from plugin {plugin!r}",
                hint="uninstall or disable one of them",
            )
        self._entries[name] = Entry(name, obj, plugin)

    def get(self, name: str) -> T:
        return self.entry(name).obj

    def entry(self, name: str) -> Entry[T]:
        try:
            return self._entries[name]
        except KeyError:
            raise PluginError(unknown_name_message(self.family, name, self.names())) from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry[T]]:
        return iter(sorted(self._entries.values(), key=lambda entry: entry.name))

    def __len__(self) -> int:
        return len(self._entries)


def plugin_name(obj: Any, family: Family) -> str:
    """The name a class (``cls.name``) or click command (``.name``) registers under."""
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        raise PluginError(
            f"{family.singular} {getattr(obj, '__qualname__', obj)!r} has no `name`",
            hint="set a class attribute `name = \"...\"`",
        )
    return name


def unknown_name_message(family: Family, name: str, valid: list[str]) -> str:
    close = difflib.get_close_matches(name, valid, n=1)
    suggestion = f" (did you mean {close[0]!r}?)" if close else ""
    listing = ", ".join(valid) if valid else "none is installed"
    return f"unknown {family.singular} {name!r}{suggestion}; valid {family.name}: {listing}"
