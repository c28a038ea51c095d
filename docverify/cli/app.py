"""What every command shares: the configuration and the plugins, loaded lazily."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Iterable, Mapping

import click

from docverify.config import FAMILY_TABLES, Config, load_config
from docverify.plugins import PluginSet, load_plugins


class App:
    """Lazily loaded configuration and plugins for one CLI invocation."""

    def __init__(self, config_path: str | Path | None = None, plugins: PluginSet | None = None) -> None:
        self.config_path = config_path
        self._warned: set[str] = set()
        if plugins is not None:  # embedding and tests: a ready plugin set
            self.plugins = plugins

    @functools.cached_property
    def plugins(self) -> PluginSet:
        return load_plugins()

    def config(
        self, overrides: Mapping[str, Any] | None = None, names: Mapping[str, str] | None = None
    ) -> Config:
        """The configuration with this command's options (``overrides``, dotted key ->
        value or None) on top. Its warnings (a plugin's former name) are said on stderr."""
        config = load_config(path=self.config_path, overrides=overrides, override_names=names,
                             plugins=lambda: self.plugins)
        self.warn(config.warnings)
        return config

    def checked_config(
        self, overrides: Mapping[str, Any] | None = None, names: Mapping[str, str] | None = None
    ) -> Config:
        """Like :meth:`config`, and every ``[<family>.<plugin>]`` table must name an
        installed plugin."""
        config = self.config(overrides, names)
        config.check_plugin_tables(
            {table: self.plugins.registry(family).names() for table, family in FAMILY_TABLES.items()}
        )
        return config

    def plugin_names(self, family: str, names: Iterable[str], option: str) -> list[str]:
        """Plugin ``names`` of ``family`` given with ``option`` (``--report``), a former
        name replaced by the plugin's name, with a warning."""
        names, registry = list(names), self.plugins.registry(family)
        self.warn(f"option {option}: {message}" for name in names if (message := registry.renamed(name)))
        return [registry.canonical(name) for name in names]

    def warn(self, messages: Iterable[str]) -> None:
        """Say each warning on stderr, once per invocation."""
        for message in messages:
            if message not in self._warned:
                self._warned.add(message)
                click.echo(f"warning: {message}", err=True)
