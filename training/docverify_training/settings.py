"""What `docverify train sft` and `train grpo` share: LoRA's settings, reading a
configuration (defaults, a YAML file, ``-S key=value``) into a TRL config dataclass,
stopping cleanly on Ctrl-C, and peak memory.

Each command's settings are a dataclass that subclasses TRL's own config (``SFTConfig``,
``GRPOConfig``) and :class:`LoraSettings`, so every TRL field is a setting and an unknown
key is named with the nearest valid ones.
"""

from __future__ import annotations

import difflib
import re
import resource
import signal
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml
from transformers import TrainerCallback

from docverify.errors import UsageError, yaml_error_at


class SettingsLoader(yaml.SafeLoader):
    """YAML as the settings read it, closer to YAML 1.2: only ``true``/``false`` are
    booleans, so ``save_strategy: no`` stays the string TRL wants (not YAML 1.1's
    ``False``), and ``1e-5`` is a number (not a string)."""


SettingsLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
SettingsLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                     list("tTfF"))
SettingsLoader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$"),
                                     list("-+0123456789."))


def read_yaml(text: str) -> Any:
    return yaml.load(text, Loader=SettingsLoader)  # noqa: S506 - a SafeLoader subclass


def parse_overrides(values: tuple[str, ...]) -> dict[str, Any]:
    """``-S key=value`` settings, each value read as YAML (numbers, booleans, lists)."""
    out = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"-S {item}: expected KEY=VALUE", hint="e.g. -S learning_rate=1e-4")
        try:
            out[key.strip()] = read_yaml(value) if value else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


def native_bf16_cpu() -> bool:
    """Whether this machine trains on its CPU and the CPU multiplies bf16 natively
    (AVX512-BF16 or AMX): there bf16 autocast nearly halves the model's forward and
    backward passes (a turn of 1,800 tokens on SmolLM2-135M with LoRA: 20 s in fp32, 11 s
    in bf16 on 2 cores; benchmark/results/sft-step.md); elsewhere bf16 is emulated and
    slower than fp32."""
    import torch

    if torch.cuda.is_available():
        return False
    return any(getattr(torch.cpu, probe, lambda: False)() for probe in ("_is_avx512_bf16_supported",
                                                                          "_is_amx_tile_supported"))


#: Defaults both commands take on a CPU (TRL's own target GPUs): bf16 autocast where the
#: CPU has it natively (:func:`native_bf16_cpu`; the weights stay fp32), else fp32.
CPU_COMMON: dict[str, Any] = {
    "per_device_train_batch_size": 1, "logging_steps": 1, "save_total_limit": 2, "report_to": "none",
    "dataloader_pin_memory": False, **dict.fromkeys(("bf16", "use_cpu"), native_bf16_cpu()),
}


@dataclass
class LoraSettings:
    """LoRA's settings (PEFT), added to the TRL config of each training command."""

    lora: bool = field(default=True, metadata={"help": "train LoRA adapters (PEFT); false: full fine-tuning"})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank"})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling (alpha / r multiplies the update)"})
    lora_dropout: float = field(default=0.05, metadata={"help": "dropout on the LoRA path"})
    lora_target_modules: str = field(default="all-linear", metadata={
        "help": "the modules that get adapters: 'all-linear', or names separated by commas (q_proj,v_proj)"})


def peft_config(settings: LoraSettings) -> Any:
    """The PEFT LoRA configuration ``settings`` ask for; None for full fine-tuning."""
    if not settings.lora:
        return None
    from peft import LoraConfig

    targets = settings.lora_target_modules
    return LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha, lora_dropout=settings.lora_dropout,
                      target_modules=targets if targets == "all-linear" else
                      [name.strip() for name in targets.split(",") if name.strip()],
                      task_type="CAUSAL_LM")


def settings_fields(cls: type) -> dict[str, Any]:
    """The settings ``cls`` takes, by name."""
    return {f.name: f for f in fields(cls) if f.init}


def load_settings(cls: type, defaults: dict[str, Any], config_file: Path | None, overrides: dict[str, Any],
                  output: Path, command: str) -> Any:
    """``cls``'s settings: ``defaults``, then the YAML file, then ``overrides``. An
    unknown key is named with the nearest valid ones; a bad value with the key."""
    from transformers import HfArgumentParser

    values: dict[str, Any] = dict(defaults)
    where = {key: "default" for key in values}
    if config_file is not None:
        try:
            data = read_yaml(config_file.read_text(encoding="utf-8")) or {}
        except OSError as error:
            raise UsageError(f"--config {config_file}: {error.strerror or error}") from None
        except yaml.YAMLError as error:
            at, problem = yaml_error_at(error)
            line = f":{at + 1}" if at is not None else ""
            raise UsageError(f"{config_file}{line}: not YAML ({problem})") from None
        if not isinstance(data, dict):
            raise UsageError(f"{config_file}: must be a mapping of settings (key: value)")
        values.update(data)
        where.update({key: str(config_file) for key in data})
    values.update(overrides)
    where.update({key: "-S" for key in overrides})
    known = settings_fields(cls)
    base = cls.__mro__[1].__name__
    for key in values:
        if key not in known:
            near = difflib.get_close_matches(key, list(known), n=3, cutoff=0.6)
            raise UsageError(f"{where[key]}: unknown setting '{key}'"
                             + (f" (did you mean {', '.join(near)}?)" if near else ""),
                             hint=f"the settings are TRL's {base} fields, lora, lora_r, lora_alpha, lora_dropout, "
                                  f"lora_target_modules and the command's own: `docverify {command} --list-settings`")
    if "output_dir" in values and where.get("output_dir") != "default":
        raise UsageError(f"{where['output_dir']}: output_dir is set by --output")
    values["output_dir"] = str(output)
    try:
        (settings,) = HfArgumentParser(cls).parse_dict(values, allow_extra_keys=False)
    except (ValueError, TypeError) as error:
        raise UsageError(f"the {command} settings are not valid: {error}") from None
    return settings


