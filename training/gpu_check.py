"""One SFT step and one GRPO step of a small Qwen model on a GPU machine, timed.

    python training/gpu_check.py [--model Qwen/Qwen2.5-0.5B-Instruct] [--out /tmp/gpu-check]

It runs the ML team's commands as they would: `docverify rollout` (the literal teacher on
the reference solutions of one family's train tasks) -> `docverify train sft` (one step,
bf16, LoRA) -> `docverify train grpo` (one step: 2 tasks x 2 rollouts on TRL's colocated vLLM
engine, training/configs/grpo-qwen-gpu.yaml), then prints what each took, the rollouts'
time split and peak memory. Needs a CUDA GPU, vLLM, Chromium and the model (a folder or a
Hub id in the local cache); what is missing is named before anything runs. On a quiet
H100/H200 it takes a few minutes for a 0.5B model (vLLM's start-up is most of it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILY = "ecs-create-key-pair"


def missing(model: str) -> list[str]:
    """What this machine lacks for the check."""
    out = []
    try:
        import torch

        if not torch.cuda.is_available():
            out.append("a CUDA GPU (torch.cuda.is_available() is False)")
    except ImportError:
        out.append("PyTorch (pip install torch && pip install -e '.[train]')")
    for package, hint in (("vllm", "pip install -e '.[vllm]'"), ("trl", "pip install -e '.[train]'"),
                          ("playwright", "pip install -e .")):
        if importlib.util.find_spec(package) is None:
            out.append(f"{package} ({hint})")
    if not any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")):
        out.append("Chromium (apt-get install chromium)")
    if not Path(model).exists():
        try:
            from huggingface_hub import snapshot_download

            snapshot_download(model, local_files_only=True)
        except Exception:  # noqa: BLE001 - any failure means the model is not at hand
            out.append(f"the model {model} (a folder, or a Hub id in the local cache: huggingface-cli download {model})")
    return out


def run(step: str, *args: str) -> float:
    print(f"== {step}: docverify {' '.join(args)}", flush=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "docverify", *args], cwd=ROOT, check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="Qwen/Qwen2.5-0.5B-Instruct")
    parser.add_argument("--out", type=Path, default=Path("/tmp/gpu-check"))
    args = parser.parse_args()
    lacking = missing(args.model)
    if lacking:
        print("gpu_check: this machine lacks " + "; ".join(lacking), file=sys.stderr)
        return 2
    out: Path = args.out
    shutil.rmtree(out, ignore_errors=True)
    small = ["-O", "console.sandbox.latency_ms=0"]
    seconds = {
        "rollout": run("rollout", "rollout", "--policy", "literal", "--tasks", "benchmark/solutions", "--family", FAMILY,
                       "--jobs", "2", "--student", "vllm", "--out", str(out / "sft.jsonl"), *small),
        "sft": run("sft", "train", "sft", "--model", args.model, "--data", str(out / "sft.jsonl"),
                   "--output", str(out / "sft"), "--config", "training/configs/sft-qwen-gpu.yaml",
                   "-S", "max_steps=1", "-S", "gradient_accumulation_steps=1", "-S", "save_strategy=no"),
        "grpo": run("grpo", "train", "grpo", "--model", str(out / "sft" / "model"), "--tasks", "benchmark/tasks",
                    "--family", FAMILY, "--output", str(out / "grpo"), "--config", "training/configs/grpo-qwen-gpu.yaml",
                    "-S", "max_steps=1", "-S", "per_device_train_batch_size=4", "-S", "num_generations=2",
                    "-S", "micro_batch_size=4", "-S", "max_turns=12", "-S", "bench_eval_steps=0",
                    "-S", "save_strategy=no", *small),
    }
    sft = json.loads((out / "sft" / "training.json").read_text())
    grpo = json.loads((out / "grpo" / "training.json").read_text())
    print(f"\nmodel {args.model}")
    print(f"rollout (literal teacher, 3 tasks): {seconds['rollout']:.0f} s")
    print(f"sft: 1 step of {sft['examples']} examples in {sft['seconds']} s (command {seconds['sft']:.0f} s), "
          f"peak GPU {sft['peak_gpu_mb']} MB, peak RSS {sft['peak_rss_mb']:.0f} MB")
    print(f"grpo: 1 step, {grpo['rollouts']} rollouts ({grpo['rollouts_per_s']}/s), success {grpo['success_rate']}, "
          f"{grpo['samples']} samples, in {grpo['seconds']} s (command {seconds['grpo']:.0f} s), "
          f"peak GPU {grpo['peak_gpu_mb']} MB")
    print("grpo time: " + ", ".join(f"{key} {value} s" for key, value in sorted(grpo["time_s"].items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
