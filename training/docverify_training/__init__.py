"""docverify's training part (plugin ``training``): trajectories, ``docverify rollout``, ``docverify train``.

Only hook implementations live here; everything heavy is imported lazily.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_commands(register):
    register("docverify_training.cli:rollout", name="rollout")
    register("docverify_training.cli:train", name="train")
    register("docverify_training.explore_cli:explore", name="explore")


@hookimpl
def register_policies(register):
    register("docverify_training.oracle:OraclePolicy", name="oracle")
