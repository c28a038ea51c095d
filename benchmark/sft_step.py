"""Seconds a `docverify train sft` step takes on this CPU, and what the precision and
TRL's LM head make of it.

Trains the model on the first examples of real trajectories (each a turn: the page the
policy saw, ~1,800 tokens, and its answer, ~50) in three configurations, in interleaved
rounds, each a fresh trainer of two steps whose second is timed (the first warms up):

- fp32, every position: PyTorch's float32 throughout, and TRL's fused LM head scoring
  every position of the sequence (what TRL does on a device without Triton);
- bf16, every position: bf16 autocast (the weights stay fp32);
- bf16, labelled only: and the LM head scoring only the answer's positions
  (`docverify_training.settings.score_labelled_positions_only`), the CPU default where
  the CPU has bf16 natively (`native_bf16_cpu`).

Prints the median seconds a step per configuration, its tokens, and each one's speed-up
over fp32. Needs the training extra and trajectories, e.g.

    docverify rollout --policy literal --tasks benchmark/solutions --family ecs-start-instance --out /tmp/t.jsonl
    python benchmark/sft_step.py --data /tmp/t.jsonl [--model smollm2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "training"))

CONFIGS = {
    "fp32, every position": {"bf16": False, "use_cpu": False, "labelled_only": False},
    "bf16, every position": {"bf16": True, "use_cpu": True, "labelled_only": False},
    "bf16, labelled only": {"bf16": True, "use_cpu": True, "labelled_only": True},
}


def one_step(folder: Path, examples: list, config: dict, accumulation: int) -> tuple[float, int]:
    """The second step's seconds and tokens of a fresh two-step run in ``config``."""
    from transformers import TrainerCallback

    from docverify_training.sft import load_settings, train_sft

    times: list[float] = []

    class Clock(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):  # noqa: ARG002 - TrainerCallback's signature
            times.append(time.perf_counter())

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ARG002
            times[-1] = time.perf_counter() - times[-1]

    with tempfile.TemporaryDirectory() as out:
        settings = load_settings(None, {"max_steps": 2, "save_strategy": "no", "max_length": 4096,
                                        "gradient_accumulation_steps": accumulation, "bf16": config["bf16"],
                                        "use_cpu": config["use_cpu"]}, Path(out))
        _, trainer = train_sft(folder, examples[:2 * accumulation], settings, callbacks=[Clock()],
                               labelled_only=config["labelled_only"])
    tokens = [entry["num_tokens"] for entry in trainer.state.log_history if "num_tokens" in entry]
    return times[1], int(tokens[1] - tokens[0]) if len(tokens) > 1 else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="trajectories (docverify rollout --out)")
    parser.add_argument("--model", default="smollm2", help="what train sft's --model takes [smollm2]")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--accumulation", type=int, default=4, help="examples a step [4, the CPU default]")
    args = parser.parse_args()

    import torch

    from docverify_training import models
    from docverify_training.settings import native_bf16_cpu
    from docverify_training.trajectory import read_trajectories, sft_examples

    examples = [e for t in read_trajectories([args.data]) for e in sft_examples(t)]
    if len(examples) < 2 * args.accumulation:
        raise SystemExit(f"{args.data}: {len(examples)} turns; {2 * args.accumulation} needed")
    folder, _ = models.hf_folder(args.model, Path(tempfile.gettempdir()) / "docverify-bench-base-models")
    print(f"model {folder}; {torch.get_num_threads()} threads; native bf16: {native_bf16_cpu()}; "
          f"{args.accumulation} examples a step", flush=True)
    seconds: dict[str, list[float]] = {name: [] for name in CONFIGS}
    tokens: dict[str, int] = {}
    for round_ in range(args.rounds):
        for name, config in CONFIGS.items():
            spent, tokens[name] = one_step(folder, examples, config, args.accumulation)
            seconds[name].append(spent)
            print(f"round {round_ + 1}: {name}: {spent:.1f} s ({tokens[name]} tokens)", flush=True)
    base = statistics.median(seconds["fp32, every position"])
    print("\n| configuration | s a step (median) | tokens a step | speed-up |\n|---|---|---|---|")
    for name, values in seconds.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.1f} (min {min(values):.1f}, max {max(values):.1f}) | {tokens[name]} | "
              f"{base / median:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
