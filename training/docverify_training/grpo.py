"""``docverify train grpo``: reinforcement learning in the real environment (TRL's GRPOTrainer).

Each optimisation step takes ``per_device_train_batch_size / num_generations`` train
tasks and rolls each out ``num_generations`` times (a *group*) with the policy being
trained: the current weights go to the rollout policy (exported to GGUF for
``llamacpp``, saved as a folder for ``vllm``) and it runs the tasks as ``docverify
bench run`` runs a policy: the sandbox console, a real browser, Terraform provisioning,
the audit log deciding (:class:`SandboxEnvironment`). A rollout's reward is 1.0 when
the goal was reached and 0.0 when not; an INCONCLUSIVE or ENV_ERROR rollout, or one
that crashed, carries none: it is dropped from the loss and counted. Advantages are
normalised in two layers (:mod:`docverify_training.advantages`).

A group whose rollouts all got one reward (none reached the goal, or every one did)
gives no gradient. With ``resample_rounds`` a step rolls out other train tasks in
their place, round after round, until it has as many groups with a gradient as it
asked for or the rounds run out (DAPO's dynamic sampling): tasks not seen flat lately
are drawn first.

The agent loop renders a fresh prompt every turn (the doc, the history, the page), so
one rollout is many (prompt, answer) pairs: every model call of a rollout becomes one
training sample that carries the rollout's advantage, its prompt (the page) never in
the loss. TRL's ``rollout_func`` hook returns one completion per prompt, which such an
agent cannot fit; :class:`DocverifyGRPOTrainer` overrides the stage around it
(``_generate_and_score_completions``) and keeps the rest of TRL's trainer: the clipped
objective and its loss types, the optional KL term against the reference model (the
adapters switched off), LoRA, the optimiser and schedule, checkpoints and ``--resume``,
logging. Samples are learnt in micro-batches of ``micro_batch_size`` (forward and
backward per micro-batch, the gradients accumulated), so memory stays bounded however
many turns a step's rollouts took.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
from transformers import TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from docverify.errors import UsageError
from docverify_training.advantages import Rollout, advantages, informative_tasks
from docverify_training.settings import (
    CPU_COMMON,
    LoraSettings,
    StopOnSignal,
    check_resume,
    peft_config,
    score_labelled_positions_only,
    train_and_report,
)
from docverify_training.settings import load_settings as _load

#: Policies the trained weights can be rolled out with, and the setting that points them at the weights.
#: ``hybrid`` rolls out the literal follower with the weights (on llama.cpp) taking the steps it
#: cannot follow: only the hand-overs' model calls are learnt from, with the rollout's advantage.
ROLLOUT_POLICIES = {"llamacpp": "model_path", "vllm": "model", "hybrid": "model_path"}
#: The rollout policies that load the weights as a GGUF file (llama.cpp).
GGUF_POLICIES = frozenset({"llamacpp", "hybrid"})
#: Loss types whose value is a mean over sequences (a micro-batch weighs by its share of
#: them), over tokens (by its share of tokens), or already normalised by the whole batch's tokens.
PER_SEQUENCE_LOSSES = frozenset({"grpo", "sapo", "luspo", "dr_grpo"})
PER_TOKEN_LOSSES = frozenset({"bnpo"})

#: Defaults that fit a CPU run of a small model: 2 tasks a step, 4 rollouts each, no KL term.
CPU_DEFAULTS: dict[str, Any] = {
    **CPU_COMMON, "per_device_train_batch_size": 8, "num_generations": 4, "gradient_accumulation_steps": 1,
    "learning_rate": 2e-5, "max_steps": 20, "temperature": 1.0, "beta": 0.0, "save_strategy": "steps",
    "save_steps": 5, "max_completion_length": 320, "activation_checkpointing": False,
    # answers are re-tokenized from the rollouts' text: there are no sampling log-probabilities to correct with
    "vllm_importance_sampling_correction": False,
}


@dataclass
class GRPOSettings(GRPOConfig, LoraSettings):
    """`docverify train grpo`'s configuration: every field of TRL's GRPOConfig
    (learning_rate, num_generations, temperature, beta, loss_type, ...: see its
    documentation), LoRA's, and the environment's."""

    rollout_policy: str = field(default="llamacpp", metadata={
        "help": "the policy that rolls the trained weights out: llamacpp (GGUF, CPU), vllm (a folder, GPU), or "
                "hybrid (the literal follower, the weights on llama.cpp taking the steps it cannot follow)"})
    rollout_jobs: int = field(default=1, metadata={"help": "rollouts at once (tasks of a step in parallel)"})
    max_turns: int = field(default=30, metadata={"help": "turns per rollout before it ends unfinished"})
    rollout_timeout: float = field(default=300.0, metadata={"help": "seconds per rollout"})
    micro_batch_size: int = field(default=2, metadata={
        "help": "samples (model calls) per forward and backward pass; their gradients are accumulated"})
    resample_rounds: int = field(default=0, metadata={
        "help": "extra rounds a step may roll out to replace its flat groups (every rollout rewarded alike: no "
                "gradient) with groups of other train tasks (DAPO's dynamic sampling; 0: learn from what the first "
                "round gave)"})
    samples_per_rollout: int = field(default=0, metadata={
        "help": "model calls of a rollout learnt from, drawn at random (0: all)"})
    bench_eval_steps: int = field(default=0, metadata={
        "help": "every N steps, run the eval split through the benchmark runner (0: never)"})
    bench_eval_sample: int = field(default=0, metadata={"help": "eval tasks per evaluation, stratified (0: all)"})
    gguf_dtype: str = field(default="f16", metadata={"help": "the rollout GGUF's matrices: f16 or f32"})


def load_settings(config_file: Path | None, overrides: dict[str, Any], output: Path) -> GRPOSettings:
    """The settings: CPU defaults, then the YAML file, then ``overrides``; what a
    GRPO step needs of them is checked here, with the key named."""
    settings = _load(GRPOSettings, CPU_DEFAULTS, config_file, overrides, output, "train grpo")
    if settings.rollout_policy not in ROLLOUT_POLICIES:
        raise UsageError(f"rollout_policy {settings.rollout_policy!r}: use one of {', '.join(ROLLOUT_POLICIES)}")
    if settings.gradient_accumulation_steps != 1 or settings.steps_per_generation != 1:
        raise UsageError("gradient_accumulation_steps and steps_per_generation must be 1 for train grpo",
                         hint="a step's tasks come from per_device_train_batch_size / num_generations; its samples "
                              "are accumulated in micro-batches of micro_batch_size")
    if settings.vllm_importance_sampling_correction:
        raise UsageError("vllm_importance_sampling_correction must be false for train grpo",
                         hint="the rollouts' answers are kept as text (re-tokenized for the loss), without vLLM's "
                              "sampling log-probabilities")
    if settings.num_iterations != 1:
        raise UsageError("num_iterations must be 1: every step learns from rollouts of the weights it starts from")
    for name in ("rollout_jobs", "max_turns", "micro_batch_size"):
        if getattr(settings, name) < 1:
            raise UsageError(f"{name} must be at least 1")
    if settings.resample_rounds < 0:
        raise UsageError("resample_rounds must be 0 or more")
    if settings.gguf_dtype not in ("f16", "f32"):
        raise UsageError(f"gguf_dtype {settings.gguf_dtype!r}: use f16 or f32")
    return settings


# -- rollouts --------------------------------------------------------------------------------


@dataclass
class Call:
    """One model call of a rollout: the prompt it was given and the answer it sampled."""

    messages: list[dict[str, Any]]
    text: str
    seconds: float = 0.0


@dataclass
class Episode:
    """One rollout: its task, its reward (None: dropped) and its model calls."""

    task: str
    run: int
    verdict: str
    reward: float | None
    calls: list[Call] = field(default_factory=list)
    crashed: bool = False
    unfinished: bool = False  #: ran out of turns or time (scored 0.0)
    duration_s: float = 0.0
    setup_s: float = 0.0  #: provisioning

    @property
    def model_s(self) -> float:
        return sum(call.seconds for call in self.calls)


class Environment(Protocol):
    """Where the trainer's rollouts run."""

    def sync(self, model: Any, step: int, llm: Any = None) -> None:
        """The rollouts from now on use ``model``'s current weights (``llm``: TRL's
        colocated vLLM engine, its weights already updated in place)."""
        ...

    def rollouts(self, groups: Mapping[str, int], step: int, resample: int = 0) -> list[Episode]:
        """Each task of ``groups`` rolled out that many times; one Episode per rollout
        (``resample``: the step's extra round, replacing flat groups; 0 for its first)."""
        ...

    def evaluate(self, step: int) -> dict[str, Any] | None:
        """The eval split through the benchmark runner, with the current weights (None: not configured)."""
        ...


