"""What a Terraform command answers: its run, its diagnostics, its errors.

Below both :mod:`.engine` (stacks, the ledger) and :mod:`.commands` (the command
lines python-terraform builds), which read Terraform's answers the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from docverify.errors import EnvironmentProblem


class TerraformError(EnvironmentProblem):
    """A Terraform command failed; ``str()`` is one line, the full output is in ``log_path``."""

    def __init__(self, message: str, *, command: str = "", log_path: Path | None = None,
                 diagnostics: tuple["Diagnostic", ...] = (), summary: str = "") -> None:
        super().__init__(message, hint=f"full log: {log_path}" if log_path else None)
        self.command = command
        self.log_path = log_path
        self.diagnostics = diagnostics
        self.summary = summary or message  #: what went wrong, without the command and directory


class DestroyFailed(TerraformError):
    """``terraform destroy`` kept failing; ``leftovers`` are the resources still in the state."""

    def __init__(self, message: str, *, leftovers: list[str], **kw: Any) -> None:
        super().__init__(message, **kw)
        self.leftovers = leftovers


@dataclass(frozen=True)
class Diagnostic:
    """One Terraform diagnostic, with the file and line it points at when it has one."""

    severity: str  #: "error" or "warning"
    summary: str
    detail: str = ""
    file: str | None = None
    line: int | None = None
    column: int | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Diagnostic":
        rng = data.get("range") or {}
        start = rng.get("start") or {}
        return cls(severity=data.get("severity", "error"), summary=data.get("summary", ""),
                   detail=data.get("detail", ""), file=rng.get("filename"), line=start.get("line"),
                   column=start.get("column"))

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else (f"{self.file}: " if self.file else "")
        return f"{where}{self.severity}: {self.summary}"


@dataclass(frozen=True)
class Run:
    """One finished Terraform command."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def _json_lines(text: str) -> Iterator[dict[str, Any]]:
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                yield json.loads(line)
            except ValueError:
                continue


def _stream_diagnostics(stdout: str) -> tuple[Diagnostic, ...]:
    return tuple(Diagnostic.from_json(m["diagnostic"]) for m in _json_lines(stdout)
                 if m.get("type") == "diagnostic" and isinstance(m.get("diagnostic"), dict))


def _stderr_summary(stderr: str) -> str | None:
    """The first specific ``Error:`` of Terraform's human output (init has no ``-json``)."""
    errors = [line.strip("│╷╵ \t")[len("Error: "):].strip() for line in stderr.splitlines()
              if line.strip("│╷╵ \t").startswith("Error: ")]
    specific = [e for e in errors if not e.startswith("Terraform encountered problems")]
    return (specific or errors or [None])[0]
