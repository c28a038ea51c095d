"""The ``docverify`` command line: the root group and the one crash handler.

Only this package turns exceptions into messages and exit codes; library code
raises :class:`~docverify.errors.DocverifyError` subclasses.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Sequence

import click

from docverify import __version__
from docverify.errors import DocverifyError, ExitCode, PluginError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

#: built-in commands: name -> "module:attribute", imported only when used
BUILTIN_COMMANDS = {
    "check": "docverify.cli.check:check",
    "merge": "docverify.cli.merge:merge",
    "parse": "docverify.cli.parse:parse",
    "plugins": "docverify.cli.plugins:plugins",
    "config": "docverify.cli.config:config",
    "plan": "docverify.cli.plan:plan",
    "accounts": "docverify.cli.accounts:accounts",
    "init": "docverify.cli.init:init",
    "schema": "docverify.cli.schema:schema",
}


def debug_enabled() -> bool:
    return os.environ.get("DOCVERIFY_DEBUG", "").lower() in {"1", "true", "yes", "on"}


class DocverifyGroup(click.Group):
    """Root group: built-in commands plus those plugins register, and the crash handler."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(BUILTIN_COMMANDS)
        try:
            names.update(_app(ctx).plugins.registry("commands").names())
        except PluginError as error:  # still show help for the built-ins
            click.echo(f"warning: {error}", err=True)
        return sorted(names)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in BUILTIN_COMMANDS:
            module_name, attribute = BUILTIN_COMMANDS[name].split(":")
            return getattr(importlib.import_module(module_name), attribute)
        commands = _app(ctx).plugins.registry("commands")
        return commands.get(name) if name in commands else None

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, **extra: Any) -> Any:
        extra.pop("standalone_mode", None)
        code = run_guarded(lambda: super(DocverifyGroup, self).main(
            args=args, prog_name=prog_name or "docverify", standalone_mode=False, **extra
        ))
        sys.exit(code)


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as Ctrl-C: a CI runner cancelling the job, ``docker stop``, ``kill``."""


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """While the CLI runs, SIGTERM stops it as Ctrl-C does (the procedures cancelled,
    what they provisioned destroyed, the browser closed, what finished saved and
    reported, exit 130) instead of killing it on the spot, which would leave cloud
    resources and child processes behind. A SIGTERM that comes while a Ctrl-C or an
    earlier SIGTERM is being handled is ignored, so that clean-up goes on: a cancelled
    CI job gets SIGINT, then SIGTERM seconds later (a second Ctrl-C still stops waiting).
    Nothing changes where SIGTERM already has a handler or is ignored, or off the main
    thread."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def terminate(signum: int, frame: Any) -> None:  # noqa: ARG001 - the signal API
        if not isinstance(sys.exc_info()[1], KeyboardInterrupt):  # in a handler's except or finally: its clean-up
            raise Terminated()

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_guarded(invoke) -> int:
    """Run the CLI, turning every outcome into an exit code and at most one line
    of error (a traceback only with DOCVERIFY_DEBUG=1); SIGTERM is Ctrl-C
    (:func:`sigterm_as_ctrl_c`)."""
    try:
        with sigterm_as_ctrl_c():
            result = invoke()
    except click.exceptions.Exit as done:
        return done.exit_code
    except (KeyboardInterrupt, click.Abort) as stop:
        terminated = isinstance(stop, Terminated) or isinstance(stop.__cause__, Terminated)  # click: Abort from it
        click.echo("terminated (SIGTERM)" if terminated else "interrupted", err=True)
        return ExitCode.INTERRUPTED
    except click.ClickException as error:
        error.show()
        return ExitCode.USAGE
    except DocverifyError as error:
        if debug_enabled():
            traceback.print_exc()
        click.secho(f"error: {error}", fg="red", err=True)
        return error.exit_code
    except BrokenPipeError:
        return ExitCode.OK  # `docverify parse ... | head`
    except Exception as error:  # a bug: say so, keep the traceback behind DOCVERIFY_DEBUG
        if debug_enabled():
            traceback.print_exc()
        click.secho(
            f"internal error: {type(error).__name__}: {error} "
            "(this is a bug in docverify or a plugin; rerun with DOCVERIFY_DEBUG=1 for the traceback "
            "and report it)",
            fg="red",
            err=True,
        )
        return ExitCode.INTERNAL
    return int(result) if isinstance(result, int) else ExitCode.OK


def _app(ctx: click.Context):
    from docverify.cli.app import App

    root = ctx.find_root()
    if not isinstance(root.obj, App):
        root.obj = App(root.params.get("config_path"))
    elif root.obj.config_path is None:
        root.obj.config_path = root.params.get("config_path")
    return root.obj


@click.group(cls=DocverifyGroup, context_settings=CONTEXT_SETTINGS)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    envvar="DOCVERIFY_CONFIG",
    help="Configuration file (default: docverify.toml here or in a folder above). Env: DOCVERIFY_CONFIG.",
)
@click.version_option(__version__, "-V", "--version", prog_name="docverify")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None) -> None:
    """Documentation CI for cloud consoles: execute how-to procedures and report drift.

    \b
    Examples:
      docverify check examples/docs         # run procedures on the embedded sandbox
      docverify parse docs/                 # what docverify understands of your docs
      docverify parse docs/ --json          # the same, for scripts
      docverify plugins                     # installed plugins and their options

    Set DOCVERIFY_DEBUG=1 to see tracebacks.
    """
    if debug_enabled():
        import logging

        from docverify.scrub import ScrubFilter

        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")
        for handler in logging.getLogger().handlers:  # debug logs show requests: never a secret in them
            handler.addFilter(ScrubFilter())
    _app(ctx)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (the process exits when it returns)."""
    from docverify.openmp import share_cores

    share_cores()  # before any command loads an OpenMP runtime (llama.cpp, PyTorch)
    try:
        cli.main(args=argv)
    finally:
        # Every report is written and every file closed: the garbage collection the
        # interpreter would run over the run's objects on its way out (about 0.2 s of
        # a one-procedure check) would only delay the exit. Not for embedders: a
        # frozen object is never collected.
        gc.freeze()


def get_app(ctx: click.Context):
    """The :class:`~docverify.cli.app.App` of this invocation."""
    return _app(ctx)
