"""Plugin families and their registries (name -> class).

A registry refuses duplicates and answers an unknown name with an error that
lists the valid ones. A plugin registers a class (or click command) itself, or a
reference to it, ``"package.module:Attribute"`` with its name: the module is then
imported only when the plugin is used, so a run pays only for the plugins it uses.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Generic, Iterator, Protocol, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict

from docverify.errors import ConfigError, DocverifyError, PluginError


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
    Family("engines", "engine"),
    Family("backends", "backend"),
    Family("commands", "command"),
)
FAMILY_BY_NAME = {family.name: family for family in FAMILIES}

T = TypeVar("T")


class Register(Protocol):
    """The callback each ``register_<family>`` hook receives."""

    def __call__(self, obj: Any, *, name: str | None = None, default: bool = False,
                 aliases: tuple[str, ...] = ()) -> None:
        """Register ``obj``, a class (a click command for ``register_commands``), or a
        reference to one, ``"package.module:Attribute"``, with its ``name``.

        ``default=True``: the plugin is its family's choice when ``<family>.use`` is
        not configured. ``aliases``: former names, still accepted with a warning."""


class Entry(Generic[T]):
    """One registered plugin: its name, the plugin module (entry point) that
    registered it, and the object registered, imported on first use when it was
    registered by reference."""

    def __init__(self, family: Family, name: str, plugin: str, *, obj: T | None = None,
                 reference: str | None = None, default: bool = False, aliases: tuple[str, ...] = ()) -> None:
        self.family = family
        self.name = name
        self.plugin = plugin
        self.reference = reference  #: "module:attribute", when registered lazily
        self.default = default  #: the family's choice when none is configured
        self.aliases = aliases  #: former names, accepted with a warning
        self._obj = obj

    @property
    def loaded(self) -> bool:
        return self._obj is not None

    @property
    def obj(self) -> T:
        if self._obj is None:
            self._obj = self._load()
        return self._obj

    def _load(self) -> T:
        assert self.reference is not None
        what = f"{self.family.singular} {self.name!r} of plugin {self.plugin!r}"
        module_name, _, attribute = self.reference.partition(":")
        try:
            obj = getattr(importlib.import_module(module_name), attribute)
        except Exception as error:  # a broken or half-installed plugin, reported as such
            raise PluginError(f"{what} failed to load from {self.reference}: {type(error).__name__}: {error}",
                              hint=f"reinstall the plugin, or check that {self.reference} exists") from error
        if plugin_name(obj, self.family) != self.name:
            raise PluginError(f"{what} is registered as {self.name!r} but {self.reference} is named "
                              f"{obj.name!r}", hint="register it under the name its class declares")
        return obj

    def __repr__(self) -> str:
        return f"Entry({self.family.singular} {self.name!r} of {self.plugin!r})"


class Registry(Generic[T]):
    """The plugins of one family, by name."""

    def __init__(self, family: Family) -> None:
        self.family = family
        self._entries: dict[str, Entry[T]] = {}
        self._aliases: dict[str, str] = {}  #: former name -> name

    def add(self, obj: T | str, *, plugin: str, name: str | None = None, default: bool = False,
            aliases: tuple[str, ...] | list[str] = ()) -> None:
        """Register ``obj`` (its ``name`` attribute names it), or a reference to it,
        ``"module:attribute"``, with its ``name``: imported when first used.
        ``default``: the family's choice when none is configured; ``aliases``: former
        names that still select it."""
        if isinstance(obj, str):
            if ":" not in obj or not name:
                raise PluginError(f"plugin {plugin!r} registered {self.family.singular} {obj!r}: a reference is "
                                  "\"module:attribute\" with the plugin's name",
                                  hint=f"register(\"{obj if ':' in obj else 'package.module:Class'}\", "
                                       "name=\"...\")")
            entry: Entry[T] = Entry(self.family, name, plugin, reference=obj, default=default,
                                    aliases=tuple(aliases))
        else:
            declared = plugin_name(obj, self.family)
            if name is not None and name != declared:
                raise PluginError(f"plugin {plugin!r} registered {self.family.singular} {declared!r} as {name!r}",
                                  hint="leave out name=, or make it the class's own name")
            entry = Entry(self.family, declared, plugin, obj=obj, default=default, aliases=tuple(aliases))
        names = [entry.name, *entry.aliases]
        if len(set(names)) != len(names):
            raise PluginError(f"plugin {plugin!r} registered {self.family.singular} {entry.name!r} with aliases "
                              f"{list(entry.aliases)}: an alias repeats a name",
                              hint="list each former name once, never the current one")
        for taken in names:
            existing = self._entries.get(self.canonical(taken))
            if existing is not None:
                raise PluginError(
                    f"two {self.family.name} are named {taken!r}: one from plugin "
                    f"{existing.plugin!r}, one from plugin {plugin!r}",
                    hint="uninstall or disable one of them",
                )
        self._entries[entry.name] = entry
        self._aliases.update((alias, entry.name) for alias in entry.aliases)

    def get(self, name: str) -> T:
        return self.entry(name).obj

    def entry(self, name: str) -> Entry[T]:
        """The plugin called ``name`` (or formerly so: an alias)."""
        try:
            return self._entries[self.canonical(name)]
        except KeyError:
            raise PluginError(unknown_name_message(self.family, name, self.names())) from None

    def canonical(self, name: str) -> str:
        """The current name of a plugin formerly called ``name``; ``name`` otherwise."""
        return self._aliases.get(name, name)

    def renamed(self, name: str) -> str | None:
        """A warning when ``name`` is a former name (an alias); None otherwise."""
        if name not in self._aliases:
            return None
        new = self._aliases[name]
        return (f"{self.family.singular} {name!r} is now {new!r}; use {new!r} "
                f"(the name {name!r} still works for now but will be removed)")

    def default(self) -> str:
        """The name of the plugin registered with ``default=True``: the family's choice
        when ``<family>.use`` is not configured. ConfigError when none or several are."""
        table = self.family.singular
        claims = [entry for entry in self if entry.default]
        hint = (f"e.g. `[{table}] use = \"NAME\"` in docverify.toml, DOCVERIFY_{table.upper()}=NAME "
                f"or -O {table}.use=NAME")
        if not claims:
            raise ConfigError(f"no {table} is configured and no installed {table} plugin is the default: "
                              f"set {table}.use (installed {self.family.name}: {', '.join(self.names()) or 'none'})",
                              hint=hint)
        if len(claims) > 1:
            both = " and ".join(f"{entry.name!r} (plugin {entry.plugin!r})" for entry in claims)
            raise ConfigError(f"{len(claims)} {self.family.name} claim to be the default {table}: {both}; "
                              f"set {table}.use to the one to use", hint=hint)
        return claims[0].name

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._aliases

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


def naming(lookup: Callable[[str], object]) -> AfterValidator:
    """A pydantic validator for an option that names a plugin (``engine = "openai"``):
    ``lookup(name)`` must find it when the configuration is read; its error (the
    installed names, the closest one) becomes the option's."""
    def check(name: str) -> str:
        try:
            lookup(name)
        except DocverifyError as error:
            raise ValueError(str(error)) from None
        return name
    return AfterValidator(check)
