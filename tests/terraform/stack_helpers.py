"""Hand-picked stacks of terraform_templates/sandbox — rendered in the real renderer's
Jinja environment (docverify_terraform.stack), so whitespace control behaves as in a run — and
helpers to look at files (imported by name: tests/terraform is on sys.path)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from docverify_terraform.stack import TemplateSet

TEMPLATES = Path(__file__).resolve().parents[2] / "terraform_templates" / "sandbox"
SUFFIX = "ab12cd"


@dataclass
class R:
    """What a template sees as ``r``."""

    meta: str
    address: str
    name: str
    region: str = "cn-hangzhou"
    suffix: str = SUFFIX
    attributes: dict[str, Any] = field(default_factory=dict)


def types() -> dict[str, str]:
    """META type -> Terraform resource type (an entry marking a paid type is a mapping: its ``resource``)."""
    mapping = yaml.safe_load((TEMPLATES / "types.yaml").read_text(encoding="utf-8"))
    return {meta: value["resource"] if isinstance(value, dict) else value for meta, value in mapping.items()}


def resource(meta: str, n: int = 1, suffix: str = SUFFIX, **attributes: Any) -> R:
    slug = meta.replace("_", "")[:10]
    return R(meta, f"{meta}_{n}", f"docverify-{slug}-{suffix}", suffix=suffix, attributes=attributes)


def render(resources: list[R], region: str = "cn-hangzhou") -> str:
    """provider.tf.j2 plus each resource's template; ref(t) is the first resource of type t."""
    env = TemplateSet.load("sandbox").environment()
    mapping = types()
    addresses: dict[str, str] = {}
    for r in resources:
        addresses.setdefault(r.meta, f"{mapping[r.meta]}.{r.address}")

    def ref(meta: str) -> str:
        return addresses[meta]

    parts = [env.get_template("provider.tf.j2").render(region=region)]
    parts += [env.get_template(f"{r.meta}.tf.j2").render(r=r, ref=ref) for r in resources]
    return "\n".join(parts)


def files_containing(root: Path, needle: str) -> list[Path]:
    """Every file under ``root`` (hidden ones too) whose bytes contain ``needle``."""
    raw = needle.encode()
    return [p for p in root.rglob("*") if p.is_file() and raw in p.read_bytes()]
