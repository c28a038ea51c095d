"""Terraform providers that other plugins serve locally, written in Python.

A plugin that has a Terraform provider of its own (the sandbox console's, written
with pyvider) lists it in the ``docverify.terraform_providers`` entry-point group::

    [project.entry-points."docverify.terraform_providers"]
    sandbox = "docverify_sandbox.terraform_provider"

The module named there has ``SOURCE`` (its registry address, e.g.
``registry.terraform.io/docverify/sandbox``) and ``VERSION``, and serves the provider
when run as ``python -m MODULE``. The engine puts a launcher for each into the
filesystem mirror of its CLI configuration, so ``terraform init`` installs it offline
like any provider. Terraform starts it through :mod:`.launch`, which ends it when the
Terraform that started it is gone.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata as metadata
from dataclasses import dataclass

from docverify.errors import PluginError

GROUP = "docverify.terraform_providers"


@dataclass(frozen=True)
class LocalProvider:
    """A provider served by a Python module of another plugin."""

    name: str  #: the entry point's name
    module: str  #: run as ``python -m module``
    source: str  #: e.g. registry.terraform.io/docverify/sandbox
    version: str

    @property
    def host(self) -> str:
        return self.source.split("/")[0]

    @property
    def type(self) -> str:
        return self.source.split("/")[-1]


@functools.cache
def local_providers() -> tuple[LocalProvider, ...]:
    """Every installed local provider, by name."""
    found = []
    for entry in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        try:
            module = importlib.import_module(entry.value)
            found.append(LocalProvider(entry.name, entry.value, module.SOURCE, module.VERSION))
        except Exception as error:  # a plugin's bug, reported as such
            raise PluginError(f"Terraform provider {entry.name!r} ({entry.value}) failed to load: "
                              f"{type(error).__name__}: {error}",
                              hint=f"its module needs SOURCE and VERSION; see {__name__}") from error
    return tuple(found)


def provider_named_in(argv: list[str]) -> LocalProvider | None:
    """The local provider a process's command line runs (through :mod:`.launch`)."""
    for provider in local_providers():
        if provider.module in argv:
            return provider
    return None
