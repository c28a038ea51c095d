"""Catalog, releases and the ``sandbox`` CLI group."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from docverify_sandbox import catalog
from docverify_sandbox.cli import sandbox


def test_release_resolution():
    assert catalog.resolve_release("2021-06-15").name == "2021-06"
    assert catalog.resolve_release("2030-01").name == "2026-03"
    assert catalog.resolve_release(None).name == "2026-03"


def test_overlays_change_the_catalog_without_code():
    old, new = catalog.load("2021-06"), catalog.load("2026-03")
    assert old.resource("ecs", "instance")["create"]["button"] == "Create Instance"
    assert new.resource("ecs", "instance")["create"]["button"] == "Create ECS Instance"
    steps = list(new.resource("ecs", "instance")["create"]["steps"])
    assert steps[:3] == ["basic", "image_storage", "networking"]
    assert "classic" not in new.resource("ecs", "instance")["fields"]["NetworkType"]["options"]
    assert new.product("ecs")["nav"]["security_groups"]["group"] == "network"
    # the base data is never mutated
    assert catalog.load("2021-06").resource("ecs", "instance")["create"]["button"] == "Create Instance"


def test_changelog_is_big_enough():
    rows = catalog.changelog("2021-06", "2026-03")
    assert len(rows) >= 25
    assert len({r.product for r in rows}) >= 8
    kinds = {r.kind for r in rows}
    assert {"renamed_button", "moved_navigation", "split_wizard_step", "new_required_field", "removed_option",
            "added_confirmation"} <= kinds
    assert catalog.changelog("2026-03", "2026-03") == []


def test_every_ui_action_has_an_operation():
    cat = catalog.load("2026-03")
    checked = 0
    for pkey, product in cat.products.items():
        for rkey, res in product["resources"].items():
            for name, action in res.get("actions", {}).items():
                if action.get("op"):
                    assert cat.op_in_product(pkey, action["op"]), (pkey, rkey, name)
                    checked += 1
            if res.get("create"):
                assert cat.op_in_product(pkey, res["create"]["op"]), (pkey, rkey)
                checked += 1
    assert checked >= 10  # a catalog read as empty passes nothing


def test_cli_changelog_json():
    result = CliRunner().invoke(sandbox, ["changelog", "--from", "2021-06", "--to", "2026-03", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert {"product", "page", "kind", "old", "new"} <= set(rows[0])


def test_cli_products():
    result = CliRunner().invoke(sandbox, ["products", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert len(data["products"]) == 12
    result = CliRunner().invoke(sandbox, ["products"])
    assert "RunInstances" in result.output


def test_cli_reset_data_dir(tmp_path):
    result = CliRunner().invoke(sandbox, ["reset", "--data", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "reset sandbox" in result.output
    result = CliRunner().invoke(sandbox, ["reset"])
    assert result.exit_code != 0


def test_plugin_import_is_cheap():
    code = ("import sys, docverify_sandbox; "
            "bad = [m for m in ('uvicorn', 'starlette', 'jinja2', 'sqlite3') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": "plugins:."})
    assert out.stdout.strip() == "[]"


def test_console_plugin_stops_cleanly():
    import threading

    from docverify_sandbox.console import SandboxConsole

    before = threading.active_count()
    with SandboxConsole(SandboxConsole.Options(latency_ms=0)).start() as ep:
        assert ep.release == "2026-03" and ep.audit_url.startswith("127.0.0.1:")
    assert threading.active_count() == before


def test_release_2026_changes_alb_and_kms():
    from docverify_sandbox import catalog

    new = catalog.load("2026-03").products
    mode = new["alb"]["resources"]["load_balancer"]["fields"]["AddressAllocatedMode"]
    assert "Fixed" not in mode["options"] and mode["default"] == "Dynamic"
    assert new["kms"]["resources"]["key"]["fields"]["DKMSInstanceId"]["required"] is True
    assert {c.product for c in catalog.changelog("2021-06", "2026-03")} >= {"alb", "kms"}


def test_serve_takes_its_settings_from_docverify_toml_and_env(tmp_path):
    """`sandbox serve` reads [console.sandbox] like `check` does; options win over both."""
    import os
    import re
    import urllib.request

    (tmp_path / "docverify.toml").write_text('[console.sandbox]\nrelease = "2021-06"\nport = 0\n')
    env = {**os.environ, "DOCVERIFY_CONSOLE__SANDBOX__LATENCY_MS": "5"}
    process = subprocess.Popen([sys.executable, "-m", "docverify", "sandbox", "serve"], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = process.stdout.readline()
        found = re.match(r"sandbox console (\S+) on (http://127\.0\.0\.1:(\d+))/console", first)
        assert found, first + process.stderr.read()
        assert found[1] == "2021-06" and found[3] != "8123"  # port 0 from the file: a free port
        with urllib.request.urlopen(found[2] + "/signin", timeout=10) as response:
            assert response.status == 200
    finally:
        process.terminate()
        process.wait(timeout=10)
    bad = subprocess.run([sys.executable, "-m", "docverify", "sandbox", "serve", "--release", "1999"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "no sandbox release on or before '1999'" in bad.stderr
    wrong = tmp_path / "other"
    wrong.mkdir()
    (wrong / "docverify.toml").write_text('[console.sandbox]\nlatency_ms = "slow"\n')
    invalid = subprocess.run([sys.executable, "-m", "docverify", "sandbox", "serve"], cwd=wrong,
                             capture_output=True, text=True, timeout=60)
    assert invalid.returncode == 2 and "latency_ms" in invalid.stderr and "docverify.toml" in invalid.stderr
