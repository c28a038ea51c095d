"""What every command shares: the configuration and the plugins, loaded lazily."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Mapping

from docverify.config import FAMILY_TABLES, Config, load_config
from docverify.plugins import PluginSet, load_plugins


class App:
    """Lazily loaded configuration and plugins for one CLI invocation."""

    def __init__(self, config_path: str | Path | None = None, plugins: PluginSet | None = None) -> None:
        self.config_path = config_path
        if plugins is not None:  # embedding and tests: a ready plugin set
            self.plugins = plugins

    @functools.cached_property
    def plugins(self) -> PluginSet:
        return load_plugins()

    def config(
        self, overrides: Mapping[str, Any] | None = None, names: Mapping[str, str] | None = None
    ) -> Config:
        """The configuration with this command's options (``overrides``, dotted key ->
        value or None) on top; plugin tables are checked against installed plugins."""
        return load_config(path=self.config_path, overrides=overrides, override_names=names)

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
