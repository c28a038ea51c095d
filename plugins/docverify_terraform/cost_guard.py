"""The cost guard: what a run may create that costs money, checked before anything is applied.

On a real cloud every resource a procedure's stack would create is looked at before
``terraform apply``:

- **how many**: the resources marked ``paid`` in the provider's ``types.yaml`` (ECS
  instances, disks, EIPs, NAT gateways, SLB and ALB instances, RDS and MongoDB instances,
  KMS keys) are counted across the run; a stack that would take the count past
  ``max_paid_resources`` is refused, naming the limit and what would exceed it;
- **how big**: a paid type with a ``size`` (an ECS instance's ``instance_type``, an RDS
  ``instance_type``, a MongoDB ``db_instance_class``) must name a size of its allow-list
  (``allowed_instance_types``, ``allowed_rds_classes``, ``allowed_mongodb_classes``); a
  procedure that names none gets the template's own when that is allowed, else the first
  allowed one; a size the procedure names outside the list, or one chosen at apply time
  (a data source), is refused.

A refusal is an :class:`EnvironmentProblem` (the procedure is ENV_ERROR) raised before
anything is written, so nothing is created. The sandbox is free: there the guard works
only when it is configured.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from docverify.errors import EnvironmentProblem
from docverify.provision import PaidCount

#: the allow-list setting of each META type with a size, and what the size is called
SIZE_SETTINGS: dict[str, tuple[str, str]] = {
    "ecs_instance": ("allowed_instance_types", "instance type"),
    "rds_instance": ("allowed_rds_classes", "instance class"),
    "mongodb_instance": ("allowed_mongodb_classes", "instance class"),
}
LIMIT_SETTING = "--max-paid-resources / [provisioner.terraform] max_paid_resources"


@dataclass
class CostGuard:
    """Holds a run's stacks to ``max_paid`` paid resources and to the allowed sizes.

    ``max_paid``: None for no limit on the count; ``allowed``: META type -> the sizes
    it may have (an empty tuple: no size checked for it)."""

    max_paid: int | None
    allowed: Mapping[str, Sequence[str]]
    count: PaidCount = field(default_factory=PaidCount)

    def render(self, requirements: list[Any], render: Callable[[list[Any]], Any]) -> Any:
        """``render(requirements)``, with the first allowed size named for each paid
        requirement that names none where the template's own default is not an allowed
        literal (a data source would choose it at apply time); then every size is checked.
        Raises :class:`EnvironmentProblem` for a size that is not allowed."""
        stack = render(requirements)
        named = {req.type for req in requirements for r in stack.resources
                 if r.meta_type == req.type and r.size and r.size in req.attributes}
        unnamed = {r.meta_type for r in stack.paid()
                   if r.size and self.allowed.get(r.meta_type) and r.meta_type not in named
                   and _literal(r, r.size) not in self.allowed[r.meta_type]}
        if unnamed:
            requirements = [_with_size(req, stack, self.allowed) if req.type in unnamed else req for req in requirements]
            stack = render(requirements)
        self.check_sizes(stack)
        return stack

    def check_sizes(self, stack: Any) -> None:
        for resource in stack.paid():
            allowed = self.allowed.get(resource.meta_type)
            if not resource.size or not allowed:
                continue
            setting, what = SIZE_SETTINGS.get(resource.meta_type, (f"allowed sizes of {resource.meta_type}", "size"))
            value = _literal(resource, resource.size)
            shown = ", ".join(allowed)
            if value is None:
                raise EnvironmentProblem(
                    f"cannot provision {resource.tf_address}: its {what} would be chosen at apply time, not from "
                    f"the allow-list ([provisioner.terraform] {setting}: {shown})",
                    hint=f"name one in the procedure's `requires:` attributes ({resource.size}: {allowed[0]})")
            if value not in allowed:
                raise EnvironmentProblem(
                    f"cannot provision {resource.tf_address}: {what} {value} is not in the allow-list "
                    f"([provisioner.terraform] {setting}: {shown})",
                    hint=f"add {value} to {setting} if its price is acceptable, or ask the procedure's `requires:` "
                         f"for one of the list")

    def admit(self, stack: Any, task_id: str) -> list[str]:
        """Count ``stack``'s paid resources against the run's limit; the ones counted.
        Raises :class:`EnvironmentProblem` naming the limit and what would exceed it (and
        counts nothing) when the run would go over."""
        wanted = [r.tf_address for r in stack.paid()]
        if not wanted:
            return []
        made = self.count.claim([f"{address} ({task_id})" for address in wanted], self.max_paid)
        if made is not None:
            before = f"; {made} already created in this run" if made else ""
            raise EnvironmentProblem(
                f"cannot provision: {task_id} needs {len(wanted)} paid resource(s) ({', '.join(wanted)}){before}: "
                f"over the limit of {self.max_paid} paid resource(s) per run ({LIMIT_SETTING})",
                hint="nothing was created; raise the limit if what these resources cost is acceptable "
                     "(they are destroyed when the procedure ends)")
        return wanted


def _with_size(requirement: Any, stack: Any, allowed: Mapping[str, Sequence[str]]) -> Any:
    """``requirement`` with its size attribute set to the first allowed one."""
    size = next(r.size for r in stack.resources if r.meta_type == requirement.type and r.size)
    attributes = dict(requirement.attributes)
    attributes.setdefault(size, allowed[requirement.type][0])
    return replace(requirement, attributes=attributes)


def _literal(resource: Any, argument: str) -> str | None:
    """The quoted string ``argument`` is set to in ``resource``'s own block; None when it is
    an expression (a data source's attribute) or not set."""
    block = resource_block(resource.text, resource.tf_type, resource.address)
    value = (block or {}).get(argument)
    match = re.fullmatch(r'"((?:[^"\\$%]|\\.)*)"', value or "")
    return match.group(1) if match else None


def resource_block(text: str, tf_type: str, name: str) -> dict[str, str] | None:
    """The top-level ``argument = expression`` pairs of ``resource "tf_type" "name" {...}`` in
    rendered HCL (expressions as written, one line each); None when there is no such block."""
    lines = text.splitlines()
    opening = re.compile(rf'^\s*resource\s+"{re.escape(tf_type)}"\s+"{re.escape(name)}"\s*\{{\s*$')
    for start, line in enumerate(lines):
        if opening.match(line):
            break
    else:
        return None
    arguments: dict[str, str] = {}
    depth = 1
    for line in lines[start + 1:]:
        bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
        if depth == 1:
            match = re.match(r"^\s*([A-Za-z_][\w-]*)\s*=\s*(.*?)\s*$", line)
            if match:
                arguments[match.group(1)] = match.group(2)
        depth += bare.count("{") - bare.count("}")
        if depth <= 0:
            break
    return arguments
