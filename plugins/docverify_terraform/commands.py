"""Terraform command lines built by python-terraform, run under docverify's process control.

:class:`TerraformCommands` is python-terraform's ``Terraform`` for one working directory: its
methods and ``generate_cmd_string`` build the arguments (``lock_timeout="30s"`` is
``-lock-timeout=30s``, ``IsFlagged`` a bare flag, ``IsNotFlagged`` none, ``-input=false``
and ``-no-color`` by default). Its ``cmd`` is overridden because python-terraform 0.10.1
starts Terraform in one ``Popen`` with a copy of ``os.environ`` (the credentials would have
to enter docverify's own environment), pipes (a Terraform whose parent died fails on them
before it saves the state), no ``preexec_fn``, no process group and no timeout; its
``synchronous=False`` reaches Terraform as a ``-synchronous=false`` flag it refuses. Nor is
the whole state parsed after every command: a killed Terraform may have left it half written.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from python_terraform import Terraform as PythonTerraform

from docverify_terraform.lifeline import preexec_ending_with_this_process
from docverify_terraform.outcome import Run, TerraformError, _json_lines, _stderr_summary, _stream_diagnostics
from docverify_terraform.strays import STACK_ENV

if TYPE_CHECKING:
    from docverify_terraform.engine import Terraform

#: seconds an interrupted Terraform gets to write its state before it is killed
GRACE = 20.0


class TerraformCommands(PythonTerraform):
    """python-terraform's ``Terraform`` for ``workdir``: the binary, environment and timeouts
    of a docverify :class:`~docverify_terraform.engine.Terraform`; each command's output
    goes, redacted, to ``log``."""

    def __init__(self, terraform: "Terraform", workdir: Path, *, log: Path | None = None) -> None:
        self.terraform, self.workdir, self.log = terraform, Path(workdir), log
        super().__init__(working_dir=str(workdir), terraform_bin_path=str(terraform.binary.path))
        self.variables = None  # python-terraform turns even no variables into a temporary -var-file

    def read_state_file(self, file_path: str | None = None) -> None:
        """Not after every command (see the module's docstring)."""

    def cmd(self, cmd: str, *args: Any, **kwargs: Any) -> tuple[int, str, str]:
        """``terraform <cmd> <options> <args>`` as python-terraform builds it, run by :meth:`run`;
        ``(return code, stdout, stderr)`` back.

        ``timeout``: seconds (default: the command's in ``Terraform.timeouts``).
        ``raise_on_error`` (default True here): a failure raises :class:`TerraformError`, one
        redacted line, rather than python-terraform's ``TerraformCommandError``.
        """
        timeout = kwargs.pop("timeout", None) or self.terraform.timeouts.get(cmd.split()[0], 600.0)
        raise_on_error = kwargs.pop("raise_on_error", True)
        kwargs.pop("capture_output", None)  # always captured, into files
        kwargs.pop("synchronous", None)  # always waited for, up to the timeout
        try:
            run = self.run(self.generate_cmd_string(cmd, *args, **kwargs)[1:], timeout=timeout)
        finally:
            self.temp_var_files.clean_up()
        if raise_on_error and run.returncode != 0:
            raise self.failure(run.args[0], run.returncode, run.stdout, run.stderr)
        return run.returncode, run.stdout, run.stderr

    def failure(self, command: str, returncode: int, stdout: str, stderr: str) -> TerraformError:
        """A failed command as one line: its first error diagnostic, else the first ``Error:``."""
        diagnostics = _stream_diagnostics(stdout)
        errors = [d for d in diagnostics if d.severity == "error"]
        if errors:
            summary = str(errors[0]) + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
        else:
            summary = _stderr_summary(stderr) or f"exit status {returncode}"
        summary = self.terraform.redact(summary)
        return TerraformError(f"terraform {command} failed in {self.workdir.name}: {summary}", command=command,
                              log_path=self.log, diagnostics=diagnostics, summary=summary)

    def run(self, args: tuple[str, ...], *, timeout: float) -> Run:
        """Run ``args`` (after the binary) in its own process group. At the timeout, or on
        Ctrl-C, Terraform is interrupted (it saves the state of what it created), then killed
        with its providers after :data:`GRACE` seconds.

        Should this process die outright (``kill -9``), Terraform is interrupted all the
        same (Linux: the kernel's parent-death signal, :mod:`.lifeline`). Its output goes to
        unnamed temporary files, not pipes, so it can still write while it stops instead
        of dying on a broken pipe before it saves the state. A Terraform killed by a
        signal takes the providers it started with it (their process group)."""
        args = tuple(args)
        started = time.monotonic()
        env = {**self.terraform.environment(), STACK_ENV: str(self.workdir)}
        with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
            proc = subprocess.Popen([self.terraform_bin_path, *args], cwd=self.workdir, env=env, stdout=stdout,
                                    stderr=stderr, stdin=subprocess.DEVNULL, start_new_session=True,
                                    preexec_fn=preexec_ending_with_this_process(signal.SIGINT))

            def finished(returncode: int) -> Run:
                stdout.seek(0)
                stderr.seek(0)
                run = Run(args, returncode, stdout.read().decode("utf-8", errors="replace"),
                          stderr.read().decode("utf-8", errors="replace"), time.monotonic() - started)
                self._log(run)
                return run

            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _stop_group(proc)
                finished(-1)
                raise TerraformError(f"terraform {args[0]} timed out after {timeout:.0f} s in {self.workdir.name}",
                                     command=args[0], log_path=self.log,
                                     summary=f"timed out after {timeout:.0f} s") from None
            except BaseException:  # Ctrl-C or SystemExit: stop Terraform and its providers with us
                _stop_group(proc)
                finished(-1)
                raise
            if proc.returncode < 0:  # killed (kill -9, OOM): nobody stopped its providers
                _signal_group(proc, signal.SIGKILL)
            return finished(proc.returncode)

    def _log(self, run: Run) -> None:
        if self.log is None:
            return
        lines = [f"$ {self.terraform.binary.kind} {' '.join(run.args)}    # exit {run.returncode}, {run.seconds:.1f} s"]
        messages = list(_json_lines(run.stdout))
        if messages and all("@message" in m or "valid" in m for m in messages):
            for m in messages:
                if "@message" in m:
                    lines.append(f"{str(m.get('@timestamp', ''))[11:23]} {m['@message']}")
                    diag = m.get("diagnostic")
                    if isinstance(diag, dict) and diag.get("detail"):
                        lines.append("  " + diag["detail"].replace("\n", "\n  "))
                else:
                    lines.append(json.dumps(m, indent=1))
        elif run.stdout.strip():
            lines.append(run.stdout.rstrip())
        if run.stderr.strip():
            lines.append("[stderr]\n" + run.stderr.rstrip())
        with open(self.log, "a", encoding="utf-8") as f:
            f.write(self.terraform.redact("\n".join(lines)) + "\n\n")


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        if proc.poll() is None:
            proc.send_signal(sig)


def _stop_group(proc: subprocess.Popen) -> None:
    """Interrupt the process group, kill it after :data:`GRACE` seconds."""
    _signal_group(proc, signal.SIGINT)
    try:
        proc.wait(timeout=GRACE)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        proc.wait()
    _signal_group(proc, signal.SIGKILL)  # providers that outlived Terraform
