"""``docverify train sft``: supervised fine-tuning on trajectories (TRL SFTTrainer, PEFT LoRA).

Every turn of every trajectory is one conversational prompt-completion example
(:func:`docverify_training.trajectory.sft_examples`): the loss falls on the answer
only, never on the prompt's page text. The configuration is :class:`SFTSettings`,
TRL's ``SFTConfig`` with LoRA's fields added, read from YAML and ``-S key=value``.
The output folder holds ``adapter/`` (LoRA weights, when LoRA is on), ``model/``
(the adapters merged into the base: a plain Hugging Face model), the trainer's
checkpoints and ``training.json`` (what was measured).
"""

from __future__ import annotations

import difflib
import json
import resource
import signal
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml
from transformers import TrainerCallback
from trl import SFTConfig

from docverify.errors import UsageError, yaml_error_at

#: Defaults that fit a CPU run of a small model (TRL's own defaults target GPUs).
CPU_DEFAULTS: dict[str, Any] = {
    "learning_rate": 2e-4, "num_train_epochs": 2.0, "per_device_train_batch_size": 1,
    "gradient_accumulation_steps": 4, "max_length": 2048, "logging_steps": 1, "save_strategy": "epoch",
    "save_total_limit": 2, "report_to": "none", "activation_checkpointing": False, "bf16": False,
    "dataloader_pin_memory": False,
}


@dataclass
class SFTSettings(SFTConfig):
    """`docverify train sft`'s configuration: every field of TRL's SFTConfig
    (learning_rate, num_train_epochs, max_length, ...: see its documentation) and LoRA's."""

    lora: bool = field(default=True, metadata={"help": "train LoRA adapters (PEFT); false: full fine-tuning"})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank"})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling (alpha / r multiplies the update)"})
    lora_dropout: float = field(default=0.05, metadata={"help": "dropout on the LoRA path"})
    lora_target_modules: str = field(default="all-linear", metadata={
        "help": "the modules that get adapters: 'all-linear', or names separated by commas (q_proj,v_proj)"})


def settings_fields() -> dict[str, Any]:
    return {f.name: f for f in fields(SFTSettings) if f.init}


def load_settings(config_file: Path | None, overrides: dict[str, Any], output: Path) -> SFTSettings:
    """The settings: CPU defaults, then the YAML file, then ``overrides``. An unknown
    key is named with the nearest valid ones; a bad value with the key."""
    from transformers import HfArgumentParser

    values: dict[str, Any] = dict(CPU_DEFAULTS)
    where = {key: "default" for key in values}
    if config_file is not None:
        try:
            data = yaml.safe_load(config_file.read_text(encoding="utf-8")) or {}
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
    known = settings_fields()
    for key in values:
        if key not in known:
            near = difflib.get_close_matches(key, list(known), n=3, cutoff=0.6)
            raise UsageError(f"{where[key]}: unknown setting '{key}'"
                             + (f" (did you mean {', '.join(near)}?)" if near else ""),
                             hint="the settings are TRL's SFTConfig fields and lora, lora_r, lora_alpha, "
                                  "lora_dropout, lora_target_modules: `docverify train sft --list-settings`")
    if "output_dir" in values and where.get("output_dir") != "default":
        raise UsageError(f"{where['output_dir']}: output_dir is set by --output")
    values["output_dir"] = str(output)
    try:
        (settings,) = HfArgumentParser(SFTSettings).parse_dict(values, allow_extra_keys=False)
    except (ValueError, TypeError) as error:
        raise UsageError(f"the SFT settings are not valid: {error}") from None
    return settings


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


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def train_sft(model_folder: Path, examples: list[dict[str, Any]], settings: SFTSettings, *,
              resume: bool = False, model: Any = None, tokenizer: Any = None) -> tuple[dict[str, Any], Any]:
    """Train on ``examples`` (conversational prompt-completion); what was measured, and
    the trainer. ``model``/``tokenizer``: already loaded (tests); otherwise from ``model_folder``."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTTrainer

    if not examples:
        raise UsageError("no training examples: the data holds no kept trajectory",
                         hint="check the rollout's stats (FILE.stats.json)")
    output = Path(settings.output_dir)
    if resume and not any(output.glob("checkpoint-*")):
        raise UsageError(f"--resume: {output} holds no checkpoint to continue from",
                         hint="run without --resume, or give the --output of the interrupted run")
    tokenizer = tokenizer or AutoTokenizer.from_pretrained(str(model_folder))
    model = model or AutoModelForCausalLM.from_pretrained(str(model_folder))
    peft_config = None
    if settings.lora:
        from peft import LoraConfig

        targets = settings.lora_target_modules
        peft_config = LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha, lora_dropout=settings.lora_dropout,
                                 target_modules=targets if targets == "all-linear" else
                                 [name.strip() for name in targets.split(",") if name.strip()],
                                 task_type="CAUSAL_LM")
    dataset = Dataset.from_list([{"prompt": e["prompt"], "completion": e["completion"]} for e in examples])
    stop = StopOnSignal()
    trainer = SFTTrainer(model=model, args=settings, train_dataset=dataset, processing_class=tokenizer,
                         peft_config=peft_config, callbacks=[stop])
    started = time.perf_counter()
    stop.install()
    try:
        trainer.train(resume_from_checkpoint=True if resume else None)
    finally:
        stop.uninstall()
    seconds = time.perf_counter() - started
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    report: dict[str, Any] = {
        "examples": len(examples), "steps": trainer.state.global_step, "epochs": round(trainer.state.epoch or 0, 3),
        "loss_first": losses[0] if losses else None, "loss_last": losses[-1] if losses else None,
        "losses": losses, "seconds": round(seconds, 1),
        "steps_per_s": round(trainer.state.global_step / seconds, 4) if seconds else None,
        "peak_rss_mb": round(peak_rss_mb(), 1), "lora": settings.lora, "interrupted": stop.stopped,
    }
    if stop.stopped:
        report["resume"] = "interrupted: a checkpoint was saved; --resume continues from it"
    else:
        if settings.lora:
            trainer.model.save_pretrained(output / "adapter")
            merged = trainer.model.merge_and_unload()
        else:
            merged = trainer.model
        merged.save_pretrained(output / "model")
        tokenizer.save_pretrained(output / "model")
        report["model"] = str(output / "model")
    (output / "training.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report, trainer
