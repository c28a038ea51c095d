"""docverify's training part (plugin ``training``): trajectories, ``docverify rollout``.

Only hook implementations live here; everything heavy is imported lazily.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_commands(register):
    register("docverify_training.cli:rollout", name="rollout")
