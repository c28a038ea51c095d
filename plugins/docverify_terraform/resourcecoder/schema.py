"""A Terraform provider's schema, as ``terraform providers schema -json`` gives it, in
the few lines a model needs: the resource types, and each one's arguments (required,
optional, read-only) with their descriptions.

ResourceCoder shows the model only the resource types that matter for one META type
(its own, its dependencies'): the whole alicloud schema is megabytes.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from docverify.errors import EnvironmentProblem

#: Words of META types that resource type names spell differently.
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "ecs": ("instance",), "rds": ("db",), "slb": ("load", "balancer"), "alb": ("load", "balancer"),
    "eip": ("eip", "address"), "mongodb": ("dds", "mongodb"), "dnat": ("forward", "dnat"),
}


@dataclass
class ProviderSchema:
    """The resource and data source types of the providers of one stack."""

    resources: dict[str, dict[str, Any]] = field(default_factory=dict)  #: type -> its "block"
    data_sources: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ProviderSchema":
        schema = cls()
        for provider in (data.get("provider_schemas") or {}).values():
            for name, entry in (provider.get("resource_schemas") or {}).items():
                schema.resources[name] = entry.get("block") or {}
            for name, entry in (provider.get("data_source_schemas") or {}).items():
                schema.data_sources[name] = entry.get("block") or {}
        return schema

    @classmethod
    def fetch(cls, stack: Any, *, timeout: float = 120.0) -> "ProviderSchema":
        """The schema of the providers an initialised :class:`docverify_terraform.engine.Stack` uses."""
        run = stack.terraform.run(stack.workdir, ("providers", "schema", "-json"), timeout=timeout, log=stack.log_path)
        if run.returncode != 0:
            raise EnvironmentProblem(f"terraform providers schema failed in {stack.workdir.name}",
                                     hint=f"full log: {stack.log_path}")
        try:
            return cls.from_json(json.loads(run.stdout))
        except ValueError:
            raise EnvironmentProblem("terraform providers schema printed no JSON",
                                     hint=f"full log: {stack.log_path}") from None

    # -- which types matter -----------------------------------------------------------------

    def similar(self, meta_type: str, limit: int = 4) -> list[str]:
        """Resource types that may implement ``meta_type``: those whose name holds all its
        words (or their synonyms), best first; else the closest names."""
        words = [w for w in meta_type.split("_") if w]
        scored = []
        for name in self.resources:
            parts = set(re.split(r"[_-]", name))
            hits = sum(1 for w in words if w in parts or any(s in parts for s in _SYNONYMS.get(w, ())))
            if hits:
                scored.append((hits / len(words), -len(parts), name))
        scored.sort(reverse=True)
        found = [name for share, _, name in scored if share >= 1.0][:limit]
        if found:
            return found
        return [n for _, _, n in scored[:limit]] or difflib.get_close_matches(meta_type, list(self.resources), limit, 0.3)

    # -- text for a prompt ------------------------------------------------------------------

    def describe(self, resource_type: str, *, brief: bool = False) -> str:
        """One resource type's arguments, a line each; ``brief``: the attribute names only
        (what a dependency offers to reference)."""
        block = self.resources.get(resource_type)
        if block is None:
            return f"{resource_type}: (not in the provider's schema)"
        attributes = block.get("attributes") or {}
        if brief:
            return f"{resource_type}: attributes " + ", ".join(sorted(attributes))
        lines = [f"resource \"{resource_type}\":"]
        for kind, test in (("required", lambda a: a.get("required")),
                           ("optional", lambda a: a.get("optional")),
                           ("read-only", lambda a: a.get("computed") and not a.get("optional") and not a.get("required"))):
            for name in sorted(attributes):
                spec = attributes[name]
                if not test(spec):
                    continue
                description = " ".join(str(spec.get("description") or "").split())[:140]
                lines.append(f"  {name} ({_type_text(spec.get('type'))}, {kind})" + (f": {description}" if description else ""))
        for name, nested in sorted((block.get("block_types") or {}).items()):
            inner = (nested.get("block") or {}).get("attributes") or {}
            bounds = f"{nested.get('min_items', 0)}..{nested.get('max_items') or 'n'}"
            lines.append(f"  block {name} {{}} ({nested.get('nesting_mode', 'list')}, {bounds}): "
                         + ", ".join(f"{n}{'*' if a.get('required') else ''}" for n, a in sorted(inner.items())))
        return "\n".join(lines)


def _type_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":")) if value is not None else "?"
