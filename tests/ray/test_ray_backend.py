"""``docverify check --backend ray`` end to end: Ray workers with the real browser and
the embedded sandbox, each run through the CLI in a process of its own.

- on a 2-worker Ray cluster (one per module: Ray is slow to start), a folder of example
  docs gets the local backend's verdicts; its results land in the store, and ``--resume``
  takes them over and runs only the new procedure on Ray;
- a worker that dies mid-procedure (a real crash: ``os._exit`` after the first turn,
  through the backend's ``DOCVERIFY_RAY_CRASH`` switch) is replaced and the procedure
  tried once more; dying twice is ENV_ERROR, saying so, and what Terraform provisioned
  for it is reclaimed through the ledger; no browser of a dead worker is left;
- an account pool's accounts are leased by the driver: one account, two workers, the
  procedures take turns;
- Ctrl-C on a run that started its own Ray leaves no process behind (no Ray, no
  browser, no sandbox) and the run can be resumed.

Every process these tests start carries a marker in its environment (so do their
children: Ray's daemons and workers, the browsers), which is how what is left is found.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: the release the example docs (and the drifted ones, which drift against it) are checked at
RELEASE = "2026-03"
MARK_ENV = "DOCVERIFY_TEST_RAY_MARK"
#: programs a worker starts; none may outlive the run that started it
BROWSER_PROGRAMS = ("chrom", "headless_shell", "node", "terraform")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def marked(mark: str) -> list[tuple[int, str]]:
    """(pid, program) of every live process whose environment carries ``mark``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if f"{MARK_ENV}={mark}".encode() not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            stat = (entry / "stat").read_text()
            if stat[stat.rindex(")") + 2] == "Z":  # exited, not yet reaped
                continue
            found.append((int(entry.name), (entry / "comm").read_text().strip()))
        except (OSError, ValueError):
            continue
    return found


def browsers(mark: str) -> list[tuple[int, str]]:
    return [(pid, name) for pid, name in marked(mark) if name.startswith(BROWSER_PROGRAMS)]


