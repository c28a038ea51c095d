"""Where plugins are loaded: entry points of the ``docverify`` group -> registries.

``load_plugins()`` imports every module listed in the ``docverify`` entry-point
group (built-ins under plugins/ included), registers it with pluggy and asks each
``register_<family>`` hook for its classes. The result, a :class:`PluginSet`, holds
one :class:`~docverify.registry.Registry` per family.
"""

from __future__ import annotations

import functools
import importlib.metadata as metadata
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Iterable

import pluggy

from docverify import hookspecs
from docverify.errors import PluginError
from docverify.registry import FAMILIES, FAMILY_BY_NAME, Entry, Registry

ENTRY_POINT_GROUP = "docverify"


@dataclass(frozen=True)
class PluginOrigin:
    """Where a plugin module comes from: its distribution, or "built-in"."""

    plugin: str  #: the entry-point (plugin) name
    module: str
    distribution: str | None
    version: str | None

    @property
    def builtin(self) -> bool:
        return self.distribution == "docverify"

    def describe(self) -> str:
        if self.builtin:
            return "built-in"
        if self.distribution is None:
            return f"module {self.module}"
        return f"{self.distribution} {self.version}".strip()


class PluginSet:
    """Every loaded plugin, one registry per family."""

    def __init__(self, manager: pluggy.PluginManager, origins: dict[str, PluginOrigin]) -> None:
        self.manager = manager
        self.origins = origins
        self.registries: dict[str, Registry[Any]] = {f.name: Registry(f) for f in FAMILIES}
        for family in FAMILIES:
            hook = getattr(manager.hook, family.hook)
            for impl in hook.get_hookimpls():
                register = functools.partial(self.registries[family.name].add, plugin=impl.plugin_name)
                try:
                    impl.function(register=register)
                except PluginError:
                    raise
                except Exception as error:  # a third-party plugin's bug, reported as such
                    raise PluginError(
                        f"plugin {impl.plugin_name!r} failed in {family.hook}: "
                        f"{type(error).__name__}: {error}"
                    ) from error

    def registry(self, family: str) -> Registry[Any]:
        return self.registries[FAMILY_BY_NAME[family].name]

    def get(self, family: str, name: str) -> Any:
        """The class (or command) named ``name`` in ``family``; PluginError listing
        the valid names when there is none."""
        return self.registry(family).get(name)

    def origin(self, entry: Entry[Any]) -> PluginOrigin:
        return self.origins.get(entry.plugin) or PluginOrigin(entry.plugin, entry.plugin, None, None)


@functools.cache
def installed_plugins() -> PluginSet:
    """The installed plugins, loaded once per process: for code that asks for a plugin
    by name outside a run's own plugin set (an engine, a console's account API)."""
    return load_plugins()


def load_plugins(
    *, entry_points: bool = True, extra: Iterable[ModuleType | object] = ()
) -> PluginSet:
    """Load the installed plugins (and ``extra`` plugin objects, for tests and
    embedding) into a new :class:`PluginSet`."""
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    origins: dict[str, PluginOrigin] = {}
    if entry_points:
        for entry_point in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            if manager.has_plugin(entry_point.name):
                continue  # the same distribution installed twice on sys.path
            dist = entry_point.dist
            try:
                module = entry_point.load()
            except Exception as error:
                where = f" (from {dist.name} {dist.version})" if dist else ""
                raise PluginError(
                    f"plugin {entry_point.name!r}{where} failed to load: {type(error).__name__}: {error}",
                    hint=f"reinstall or uninstall it; `pip show {dist.name if dist else entry_point.name}`",
                ) from error
            _register(manager, module, entry_point.name)
            origins[entry_point.name] = PluginOrigin(
                entry_point.name,
                entry_point.value,
                dist.name if dist else None,
                dist.version if dist else None,
            )
    for plugin in extra:
        name = getattr(plugin, "__name__", None) or type(plugin).__name__
        _register(manager, plugin, name)
        origins[name] = PluginOrigin(name, name, None, None)
    try:
        manager.check_pending()  # a hook implemented under a misspelt name
    except pluggy.PluginValidationError as error:
        raise PluginError(f"invalid plugin: {error}") from error
    return PluginSet(manager, origins)


def _register(manager: pluggy.PluginManager, plugin: object, name: str) -> None:
    try:
        manager.register(plugin, name=name)
    except (ValueError, pluggy.PluginValidationError) as error:
        raise PluginError(f"plugin {name!r} is invalid: {error}") from error
