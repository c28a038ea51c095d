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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trl import SFTConfig

from docverify.errors import UsageError
from docverify_training.settings import (
    CPU_COMMON,
    LoraSettings,
    StopOnSignal,
    check_resume,
    peft_config,
    score_labelled_positions_only,
    train_and_report,
)
from docverify_training.settings import load_settings as _load

#: Defaults that fit a CPU run of a small model (TRL's own defaults target GPUs).
CPU_DEFAULTS: dict[str, Any] = {
    **CPU_COMMON, "learning_rate": 2e-4, "num_train_epochs": 2.0, "gradient_accumulation_steps": 4,
    # the llamacpp policy's context (n_ctx): a turn as long as the policy can be shown is trained on whole
    "max_length": 4096, "save_strategy": "epoch", "activation_checkpointing": False,
}


@dataclass
class SFTSettings(SFTConfig, LoraSettings):
    """`docverify train sft`'s configuration: every field of TRL's SFTConfig
    (learning_rate, num_train_epochs, max_length, ...: see its documentation) and LoRA's."""


def load_settings(config_file: Path | None, overrides: dict[str, Any], output: Path) -> SFTSettings:
    """The settings: CPU defaults, then the YAML file, then ``overrides``. An unknown
    key is named with the nearest valid ones; a bad value with the key."""
    return _load(SFTSettings, CPU_DEFAULTS, config_file, overrides, output, "train sft")


def train_sft(model_folder: Path | str, examples: list[dict[str, Any]], settings: SFTSettings, *,
              resume: bool = False, model: Any = None, tokenizer: Any = None,
              say: Callable[[str], None] | None = None, callbacks: Sequence[Any] = (),
              labelled_only: bool = True) -> tuple[dict[str, Any], Any]:
    """Train on ``examples`` (conversational prompt-completion); what was measured, and
    the trainer. ``model``/``tokenizer``: already loaded (tests); otherwise from ``model_folder``.
    ``say``: told, before training, of examples that ``max_length`` cuts or leaves out.
    ``callbacks``: more TrainerCallbacks. ``labelled_only``: the LM head scores only the
    answer's positions (:func:`score_labelled_positions_only`; off only to measure it)."""
    from datasets import Dataset
    from trl import SFTTrainer

    from docverify_training.models import load_model

    if not examples:
        raise UsageError("no training examples: the data holds no kept trajectory",
                         hint="check the rollout's stats (FILE.stats.json)")
    output = Path(settings.output_dir)
    check_resume(output, resume)
    if model is None or tokenizer is None:
        model, tokenizer = load_model(model_folder)
    dataset = Dataset.from_list([{"prompt": e["prompt"], "completion": e["completion"]} for e in examples])
    stop = StopOnSignal()
    score_labelled_positions_only(labelled_only)
    trainer = SFTTrainer(model=model, args=settings, train_dataset=dataset, processing_class=tokenizer,
                         peft_config=peft_config(settings), callbacks=[stop, *callbacks])

    fit = fitting(examples, trainer.train_dataset, settings.max_length)
    if say and (fit["examples_left_out"] or fit["examples_cut"]):
        say(f"warning: max_length={settings.max_length} tokens leaves out {fit['examples_left_out']} of "
            f"{len(examples)} examples and cuts {fit['examples_cut']}; -S max_length=N trains on them whole")

    def fields(seconds: float) -> dict[str, Any]:
        losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
        return {"examples": len(examples), "epochs": round(trainer.state.epoch or 0, 3),
                "loss_first": losses[0] if losses else None, "loss_last": losses[-1] if losses else None,
                "losses": losses, **fit}

    report = train_and_report(trainer, settings, tokenizer, stop, resume=resume, fields=fields)
    return report, trainer


def fitting(examples: list[dict[str, Any]], dataset: Any, max_length: int | None) -> dict[str, int]:
    """What ``max_length`` did to the examples: cut (the answer's end lost) and left out
    (TRL drops an example whose answer was cut away whole)."""
    lengths = [len(ids) for ids in dataset["input_ids"]] if "input_ids" in dataset.column_names else []
    return {"examples_left_out": len(examples) - len(dataset),
            "examples_cut": sum(length >= max_length for length in lengths) if max_length else 0}
