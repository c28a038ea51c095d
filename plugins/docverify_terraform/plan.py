"""The ``terraform`` plugin's part of ``docverify plan``: the Terraform that would make
each procedure's Resource META exist (rendered, never applied)."""

from __future__ import annotations

from docverify.parse.model import Procedure
from docverify.provision.meta import MetaPlan
from docverify.provision.plan import PlanRequest, PlanSection
from docverify_terraform.stack import TemplateSet, providers, render_stack, template_dirs

#: The templates for a console that has none of its own (real Alibaba Cloud).
FALLBACK_PROVIDER = "alicloud"


def default_provider(request: PlanRequest) -> str:
    """The configured console's own templates when there are some (the sandbox's),
    else :data:`FALLBACK_PROVIDER`, as the provisioner chooses at run time."""
    console = request.config.settings.console.use[0] if request.config.settings.console.use else None
    return console if console in providers(template_dirs(request.templates)) else FALLBACK_PROVIDER


class TerraformPlanner:
    """Renders each procedure's stack with one provider's templates."""

    def __init__(self, request: PlanRequest) -> None:
        self.request = request
        self.provider = request.provider or default_provider(request)
        TemplateSet.load(self.provider, request.templates)  # an unknown provider or a broken types.yaml: one error first
        self.facts = {"provider": self.provider}

    def plan(self, procedure: Procedure, meta: MetaPlan) -> PlanSection:
        request = self.request
        stack = render_stack(meta.requirements, self.provider, suffix=request.suffix,
                             region=request.region or procedure.region, templates=request.templates,
                             allow_uncovered=True)
        addresses: dict[str, list[str]] = {}
        for resource in stack.resources:
            addresses.setdefault(resource.meta_type, []).append(resource.tf_address)
        cells = {meta_type: ", ".join(found) for meta_type, found in addresses.items()}
        cells.update({requirement.type: "no template: ResourceCoder" for requirement in stack.uncovered})
        return PlanSection("terraform", stack.to_dict(), cells=cells, files=dict(stack.files) if stack.resources else {})
