"""The error hierarchy and the exit codes of docs/architecture.md.

Library code raises these; only the CLI entry point (`docverify.cli.main`) turns
them into a message and an exit code.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes (docs/architecture.md, "Verdicts")."""

    OK = 0  #: every procedure PASSed (or the command succeeded)
    DEFECTS = 1  #: any DRIFT or FAIL
    USAGE = 2  #: usage or configuration error
    ENVIRONMENT = 3  #: only ENV_ERROR / INCONCLUSIVE problems
    PLUGIN = 4  #: a plugin failed to load or misbehaved
    NO_PROCEDURES = 5  #: no procedures found
    INTERNAL = 70  #: a bug in docverify itself (EX_SOFTWARE); please report it
    INTERRUPTED = 130  #: Ctrl-C or SIGTERM


class DocverifyError(Exception):
    """Base of every error docverify reports to a user.

    `str(error)` is one line that says what went wrong and what to do.
    """

    exit_code: ExitCode = ExitCode.USAGE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UsageError(DocverifyError):
    """The command line asked for something impossible."""

    exit_code = ExitCode.USAGE


class ConfigError(DocverifyError):
    """docverify.toml, an environment variable or an option holds a bad value."""

    exit_code = ExitCode.USAGE


class PluginError(DocverifyError):
    """A plugin could not be loaded, is unknown, or broke its contract."""

    exit_code = ExitCode.PLUGIN


class NoProceduresError(DocverifyError):
    """The given paths hold no procedure to work on."""

    exit_code = ExitCode.NO_PROCEDURES


class EnvironmentProblem(DocverifyError):
    """The environment (console, browser, provisioning, account) is not usable."""

    exit_code = ExitCode.ENVIRONMENT


class Undecided(Exception):
    """A policy cannot go on for a reason that says nothing about the doc: its cost or
    token budget is spent, its model keeps answering nonsense. The procedure ends
    INCONCLUSIVE with this message; the run goes on."""


class CredentialsRejected(EnvironmentProblem):
    """The console refused the account's credentials (a sign-in or an AccessKey): the
    account is unusable until someone fixes it (the account pool quarantines it)."""


def yaml_error_at(error: Exception) -> tuple[int | None, str]:
    """Where a ``yaml.YAMLError`` points (its line, 0-based; None when it names
    none) and what it says, for messages that name the file and line."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or (str(error).splitlines() or ["syntax error"])[0]
    return (mark.line if mark is not None else None), problem
