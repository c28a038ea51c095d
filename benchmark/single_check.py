"""A writer checking one procedure: `docverify check FILE#ID` against a running sandbox,
cold (a fresh process each round), and where its wall time goes.

Starts `docverify sandbox serve` once (as a writer would keep one running), then runs
the real command ROUNDS times and reads each run's JSON report. Prints the median wall
time and its breakdown (medians over the rounds):

- start-up: the interpreter, imports, configuration, plugin loading, parsing the doc
  (process start until the run begins);
- prepare: the policy and the checkers made ready (the audit-log client imported);
- console: reaching the console (a running sandbox: its health check);
- browser: Playwright and Chromium started, the console signed in to;
- context: the procedure's browser context opened (and its provisioning);
- steps: the policy's turns in the browser;
- audit: the checker's wait for the audit-log events;
- close: the browser and the console closed, the reports written;
- other: what the process spent outside all of these (interpreter exit).

Target (issue 18): <= 3 s wall cold on a quiet machine.

    python benchmark/single_check.py [FILE#ID] [--rounds 7] [--release 2026-03]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = "examples/docs/oss-buckets.md#oss-create-bucket"
PHASES = ("startup", "prepare", "console", "browser", "context", "steps", "audit", "close")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(release: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "docverify", "sandbox", "serve", "--port", str(port),
                               "--release", release], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/signin", timeout=1).close()
            return server, url
        except OSError:
            time.sleep(0.1)
    server.kill()
    sys.exit(f"the sandbox did not start on {url}")


def one_round(target: str, url: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        process = subprocess.run(
            [sys.executable, "-m", "docverify", "check", target, "--set", f"console.sandbox.url={url}",
             "--no-store", "--report", "json", "--output", out, "-qq"],
            cwd=ROOT, capture_output=True, text=True,
        )
        wall = time.perf_counter() - started
        report = Path(out) / "docverify.json"
        if not report.exists():
            sys.exit(f"docverify check failed ({process.returncode}):\n{process.stderr[-2000:]}")
        data = json.loads(report.read_text())
    [result] = data["results"]
    if result["verdict"] != "PASS":
        sys.exit(f"{target} did not PASS ({result['verdict']}: {result['reason']})")
    timings = data["timings"]
    phases = {
        "startup": timings["startup_s"], "prepare": timings["prepare_s"], "console": timings["console_s"],
        "browser": timings["browser_s"], "context": result["setup_s"], "steps": result["browser_s"],
        "audit": result["check_s"], "close": timings["close_s"],
    }
    phases["other"] = max(wall - sum(phases.values()), 0.0)
    return {"wall": wall, **phases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default=DEFAULT)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--release", default="2026-03")
    args = parser.parse_args()
    server, url = serve(args.release)
    try:
        one_round(args.target, url)  # warms the disk cache and the sandbox, as a writer's second try would
        rounds = [one_round(args.target, url) for _ in range(args.rounds)]
    finally:
        server.terminate()
        server.wait(timeout=30)
    median = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    print(f"docverify check {args.target} against a running sandbox ({url}), {args.rounds} cold rounds, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"wall: median {median['wall']:.2f} s (min {min(r['wall'] for r in rounds):.2f}, "
          f"max {max(r['wall'] for r in rounds):.2f})")
    for key in (*PHASES, "other"):
        print(f"  {key:<8} {median[key]:6.2f} s  {median[key] / median['wall']:5.1%}")


if __name__ == "__main__":
    main()
