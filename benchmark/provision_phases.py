"""Where provisioning's time goes: Terraform's init, apply and destroy per task.

Runs ``docverify bench run`` in this process over a task set's prerequisite tasks
(by default the eval split's) on empty sandbox accounts, with the Terraform stack's
phases timed (``write``, ``init``, ``apply``, ``destroy``), and prints the median of
each phase per task and its share of the provisioning time, next to the attempts'
median ``setup_s``.

    python benchmark/provision_phases.py [--category prerequisite] [--jobs 1] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHASES = ("write", "init", "apply", "destroy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", action="append", default=None, help="default: prerequisite (repeatable)")
    parser.add_argument("--split", default="eval")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="write the table as Markdown here")
    args = parser.parse_args()

    from docverify.cli import cli
    from docverify_terraform import engine

    seconds: dict[str, list[float]] = defaultdict(list)

    def timed(name, method):
        def wrapper(self, *a, **k):
            started = time.perf_counter()
            try:
                return method(self, *a, **k)
            finally:
                seconds[name].append(time.perf_counter() - started)
        return wrapper

    for phase in PHASES:
        setattr(engine.Stack, phase, timed(phase, getattr(engine.Stack, phase)))
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "results.json"
        argv = ["bench", "run", "--policy", "literal", "--split", args.split, "--jobs", str(args.jobs),
                "--out", str(out), "-O", "console.sandbox.resources=empty",
                *(a for c in (args.category or ["prerequisite"]) for a in ("--category", c))]
        try:
            cli.main(args=argv, standalone_mode=False)
        except SystemExit as done:  # the command's exit code: the results file says what happened
            if done.code not in (0, None):
                sys.exit(f"bench run failed ({done.code})")
        data = json.loads(out.read_text())
    setups = [a["setup_s"] for a in data["attempts"]]
    stacks = len(seconds["apply"])
    total = sum(statistics.median(seconds[p]) for p in PHASES if seconds[p])
    lines = [f"# Provisioning's phases ({len(setups)} tasks, {stacks} stacks, empty accounts, --jobs {args.jobs})", "",
             "| phase | median s per stack | share |", "|---|---:|---:|"]
    for phase in PHASES:
        if seconds[phase]:
            median = statistics.median(seconds[phase])
            lines.append(f"| {phase} | {median:.2f} | {100 * median / total:.0f}% |")
    lines += ["", f"Median setup per task (provisioning, account, sign-in, browser context): "
                  f"{statistics.median(setups):.2f} s; provisioning phases: {total:.2f} s (destroy runs after the "
                  "procedure, outside setup)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
