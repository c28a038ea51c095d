"""The hybrid policy composes what it is configured with, asked for by name: a following
policy (``follower``), which it gives its model as the delegate, and a model engine
(``engine``). Here both are a third party's (a scripted follower and a scripted
engine, registered through the plugin manager), then the built-in literal follower;
no browser, no server."""

from __future__ import annotations

import asyncio
import json
import textwrap
import types
from typing import Any, AsyncIterator, Sequence

import pytest
from pydantic import ValidationError

import docverify.plugins
from docverify.check.verdict import Finding, FindingKind
from docverify.config import load_config
from docverify.engines import Completion, Engine
from docverify.errors import ConfigError
from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.follow import Delegate, FollowingPolicy, Stuck
from docverify.execute.policy import Episode
from docverify.hookspecs import hookimpl
from docverify.parse.model import Step
from docverify.parse.parser import parse_text
from docverify.plugins import load_plugins
from docverify.task import Task, make_task
from docverify_models.policies import HybridPolicy, ModelDelegate

DOC = """\
# Bind an EIP

1. Click **Bind Resource**.
2. Click **OK**.
"""

SHOWN = Observation("http://console.test/eip", "EIPs", '- button "Associate Instance" [ref=e5]\n'
                                                        '- button "Release" [ref=e6]')
AFTER = Observation("http://console.test/eip", "Associate", '- main [ref=e7]:\n  - button "OK" [ref=e8]')
DONE = Observation("http://console.test/eip", "EIPs", '- main [ref=e7]')
#: a next step that names a list of its own, and that list on a page
STEP_2 = "2. In the **Instance** list, select `i-1` and click **OK**.\n"
INSTANCE = '\n  - combobox "Instance" [ref=e9]'

#: what the scripted engine answers, in order; and the prompts it was sent
SCRIPT: list[str] = []
PROMPTS: list[list[dict[str, Any]]] = []


def answer(kind: str, **fields: Any) -> str:
    return json.dumps({"thought": f"{kind} next", "action": kind, **fields})


class ScriptedEngine(Engine):
    """Answers what the test scripted."""

    name = "scripted"
    local = True

    @classmethod
    def from_options(cls, options: Any) -> "ScriptedEngine":
        engine = cls()
        engine.model = options.model
        return engine

    async def complete(self, messages: list[dict[str, Any]], schema: dict[str, Any], *, name: str,
                       max_tokens: int, temperature: float) -> Completion:
        PROMPTS.append(messages)
        return Completion(SCRIPT.pop(0), 100, 20, "json_schema")


class ScriptedFollower(FollowingPolicy):
    """Follows nothing itself: the doc's first step is stuck on ``label``."""

    name = "scripted"

    class Options(FollowingPolicy.Options):
        label: str = "Create"

    def start(self, task: Task, delegate: Delegate | None = None) -> Episode:
        return ScriptedEpisode(task, self.options.label, delegate or Delegate())  # type: ignore[attr-defined]


class ScriptedEpisode(Episode):
    """The :class:`~docverify.execute.follow.Follower` side of the contract, and no more."""

    def __init__(self, task: Task, label: str, delegate: Delegate) -> None:
        super().__init__()
        self.task, self.label, self.delegate = task, label, delegate
        self.observation: Observation | None = None
        self.blocked: str | None = None
        self.actions = self.follow()
        delegate.started(self)

    async def next_action(self, observation: Observation) -> Action:
        self.observation = observation
        self.delegate.observe(observation)
        try:
            action = await anext(self.actions)
        except StopAsyncIteration:
            action = Action(ActionKind.DONE, status="blocked" if self.blocked else "success", message=self.blocked)
        self.delegate.decided(action)
        return action

    async def follow(self) -> AsyncIterator[Action]:
        step = self.task.procedure.steps[0]
        finding = self.finding(step, step.line, FindingKind.ELEMENT_NOT_FOUND, self.label, "not on the page")
        async for action in self.delegate.stuck(self, Stuck(step, None, finding, fatal=True)):
            yield action

    def finding(self, step: Step, line: int, kind: FindingKind, expected: str, observed: str,
                candidates: Sequence[str] = ()) -> Finding:
        return Finding(kind, self.task.procedure.path, line, step.number, expected, observed, list(candidates))

    def missing_prerequisite(self, stuck: Stuck) -> bool:
        return False

    def block(self, reason: str) -> None:
        self.blocked = reason

    async def flag_stuck(self, stuck: Stuck) -> AsyncIterator[Action]:
        yield Action(ActionKind.FLAG_STEP, finding=stuck.finding, step=stuck.step.number)

    async def flag_unverifiable(self, step: Step, reason: str) -> AsyncIterator[Action]:
        yield Action(ActionKind.FLAG_STEP, finding=self.finding(step, step.line, FindingKind.NOT_VERIFIABLE, step.text,
                                                                reason), step=step.number)

    def shown_labels(self, step: Step) -> list[str]:
        names = {e.name for e in self.observation.elements} if self.observation else set()
        return [label for label in step.labels if label in names]