def reward_of_attempt(attempt: Mapping[str, Any], checked: bool = True) -> float | None:
    """A benchmark attempt's reward, as the benchmark scores it: 1.0 for a reached goal;
    0.0 for the rest, a rollout that ran out of turns or time unfinished (``checked``
    False: the checker never ran) included, so looping never pays better than failing,
    and one whose verdict is INCONCLUSIVE only for the doc's sake (the checker said the
    goal was not reached, after a step not followable as written or a done before the
    doc's last step); None where nothing was decided: the environment's error, or a
    checker that could not tell (judges that disagreed)."""
    if attempt.get("env_error"):
        return None
    if attempt.get("success"):
        return 1.0
    if checked and attempt.get("verdict") == "INCONCLUSIVE" and attempt.get("goal_reached") is None:
        return None
    return 0.0


@dataclass
class StepStats:
    """What one step's rollouts did, for the log and ``training.json``."""

    rollouts: int = 0
    rewarded: int = 0
    dropped: int = 0  #: INCONCLUSIVE, ENV_ERROR
    crashed: int = 0
    unfinished: int = 0  #: out of turns or time: scored 0.0
    flat_groups: int = 0  #: every round's
    resample_rounds: int = 0  #: extra rounds rolled out to replace flat groups
    resampled_groups: int = 0  #: groups those rounds rolled out
    samples: int = 0
    seconds: dict[str, float] = field(default_factory=Counter)  #: rollout, model, provisioning, sync, learn

    def to_dict(self) -> dict[str, Any]:
        return {"rollouts": self.rollouts, "rewarded": self.rewarded, "dropped": self.dropped,
                "crashed": self.crashed, "unfinished": self.unfinished, "flat_groups": self.flat_groups,
                "resample_rounds": self.resample_rounds, "resampled_groups": self.resampled_groups,
                "samples": self.samples,
                "seconds": {key: round(value, 2) for key, value in self.seconds.items()}}


