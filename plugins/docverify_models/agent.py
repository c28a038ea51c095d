"""The agent loop every model policy shares (ReAct: a Thought, then one Action).

Each turn the episode renders the prompt (Jinja2 templates in ``prompts/``): the
task goal, the doc's steps with the current one marked, provisioning reports, the
recent actions (older ones compacted past a token budget), and the current page,
fenced as untrusted data. The model answers with one JSON object
(:mod:`docverify_models.schema`); an answer that fails validation, or an action
outside the procedure's scope, is shown back to the model with the reason and
retried a bounded number of times, and counted.

The same loop serves the hybrid policy's hand-overs: there the model gets a
*sub-goal* (one doc step the literal follower could not follow) and answers
``done`` when that step is achieved.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field as Option

from docverify.cost import CostMeter
from docverify.engines import Engine, prompt_environment, with_image
from docverify.errors import Undecided
from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.compact import compact_snapshot, shown_refs
from docverify.execute.locate import Element
from docverify.execute.policy import Episode, Policy
from docverify.parse.model import Step
from docverify.scrub import scrub
from docverify.task import Task
from docverify_models.schema import (
    DONE_STATUSES,
    InvalidAnswer,
    answer_cap,
    answer_schema,
    element_target,
    to_action,
)

PROMPTS = Path(__file__).parent / "prompts"
#: Words of actions that destroy or change what exists: allowed only when the task asks for them.
DESTRUCTIVE = re.compile(
    r"\b(delete|remove|release|destroy|terminate|stop|restart|reboot|reset|unbind|detach|disable|revoke|"
    r"clear|purge|empty|drop|format|unsubscribe|cancel)\b|删除|释放|停止|重启|重置|解绑|卸载|禁用|清空",
    re.I)


class ModelOptions(Policy.Options):
    """Options every model policy has."""

    temperature: float = Option(0.0, ge=0, le=2, description="sampling temperature")
    max_answer_tokens: int = Option(320, ge=32, le=8192, description="longest answer per turn")
    max_invalid: int = Option(2, ge=0, le=10, description="retries of an answer that fails the schema")
    max_tokens: int = Option(400_000, ge=1000, description="prompt+answer tokens per procedure; then INCONCLUSIVE")
    observation_tokens: int = Option(3000, ge=200, description="page snapshot budget per turn")
    history_tokens: int = Option(1200, ge=100, description="recent-actions budget per turn")
    prompts_dir: str | None = Option(None, description="folder with prompt templates overriding the built-in ones")
    vision: bool = Option(False, description="attach a screenshot each turn (vision models)")


@dataclass
class Turn:
    """What the agent remembers of one of its actions."""

    step: str | None
    text: str


@dataclass
class AgentState:
    history: list[Turn] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    current_step: str | None = None
    last: Action | None = None
    acted_on: str | None = None  #: the page (its text, refs left out) the last action was chosen on
    #: the actions (kind, target) that changed nothing on the page ``idle_page``, while it stays so
    idle: set[tuple[str, str]] = field(default_factory=set)
    idle_page: str | None = None


class Agent:
    """The model half of an episode: prompt, call, validate, retry."""

    def __init__(self, task: Task, backend: Engine, options: ModelOptions, meter: CostMeter, usage: Any) -> None:
        self.task = task
        self.backend = backend
        self.options = options
        self.meter = meter
        self.usage = usage
        self.prompts = prompt_environment(options.prompts_dir, PROMPTS)
        self.state = AgentState()
        steps = task.procedure.all_steps()
        self.state.current_step = steps[0].number if steps else None
        self.spent_tokens = 0

    # -- one decision ------------------------------------------------------------------

    async def decide(self, observation: Observation, *, subgoal: str | None = None, acted: bool = True) -> Action:
        """The model's next action for ``observation``. ``acted`` False: nothing has been
        done for the subgoal yet, which a done with status success cannot then claim."""
        page = self.page(observation, subgoal)
        messages = self.messages(observation, subgoal, page)
        if self.options.vision and observation.screenshot and self.backend.supports_images:
            messages = with_image(messages, observation.screenshot)
        problems: list[str] = []
        schema = self.schema(observation, page, done=DONE_STATUSES if acted else ("blocked",))
        for _ in range(self.options.max_invalid + 1):
            text = await self.call(messages, schema)
            try:
                action = to_action(text, observation, self.task)
                self.in_scope(action)
                if not acted and action.kind is ActionKind.DONE and action.status == "success":
                    raise InvalidAnswer("nothing has been done on the page for this step yet: act on the control "
                                        "the step means, or answer done with status blocked")
            except InvalidAnswer as error:
                self.usage.invalid_outputs += 1
                problems.append(str(error))
                messages = [*messages, {"role": "assistant", "content": text[:2000]},
                            {"role": "user", "content": f"That answer cannot be used: {error}. Answer again with "
                                                        "one JSON object."}]
                continue
            self.remember(action)
            self.state.acted_on = page_text(observation)
            return action
        raise Undecided(f"the model gave no usable action in {self.options.max_invalid + 1} tries "
                        f"(last problem: {problems[-1]})")

    def schema(self, observation: Observation, page: str, done: Sequence[str] = DONE_STATUSES) -> dict[str, Any]:
        """This turn's answer schema; for a constrained decoder, refs and step numbers
        are the ones the prompt shows (``page``: it cannot name an element it was not
        shown) and the doc's own, less the clicks :meth:`in_scope` would refuse and the
        actions that just changed nothing on this same page (:meth:`outcome`): a greedy
        decoder offered one would name it again on every retry. While a modal dialog
        covers the page, only its own elements are offered: a click behind it cannot land."""
        idle = self.state.idle if self.state.idle_page == page_text(observation) else set()
        covered = observation.covered

        def refuse(kind: ActionKind, element: Element) -> bool:
            return ((kind is ActionKind.CLICK and bool(self.out_of_scope(element.name)))
                    or (kind.value, element_target(element)) in idle or element.ref in covered)

        return answer_schema(self.backend, page=page if shown_refs(page) else observation.snapshot,
                             steps=[s.number for s in self.task.procedure.all_steps()], refuse=refuse, done=done)

    async def call(self, messages: list[dict[str, Any]], schema: dict[str, Any]) -> str:
        tokens_in = self.backend.count_tokens(messages)
        max_out = answer_cap(self.backend, schema, self.options.max_answer_tokens)
        if self.spent_tokens + tokens_in + max_out > self.options.max_tokens:
            raise Undecided(f"the token budget ran out ({self.options.max_tokens} tokens per procedure; "
                            "policy option max_tokens)")
        with self.meter.spending(self.backend.model, tokens_in, max_out, local=self.backend.local) as bill:
            completion = await self.backend.complete(messages, schema, name="agent_action", max_tokens=max_out,
                                                     temperature=self.options.temperature)
            bill(self.usage, completion.tokens_in, completion.tokens_out)
        self.usage.retries += completion.retries
        self.spent_tokens += completion.tokens_in + completion.tokens_out
        return completion.text

    def in_scope(self, action: Action) -> None:
        """Refuse a destructive click the procedure never asks for (page text that
        talks the model into "delete all instances" stops here, whatever the model
        believed)."""
        if action.kind is ActionKind.CLICK:
            label = action.target or ""
        elif action.kind is ActionKind.GOTO:
            label = action.value or ""
        else:
            return
        words = self.out_of_scope(label)
        if words:
            raise InvalidAnswer(f"{action.describe()} would {'/'.join(sorted(words))} something, and this procedure "
                                "never asks for that: do only what the procedure asks")

    def out_of_scope(self, label: str) -> set[str]:
        """The destructive words of ``label`` ("delete", "release"...) when neither the
        goal nor any step of the procedure uses any of them (none: in scope)."""
        words = {m.group(0).lower() for m in DESTRUCTIVE.finditer(label)}
        allowed = " ".join([self.task.goal, *(s.text for s in self.task.procedure.all_steps())])
        if any(re.search(rf"(?<![a-z]){re.escape(word)}", allowed, re.I) for word in words):
            return set()
        return words

    def remember(self, action: Action) -> None:
        if action.step:
            self.state.current_step = action.step
        self.state.last = action
        if action.kind is not ActionKind.DONE:
            self.state.history.append(Turn(action.step, action.describe()))

    def note(self, text: str, step: str | None = None) -> None:
        """Add an action the model did not choose (the literal follower's) to the history."""
        self.state.history.append(Turn(step, text))
        if step:
            self.state.current_step = step

    def outcome(self, observation: Observation) -> None:
        """Append how the last action went to its history line: failed, or changed nothing
        on the page (the same page, refs aside). An action on an element that failed or
        changed nothing is not offered to a constrained decoder again while the page stays
        the same: the page would answer it the same way (a greedy decoder named the same
        selected radio button eight times over; a sampled one clicked a button behind an
        open dialog five times)."""
        state, acted_on = self.state, self.state.acted_on
        state.acted_on = None
        page = page_text(observation)
        if state.idle_page != page:
            state.idle, state.idle_page = set(), None
        if not state.history:
            return
        turn = state.history[-1]
        same = acted_on == page and state.last is not None and bool(state.last.target)  # on an element
        if observation.error:
            turn.text += f" -> failed: {observation.error[:200]}"
        elif same:
            turn.text += " -> nothing changed"
        if same:
            state.idle.add((state.last.kind.value, state.last.target))
            state.idle_page = page

    # -- the prompt ---------------------------------------------------------------------

    def page(self, observation: Observation, subgoal: str | None) -> str:
        """The page as the prompt shows it: within the observation budget, what the
        steps in focus name first (:meth:`focus`, :mod:`docverify.execute.compact`)."""
        return compact_snapshot(observation.snapshot, self.options.observation_tokens, self.focus(subgoal))

    def focus(self, subgoal: str | None) -> list[str]:
        """What the page is cut around, most important first: the sub-goal, the current step
        and the two after it (a step that needs no action leaves the current one behind),
        each with its form fields, as the prompt shows them."""
        steps = self.task.procedure.all_steps()
        at = next((i for i, step in enumerate(steps) if step.number == self.state.current_step), 0)
        texts = [subgoal] if subgoal else []
        for step in steps[at:at + 3]:
            texts.append("\n".join([self.task.resolve(step.text),
                                     *(f"{f.name} {self.task.resolve(f.value or '')}" for f in step.fields)]))
        return texts

    def messages(self, observation: Observation, subgoal: str | None, page: str | None = None) -> list[dict[str, Any]]:
        system = self.prompts.get_template("agent_system.j2").render(subgoal=subgoal)
        history, omitted = self.compact_history()
        user = self.prompts.get_template("agent_turn.j2").render(
            goal=self.task.goal, region=self.task.region, subgoal=subgoal, path=self.task.procedure.path,
            steps=self.step_lines(), reports=self.state.reports, history=history, omitted=omitted,
            url=observation.url, title=observation.title, error=observation.error,
            snapshot=self.page(observation, subgoal) if page is None else page)
        return [{"role": "system", "content": scrub(system)}, {"role": "user", "content": scrub(user)}]

    def step_lines(self) -> list[dict[str, Any]]:
        lines = []
        for step in self.task.procedure.all_steps():
            fields = [{"name": f.name, "value": self.task.resolve(f.value or f.description or "")}
                      for f in step.fields]
            lines.append({"number": step.number, "text": self.task.resolve(step.text), "fields": fields,
                          "current": step.number == self.state.current_step})
        return lines

    def compact_history(self) -> tuple[list[str], int]:
        """The newest history lines that fit the budget, and how many older ones were left out."""
        budget = self.options.history_tokens * 3.5
        kept: list[str] = []
        used = 0
        for index in range(len(self.state.history) - 1, -1, -1):
            turn = self.state.history[index]
            line = f"- [step {turn.step or '?'}] {turn.text}"
            if used + len(line) > budget and kept:
                return list(reversed(kept)), index + 1
            kept.append(line)
            used += len(line)
        return list(reversed(kept)), 0


class AgentEpisode(Episode):
    """A procedure driven by the model alone (the ``openai``, ``llamacpp`` and ``vllm`` policies)."""

    def __init__(self, task: Task, backend: Engine, options: ModelOptions, meter: CostMeter) -> None:
        super().__init__()
        self.agent = Agent(task, backend, options, meter, self.usage)

    async def next_action(self, observation: Observation) -> Action:
        self.agent.outcome(observation)
        action = await self.agent.decide(observation)
        action.by = "model"
        if action.kind is not ActionKind.DONE:
            self.usage.model_turns += 1
        return action

    def provisioned(self, report: str) -> None:
        self.agent.state.reports.append(report)

    def resume(self) -> bool:
        return True  # the model reads the provisioning report in its next prompt and goes on


class ModelPolicy(Policy):
    """Base of the policies that let a model drive every turn."""

    Options = ModelOptions
    backend: Engine | None = None

    @property
    def sees_screenshots(self) -> bool:
        return bool(self.options.vision)  # type: ignore[attr-defined]

    def make_backend(self) -> Engine:
        raise NotImplementedError

    def prepare(self) -> None:
        if self.backend is None:
            self.backend = self.make_backend()
        self.meter.require_price(self.backend.model, local=self.backend.local)

    def ready_backend(self) -> Engine:
        """The backend, made (and its price checked) on first use."""
        if self.backend is None:
            self.prepare()
        assert self.backend is not None
        return self.backend

    def start(self, task: Task) -> Episode:
        return AgentEpisode(task, self.ready_backend(), self.options, self.meter)  # type: ignore[arg-type]

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
            self.backend = None


_REF = re.compile(r" \[ref=[^\]]*\]")


def page_text(observation: Observation) -> str:
    """What a page shows, without the refs (a snapshot names the same elements anew)."""
    return f"{observation.url}\n{_REF.sub('', observation.snapshot)}"


def subgoal_text(task: Task, step: Step, problem: str) -> str:
    """The hybrid hand-over: one doc step, what the literal follower could not do, and
    the values the doc gives for its fields."""
    fields = [f"{f.name} = {task.resolve(f.value)}" for f in step.fields if f.value]
    text = (f"Complete doc step {step.number} on the current page: \"{task.resolve(step.text)}\". The literal step "
            f"follower could not: {problem}. Find the way the console offers now, act, then answer done with status "
            "success (or blocked if it cannot be done).")
    if fields:
        text += " Values from the doc: " + "; ".join(fields)
    return text