PLUGIN = types.ModuleType("docverify_scripted")
PLUGIN.register_policies = hookimpl(lambda register: register(ScriptedFollower))  # type: ignore[attr-defined]
PLUGIN.register_engines = hookimpl(lambda register: register(ScriptedEngine))  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def installed(monkeypatch):
    """The scripted plugin installed beside the built-ins."""
    plugins = load_plugins(extra=[PLUGIN])
    monkeypatch.setattr(docverify.plugins, "installed_plugins", lambda: plugins)
    SCRIPT.clear()
    PROMPTS.clear()


def task() -> Task:
    return make_task(parse_text(DOC, "docs/bind.md").procedures[0], suffix="abc123", default_region="cn-hangzhou")


def hybrid(**options: Any) -> HybridPolicy:
    return HybridPolicy(HybridPolicy.Options(engine="scripted", model="scripted-model", **options))


def act(episode: Episode, observation: Observation) -> Action:
    return asyncio.new_event_loop().run_until_complete(episode.next_action(observation))


def test_a_follower_asked_for_by_name_gets_the_model_as_its_delegate():
    SCRIPT[:] = [answer("click", ref="e5", step="1"), answer("done", status="success", message="bound it")]
    policy = hybrid(follower="scripted", label="Bind Resource")  # label: the follower's option
    episode = policy.start(task())
    assert isinstance(episode, ScriptedEpisode) and isinstance(episode.delegate, ModelDelegate)
    assert episode.label == "Bind Resource"
    click = act(episode, SHOWN)
    assert (click.kind, click.ref, click.by) == (ActionKind.CLICK, "e5", "model")
    assert "could not: step 1: element not found: doc: Bind Resource; console: not on the page" \
        in PROMPTS[0][1]["content"]
    flag = act(episode, AFTER)
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.expected == "Bind Resource"
    assert flag.finding.resolved_by == "model: click button 'Associate Instance' -> done (bound it)"
    assert act(episode, AFTER).status == "success"
    usage = episode.usage
    assert (usage.calls, usage.tokens_in, usage.tokens_out, usage.model_turns) == (2, 200, 40, 1)
    assert (usage.handovers, usage.handovers_done) == (1, 1)


def test_the_literal_follower_goes_on_after_the_model_found_the_way():
    SCRIPT[:] = [answer("click", ref="e5", step="1"), answer("done", status="success")]
    episode = hybrid().start(task())
    assert act(episode, SHOWN).by == "model"
    # step 2's OK is on the page now, but every dialog has one: the model says when it is done
    assert act(episode, AFTER).finding.resolved_by == "model: click button 'Associate Instance' -> done"
    ok = act(episode, AFTER)
    assert (ok.ref, ok.by) == ("e8", None)  # step 2, followed as written
    assert act(episode, DONE).status == "success"
    assert (episode.usage.model_turns, episode.usage.literal_turns) == (1, 1)


def test_a_hand_over_ends_when_the_models_action_brought_up_what_the_next_step_names():
    """The model clicked the renamed button and the page now shows step 2's Instance list,
    which it did not before: step 1 is done, whatever the model would answer next (a small
    model went on into step 2's dialog, cancelled it, and opened it again until its turns ran out)."""
    SCRIPT[:] = [answer("click", ref="e5", step="1"), answer("click", ref="e8", step="1")]
    doc = "# Bind an EIP\n\n1. Click **Bind Resource**.\n" + STEP_2
    episode = hybrid().start(make_task(parse_text(doc, "docs/bind.md").procedures[0], suffix="abc123"))
    assert act(episode, SHOWN).by == "model"
    listed = Observation(AFTER.url, AFTER.title, AFTER.snapshot + INSTANCE)
    assert act(episode, listed).finding.resolved_by == ("model: click button 'Associate Instance' -> done "
                                                        "(the page now shows step 2's 'Instance')")
    assert len(PROMPTS) == 1 and (episode.usage.handovers, episode.usage.handovers_done) == (1, 1)
    assert act(episode, listed).by is None  # the follower goes on with step 2


