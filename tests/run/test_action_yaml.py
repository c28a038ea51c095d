"""The GitHub Action (action.yml) and the example workflow: valid, complete, injection-safe.

The action's `docverify check` step is also run for real with bash, as GitHub runs
it, against a fake `docverify` that records its arguments.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOW = ROOT / ".github" / "workflows" / "docs-check-example.yml"


@pytest.fixture(scope="module")
def action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def check_step(action: dict) -> dict:
    return next(step for step in action["runs"]["steps"] if step.get("id") == "check")


def test_action_is_a_composite_with_the_documented_inputs(action: dict) -> None:
    assert action["name"] == "docverify"
    assert action["runs"]["using"] == "composite"
    defaults = {name: spec.get("default") for name, spec in action["inputs"].items()}
    assert defaults == {
        "paths": "docs",
        "report": "github,junit,html",
        "output": "docverify-report",
        "fail-on": "drift,fail,env",
        "changed-since": "",
        "args": "",
        "python-version": "3.12",
        "docverify-spec": "",
        "artifact-name": "docverify-report",
    }
    assert all(spec.get("description") for spec in action["inputs"].values())
    assert set(action["outputs"]) == {"exit-code", "report-dir"}
    for name, spec in action["outputs"].items():
        assert spec["value"] == f"${{{{ steps.check.outputs.{name} }}}}"


def test_every_input_is_used_by_a_step(action: dict) -> None:
    steps = yaml.safe_dump(action["runs"]["steps"])
    unused = [name for name in action["inputs"] if f"inputs.{name} }}}}" not in steps]
    assert unused == []


def test_no_expression_is_expanded_inside_a_script(action: dict) -> None:
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step.get("name")
            assert step["shell"] == "bash"


def test_the_steps_install_run_and_upload(action: dict) -> None:
    steps = action["runs"]["steps"]
    uses = [step.get("uses") for step in steps]
    assert uses[0] == "actions/setup-python@v5"
    assert "actions/upload-artifact@v4" in uses
    upload = next(step for step in steps if step.get("uses") == "actions/upload-artifact@v4")
    assert upload["if"] == "always()" and upload["with"]["path"] == "${{ inputs.output }}"
    scripts = "\n".join(step.get("run", "") for step in steps)
    assert "python -m playwright install --with-deps chromium" in scripts
    assert "[browser,actiontrail]" in scripts
    install = next(step for step in steps if step.get("name") == "Install docverify")
    assert install["env"]["DOCVERIFY_ACTION_PATH"] == "${{ github.action_path }}"
    assert "pipefail" in check_step(action)["run"]


def test_the_example_workflow(workflow: dict) -> None:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["pull_request"]["paths"] == ["examples/docs/**"]
    assert triggers["schedule"][0]["cron"]
    [job] = workflow["jobs"].values()
    checkout, docverify = job["steps"][0], job["steps"][1]
    assert checkout["uses"] == "actions/checkout@v4" and checkout["with"]["fetch-depth"] == 0
    assert docverify["uses"] == "./"
    changed = docverify["with"]["changed-since"]
    assert "github.base_ref" in changed and "origin/" in changed and "pull_request" in changed
    for step in job["steps"]:
        assert "${{" not in step.get("run", "")


# -- the check step, run for real -------------------------------------------------

FAKE_DOCVERIFY = """#!/usr/bin/env bash
printf '%s\\0' "$@" > "$FAKE_ARGS"
echo "::error file=docs/a.md,line=3::drift"
echo "to stderr" >&2
exit "${FAKE_EXIT:-1}"
"""


@pytest.fixture
def run_check(action: dict, tmp_path: Path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docverify").write_text(FAKE_DOCVERIFY, encoding="utf-8")
    (bin_dir / "docverify").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    script = tmp_path / "check.sh"
    script.write_text(check_step(action)["run"], encoding="utf-8")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    defaults = {name: spec["default"] for name, spec in action["inputs"].items()}

    def run(fake_exit: int = 1, **inputs: str) -> tuple[subprocess.CompletedProcess, list[str], dict[str, str]]:
        values = {**defaults, **{name.replace("_", "-"): value for name, value in inputs.items()}}
        step_env = {
            key: re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", expression).group(1)
            for key, expression in check_step(action)["env"].items()
        }
        output = tmp_path / "github_output"
        output.write_text("", encoding="utf-8")
        environment = {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_OUTPUT": str(output),
            "RUNNER_TEMP": str(tmp_path),
            "FAKE_ARGS": str(tmp_path / "args"),
            "FAKE_EXIT": str(fake_exit),
            **{key: values[name] for key, name in step_env.items()},
        }
        completed = subprocess.run(
            [bash, "--noprofile", "--norc", "-eo", "pipefail", str(script)],  # as GitHub runs `shell: bash`
            cwd=workspace, env=environment, capture_output=True, text=True, timeout=30,
        )
        args_file = tmp_path / "args"
        args = args_file.read_text(encoding="utf-8").split("\0")[:-1] if args_file.exists() else []
        outputs = dict(line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines())
        return completed, args, outputs

    run.workspace = workspace
    return run


def test_the_check_step_builds_the_command_and_keeps_the_exit_code(run_check) -> None:
    completed, args, outputs = run_check(fake_exit=1)
    assert completed.returncode == 1
    assert args == [
        "check", "docs", "--report", "github,junit,html", "--output", "docverify-report", "--fail-on", "drift,fail,env"
    ]
    assert outputs == {"report-dir": f"{run_check.workspace}/docverify-report", "exit-code": "1"}
    assert "::error file=docs/a.md,line=3::drift" in completed.stdout  # annotations pass through
    log = (run_check.workspace / "docverify-report" / "docverify.log").read_text(encoding="utf-8")
    assert "to stderr" in log


def test_the_check_step_passes_every_input_without_evaluating_it(run_check, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    completed, args, outputs = run_check(
        fake_exit=0,
        paths="docs/a.md#create-bucket 'docs/with space.md'\nguides",
        changed_since=f"origin/main$(touch {marker})",
        args=f'--jobs 4 -k "bucket and not delete" `touch {marker}` ; touch {marker}',
        output="out dir",
    )
    assert completed.returncode == 0, completed.stderr
    assert args == [
        "check", "docs/a.md#create-bucket", "docs/with space.md", "guides",
        "--report", "github,junit,html", "--output", "out dir", "--fail-on", "drift,fail,env",
        "--changed-since", f"origin/main$(touch {marker})",
        "--jobs", "4", "-k", "bucket and not delete", "`touch", f"{marker}`", ";", "touch", str(marker),
    ]
    assert not marker.exists()
    assert outputs["exit-code"] == "0"


def test_unbalanced_quotes_in_args_stop_with_a_clear_error(run_check) -> None:
    completed, args, _ = run_check(args='-k "bucket')
    assert completed.returncode == 2 and args == []
    assert "::error title=docverify::the args input has unbalanced quotes" in completed.stdout
