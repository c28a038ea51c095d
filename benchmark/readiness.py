"""Environment readiness with provisioning off and on (issue 5; the paper: ~34% -> ~84%).

Runs ``docverify check`` twice over the same procedures — ``provisioner none`` and
``provisioner terraform`` (or ``resourcecoder`` with ``--provisioner``) — against
the sandbox and reads the JSON reports. A task is *ready* when its prerequisites existed
when it ran: it did not end ENV_ERROR for a missing prerequisite, a failed
provisioning (template, apply) or a broken console/browser. A stack that could not
be destroyed afterwards ("teardown failed": typically the procedure created
something inside the provisioned resources) is an ENV_ERROR too, and counted as
such, but the task was ready when it ran.

    python benchmark/readiness.py [PATH...] [--jobs 2] [--provisioner terraform] [--out benchmark/results/readiness.md]

Default PATHs: examples/docs, examples/drifted and the corpus's Alibaba Cloud docs
(the vendored tests/corpus). Each procedure's sandbox is fresh per run (the
embedded sandbox starts empty but for its seeded resources).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from docverify_bench.score import env_cause

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "real-docs" / "alibaba_AlibabaCloudDocs"


def run(paths: list[str], provisioner: str, jobs: int) -> tuple[dict, float]:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        process = subprocess.run(
            [sys.executable, "-m", "docverify", "check", *paths, "--jobs", str(jobs), "--no-store", "--report", "json",
             "--output", out, "--timeout", "180", "-O", f"provisioner.use={provisioner}"],
            capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - started
        report = Path(out) / "docverify.json"
        if not report.exists():
            sys.exit(f"docverify check failed ({process.returncode}):\n{process.stderr[-3000:]}")
        return json.loads(report.read_text()), wall


def cause(result: dict) -> str:
    return env_cause(result.get("env_error") or result.get("reason"))


def summarize(data: dict, wall: float) -> dict:
    results = data["results"]
    env = [r for r in results if r["verdict"] == "ENV_ERROR"]
    causes = Counter(cause(r) for r in env)
    unready = len(env) - causes.get("teardown failed", 0)
    return {
        "procedures": len(results), "ready": len(results) - unready,
        "readiness": round((len(results) - unready) / len(results), 3) if results else None,
        "env_errors": len(env), "causes": dict(causes), "verdicts": data["counts"],
        "setup_s_total": round(sum(r["setup_s"] for r in results), 1), "wall_s": round(wall, 1),
        "env_error_ids": {r["id"]: r["reason"][:160] for r in env},
    }


#: The hand-kept section of the result file (what changed between runs), carried over.
HISTORY = "\n## How it got here"


def kept_history(path: Path) -> str:
    """The history section of an earlier result file, to append to the new figures."""
    text = path.read_text() if path.exists() else ""
    at = text.find(HISTORY)
    return text[at:] if at >= 0 else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--provisioner", default="terraform")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmark" / "results" / "readiness.md")
    args = parser.parse_args()
    paths = args.paths or ["examples/docs", "examples/drifted", *([str(CORPUS)] if CORPUS.is_dir() else [])]
    figures = {}
    for provisioner in ("none", args.provisioner):
        data, wall = run(paths, provisioner, args.jobs)
        figures[provisioner] = summarize(data, wall)
        print(provisioner, json.dumps({k: v for k, v in figures[provisioner].items() if k != "env_error_ids"}))
    lines = ["# Environment readiness: provisioning off and on", "",
             f"Procedures: {', '.join(paths)} (sandbox, newest release, `--jobs {args.jobs}`).", "",
             "| provisioner | procedures | ready | readiness | ENV_ERROR | prerequisite missing | provisioning failed "
             "| teardown failed | other | PASS | DRIFT | FAIL | INCONCLUSIVE | setup s (sum) | wall s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, f in figures.items():
        v, c = f["verdicts"], f["causes"]
        lines.append(f"| {name} | {f['procedures']} | {f['ready']} | {f['readiness']:.1%} | {f['env_errors']} "
                     f"| {c.get('prerequisite missing', 0)} | {c.get('provisioning failed', 0)} "
                     f"| {c.get('teardown failed', 0)} | {c.get('other', 0)} "
                     f"| {v['PASS']} | {v['DRIFT']} | {v['FAIL']} | {v['INCONCLUSIVE']} | {f['setup_s_total']} "
                     f"| {f['wall_s']} |")
    lines += ["", "ENV_ERRORs that remain with provisioning on:", ""]
    lines += [f"- `{task}`: {reason}" for task, reason in figures[args.provisioner]["env_error_ids"].items()] or ["- none"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n" + kept_history(args.out))
    args.out.with_suffix(".json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
