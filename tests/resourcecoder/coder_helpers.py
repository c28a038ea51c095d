"""Helpers of the ResourceCoder tests (imported by name: tests/resourcecoder is on sys.path):
a scripted fake OpenAI-protocol endpoint, and the templates it answers with — real HCL for
the sandbox provider, right and wrong."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from fake_openai import FakeOpenAI, Reply
from sandbox_templates import KEY_PAIR

ROOT = Path(__file__).resolve().parents[2]


def template_answer(resource_type: str, template: str) -> str:
    return json.dumps({"resource_type": resource_type, "template": template})


class ScriptedModel:
    """A fake OpenAI-protocol endpoint answering from a queue (texts, or callables of the request body)."""

    def __init__(self, answers: list[str | Callable[[dict], str]]) -> None:
        self.answers = list(answers)
        self.server = FakeOpenAI(self.respond)

    def respond(self, body: dict, fake: FakeOpenAI) -> Reply:
        if not self.answers:
            return Reply("no more scripted answers", status=500)
        answer = self.answers.pop(0)
        return Reply(answer(body) if callable(answer) else answer, usage=(1200, 150))

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def requests(self) -> list[dict]:
        return self.server.requests


def user_text(request: dict) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "user" and isinstance(m["content"], str))


SECURITY_GROUP = '''\
resource "sandbox_ecs_security_group" "{{ r.address }}" {
  security_group_name = "{{ r.name }}"
  vpc_id              = {{ ref("vpc") }}.id
  description         = "{{ r.attributes.get('description', 'Written by ResourceCoder') }}"
  region_id           = "{{ r.region }}"
}

output "{{ r.address }}_id" {
  value = sandbox_ecs_security_group.{{ r.address }}.id
}

output "{{ r.address }}_name" {
  value = sandbox_ecs_security_group.{{ r.address }}.security_group_name
}
'''

#: a misspelt argument: terraform validate says "Unsupported argument" on its line
KEY_PAIR_MISSPELT = KEY_PAIR.replace("  key_pair_name = ", "  key_pair_nmae = ")
