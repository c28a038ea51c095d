"""`docverify plan` shows what plugins add through the `plan_provisioning` hook
(the terraform plugin's stack is one such part, not the core's)."""

from __future__ import annotations

import json
import types
from pathlib import Path

from click.testing import CliRunner

from docverify.cli import cli
from docverify.cli.app import App
from docverify.hookspecs import hookimpl
from docverify.plugins import load_plugins
from docverify.provision.plan import PlanSection

DOCS = Path(__file__).resolve().parents[2] / "examples" / "docs"


class CountingPlanner:
    facts = {"kit": "demo"}

    def __init__(self, request) -> None:
        self.request = request

    def plan(self, procedure, meta) -> PlanSection:
        return PlanSection("kit", {"count": len(meta.requirements), "suffix": self.request.suffix},
                           cells={r.type: f"kit:{r.type}" for r in meta.requirements},
                           files={"kit.txt": f"{procedure.id}\n"})


kit_plugin = types.SimpleNamespace(__name__="kit_plugin",
                                   plan_provisioning=hookimpl(lambda request: CountingPlanner(request)))


def _invoke(plugins, *args):
    return CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["plan", str(DOCS / "vpc.md"), *args],
                                                    obj=App(plugins=plugins))


def test_a_plugin_adds_a_column_files_and_json():
    plugins = load_plugins(entry_points=False, extra=[kit_plugin])
    result = _invoke(plugins)
    assert result.exit_code == 0, result.output
    assert "kit:vpc" in result.stdout and "# kit.txt" in result.stdout and "vpc-create-vswitch" in result.stdout
    assert "(kit demo, suffix xxxxxx; nothing was created)" in result.stderr
    assert "# kit.txt" not in _invoke(plugins, "--no-terraform").stdout
    payload = json.loads(_invoke(plugins, "--json", "--suffix", "ab12cd").stdout)
    assert payload["kit"] == "demo" and payload["suffix"] == "ab12cd"
    assert payload["procedures"][0]["kit"] == {"count": 1, "suffix": "ab12cd"}


def test_without_planners_the_meta_is_still_planned():
    result = _invoke(load_plugins(entry_points=False))
    assert result.exit_code == 0, result.output
    assert "vpc: inferred" in result.stdout and "alicloud_vpc" not in result.stdout
    assert "(suffix xxxxxx; nothing was created)" in result.stderr
    payload = json.loads(_invoke(load_plugins(entry_points=False), "--json").stdout)
    assert "terraform" not in payload["procedures"][0] and "provider" not in payload