def test_a_model_cannot_call_a_step_done_before_it_did_anything_for_it():
    """A small model answered "done: every step is done" to a hand-over of a renamed
    option it never selected; the hand-over counted as resolved and the goal was missed.
    A stuck step has something to do on the page: done with success needs an action first."""
    SCRIPT[:] = [answer("done", status="success", message="every step is done"), answer("click", ref="e5", step="1")]
    episode = hybrid().start(task())
    click = act(episode, SHOWN)
    assert (click.kind, click.ref, click.by) == (ActionKind.CLICK, "e5", "model")
    assert "nothing has been done on the page for this step yet" in PROMPTS[1][-1]["content"]
    assert episode.usage.invalid_outputs == 1
    # a click the page refused did nothing for the step either
    SCRIPT[:] = [answer("done", status="success"), answer("done", status="blocked", message="cannot")]
    refused = Observation(SHOWN.url, SHOWN.title, SHOWN.snapshot,
                          error="click button 'Associate Instance' failed: Timeout (another element covers it)")
    flag = act(episode, refused)
    assert flag.finding.resolved_by == "model: click button 'Associate Instance' -> gave up (cannot)"
    assert episode.usage.invalid_outputs == 2
    # the grammar a constrained decoder gets leaves done with success out until then
    agent = episode.delegate.agent
    agent.backend = types.SimpleNamespace(constrained=True, max_text=100)
    done = next(b for b in agent.schema(SHOWN, agent.page(SHOWN, None), done=("blocked",))["anyOf"]
                if b["properties"]["action"]["const"] == "done")
    assert done["properties"]["status"]["enum"] == ["blocked"]


@pytest.mark.parametrize("doc, before", [
    # the next step's Instance list was on the page already: it tells nothing
    ("# Bind an EIP\n\n1. Click **Bind Resource**.\n" + STEP_2, SHOWN.snapshot + INSTANCE),
    # the step has more to do than the click handed over
    ("# Bind an EIP\n\n1. Click **Bind Resource** and set **Name** to `eip-1`.\n" + STEP_2, SHOWN.snapshot),
])
def test_the_next_steps_label_ends_a_hand_over_only_when_the_models_action_brought_it(doc, before):
    """A label the page showed when the hand-over began, or a step with more to do than
    the action handed over (a field to set), leaves the end to the model."""
    SCRIPT[:] = [answer("click", ref="e5", step="1"), answer("done", status="success", message="did it")]
    bound = make_task(parse_text(doc, "docs/bind.md").procedures[0], suffix="abc123", default_region="cn-hangzhou")
    episode = hybrid().start(bound)
    assert act(episode, Observation(SHOWN.url, SHOWN.title, before)).by == "model"
    flag = act(episode, Observation(AFTER.url, AFTER.title, AFTER.snapshot + INSTANCE))
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.resolved_by.endswith("-> done (did it)")
    assert len(PROMPTS) == 2


def test_a_step_the_model_gives_up_on_blocks_the_literal_follower_when_the_rest_depends_on_it():
    SCRIPT[:] = [answer("done", status="blocked", message="no such control")]
    episode = hybrid().start(task())
    flag = act(episode, SHOWN)
    assert flag.finding.resolved_by == "model: nothing -> gave up (no such control)"
    assert (episode.usage.handovers, episode.usage.handovers_done) == (1, 0)
    done = act(episode, SHOWN)
    assert (done.kind, done.status) == (ActionKind.DONE, "blocked") and "Bind Resource" in done.message


def test_the_followers_options_are_validated_in_the_hybrids_table(tmp_path):
    assert hybrid(close_threshold=0.9).follower.options.close_threshold == 0.9  # type: ignore[attr-defined]
    (tmp_path / "docverify.toml").write_text(textwrap.dedent("""\
        [policy.hybrid]
        model = "m"
        close_threshold = 0.1
        """))
    config = load_config(cwd=tmp_path, environ={})
    with pytest.raises(ConfigError, match=r"docverify.toml:3: policy.hybrid.close_threshold: Input should be greater"):
        config.plugin_options("policy", "hybrid", HybridPolicy)
    with pytest.raises(ValidationError, match="label"):
        hybrid(label="Bind")  # the literal follower has no such option
    with pytest.raises(ValidationError, match="policy 'openai' does not follow the doc itself"):
        hybrid(follower="openai")
    with pytest.raises(ValidationError, match="unknown engine 'scriptd' \\(did you mean 'scripted'\\?\\)"):
        HybridPolicy.Options(engine="scriptd")
