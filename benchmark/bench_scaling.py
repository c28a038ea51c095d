"""How `docverify bench run` scales with --jobs: tasks per minute at each job count.

Runs the same tasks (by default the eval split's standard tasks) with the literal
policy at each ``--jobs`` value, rounds interleaved (jobs 1, 2, 4, 1, 2, 4, ...) so a
noisy neighbour hits every value alike, and prints the median wall time and tasks per
minute of each, with the speed-up over one job.

    python benchmark/bench_scaling.py [--jobs 1 2 4] [--rounds 2] [--split eval] [--category standard]
        [--out benchmark/results/bench/scaling.md]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(jobs: int, split: str | None, categories: list[str], extra: list[str]) -> tuple[float, int, int]:
    """Wall seconds, tasks run and tasks that succeeded for one `bench run`."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "results.json"
        command = [sys.executable, "-m", "docverify", "bench", "run", "--policy", "literal", "--jobs", str(jobs),
                   "--out", str(out), *(["--split", split] if split else []),
                   *(arg for category in categories for arg in ("--category", category)), *extra]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - started
        if done.returncode != 0 or not out.is_file():
            sys.exit(f"bench run failed ({done.returncode}):\n{done.stderr[-3000:]}")
        data = json.loads(out.read_text())
        return wall, len(data["attempts"]), sum(a["success"] for a in data["attempts"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--split", default="eval")
    parser.add_argument("--category", action="append", default=None, help="default: standard (repeatable)")
    parser.add_argument("--out", type=Path, default=None, help="write the table as Markdown here")
    parser.add_argument("extra", nargs="*", help="more `bench run` arguments, after --")
    args = parser.parse_args()
    categories = args.category or ["standard"]
    walls: dict[int, list[float]] = {jobs: [] for jobs in args.jobs}
    tasks = 0
    for round_ in range(args.rounds):
        for jobs in args.jobs:
            wall, tasks, passed = one_run(jobs, args.split, categories, args.extra)
            walls[jobs].append(wall)
            print(f"round {round_ + 1} jobs {jobs}: {tasks} tasks ({passed} passed) in {wall:.1f} s", file=sys.stderr)
    base = statistics.median(walls[args.jobs[0]])
    lines = [f"# `bench run` scaling with --jobs ({tasks} tasks: split {args.split}, {', '.join(categories)}; "
             f"median of {args.rounds} interleaved rounds)", "",
             "| jobs | wall s (median) | tasks/min | speed-up |", "|---:|---:|---:|---:|"]
    for jobs in args.jobs:
        wall = statistics.median(walls[jobs])
        lines.append(f"| {jobs} | {wall:.1f} | {60 * tasks / wall:.1f} | {base / wall:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
