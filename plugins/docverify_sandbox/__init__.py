"""docverify's embedded sandbox console (plugin ``sandbox``).

Only hook implementations live here; everything heavy is imported lazily.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_consoles(register):
    from docverify_sandbox.console import SandboxConsole

    register(SandboxConsole)


@hookimpl
def register_commands(register):
    from docverify_sandbox.cli import sandbox

    register(sandbox)