def browsers_after(mark: str, seconds: float = 20) -> list[tuple[int, str]]:
    """:func:`browsers` once they had ``seconds`` to go: a dead worker's Playwright driver
    sees its pipe close and ends its browser and itself on its own, a moment after."""
    deadline = time.monotonic() + seconds
    while (left := browsers(mark)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def stop_marked(mark: str) -> None:
    """End what is left of the processes these tests started (theirs alone: marked)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid, _ in marked(mark):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + 10
        while marked(mark) and time.monotonic() < deadline:
            time.sleep(0.2)


def environment(mark: str) -> dict[str, str]:
    """The environment of every process started here: nothing configured from outside,
    Ray's token authentication off (a cluster started with `ray start` and its drivers
    would have to share a token), the marker."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("DOCVERIFY_", "RAY_"))}
    return {**env, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", MARK_ENV: mark}


class Cluster:
    """A Ray head (2 CPUs) started with ``ray start --block`` for the module."""

    def __init__(self, mark: str) -> None:
        self.mark = mark
        self.env = environment(mark)
        ray = shutil.which("ray", path=str(Path(sys.executable).parent))
        if ray is None:
            pytest.skip("no `ray` command next to this Python: pip install 'docverify[ray]'")
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [ray, "start", "--head", "--block", f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
             "--disable-usage-stats"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env, start_new_session=True)
        lines = read_lines(self.process.stdout)
        said = []
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            said.append(line)
            if "Ray runtime started" in line:
                return
        self.stop()
        raise AssertionError("ray start did not start:\n" + "".join(said[-40:]))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # `ray start --block` stops what it started
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        stop_marked(self.mark)


def read_lines(stream) -> queue.Queue:
    """A stream's lines, as they come, on a queue (read by a thread)."""
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("ray", reason="the ray backend needs Ray: pip install 'docverify[ray]'")
    started = Cluster(f"cluster-{uuid.uuid4().hex}")
    try:
        yield started
    finally:
        started.stop()


def docverify(cwd: Path, env: dict[str, str], *args: str, timeout: float = 600) -> tuple[subprocess.CompletedProcess, dict]:
    """``docverify check`` in ``cwd`` with the JSON report in ``out/``; the process and the report."""
    shutil.rmtree(cwd / "out", ignore_errors=True)
    command = [sys.executable, "-m", "docverify", "check", *args, "--report", "json", "--output", "out",
               "-O", f"console.sandbox.release={RELEASE}"]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    report = cwd / "out" / "docverify.json"
    assert report.is_file(), f"no report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done, json.loads(report.read_text(encoding="utf-8"))


def verdicts(report: dict) -> dict[str, str]:
    return {result["id"]: result["verdict"] for result in report["results"]}


def copy_docs(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        source = EXAMPLES / name
        shutil.copy(source, folder / f"{source.parent.name}-{source.name}")
    return folder


def ray_options(cluster: Cluster, chromium) -> list[str]:
    return ["--backend", "ray", "--ray-address", cluster.address, "--ray-workers", "2",
            "--browser-path", str(chromium.path)]


def test_ray_workers_give_the_local_verdicts_and_resume_takes_over(cluster, chromium, tmp_path):
    docs = copy_docs(tmp_path / "docs", "docs/kms.md", "drifted/ecs-key-pair.md", "docs/ecs-key-pairs.md")
    local, local_report = docverify(tmp_path, cluster.env, "docs", "--no-store", "--browser-path", str(chromium.path))
    expected = verdicts(local_report)
    assert sorted(expected.values()) == ["DRIFT", "PASS", "PASS"], local.stdout
    assert local_report["timings"].get("ray_start_s") is None  # the local backend: no Ray

    # two of the three on Ray, into the results store
    (docs / "docs-ecs-key-pairs.md").rename(tmp_path / "later.md")
    first, first_report = docverify(tmp_path, cluster.env, "docs", *ray_options(cluster, chromium))
    assert verdicts(first_report) == {key: value for key, value in expected.items() if key != "ecs-create-key-pair"}
    assert first.returncode == local.returncode == 1, first.stderr  # DRIFT
    drift = next(r for r in first_report["results"] if r["verdict"] == "DRIFT")
    drifted = next(r for r in local_report["results"] if r["verdict"] == "DRIFT")
    assert [(f["kind"], f["line"]) for f in drift["findings"]] == [(f["kind"], f["line"]) for f in drifted["findings"]]
    assert "one per Ray worker" in first_report["console"] and first_report["timings"]["ray_start_s"] > 0
    assert "Traceback" not in first.stderr and "raylet" not in first.stdout

    # --resume: the stored results are taken over; only the new procedure runs on Ray
    (tmp_path / "later.md").rename(docs / "docs-ecs-key-pairs.md")
    again, again_report = docverify(tmp_path, cluster.env, "docs", "--resume", *ray_options(cluster, chromium))
    assert verdicts(again_report) == expected
    assert again.returncode == local.returncode
    taken = {r["id"]: r.get("resumed_from") for r in again_report["results"]}
    assert taken.pop("ecs-create-key-pair") is None
    assert set(taken.values()) == {first_report["run_id"]}
    assert again_report["resumed"] == 2
    assert browsers(cluster.mark) == []


def test_a_worker_that_dies_is_replaced_and_its_procedure_tried_once_more(cluster, chromium, tmp_path):
    copy_docs(tmp_path / "docs", "docs/kms.md", "docs/actiontrail.md")
    env = {**cluster.env, "DOCVERIFY_RAY_CRASH": "kms-create-key@1,actiontrail-create-trail"}
    done, report = docverify(tmp_path, env, "docs", "--no-store", "--provisioner", "terraform",
                             *ray_options(cluster, chromium))
    results = {r["id"]: r for r in report["results"]}
    # died on its first try, passed on its second
    assert results["kms-create-key"]["verdict"] == "PASS", results["kms-create-key"]["reason"]
    assert "kms-create-key: its Ray worker" in done.stderr and "trying it once more" in done.stderr
    # died on both: ENV_ERROR, and the bucket Terraform made for it reclaimed through the ledger
    trail = results["actiontrail-create-trail"]
    assert trail["verdict"] == "ENV_ERROR"
    assert "died mid-procedure" in trail["reason"] and "on its second try too: not tried again" in trail["reason"]
    assert "stack actiontrail-create-trail-" in trail["reason"] and "the sandbox that held it" in trail["reason"]
    assert done.returncode == 3, done.stderr
    assert not list((tmp_path / ".docverify" / "stacks").glob("*.json"))  # nothing left in the ledger
    assert not any((tmp_path / ".docverify" / "terraform").iterdir())
    assert browsers_after(cluster.mark) == []  # the dead workers' browsers went with them
    assert "raylet" not in done.stdout  # Ray's own report of the dead worker is not on stdout


def test_the_driver_leases_the_pools_accounts_for_every_worker(cluster, chromium, tmp_path):
    """One account, two workers: the second procedure waits for the first one's lease."""
    from docverify_sandbox.server import build_app, running
    from docverify_sandbox.state import DEFAULT_ACCOUNTS

    copy_docs(tmp_path / "docs", "docs/kms.md", "docs/ecs-key-pairs.md")
    tenant = DEFAULT_ACCOUNTS[0]
    env = {**cluster.env, "DOCVERIFY_ACCOUNT_ONLY__CONSOLE": "sandbox", "DOCVERIFY_ACCOUNT_ONLY__ALIAS": tenant.alias,
           "DOCVERIFY_ACCOUNT_ONLY__ACCOUNT_ID": tenant.account_id,
           "DOCVERIFY_ACCOUNT_ONLY__LOGIN_USER": f"{tenant.admin_user}@{tenant.alias}.onaliyun.com",
           "DOCVERIFY_ACCOUNT_ONLY__PASSWORD": "env:ONLY_PASSWORD", "ONLY_PASSWORD": tenant.admin_password,
           "DOCVERIFY_ACCOUNT_ONLY__ACCESS_KEY_ID": "env:ONLY_KEY_ID", "ONLY_KEY_ID": tenant.admin_access_key_id,
           "DOCVERIFY_ACCOUNT_ONLY__ACCESS_KEY_SECRET": "env:ONLY_KEY_SECRET",
           "ONLY_KEY_SECRET": tenant.admin_access_key_secret}
    with running(build_app()) as url:
        done, report = docverify(tmp_path, env, "docs", "--no-store", "-O", f"console.sandbox.url={url}",
                                 *ray_options(cluster, chromium))
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(verdicts(report).values()) == ["PASS", "PASS"]
    runs = sorted((datetime.fromisoformat(r["started_at"]).timestamp(), r["duration_s"]) for r in report["results"])
    (first, took), (second, _) = runs
    assert second + 1 >= first + took, runs  # one after the other (started_at is to the second)
    assert tenant.admin_password not in done.stdout + done.stderr + json.dumps(report)


def test_ctrl_c_stops_the_workers_and_the_ray_the_command_started(chromium, tmp_path):
    pytest.importorskip("ray", reason="the ray backend needs Ray: pip install 'docverify[ray]'")
    mark = f"ctrl-c-{uuid.uuid4().hex}"
    copy_docs(tmp_path / "docs", "docs/kms.md", "docs/ecs-key-pairs.md", "docs/vpc.md", "docs/eip.md",
              "docs/ram.md")
    command = [sys.executable, "-m", "docverify", "check", "docs", "--backend", "ray", "--ray-workers", "2",
               "--browser-path", str(chromium.path), "-O", f"console.sandbox.release={RELEASE}"]
    process = subprocess.Popen(command, cwd=tmp_path, env=environment(mark),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    ray_folders = f"docverify-ray-{process.pid}-*"  # where the command's local Ray keeps its logs and sockets
    lines, said = read_lines(process.stdout), []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not any(line.startswith("PASS") for line in said):
            try:
                said.append(lines.get(timeout=1))
            except queue.Empty:
                assert process.poll() is None, "".join(said)
        assert any(line.startswith("PASS") for line in said), "".join(said)
        running = {name for _, name in marked(mark)}
        assert {"raylet", "gcs_server"} <= running and any(n.startswith(BROWSER_PROGRAMS) for n in running), running
        [ray_folder] = Path("/tmp").glob(ray_folders)
        assert list(ray_folder.glob("session_*/logs"))  # Ray writes there, not in /tmp/ray
        os.killpg(process.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground process group
        assert process.wait(120) == 130
        deadline = time.monotonic() + 20  # Ray's processes end a moment after its driver
        while marked(mark) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert marked(mark) == []
        assert not list(Path("/tmp").glob(ray_folders))  # removed with the Ray it held
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        stop_marked(mark)
    while True:
        try:
            said.append(lines.get(timeout=1))
        except queue.Empty:
            break
    output = "".join(said)
    assert "--resume" in output and "Traceback" not in output, output


NEEDS_EIP = """\
# Look at an EIP {n}

<!-- docverify:
id: look-at-eip-{n}
requires:
  - type: eip
-->

1. Log on to the VPC console.
2. In the left-side navigation pane, click **Elastic IP Addresses**.
"""


def test_the_paid_resource_limit_is_the_runs_not_each_workers(cluster, chromium, tmp_path):
    """Two workers, two procedures that each need an EIP (a paid resource), a limit of one
    for the run: one is provisioned, the other refused before anything is applied."""
    (tmp_path / "docs").mkdir()
    for n in (1, 2):
        (tmp_path / "docs" / f"eip-{n}.md").write_text(NEEDS_EIP.format(n=n), encoding="utf-8")
    done, report = docverify(tmp_path, cluster.env, "docs", "--no-store", "--provisioner", "terraform",
                             "--max-paid-resources", "1", *ray_options(cluster, chromium))
    refused = [r for r in report["results"] if "over the limit of 1 paid resource(s) per run" in (r["reason"] or "")]
    assert len(refused) == 1, [(r["id"], r["verdict"], r["reason"]) for r in report["results"]]
    assert refused[0]["verdict"] == "ENV_ERROR"
    [made] = [r for r in report["results"] if r is not refused[0]]
    assert "paid resource" not in (made["reason"] or ""), made["reason"]
    assert not list((tmp_path / ".docverify" / "stacks").glob("*.json"))  # what was made is destroyed
    assert browsers(cluster.mark) == []


def test_a_worker_on_another_node_sends_its_screenshots_and_trace_back(cluster, chromium, tmp_path):
    """A worker that is not on the driver's node writes into a folder of its own and
    sends each procedure's files back (forced here with DOCVERIFY_RAY_SHIP_ARTIFACTS, as
    one machine has one node): the report's paths resolve on the driver."""
    copy_docs(tmp_path / "docs", "drifted/ecs-key-pair.md", "docs/kms.md")
    env = {**cluster.env, "DOCVERIFY_RAY_SHIP_ARTIFACTS": "1"}
    done, report = docverify(tmp_path, env, "docs", "--no-store", "--screenshots", "-O", "executor.playwright.trace=on",
                             *ray_options(cluster, chromium))
    drift = next(r for r in report["results"] if r["verdict"] == "DRIFT")
    named = [drift["artifacts"]["trace"]] + [name for turn in drift["turns"]
                                             for name in (turn.get("screenshot_before"), turn.get("screenshot_after"))
                                             if name]
    assert len(named) > 3, drift
    missing = [name for name in named if not (tmp_path / "out" / name).is_file()]
    assert missing == [], (missing, done.stderr)
    assert not list(Path("/tmp").glob("docverify-ray-artifacts-*/**/*.jpg"))  # sent back, not left behind
    assert browsers(cluster.mark) == []


def test_step_lines_come_as_the_workers_make_them(cluster, chromium, tmp_path):
    """``-v`` on Ray: a procedure's step lines reach the terminal while it runs (through the
    run's turn relay), not all at once with its verdict; none is shown twice."""
    copy_docs(tmp_path / "docs", "docs/kms.md")
    command = [sys.executable, "-m", "docverify", "check", "docs", "--no-store", "-v", "-O",
               f"console.sandbox.release={RELEASE}", "-O", "executor.playwright.slow_mo_ms=400",
               *ray_options(cluster, chromium)]
    process = subprocess.Popen(command, cwd=tmp_path, env=cluster.env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    lines = read_lines(process.stdout)
    seen: list[tuple[float, str]] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            seen.append((time.monotonic(), lines.get(timeout=1)))
        except queue.Empty:
            if process.poll() is not None:
                break
    process.wait(60)
    steps = [(at, line) for at, line in seen if line.strip().startswith("kms-create-key  step")]
    [verdict] = [at for at, line in seen if line.startswith("PASS") and "kms-create-key" in line]
    assert len(steps) == len({line for _, line in steps}) >= 4, seen
    # shown as they were made: each browser operation takes 0.4 s here (slow_mo), so turns
    # come seconds apart; replayed with the result, they would come in one burst with it
    assert steps[-1][0] - steps[1][0] > 1.0 and steps[-1][0] < verdict, \
        [(round(at - seen[0][0], 2), line) for at, line in seen]


def test_the_budget_is_the_runs_not_each_workers(cluster, chromium, tmp_path):
    """--budget on two workers, each with a procedure whose step only a model can take
    ($0.001 a token; a call's worst case ~$1.8, a call bills $0.12): one call fits in
    $1.9, and only one is sent, whichever worker asks first. Each worker used to be
    given the whole budget left, so both calls went out."""
    sys.path.insert(0, str(ROOT / "tests" / "models"))
    from fake_openai import FakeOpenAI, Reply, action

    docs = tmp_path / "docs"
    docs.mkdir()
    unfollowable = (ROOT / "tests" / "models" / "eip-unfollowable.md").read_text(encoding="utf-8")
    for n in (1, 2):
        (docs / f"eip-{n}.md").write_text(unfollowable.replace("id: drifted-eip-create", f"id: eip-{n}"),
                                          encoding="utf-8")
    (tmp_path / "docverify.toml").write_text('[prices.fake-model]\ninput_usd = 1000.0\noutput_usd = 1000.0\n')
    reply = Reply(action("done", status="blocked", message="not this page"), usage=(100, 20))
    with FakeOpenAI(lambda body, fake: reply) as server:
        done, report = docverify(tmp_path, {**cluster.env, "DOCVERIFY_TEST_FAKE_KEY": "sk-fake-ray-0123456789"},
                                 "docs", "--no-store", "--policy", "hybrid", "--budget", "1.9USD",
                                 "-O", f"policy.hybrid.base_url={server.url}", "-O", "policy.hybrid.model=fake-model",
                                 "-O", "policy.hybrid.api_key_env=DOCVERIFY_TEST_FAKE_KEY",
                                 "-O", "policy.hybrid.max_answer_tokens=64", *ray_options(cluster, chromium))
        calls = len(server.requests)
    assert calls == report["usage"]["calls"] == 1, [(r["id"], r["verdict"], r["reason"]) for r in report["results"]]
    assert report["usage"]["cost_usd"] == pytest.approx(0.12)
    reasons = " ".join(f"{r['reason']} {json.dumps(r['findings'])}" for r in report["results"])
    assert "the cost budget ran out" in reasons or "not run: the cost budget" in reasons
    assert browsers(cluster.mark) == []