# -- samples ---------------------------------------------------------------------------------


@dataclass
class Sample:
    prompt_ids: list[int]
    completion_ids: list[int]
    advantage: float


def tokenize_call(tokenizer: Any, call: Call) -> tuple[list[int], list[int]]:
    """The prompt as the chat template renders it for generation, and the answer's
    tokens with the end-of-turn token the model sampled to stop."""
    prompt = tokenizer.apply_chat_template(call.messages, add_generation_prompt=True, tokenize=False)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    completion_ids = tokenizer(call.text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return prompt_ids, completion_ids


def scored_rollouts(episodes: Sequence[Episode]) -> list[Rollout]:
    """The episodes as the advantages see them: a crashed one carries no reward."""
    return [Rollout(e.task, None if e.crashed else e.reward, e.verdict) for e in episodes]


def episode_samples(episodes: Sequence[Episode], tokenizer: Any, *, keep_flat: bool, per_rollout: int,
                    rng: random.Random) -> tuple[list[Sample], StepStats]:
    """The training samples of a step's rollouts: each model call with its rollout's
    two-layer advantage. A dropped or crashed rollout gives none; a rollout whose
    advantage is 0 (its group's rewards were all equal) gives none unless ``keep_flat``
    (its samples then only carry the KL term)."""
    stats = StepStats(rollouts=len(episodes))
    scored = advantages(scored_rollouts(episodes))
    stats.dropped = sum(e.reward is None and not e.crashed for e in episodes)
    stats.crashed = sum(e.crashed for e in episodes)
    stats.unfinished = sum(e.unfinished for e in episodes)
    stats.rewarded = sum(e.reward == 1.0 and not e.crashed for e in episodes)
    stats.flat_groups = len(scored.flat_groups)
    samples: list[Sample] = []
    for episode, advantage in zip(episodes, scored.values, strict=True):
        if advantage is None or (advantage == 0.0 and not keep_flat):
            continue
        calls = episode.calls
        if per_rollout and len(calls) > per_rollout:
            calls = rng.sample(calls, per_rollout)
        for call in calls:
            prompt_ids, completion_ids = tokenize_call(tokenizer, call)
            samples.append(Sample(prompt_ids, completion_ids, advantage))
    stats.samples = len(samples)
    return samples, stats


def padded(samples: Sequence[Sample], pad_id: int, device: Any) -> dict[str, torch.Tensor]:
    """TRL's batch layout: prompts padded on the left, answers on the right, masks."""
    from trl.trainer.utils import pad

    def stack(rows: list[list[int]], value: int, side: str) -> torch.Tensor:
        if not rows:
            return torch.zeros((0, 0), dtype=torch.long, device=device)
        return pad([torch.tensor(row, dtype=torch.long) for row in rows], padding_value=value,
                   padding_side=side).to(device)

    prompts = [s.prompt_ids for s in samples]
    completions = [s.completion_ids for s in samples]
    completion_mask = stack([[1] * len(c) for c in completions], 0, "right")
    return {"prompt_ids": stack(prompts, pad_id, "left"),
            "prompt_mask": stack([[1] * len(p) for p in prompts], 0, "left"),
            "completion_ids": stack(completions, pad_id, "right"), "completion_mask": completion_mask,
            "advantages": torch.tensor([s.advantage for s in samples], dtype=torch.float32, device=device),
            "num_items_in_batch": completion_mask.sum()}


def micro_batches(batch: Mapping[str, torch.Tensor], size: int, loss_type: str) -> Iterator[tuple[dict, float]]:
    """``batch`` in slices of ``size`` samples, each trimmed of the columns that are all
    padding, with the weight that makes the slices' losses add up to the batch's."""
    count = len(batch["advantages"])
    tokens = float(batch["completion_mask"].sum().clamp(min=1))
    for start in range(0, count, size):
        part = {key: (value[start:start + size] if value.dim() else value) for key, value in batch.items()}
        prompt_used = part["prompt_mask"].any(dim=0)
        completion_used = part["completion_mask"].any(dim=0)
        part["prompt_ids"] = part["prompt_ids"][:, prompt_used]
        part["prompt_mask"] = part["prompt_mask"][:, prompt_used]
        part["completion_ids"] = part["completion_ids"][:, completion_used]
        part["completion_mask"] = part["completion_mask"][:, completion_used]
        for key in ("ref_per_token_logps", "old_per_token_logps"):
            if key in part:
                part[key] = part[key][:, completion_used]
        if loss_type in PER_SEQUENCE_LOSSES:
            weight = len(part["advantages"]) / count
        elif loss_type in PER_TOKEN_LOSSES:
            weight = float(part["completion_mask"].sum()) / tokens
        else:  # normalised by the whole batch's tokens (num_items_in_batch) already
            weight = 1.0
        yield part, weight


# -- the trainer -----------------------------------------------------------------------------


class DocverifyGRPOTrainer(GRPOTrainer):
    """TRL's GRPOTrainer whose completions come from whole rollouts in ``environment``."""

    def __init__(self, *args: Any, environment: Environment, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.environment = environment
        self.synced_step: int | None = None
        self.step_stats: list[dict[str, Any]] = []
        self.rng = random.Random(self.args.seed)
        self.flat_at: dict[str, int] = {}  #: task -> the last step its group was flat

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        step = self.state.global_step
        stats_seconds: Counter = Counter()
        if self.synced_step != step:
            started = time.perf_counter()
            self.sync_rollouts(step)
            stats_seconds["sync"] += time.perf_counter() - started
        groups = Counter(row["task"] for row in inputs)
        started = time.perf_counter()
        episodes, resampled = self.rollouts_with_gradient(groups, step)
        stats_seconds["rollout"] += time.perf_counter() - started
        samples, stats = episode_samples(episodes, self.processing_class, keep_flat=self.beta != 0.0,
                                         per_rollout=self.args.samples_per_rollout, rng=self.rng)
        stats.resample_rounds, stats.resampled_groups = len(resampled), sum(map(len, resampled))
        stats.seconds.update(stats_seconds)
        stats.seconds["model"] = sum(e.model_s for e in episodes)
        stats.seconds["provisioning"] = sum(e.setup_s for e in episodes)
        batch = padded(samples, self.processing_class.pad_token_id, self.accelerator.device)
        if self.beta != 0.0 and samples:
            batch["ref_per_token_logps"] = self.reference_logps(batch)
        self.record(step, stats, episodes)
        return batch

    def rollouts_with_gradient(self, groups: Mapping[str, int], step: int) -> tuple[list[Episode], list[list[str]]]:
        """The step's rollouts; then, for up to ``resample_rounds`` more rounds, groups of
        other train tasks in place of the flat ones, until as many groups as the step asked
        for give a gradient. Returns the episodes and each extra round's tasks."""
        episodes = self.environment.rollouts(groups, step)
        tried = set(groups)
        resampled: list[list[str]] = []
        while True:
            informative = informative_tasks(scored_rollouts(episodes))
            for task in {e.task for e in episodes}:
                if task in informative:
                    self.flat_at.pop(task, None)
                else:
                    self.flat_at[task] = step
            missing = len(groups) - len(informative)
            if missing <= 0 or len(resampled) >= self.args.resample_rounds:
                return episodes, resampled
            chosen = self.replacements(missing, tried)
            if not chosen:
                return episodes, resampled
            tried.update(chosen)
            resampled.append(chosen)
            episodes += self.environment.rollouts({task: self.num_generations for task in chosen}, step,
                                                  resample=len(resampled))

    def replacements(self, count: int, tried: set[str]) -> list[str]:
        """``count`` train tasks not rolled out yet this step: first those not seen flat
        (in a random order), then those seen flat longest ago."""
        pool = sorted(set(self.train_dataset["task"]) - tried)
        self.rng.shuffle(pool)
        pool.sort(key=lambda task: self.flat_at.get(task, -1))
        return pool[:count]

    def sync_rollouts(self, step: int) -> None:
        """The environment's rollouts take the weights as they are now: TRL's vLLM engine
        updated in place where there is one (``use_vllm``), else exported by the environment."""
        llm = None
        if self.use_vllm:
            self.vllm_generation.sync_weights()
            llm = getattr(self.vllm_generation, "llm", None)  # colocate mode; server mode has none here
        self.environment.sync(self.accelerator.unwrap_model(self.model), step, llm)
        self.synced_step = step

    def reference_logps(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The reference model's log-probabilities of every answer token (the KL term's):
        the adapters switched off, or the reference copy for full fine-tuning."""
        from trl.models.utils import disable_gradient_checkpointing

        out = torch.zeros(batch["completion_ids"].shape, dtype=torch.float32, device=self.accelerator.device)
        with torch.no_grad(), disable_gradient_checkpointing(self.model, self.args.gradient_checkpointing_kwargs):
            for start in range(0, len(batch["advantages"]), self.args.micro_batch_size):
                rows = slice(start, start + self.args.micro_batch_size)
                ids = torch.cat([batch["prompt_ids"][rows], batch["completion_ids"][rows]], dim=1)
                mask = torch.cat([batch["prompt_mask"][rows], batch["completion_mask"][rows]], dim=1)
                keep = batch["completion_ids"].size(1)
                if self.ref_model is not None:
                    logps, _, _ = self._get_per_token_logps_and_entropies(self.ref_model, ids, mask, keep)
                else:
                    model = self.accelerator.unwrap_model(self.model)
                    with model.disable_adapter():
                        logps, _, _ = self._get_per_token_logps_and_entropies(self.model, ids, mask, keep)
                out[rows] = logps
        return out

    def record(self, step: int, stats: StepStats, episodes: Sequence[Episode]) -> None:
        scored = [e for e in episodes if e.reward is not None and not e.crashed]
        metrics = self._metrics["train"]
        metrics["reward"].append(sum(e.reward for e in scored) / len(scored) if scored else float("nan"))
        for name in ("rollouts", "rewarded", "unfinished", "dropped", "crashed", "flat_groups", "resampled_groups",
                     "samples"):
            metrics[f"env/{name}"].append(float(getattr(stats, name)))
        for name, seconds in stats.seconds.items():
            metrics[f"time/{name}_s"].append(seconds)
        self.step_stats.append({"step": step + 1, **stats.to_dict()})

    def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> torch.Tensor:
        """One optimisation step's forward and backward passes, micro-batch by micro-batch."""
        model.train()
        batch = self._prepare_inputs(inputs)  # the rollouts, when this step has not had them yet
        started = time.perf_counter()
        total = torch.zeros((), device=self.accelerator.device)
        for part, weight in micro_batches(batch, self.args.micro_batch_size, self.loss_type):
            with self.compute_loss_context_manager():
                loss = self._compute_loss(model, part) * weight
            self.accelerator.backward(loss)
            total += loss.detach()
        self._step += 1
        learn = time.perf_counter() - started
        self._metrics["train"]["time/learn_s"].append(learn)
        if self.step_stats:
            self.step_stats[-1]["seconds"]["learn"] = round(learn, 2)
        return total


class BenchEvaluation(TrainerCallback):
    """Every ``bench_eval_steps`` steps, the eval split through the benchmark runner."""

    def __init__(self, environment: Environment, every: int) -> None:
        self.environment = environment
        self.every = every
        self.results: list[dict[str, Any]] = []
        self.trainer: DocverifyGRPOTrainer | None = None

    def on_step_end(self, args, state, control, **kwargs):  # noqa: ARG002 - TrainerCallback's signature
        if self.every and state.global_step % self.every == 0 and self.trainer is not None:
            self.trainer.sync_rollouts(state.global_step)
            result = self.environment.evaluate(state.global_step)
            if result is not None:
                self.results.append(result)
        return control


# -- the real environment --------------------------------------------------------------------


class SandboxEnvironment:
    """Rollouts as ``docverify bench run`` makes them: the tasks' own releases of the
    sandbox console, provisioning, the audit log deciding; the rollout policy pointed at
    the exported weights, its sampling seed new for every run so a group's rollouts differ.
    Every step's attempts are kept as a benchmark results file (``rollouts/step-N.json``)."""

    def __init__(self, app: Any, task_set: Any, tasks: Sequence[Any], eval_tasks: Sequence[Any],
                 settings: GRPOSettings, overrides: Mapping[str, Any], output: Path, *, template: Path | None,
                 progress: Any = None) -> None:
        if settings.rollout_policy in GGUF_POLICIES and template is None:
            raise UsageError(f"the {settings.rollout_policy} rollout policy needs the base model's GGUF (its tokenizer) "
                             "to export to",
                             hint="train from a .gguf file or 'smollm2', or a folder `docverify train sft` wrote")
        self.app = app
        self.task_set = task_set
        self.tasks = {task.id: task for task in tasks}
        self.eval_tasks = list(eval_tasks)
        self.settings = settings
        self.overrides = dict(overrides)
        self.output = output
        self.template = template
        self.progress = progress or (lambda line: None)
        self.weights: Path | None = None
        self.seed = settings.seed
        self.tokenizer: Any = None  #: saved beside a merged folder (the vllm rollout policy's); set by train_grpo
        self.shared_llm: Any = None  #: TRL's colocated vLLM engine, when the trainer has one

    def sync(self, model: Any, step: int, llm: Any = None) -> None:
        from docverify_training.export import model_tensors, save_merged, write_gguf

        if llm is not None and self.settings.rollout_policy == "vllm":
            self.shared_llm = llm  # TRL's colocated engine: its weights are the model's already
            return
        weights = self.output / "rollout-weights"
        weights.mkdir(parents=True, exist_ok=True)
        if self.settings.rollout_policy in GGUF_POLICIES:
            config, tensors = model_tensors(model)
            self.weights = write_gguf(config, tensors, weights / "model.gguf", template=self.template,
                                      dtype=self.settings.gguf_dtype, source=f"the model at step {step}")
        else:
            self.weights = save_merged(model, self.tokenizer, weights / "model")

    def options(self, split: str, label: str, temperature: float) -> Any:
        from docverify_bench.run import BenchOptions

        policy = self.settings.rollout_policy
        assert self.weights is not None or self.shared_llm is not None, "sync() before rollouts"
        settings = {**self.overrides, f"policy.{policy}.temperature": temperature}
        if policy == "hybrid":
            settings["policy.hybrid.engine"] = "llamacpp"
        if self.shared_llm is None:
            settings[f"policy.{policy}.{ROLLOUT_POLICIES[policy]}"] = str(self.weights)
        return BenchOptions(policy=policy, runs=1, jobs=self.settings.rollout_jobs, split=split, settings=settings,
                            max_steps=self.settings.max_turns, timeout_s=self.settings.rollout_timeout, label=label)

    def rollouts(self, groups: Mapping[str, int], step: int, resample: int = 0) -> list[Episode]:
        from docverify_bench.run import ResultsFile, run_benchmark

        chosen = [self.tasks[task] for task in groups]
        name = f"step-{step + 1}" + (f"-resample-{resample}" if resample else "")
        label = f"grpo step {step + 1}" + (f", resample {resample}" if resample else "")
        options = self.options("train", label, self.settings.temperature)
        options.runs = max(groups.values())
        folder = self.output / "rollouts"
        folder.mkdir(parents=True, exist_ok=True)
        results = ResultsFile.start(folder / f"{name}.json", self.task_set, chosen, options, {})
        recorder = CallRecorder(self.next_seed, self.shared_llm)
        try:
            run_benchmark(self.app, self.task_set, chosen, options, results, self.progress,
                          wrap_policy=recorder.wrap, on_attempt=recorder.attempt)
        except Exception as error:  # noqa: BLE001 - a crashed step loses its rollouts, not the training
            self.progress(f"step {step + 1}: the rollouts crashed ({type(error).__name__}: {error}); "
                          "their samples are dropped")
        return recorder.episodes(groups)

    def next_seed(self) -> int:
        self.seed += 1
        return self.seed

    def evaluate(self, step: int) -> dict[str, Any] | None:
        from docverify_bench.run import ResultsFile, run_benchmark
        from docverify_bench.tasks import sample

        tasks = self.eval_tasks
        if self.settings.bench_eval_sample:
            tasks = sample(tasks, self.settings.bench_eval_sample, self.settings.seed)
        if not tasks:
            return None
        options = self.options("eval", f"grpo step {step}", 0.0)
        folder = self.output / "eval"
        folder.mkdir(parents=True, exist_ok=True)
        results = ResultsFile.start(folder / f"step-{step}.json", self.task_set, tasks, options, {})
        recorder = CallRecorder(self.next_seed, self.shared_llm)  # on TRL's vLLM engine too, where there is one
        scores = run_benchmark(self.app, self.task_set, tasks, options, results, self.progress,
                               wrap_policy=recorder.wrap)
        overall = scores.get("all", {}).get("pass@1") or {}
        if overall:
            self.progress(f"eval at step {step}: pass@1 {overall['value']:.1%} [{overall['low']:.1%}, "
                          f"{overall['high']:.1%}] on {overall['tasks']} tasks ({results.path})")
        return {"step": step, "results": str(results.path), "scores": scores}


class CallRecorder:
    """Wraps the rollout policy so every episode's model calls are kept, by task; the
    benchmark's attempts become :class:`Episode` objects."""

    def __init__(self, next_seed: Any, shared_llm: Any = None) -> None:
        import threading

        self.next_seed = next_seed
        self.shared_llm = shared_llm
        self.calls: dict[str, list[Call]] = {}
        self.attempts: list[tuple[dict[str, Any], bool, list[Call]]] = []  #: attempt, checked, calls
        self.lock = threading.Lock()

    def wrap(self, policy: Any) -> Any:
        from docverify_training.record import PolicyWrapper

        if "seed" in type(policy.options).model_fields:  # a fresh sampling stream for every run of the group
            policy.options = policy.options.model_copy(update={"seed": self.next_seed()})
        if self.shared_llm is not None:  # the vllm policy on TRL's colocated engine, not a second copy
            from docverify_models.backends import VLLMBackend

            policy.backend = VLLMBackend.around(self.shared_llm)
        recorder = self

        class Recorded(PolicyWrapper):
            def start(self, task: Any) -> Any:
                episode = self.inner.start(task)
                agent = getattr(episode, "agent", None) or getattr(getattr(episode, "delegate", None), "agent", None)
                if agent is None:
                    raise UsageError(f"policy {self.inner.name} has no agent loop to learn from")
                calls: list[Call] = []
                with recorder.lock:
                    recorder.calls[task.id] = calls
                agent.backend = RecordingEngine(agent.backend, calls)
                return episode

        return Recorded(policy)

    def attempt(self, attempt: dict[str, Any], result: Any) -> None:
        with self.lock:
            calls = self.calls.pop(attempt["task"], [])
            self.attempts.append((attempt, result.check is not None, calls))

    def episodes(self, groups: Mapping[str, int]) -> list[Episode]:
        """One Episode per rollout asked for: those the benchmark did not finish count as crashed."""
        out: list[Episode] = []
        done: Counter = Counter()
        for attempt, checked, calls in self.attempts:
            done[attempt["task"]] += 1
            out.append(Episode(attempt["task"], attempt["run"], attempt["verdict"], reward_of_attempt(attempt, checked),
                               calls, duration_s=attempt["duration_s"], setup_s=attempt["setup_s"],
                               unfinished=not checked and attempt["verdict"] == "INCONCLUSIVE"))
        for task, wanted in groups.items():
            out.extend(Episode(task, 0, "CRASHED", None, crashed=True) for _ in range(wanted - done[task]))
        return out


class RecordingEngine:
    """An engine that keeps every call it answers (prompt, sampled answer, seconds)."""

    def __init__(self, inner: Any, calls: list[Call]) -> None:
        self.inner = inner
        self.calls = calls

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(self, messages: list[dict[str, Any]], schema: dict[str, Any], **kwargs: Any) -> Any:
        started = time.perf_counter()
        completion = await self.inner.complete(messages, schema, **kwargs)
        self.calls.append(Call([dict(m) for m in messages], completion.text, time.perf_counter() - started))
        return completion


# -- the run ---------------------------------------------------------------------------------


def environment_reward(completions: Sequence[Any], reward: Sequence[float | None], **kwargs: Any) -> list[float | None]:
    """The reward function TRL logs: each rollout's reward as the environment gave it
    (the audit log's verdict; None where it decided nothing)."""
    del completions, kwargs
    return list(reward)


def task_rows(tasks: Sequence[Any]) -> list[dict[str, Any]]:
    """The trainer's dataset: one row per task (TRL repeats each ``num_generations`` times)."""
    return [{"prompt": [{"role": "user", "content": f"docverify task {task.id}"}], "task": task.id} for task in tasks]


def train_grpo(model_folder: Path | str, rows: list[dict[str, Any]], settings: GRPOSettings,
               environment: Environment, *,
               resume: bool = False, model: Any = None, tokenizer: Any = None) -> tuple[dict[str, Any], Any]:
    """GRPO over ``rows`` (:func:`task_rows`) with rollouts in ``environment``; what was
    measured, and the trainer. ``model``/``tokenizer``: already loaded (tests)."""
    from datasets import Dataset

    from docverify_training.models import load_model

    if not rows:
        raise UsageError("no task to train on", hint="see `docverify bench tasks` (train grpo uses the train split)")
    output = Path(settings.output_dir)
    check_resume(output, resume)
    if model is None or tokenizer is None:
        model, tokenizer = load_model(model_folder)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    stop = StopOnSignal()
    evaluation = BenchEvaluation(environment, settings.bench_eval_steps)
    score_labelled_positions_only()
    trainer = DocverifyGRPOTrainer(model=model, reward_funcs=[environment_reward], args=settings,
                                   train_dataset=Dataset.from_list(rows),
                                   processing_class=tokenizer, peft_config=peft_config(settings),
                                   callbacks=[stop, evaluation], environment=environment)
    evaluation.trainer = trainer
    if isinstance(environment, SandboxEnvironment):
        environment.tokenizer = tokenizer

    def fields(seconds: float) -> dict[str, Any]:
        steps = trainer.step_stats
        rollouts = sum(s["rollouts"] for s in steps)
        totals: Counter = Counter()
        for s in steps:
            totals.update(s["seconds"])
        return {"tasks": len(rows), "rollouts": rollouts,
                "rollouts_per_s": round(rollouts / seconds, 4) if seconds else None,
                "success_rate": [round(s["rewarded"] / max(1, s["rollouts"] - s["dropped"] - s["crashed"]), 3)
                                 for s in steps],
                "dropped": sum(s["dropped"] for s in steps), "crashed": sum(s["crashed"] for s in steps),
                "samples": sum(s["samples"] for s in steps), "time_s": {k: round(v, 1) for k, v in totals.items()},
                "per_step": steps, "evaluations": evaluation.results}

    report = train_and_report(trainer, settings, tokenizer, stop, resume=resume, fields=fields)
    return report, trainer
