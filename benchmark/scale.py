"""How `docverify check` scales with workers: procedures per minute for the local backend
(``--jobs N``: one browser, N contexts) and the ray backend (``--ray-workers N``: N Ray
workers, a browser and a sandbox each, on a local Ray the command starts), without and
with provisioning (``--provisioner terraform``: the Resource META the example docs
imply, applied and destroyed around each procedure), and where the time goes.

Each configuration is one ``docverify check`` (the literal policy, no results store) in
a process of its own, its JSON report read back: its wall time; start-up (everything
before the first procedure could start: imports, docs, console, Ray, workers, browser);
the procedures' part; closing; and per procedure the mean time and the part of it spent
before the first action (account, provisioning, browser context and sign-in).

    python benchmark/scale.py [--workers 1 2 4] [--backends local ray] [--provisioners none terraform]
        [--docs examples/docs ...] [--rounds 1] [--out benchmark/results/scale.md]

A small set to see that it works: ``--docs examples/docs/kms.md examples/docs/vpc.md --workers 1 2``.
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Measure:
    """One ``docverify check`` run."""

    backend: str
    provisioner: str
    workers: int
    procedures: int
    passed: int
    wall_s: float
    startup_s: float  #: before the first procedure could start
    work_s: float  #: the procedures, once workers (or the browser) were up
    close_s: float
    per_procedure_s: float  #: mean duration of one procedure
    setup_s: float  #: mean part of it before the first action (account, provisioning, browser context)
    timings: dict[str, float]

    @property
    def per_minute(self) -> float:
        return 60 * self.procedures / self.wall_s if self.wall_s else 0.0

    @property
    def steady_per_minute(self) -> float:
        """Procedures per minute once everything is up (start-up and close left out)."""
        return 60 * self.procedures / self.work_s if self.work_s else 0.0


def one_run(backend: str, provisioner: str, workers: int, docs: list[str]) -> Measure:
    env = {name: value for name, value in os.environ.items() if not name.startswith(("DOCVERIFY_", "RAY_ADDRESS"))}
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out"
        command = [sys.executable, "-m", "docverify", "check", *(str(Path(d).resolve()) for d in docs),
                   "--policy", "literal", "--provisioner", provisioner, "--no-store", "-q",
                   "--report", "json", "--output", str(out), "--backend", backend, "--jobs", str(workers)]
        if backend == "ray":
            command += ["--ray-workers", str(workers)]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        report = out / "docverify.json"
        if not report.is_file():
            sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        data = json.loads(report.read_text(encoding="utf-8"))
    timings = data.get("timings", {})
    results = data["results"]
    work = timings.get("procedures_s", 0.0) - timings.get("workers_s", 0.0)  # ray's includes starting its workers
    close = timings.get("close_s", 0.0)
    return Measure(
        backend=backend, provisioner=provisioner, workers=workers, procedures=len(results),
        passed=sum(r["verdict"] == "PASS" for r in results), wall_s=wall, startup_s=max(0.0, wall - work - close),
        work_s=work, close_s=close,
        per_procedure_s=statistics.mean(r.get("duration_s") or 0.0 for r in results) if results else 0.0,
        setup_s=statistics.mean(r.get("setup_s") or 0.0 for r in results) if results else 0.0,
        timings=timings,
    )


def table(measures: list[Measure], docs: list[str], rounds: int) -> str:
    lines = [f"# `docverify check` scaling: local and ray backends ({measures[0].procedures if measures else 0} "
             f"procedures of {', '.join(docs)}; literal policy; median of {rounds} round(s); "
             f"{os.cpu_count()} CPUs)", "",
             "| backend | provisioning | workers | passed | wall s | proc/min | proc/min once up | start-up s | "
             "procedures s | close s | s/procedure | of it before the first action |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in measures:
        lines.append(f"| {m.backend} | {m.provisioner} | {m.workers} | {m.passed}/{m.procedures} | {m.wall_s:.1f} | "
                     f"{m.per_minute:.1f} | {m.steady_per_minute:.1f} | {m.startup_s:.1f} | {m.work_s:.1f} | "
                     f"{m.close_s:.1f} | {m.per_procedure_s:.1f} | {m.setup_s:.1f} |")
    lines += ["", "Start-up, as the runs' `timings` split it (seconds):", "",
              "| backend | provisioning | workers | " + " | ".join(STARTUP_KEYS) + " |",
              "|---|---|---:|" + "---:|" * len(STARTUP_KEYS)]
    for m in measures:
        lines.append(f"| {m.backend} | {m.provisioner} | {m.workers} | "
                     + " | ".join(f"{m.timings[key]:.1f}" if key in m.timings else "—" for key in STARTUP_KEYS) + " |")
    return "\n".join(lines) + "\n"


#: run-level timings before the procedures: Python and plugins, Ray, the workers (ray), the console, the browser
STARTUP_KEYS = ("startup_s", "prepare_s", "ray_start_s", "workers_s", "console_s", "browser_s")


def median_measure(runs: list[Measure]) -> Measure:
    """The run of median wall time."""
    return sorted(runs, key=lambda m: m.wall_s)[len(runs) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--backends", nargs="+", default=["local", "ray"], choices=["local", "ray"])
    parser.add_argument("--provisioners", nargs="+", default=["none", "terraform"])
    parser.add_argument("--docs", nargs="+", default=["examples/docs"], help="files or folders (default: examples/docs)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each configuration, interleaved")
    parser.add_argument("--out", type=Path, default=None, help="write the tables as Markdown here")
    args = parser.parse_args()
    configurations = [(backend, provisioner, workers) for provisioner in args.provisioners
                      for backend in args.backends for workers in args.workers]
    runs: dict[tuple[str, str, int], list[Measure]] = {c: [] for c in configurations}
    for round_ in range(args.rounds):
        for backend, provisioner, workers in configurations:
            measure = one_run(backend, provisioner, workers, args.docs)
            runs[(backend, provisioner, workers)].append(measure)
            print(f"round {round_ + 1}: {backend} {provisioner} x{workers}: {measure.procedures} procedures "
                  f"({measure.passed} passed) in {measure.wall_s:.1f} s", file=sys.stderr, flush=True)
    text = table([median_measure(runs[c]) for c in configurations], args.docs, args.rounds)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
