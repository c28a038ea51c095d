"""`docverify check` speed: wall time per procedure, and docverify's own overhead.

Runs the real command (a fresh process each round, as CI would) on a folder of
procedures with the literal policy and reads the JSON report. Targets (issue 4),
on a 2-core machine with --jobs 4:

- wall time per procedure of ~8 steps <= 1.5 s on average (process wall / procedures);
- docverify's own overhead < 10%: the share of the procedures' time that is
  neither browser, console nor audit-log time (policy decisions, bookkeeping,
  reporting). Run-level fixed costs (interpreter start, sandbox start, browser
  launch, sign-in) are shown separately.

    python benchmark/check_bench.py [examples/docs] [--rounds 5] [--jobs 4]
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


def one_round(paths: list[str], jobs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        process = subprocess.run(
            [sys.executable, "-m", "docverify", "check", *paths, "--jobs", str(jobs), "--no-store",
             "--report", "json", "--output", out],
            capture_output=True, text=True,
        )
        wall = time.perf_counter() - started
        report = Path(out) / "docverify.json"
        if not report.exists():
            sys.exit(f"docverify check failed ({process.returncode}):\n{process.stderr[-2000:]}")
        data = json.loads(report.read_text())
    results = data["results"]
    duration = sum(r["duration_s"] for r in results)
    browser = sum(r["browser_s"] + r["setup_s"] for r in results)
    check = sum(r["check_s"] for r in results)
    policy = sum(t.get("policy_s", 0.0) for r in results for t in r["turns"])
    pages = sum(1 for r in results for t in r["turns"] if t.get("browser_s"))
    steps = sum(len(r["steps"]) for r in results)
    counts = data["counts"]
    return {
        "procedures": len(results), "steps": steps, "page_actions": pages, "wall": wall,
        "run_inside": data["duration_s"], "duration": duration, "browser": browser, "check": check,
        "policy": policy, "overhead": max(duration - browser - check, 0.0),
        "pass": counts["PASS"], "exit": process.returncode,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=["examples/docs"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args()

    rounds = [one_round(args.paths, args.jobs) for _ in range(args.rounds)]
    first = rounds[0]

    def median(key: str) -> float:
        return statistics.median(r[key] for r in rounds)

    n = first["procedures"]
    print(f"{n} procedures, {first['steps']} doc steps ({first['steps'] / n:.1f} per procedure), "
          f"{first['page_actions']} page actions; PASS {first['pass']}/{n}; --jobs {args.jobs}; "
          f"{args.rounds} rounds, medians")
    print(f"  wall (process)            {median('wall'):6.2f} s   = {median('wall') / n:.2f} s per procedure"
          f"  (target <= 1.50)")
    print(f"  run (inside the command)  {median('run_inside'):6.2f} s   = {median('run_inside') / n:.2f} s per procedure")
    print(f"  fixed costs               {median('wall') - median('run_inside'):6.2f} s   "
          f"(interpreter, imports, parse, reports)")
    total = median("duration")
    print(f"  procedure time (sum)      {total:6.2f} s")
    print(f"    browser + console       {median('browser'):6.2f} s   {median('browser') / total:6.1%}")
    print(f"    audit-log checks        {median('check'):6.2f} s   {median('check') / total:6.1%}")
    print(f"    docverify overhead      {median('overhead'):6.2f} s   {median('overhead') / total:6.1%}"
          f"  (target < 10%; of it, policy decisions {median('policy'):.3f} s)")


if __name__ == "__main__":
    main()
