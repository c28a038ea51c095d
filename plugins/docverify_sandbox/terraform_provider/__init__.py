"""A Terraform provider for the embedded sandbox console, written with pyvider.

It is listed in the ``docverify.terraform_providers`` entry-point group (see the
terraform plugin's ``local_providers``): Terraform installs it from a local
filesystem mirror (source ``registry.terraform.io/docverify/sandbox``) and loads it
offline.
Its resources are generated from the sandbox catalog (:mod:`.catalog_types`),
one generic implementation for all (:mod:`.resources`), calling the sandbox RPC
API (:mod:`.lifecycle`).
"""

from __future__ import annotations

from typing import Any

#: Terraform's name of the provider, its version and its source address
NAME = "sandbox"
VERSION = "0.1.0"
SOURCE = "registry.terraform.io/docverify/sandbox"


def register_components(hub: Any) -> None:
    """Register the provider and one resource per catalog type in a pyvider hub
    (also pyvider's discovery hook, should an entry point ever name this package)."""
    from docverify_sandbox.terraform_provider.catalog_types import catalogue
    from docverify_sandbox.terraform_provider.provider import SandboxProvider
    from docverify_sandbox.terraform_provider.resources import resource_class

    hub.register("provider", NAME, SandboxProvider)
    for rt in catalogue().types.values():
        hub.register("resource", rt.name, resource_class(rt))
