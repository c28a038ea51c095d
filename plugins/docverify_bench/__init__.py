"""docverify's benchmark (plugin ``bench``): task sets, ``docverify bench`` and its statistics.

Only hook implementations live here; everything heavy is imported lazily.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_commands(register):
    register("docverify_bench.cli:bench", name="bench")