def list_settings(cls: type, defaults: dict[str, Any]) -> list[str]:
    """One line per setting: its name, default and the first line of its help."""
    lines = []
    for name, spec in sorted(settings_fields(cls).items()):
        default = defaults.get(name, spec.default)
        lines.append(f"{name} = {default!r}  {(spec.metadata.get('help') or '').splitlines()[0][:100]}")
    return lines


class StopOnSignal(TrainerCallback):
    """Ctrl-C (SIGINT) or SIGTERM: the step in progress ends, a checkpoint is saved
    and training stops, so ``--resume`` continues from it."""

    def __init__(self) -> None:
        self.stopped = False
        self.previous: dict[int, Any] = {}

    def install(self) -> None:
        def handler(signum, frame):  # noqa: ARG001 - the signal API
            self.stopped = True
        self.previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}

    def uninstall(self) -> None:
        for sig, previous in self.previous.items():
            signal.signal(sig, previous)

    def on_step_end(self, args, state, control, **kwargs):  # noqa: ARG002 - TrainerCallback's signature
        if self.stopped:
            control.should_save = True
            control.should_training_stop = True
        return control


def score_labelled_positions_only(enabled: bool = True) -> None:
    """Make TRL's fused LM head score only the positions that have a label, on the CPU too
    (``enabled=False``: TRL's own choice again).

    On a device without Triton (the CPU) TRL scores every position of a sequence and
    masks the unlabelled ones afterwards, so as not to recompile for each batch's number
    of labels, which eager PyTorch never does. Here a turn's prompt is a page of ~1,800
    tokens and its answer ~50, so half of a CPU step went to projecting the page's
    positions onto the 49k-token vocabulary and throwing the result away. The loss and
    the gradients are the same either way (tested). Without the hook (another TRL) this
    does nothing."""
    from trl.trainer import utils

    current = getattr(utils, "_use_triton", None)
    if current is None:
        return
    trl_own = getattr(current, "trl_own", current)
    if not enabled:
        utils._use_triton = trl_own
        return
    if trl_own is not current:
        return

    def compact(device: Any) -> bool:
        return device.type == "cpu" or trl_own(device)

    compact.trl_own = trl_own  # type: ignore[attr-defined]
    utils._use_triton = compact


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_gpu_mb() -> float | None:
    """The most GPU memory PyTorch held at once (None without a CUDA GPU)."""
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**20, 1) if torch.cuda.is_available() else None


def check_resume(output: Path, resume: bool) -> None:
    """``--resume`` needs a checkpoint in ``output``: a UsageError saying so before any model loads."""
    if resume and not any(output.glob("checkpoint-*")):
        raise UsageError(f"--resume: {output} holds no checkpoint to continue from",
                         hint="run without --resume, or give the --output of the interrupted run")


def save_model(trainer: Any, settings: LoraSettings, tokenizer: Any, output: Path) -> Path:
    """The trained model as a plain Hugging Face folder (``output/model``; LoRA adapters
    also kept in ``output/adapter`` and merged into the folder's weights)."""
    if settings.lora:
        trainer.model.save_pretrained(output / "adapter")
        merged = trainer.model.merge_and_unload()
    else:
        merged = trainer.model
    merged.save_pretrained(output / "model")
    tokenizer.save_pretrained(output / "model")
    return output / "model"


def train_and_report(trainer: Any, settings: LoraSettings, tokenizer: Any, stop: StopOnSignal, *, resume: bool,
                     fields: Any) -> dict[str, Any]:
    """Train (Ctrl-C: a checkpoint and stop), then what both commands report: steps,
    seconds, steps/s, the command's own ``fields(seconds)``, peak memory; the model saved
    (:func:`save_model`) or how to resume; all of it in ``OUTPUT/training.json``."""
    import json
    import time

    output = Path(settings.output_dir)  # type: ignore[attr-defined]
    started = time.perf_counter()
    stop.install()
    try:
        trainer.train(resume_from_checkpoint=True if resume else None)
    finally:
        stop.uninstall()
    seconds = time.perf_counter() - started
    steps = trainer.state.global_step
    report: dict[str, Any] = {
        "steps": steps, "seconds": round(seconds, 1), "steps_per_s": round(steps / seconds, 5) if seconds else None,
        **fields(seconds), "peak_rss_mb": round(peak_rss_mb(), 1), "peak_gpu_mb": peak_gpu_mb(),
        "lora": settings.lora, "interrupted": stop.stopped,
    }
    if stop.stopped:
        report["resume"] = "interrupted: a checkpoint was saved; --resume continues from it"
    else:
        report["model"] = str(save_model(trainer, settings, tokenizer, output))
    (output / "training.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report
