"""A task: one procedure made ready to run (docs/architecture.md, "TaskSpec").

A :class:`Task` adds to the parsed procedure what the later stages need: the goal
text, the success criteria (expected audit events), the region, and the task
context — values the doc's placeholders and the provisioned resources give
(``<suffix>`` is a fresh random suffix per run, so names are unique per account).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field

from docverify.check.criteria import ExpectedEvent, expected_events
from docverify.parse.model import Procedure

#: ``<name>``: a placeholder, named in English or in Chinese (``<登录名称>``)
PLACEHOLDER = re.compile(r"<([A-Za-z\u4e00-\u9fff][\w .-]{0,40})>")


@dataclass
class Task:
    """A procedure plus what running it needs."""

    procedure: Procedure
    criteria: list[ExpectedEvent] = field(default_factory=list)
    region: str | None = None
    context: dict[str, str] = field(default_factory=dict)  #: placeholder/output name -> value

    @property
    def id(self) -> str:
        return self.procedure.id

    @property
    def goal(self) -> str:
        return self.procedure.title

    def resolve(self, text: str) -> str:
        """``text`` with the doc's placeholders replaced by task-context values.

        ``<suffix>`` is the run suffix; a placeholder the context does not know
        becomes a valid-looking name built from it (``<your-bucket-name>`` ->
        ``docverify-your-bucket-name-<suffix>``), so a doc's example values can be
        typed as they are."""

        keys = {placeholder_key(k): v for k, v in self.context.items()}

        def value(match: re.Match[str]) -> str:
            key = match.group(1).strip()
            if key in self.context:
                return self.context[key]
            if placeholder_key(key) in keys:  # <VPC ID>, <vpc_id> and <vpc-id> are one placeholder
                return keys[placeholder_key(key)]
            slug = re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-")  # nothing of a Chinese name
            return "-".join(part for part in ("docverify", slug, self.context.get("suffix", "")) if part)

        return PLACEHOLDER.sub(value, text)

    def unique(self, name: str) -> str:
        """A doc's example name made unique to this run (``web-01`` ->
        ``web-01-<suffix>``): the reader picks a name of their own, and a name used
        by two procedures, or left by an earlier run, must not collide."""
        suffix = self.context.get("suffix", "")
        if not suffix or name.endswith(suffix):
            return name
        return f"{name}-{suffix}"


def placeholder_key(name: str) -> str:
    """A placeholder's name without case or separator differences: ``VPC_ID`` -> ``vpc-id``."""
    return re.sub(r"[\s_-]+", "-", name.strip().lower())


def new_suffix() -> str:
    """A random name suffix: lower-case letters and digits, 6 characters."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(secrets.choice(alphabet) for _ in range(6))


def make_task(procedure: Procedure, *, suffix: str | None = None, default_region: str | None = None) -> Task:
    suffix = suffix or new_suffix()
    from docverify.parse.sequence import own_steps

    own = own_steps(procedure)  # the parts of the doc run first (spec/sequence.py) have their own criteria
    return Task(
        procedure=procedure,
        # a part that only finishes what the parts before it began ("Step 2: Configure the
        # bucket", "Click OK") is judged by what the whole does
        criteria=expected_events(own) or (expected_events(procedure) if own is not procedure else []),
        region=procedure.region or default_region,
        context={"suffix": suffix},
    )
