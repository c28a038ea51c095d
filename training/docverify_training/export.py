"""A trained model as GGUF, so the ``llamacpp`` policy loads it with one setting.

llama.cpp reads GGUF; training writes Hugging Face folders. :func:`export_gguf`
writes a Llama-family folder (SmolLM2, Llama, Qwen2-style llama layouts without
biases) as GGUF: the architecture's numbers from the folder's ``config.json``, the
tokenizer (vocabulary, merges, special tokens, pre-tokenizer, chat template) copied
from the base model's GGUF — the one the model was trained from — and every weight
renamed to llama.cpp's names, the query and key projections permuted to its rotary
layout (the inverse of what reading a GGUF into transformers undoes).

    docverify train sft ... --output runs/sft     # runs/sft/model.gguf when the base was a GGUF
    docverify check docs/ --policy llamacpp -O policy.llamacpp.model_path=runs/sft/model.gguf
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docverify.errors import UsageError

#: Keys of the base GGUF that describe the weights it held, not the model: never copied.
NOT_COPIED = ("GGUF.", "general.file_type", "general.quantization_version")
#: Tensor element types a model can be written in.
DTYPES = ("f32", "f16")


def _permute(weights: Any, heads: int) -> Any:
    """Hugging Face's rotary layout (halves) to llama.cpp's (interleaved pairs), per head."""
    return (weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def export_gguf(model_folder: Path, out: Path, *, template: Path, dtype: str = "f16") -> Path:
    """Write the model at ``model_folder`` to ``out`` (GGUF), its tokenizer from
    ``template`` (the base model's GGUF). ``dtype``: the matrices' type (norms stay f32)."""
    from safetensors.numpy import load_file

    config = json.loads((model_folder / "config.json").read_text(encoding="utf-8"))
    tensors: dict[str, Any] = {}
    for shard in sorted(model_folder.glob("*.safetensors")):
        tensors.update(load_file(str(shard)))
    if not tensors:
        raise UsageError(f"{model_folder}: no *.safetensors weights")
    return write_gguf(config, tensors, out, template=template, dtype=dtype, source=str(model_folder))


def write_gguf(config: dict[str, Any], tensors: dict[str, Any], out: Path, *, template: Path, dtype: str = "f16",
               source: str = "the model") -> Path:
    """Write the weights ``tensors`` (Hugging Face names, numpy arrays) of a model with
    ``config`` (its ``config.json``) to ``out`` (GGUF), the tokenizer from ``template``.
    ``out`` appears whole or not at all (written beside it, then renamed)."""
    import gguf
    import numpy as np

    if dtype not in DTYPES:
        raise UsageError(f"export dtype '{dtype}': use one of {', '.join(DTYPES)}")
    if config.get("model_type") != "llama":
        raise UsageError(f"{source}: a {config.get('model_type')!r} model; GGUF export handles llama-family "
                         "models (SmolLM2, Llama)", hint="convert it with llama.cpp's convert_hf_to_gguf.py")
    reader = gguf.GGUFReader(str(template))
    vocab = int(config["vocab_size"])
    base_vocab = len(reader.fields["tokenizer.ggml.tokens"].data)
    if base_vocab != vocab:
        raise UsageError(f"{source} has a vocabulary of {vocab} tokens, its base {template} of {base_vocab}",
                         hint="export against the GGUF the model was trained from")
    layers = int(config["num_hidden_layers"])
    heads, kv_heads = int(config["num_attention_heads"]), int(config.get("num_key_value_heads") or
                                                             config["num_attention_heads"])
    hidden = int(config["hidden_size"])
    head_dim = int(config.get("head_dim") or hidden // heads)
    names = gguf.TensorNameMap(gguf.MODEL_ARCH.LLAMA, layers)

    partial = out.with_name(out.name + ".partial")
    writer = gguf.GGUFWriter(str(partial), "llama")
    for key, field in reader.fields.items():
        if key.startswith(NOT_COPIED) or key == "general.architecture" or key.startswith("llama."):
            continue
        value = field.contents()
        sub_type = field.types[1] if len(field.types) > 1 else None
        writer.add_key_value(key, value, field.types[0], sub_type)
    writer.add_block_count(layers)
    writer.add_context_length(int(config.get("max_position_embeddings") or 2048))
    writer.add_embedding_length(hidden)
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    rope = config.get("rope_parameters") or {}  # transformers 5 keeps rope_theta there
    if rope.get("rope_type", "default") != "default":
        raise UsageError(f"{source}: rope_type {rope['rope_type']!r} is not exported (only the default rope)")
    writer.add_rope_freq_base(float(rope.get("rope_theta") or config.get("rope_theta") or 10000.0))
    writer.add_layer_norm_rms_eps(float(config.get("rms_norm_eps") or 1e-5))
    writer.add_vocab_size(vocab)
    writer.add_rope_dimension_count(head_dim)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if dtype == "f16" else gguf.LlamaFileType.ALL_F32)

    tied = bool(config.get("tie_word_embeddings"))
    for name, weights in sorted(tensors.items()):
        if name == "lm_head.weight" and tied:
            continue
        base = name.removesuffix(".weight")
        target = names.get_name(base)
        if target is None or not name.endswith(".weight"):
            raise UsageError(f"{source}: tensor {name} has no llama.cpp name (biases and other extras are "
                             "not supported)")
        data = np.asarray(weights, dtype=np.float32)
        if base.endswith("self_attn.q_proj"):
            data = _permute(data, heads)
        elif base.endswith("self_attn.k_proj"):
            data = _permute(data, kv_heads)
        if data.ndim > 1 and dtype == "f16":
            data = data.astype(np.float16)
        writer.add_tensor(f"{target}.weight", data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.rename(out)
    return out


def model_tensors(model: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A live model's config and weights (numpy, Hugging Face names), LoRA adapters
    merged into the copy (each layer's weight plus its adapters' delta), the model
    itself untouched: no merge and unmerge, whose rounding would creep into the base
    weights at every step."""
    import torch

    lora = hasattr(model, "peft_config") and hasattr(model, "get_base_model")
    base = model.get_base_model() if lora else model
    tensors: dict[str, Any] = {}
    with torch.no_grad():
        for name, value in base.state_dict().items():
            if "lora_" in name:
                continue
            if name.endswith(".base_layer.weight"):
                layer = base.get_submodule(name.removesuffix(".base_layer.weight"))
                for adapter in getattr(layer, "active_adapters", ()):
                    if adapter in getattr(layer, "lora_A", {}):
                        value = value + layer.get_delta_weight(adapter)
            tensors[name.replace(".base_layer", "")] = value.detach().to(torch.float32).cpu().numpy().copy()
    return base.config.to_dict(), tensors


def save_merged(model: Any, tokenizer: Any, folder: Path) -> Path:
    """A live model as a Hugging Face folder (adapters merged into the copy), written
    beside ``folder`` and renamed into place."""
    import shutil

    from safetensors.numpy import save_file

    config, tensors = model_tensors(model)
    if config.get("tie_word_embeddings"):
        tensors.pop("lm_head.weight", None)
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    save_file(tensors, str(partial / "model.safetensors"), metadata={"format": "pt"})
    (partial / "config.json").write_text(json.dumps(config, indent=2, default=str) + "\n", encoding="utf-8")
    if tokenizer is not None:
        tokenizer.save_pretrained(partial)
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


def merge_adapter(adapter: Path, base: Path | str, folder: Path) -> Path:
    """The ``base`` model (a folder or a Hub id) with the PEFT adapters in ``adapter``
    merged, saved as a Hugging Face folder at ``folder``; a UsageError naming the
    adapter when it does not fit the base."""
    from peft import PeftModel

    from docverify_training.models import load_model

    model, tokenizer = load_model(base)
    try:
        live = PeftModel.from_pretrained(model, str(adapter))
    except (RuntimeError, ValueError, KeyError) as error:
        reason = str(error).strip().splitlines()
        raise UsageError(f"{adapter}: the adapters do not fit the base model {base} "
                         f"({(reason[-1] if reason else type(error).__name__)[:200]})",
                         hint="give --base the model they were trained on (`train sft --model`)") from None
    return save_merged(live, tokenizer, folder)
