"""docverify's embedded sandbox console (plugin ``sandbox``).

Only hook implementations live here; everything heavy is imported lazily.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_consoles(register):
    register("docverify_sandbox.console:SandboxConsole", name="sandbox", default=True)


@hookimpl
def register_commands(register):
    register("docverify_sandbox.cli:sandbox", name="sandbox")
