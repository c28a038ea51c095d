"""Provisioning on demand: what a blocked agent lacks, decided by a model, as a report.

When the agent stops because a step acts on something that does not exist ("the list
on Instances is empty"), a model reads the blocked message, the procedure and the page,
and names what to create in the META vocabulary (:data:`BLOCKED_SCHEMA`). The
provisioner applies it; :class:`ProvisionReport` says what was created, as data (IDs,
names, task-context entries for the doc's placeholders) and as text for the agent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from docverify.cost import Usage
from docverify.provision.meta import DEPENDENCIES, META_TYPES

#: How many resources of one type a blocked step may ask for.
MAX_COUNT = 3

#: The model's answer: one META type (or "none"), how many, attributes, why.
BLOCKED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "What to create so the blocked step can go on",
    "properties": {
        "type": {"type": "string", "enum": [*META_TYPES, "none"]},
        "count": {"type": "integer", "minimum": 0, "maximum": MAX_COUNT},
        "attributes": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}},
        "why": {"type": "string", "maxLength": 400},
    },
    "required": ["type", "count", "why"],
    "additionalProperties": False,
}


@dataclass
class BlockedRequest:
    """What the model asked to create."""

    type: str  #: a META type
    count: int = 1
    attributes: dict[str, Any] = field(default_factory=dict)
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "count": self.count, "attributes": dict(self.attributes), "why": self.why}


def parse_request(text: str, max_count: int = MAX_COUNT) -> BlockedRequest | None:
    """The request in a model's answer; None for ``"type": "none"``. ValueError when unusable."""
    from docverify.engines import parse_json_object

    data = parse_json_object(text)
    kind = data.get("type")
    if kind == "none":
        return None
    if kind not in META_TYPES:
        raise ValueError(f"'type' must be one of the vocabulary or \"none\", not {kind!r}")
    count = data.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= max_count:
        raise ValueError(f"'count' must be a whole number from 1 to {max_count}")
    attributes = data.get("attributes") or {}
    if not isinstance(attributes, dict) or any(not isinstance(v, (str, int, float, bool)) for v in attributes.values()):
        raise ValueError("'attributes' must be an object of plain values")
    return BlockedRequest(type=kind, count=count, attributes={str(k): v for k, v in attributes.items()},
                          why=" ".join(str(data.get("why") or "").split())[:400])


def vocabulary() -> list[dict[str, Any]]:
    return [{"type": t, "dependencies": list(DEPENDENCIES[t])} for t in META_TYPES]


@dataclass
class CreatedResource:
    """One resource created on demand."""

    meta_type: str
    address: str  #: Terraform address: sandbox_ecs_instance.ecs_instance_1
    name: str | None
    id: str | None
    requested: bool  #: what the model asked for (else one of its dependencies)

    def describe(self) -> str:
        what = f'{self.meta_type} "{self.name}"' if self.name else self.meta_type
        return what + (f" (ID {self.id})" if self.id else "")

    def to_dict(self) -> dict[str, Any]:
        return {"meta_type": self.meta_type, "address": self.address, "name": self.name, "id": self.id,
                "requested": self.requested}


@dataclass
class ProvisionReport:
    """What :meth:`ResourceCoderProvisioner.on_blocked` created for a blocked procedure.

    ``context``: task-context entries for the doc's placeholders (``instance-id``,
    ``ecs_instance_1_name``...), for ``task.context.update``; ``text``: the report for
    the agent (``Episode.provisioned(text)``)."""

    request: BlockedRequest
    blocked: str  #: the agent's blocked message
    resources: list[CreatedResource] = field(default_factory=list)
    context: dict[str, str] = field(default_factory=dict)
    region: str = ""
    stack_id: str = ""
    seconds: float = 0.0
    written: list[str] = field(default_factory=list)  #: META types whose template ResourceCoder wrote for it
    usage: Usage = field(default_factory=Usage)

    @property
    def text(self) -> str:
        requested = [r for r in self.resources if r.requested]
        others = [r for r in self.resources if not r.requested]
        lines = [f"Provisioned on demand, because: {self.blocked}",
                 "Created now" + (f" in region {self.region}" if self.region else "") + ": "
                 + "; ".join(r.describe() for r in requested) + "."]
        if others:
            lines.append("With what it needs: " + "; ".join(r.describe() for r in others) + ".")
        if self.request.why:
            lines.append(f"Why: {self.request.why}")
        lines.append("It exists now: reload the page (a list does not refresh by itself), then retry the step with it.")
        return "\n".join(lines)

    def describe(self) -> list[str]:
        """Human-readable resources, for reports (like ``Provisioned.resources``)."""
        return [r.address + (f" ({r.name})" if r.name else "") for r in self.resources]

    def to_dict(self) -> dict[str, Any]:
        return {"request": self.request.to_dict(), "blocked": self.blocked,
                "resources": [r.to_dict() for r in self.resources], "context": dict(self.context),
                "region": self.region, "stack_id": self.stack_id, "seconds": round(self.seconds, 3),
                "written": list(self.written), "usage": self.usage.to_dict(), "text": self.text}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)
