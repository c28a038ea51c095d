"""Helpers shared by the verdict-accuracy tests (imported by name: this folder is on sys.path)."""

from __future__ import annotations

import asyncio
import textwrap

from docverify.execute.actions import Action, Observation
from docverify.parse.model import Procedure
from docverify.parse.parser import parse_text
from docverify.task import make_task
from docverify_literal.policy import LiteralPolicy

LOOP = asyncio.new_event_loop()  # one loop, as in a run: an episode is an async generator


def procedure(markdown: str, name: str = "doc.md") -> Procedure:
    document = parse_text(textwrap.dedent(markdown), name)
    assert document.procedures, document.diagnostics
    return document.procedures[0]


def episode(markdown: str, context: dict[str, str] | None = None):
    task = make_task(procedure(markdown), suffix="abc123", default_region="cn-hangzhou")
    task.context.update(context or {})
    return LiteralPolicy().start(task)


def page(snapshot: str, url: str = "http://console.test/x") -> Observation:
    return Observation(url, "Console", textwrap.dedent(snapshot).strip("\n"))


def act(ep, observation: Observation) -> Action:
    return LOOP.run_until_complete(ep.next_action(observation))
