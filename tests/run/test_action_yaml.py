"""The GitHub Action (action.yml) and the workflows: valid, complete, pinned, injection-safe.

The action's bash steps are also run for real with bash, as GitHub runs them, with
their `env:` filled in from the inputs: `docverify check` against a fake `docverify`
that records its arguments and writes a docverify.json, the failure-issue step
against a fake `gh` that records every call.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
WORKFLOW = ROOT / ".github" / "workflows" / "docs-check-example.yml"
SHARDED = ROOT / ".github" / "workflows" / "docs-check-sharded-example.yml"

#: `uses: owner/repo[/path]@<40 hex> # vX.Y.Z`, the only form allowed besides local actions
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40} # v\d+\.\d+\.\d+$")


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def action() -> dict:
    return load(ACTION)


@pytest.fixture(scope="module")
def workflow() -> dict:
    return load(WORKFLOW)


def step(action: dict, step_id: str) -> dict:
    return next(step for step in action["runs"]["steps"] if step.get("id") == step_id)


def uses_lines(path: Path) -> list[str]:
    """Every `uses:` value of a file as written, with its trailing comment."""
    return [match.group(1).strip() for match in re.finditer(r"^\s*(?:-\s+)?uses:\s*(.+)$",
                                                            path.read_text(encoding="utf-8"), re.MULTILINE)]


def workflow_steps(data: dict) -> list[dict]:
    return [step for job in data["jobs"].values() for step in job.get("steps", [])]


# -- the action's definition --------------------------------------------------------


def test_action_is_a_composite_with_the_documented_inputs(action: dict) -> None:
    assert action["name"] == "docverify"
    assert action["runs"]["using"] == "composite"
    defaults = {name: spec.get("default") for name, spec in action["inputs"].items()}
    assert defaults == {
        "paths": "docs",
        "config": "",
        "report": "github,junit,html",
        "output": "docverify-report",
        "fail-on": "drift,fail,env",
        "changed-since": "",
        "shard": "",
        "args": "",
        "browser": "chromium",
        "cache": "true",
        "python-version": "3.12",
        "docverify-spec": "",
        "artifact-name": "docverify-report",
        "create-issue-on-fail": "false",
        "issue-title": "docverify: documentation check failed",
        "issue-labels": "docverify",
        "github-token": "${{ github.token }}",
    }
    assert all(spec.get("description") for spec in action["inputs"].values())
    assert all(spec.get("description") for spec in action["outputs"].values())
    check_outputs = {"exit-code", "report-dir", "results", "total", "pass", "drift", "fail", "env-error", "inconclusive"}
    assert set(action["outputs"]) == check_outputs | {"issue"}
    for name in check_outputs:
        assert action["outputs"][name]["value"] == f"${{{{ steps.check.outputs.{name} }}}}"
    assert action["outputs"]["issue"]["value"] == "${{ steps.issue.outputs.issue }}"


def test_every_input_is_used_by_a_step(action: dict) -> None:
    steps = yaml.safe_dump(action["runs"]["steps"])
    unused = [name for name in action["inputs"] if not re.search(rf"inputs\.{re.escape(name)}(?![\w-])", steps)]
    assert unused == []


def test_no_expression_is_expanded_inside_a_script(action: dict) -> None:
    scripts = [each for each in action["runs"]["steps"] if "run" in each]
    assert scripts, "the action runs no script"
    for each in scripts:
        assert "${{" not in each["run"], each.get("name")
        assert each["shell"] == "bash"


def test_the_steps_cache_install_run_and_upload(action: dict) -> None:
    steps = action["runs"]["steps"]
    uses = [each.get("uses", "").split("@")[0] for each in steps]
    assert uses[0] == "actions/setup-python"
    # setup-python's `cache: pip` only hashes files in the workspace; the action's own
    # pyproject.toml is outside it, so the pip cache is an actions/cache keyed by a step
    assert "cache" not in steps[0]["with"]
    pip_cache, browser_cache = [each for each in steps if each.get("uses", "").startswith("actions/cache@")]
    assert pip_cache["with"]["path"] == "${{ steps.keys.outputs.pip-dir }}"
    assert pip_cache["with"]["key"] == "${{ steps.keys.outputs.pip-key }}"
    assert "inputs.cache == 'true'" in pip_cache["if"]
    assert steps.index(pip_cache) < steps.index(next(s for s in steps if s.get("name") == "Install docverify"))
    assert browser_cache["with"]["path"] == "${{ steps.browser.outputs.browsers-dir }}"
    assert "${{ steps.browser.outputs.playwright-version }}" in browser_cache["with"]["key"]
    assert "steps.browser.outputs.kind == 'chromium'" in browser_cache["if"]
    install_chromium = next(each for each in steps if each.get("name") == "Install Chromium")
    assert install_chromium["run"] == "python -m playwright install --with-deps chromium"
    assert install_chromium["if"] == "steps.browser.outputs.kind == 'chromium'"
    assert steps.index(browser_cache) < steps.index(install_chromium) < steps.index(step(action, "check"))
    install = next(each for each in steps if each.get("name") == "Install docverify")
    assert "[browser,actiontrail]" in install["run"]
    assert install["env"]["DOCVERIFY_ACTION_PATH"] == "${{ github.action_path }}"
    assert "pipefail" in step(action, "check")["run"]
    assert step(action, "check")["env"]["DOCVERIFY_BROWSER_PATH"] == "${{ steps.browser.outputs.path }}"
    upload = next(each for each in steps if each.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "${{ inputs.output }}"
    issue = step(action, "issue")
    assert steps[-1] is issue
    assert issue["if"] == "${{ !cancelled() && inputs.create-issue-on-fail != 'false' }}"
    assert issue["env"]["GH_TOKEN"] == "${{ inputs.github-token }}"
    assert issue["env"]["DOCVERIFY_EXIT_CODE"] == "${{ steps.check.outputs.exit-code }}"


# -- pinning, permissions, credentials: every workflow and the action ----------------


def test_the_workflows_are_found() -> None:
    """The tests over every workflow would pass on none."""
    assert WORKFLOW in WORKFLOWS and len(WORKFLOWS) >= 2


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=lambda path: path.name)
def test_every_action_is_pinned_by_commit_sha(path: Path) -> None:
    lines = uses_lines(path)
    assert lines, "no uses: found"
    remote = [line.split(" # zizmor:")[0].strip() for line in lines if not line.startswith("./")]
    assert [line for line in remote if not PINNED.match(line)] == []


def test_an_action_is_pinned_to_one_commit_everywhere() -> None:
    commits: dict[str, set[str]] = {}
    for path in [ACTION, *WORKFLOWS]:
        for line in uses_lines(path):
            if PINNED.match(line):
                reference, comment = line.split(" # ")
                name, sha = reference.split("@")
                commits.setdefault(name, set()).add(f"{sha} {comment}")
    assert {name: pins for name, pins in commits.items() if len(pins) > 1} == {}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_every_workflow_has_least_privilege_and_no_persisted_credentials(path: Path) -> None:
    data = load(path)
    assert "permissions" in data, "a top-level permissions: block"
    assert data["permissions"] in ({}, {"contents": "read"})
    for name, job in data["jobs"].items():
        assert job.get("permissions", {}) != "write-all", name
    checkouts = [each for each in workflow_steps(data) if each.get("uses", "").startswith("actions/checkout@")]
    for checkout in checkouts:
        assert checkout.get("with", {}).get("persist-credentials") is False
    triggers = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request_target" not in triggers and "workflow_run" not in triggers
    for each in workflow_steps(data):
        assert "${{" not in each.get("run", ""), each.get("name")


def test_the_example_workflow(workflow: dict) -> None:
    triggers = workflow.get("on", workflow.get(True))
    assert triggers["pull_request"]["paths"] == ["examples/docs/**"]
    assert triggers["schedule"][0]["cron"]
    assert workflow["permissions"] == {}
    [job] = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "read", "issues": "write"}
    checkout, docverify = job["steps"][0], job["steps"][1]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"] == {"fetch-depth": 0, "persist-credentials": False}
    assert docverify["uses"] == "./"
    changed = docverify["with"]["changed-since"]
    assert "github.base_ref" in changed and "origin/" in changed and "pull_request" in changed
    assert docverify["with"]["create-issue-on-fail"] == "${{ github.event_name != 'pull_request' }}"
    report = job["steps"][2]
    assert report["env"]["RESULTS"] == "${{ steps.docverify.outputs.results }}"


def test_the_sharded_example_workflow_checks_shards_and_merges_them() -> None:
    workflow = load(SHARDED)
    assert workflow["permissions"] == {}
    shard, merge = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    count = len(shard["strategy"]["matrix"]["shard"])
    assert shard["strategy"]["matrix"]["shard"] == list(range(1, count + 1))
    assert shard["strategy"]["fail-fast"] is False  # every shard runs: the merge needs them all
    check = next(each for each in shard["steps"] if each.get("uses") == "./")
    assert check["with"]["shard"] == f"${{{{ matrix.shard }}}}/{count}"
    assert check["with"]["artifact-name"] == "docverify-shard-${{ matrix.shard }}"
    assert "github" not in check["with"]["report"]  # annotations and the summary come from the merge, once
    assert merge["needs"] == "shard" and merge["if"] == "${{ !cancelled() }}"
    assert shard["permissions"] == merge["permissions"] == {"contents": "read"}
    download = next(each for each in merge["steps"] if each.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"] == {"pattern": "docverify-shard-*", "path": "shards"}
    [run] = [each["run"] for each in merge["steps"] if "docverify merge" in each.get("run", "")]
    assert run.startswith("docverify merge shards ") and "--report github" in run and "--allow-missing" not in run
    upload = merge["steps"][-1]
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["if"] == "always()"
    steps = [each.get("uses", each.get("run", "")) for each in merge["steps"]]
    assert steps.index(download["uses"]) < steps.index(run) < steps.index(upload["uses"])


# -- the bash steps, run for real ----------------------------------------------------

FAKE_DOCVERIFY = """\
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
Path(os.environ["FAKE_ARGS"]).write_text("".join(arg + "\\0" for arg in args), encoding="utf-8")
print("::error file=docs/a.md,line=3::drift", flush=True)
print("to stderr", file=sys.stderr, flush=True)
if os.environ.get("FAKE_RESULTS") and "--output" in args:
    output = Path(args[args.index("--output") + 1])
    output.mkdir(parents=True, exist_ok=True)
    (output / "docverify.json").write_text(os.environ["FAKE_RESULTS"], encoding="utf-8")
sys.exit(int(os.environ.get("FAKE_EXIT", "1")))
"""

FAKE_GH = """\
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
call = {"args": args, "token": os.environ.get("GH_TOKEN"), "repo": os.environ.get("GH_REPO")}
if "--body-file" in args:
    call["body"] = Path(args[args.index("--body-file") + 1]).read_text(encoding="utf-8")
with open(os.environ["FAKE_GH_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(call) + "\\n")
if args[:2] == ["issue", "list"]:
    print(os.environ.get("FAKE_GH_ISSUES", "[]"))
elif args[:2] == ["issue", "create"]:
    print("https://github.com/acme/docs/issues/41")
elif args[:2] == ["issue", "comment"]:
    print(f"https://github.com/acme/docs/issues/{args[2]}#issuecomment-1")
elif args[:2] == ["label", "create"]:
    sys.exit(int(os.environ.get("FAKE_GH_LABEL_EXIT", "0")))
"""

COUNTS = {"PASS": 2, "DRIFT": 1, "FAIL": 0, "ENV_ERROR": 1, "INCONCLUSIVE": 0}


def read_outputs(path: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: `name=value` and `name<<DELIMITER` blocks."""
    outputs: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            for value in lines:
                if value == delimiter:
                    break
                block.append(value)
            outputs[name] = "\n".join(block)
        else:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


class StepRunner:
    """Runs one bash step of the action with bash, as GitHub runs `shell: bash`."""

    def __init__(self, action: dict, tmp_path: Path) -> None:
        if shutil.which("bash") is None:
            pytest.skip("bash is not installed")
        self.action = action
        self.tmp = tmp_path
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir()
        self.tool("python", f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        self.tool("docverify", f"#!{sys.executable}\n{FAKE_DOCVERIFY}")
        self.tool("gh", f"#!{sys.executable}\n{FAKE_GH}")
        self.gh_log = tmp_path / "gh.log"
        self.defaults = {name: spec["default"] for name, spec in action["inputs"].items()}

    def tool(self, name: str, text: str) -> Path:
        path = self.bin / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)
        return path

    def run(self, step_id: str, *, inputs: dict[str, str] | None = None, steps: dict[str, dict[str, str]] | None = None,
            env: dict[str, str] | None = None, path: str | None = None) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
        """Run the step with ``inputs`` over the defaults, ``steps`` as earlier steps'
        outputs and ``env`` as the runner's environment; returns the process and
        the step's outputs."""
        definition = step(self.action, step_id)
        context = {
            **{f"inputs.{name}": value for name, value in {**self.defaults, **(inputs or {})}.items()},
            **{f"steps.{id_}.outputs.{name}": value for id_, outputs in (steps or {}).items() for name, value in outputs.items()},
            "github.action_path": str(ROOT),
            "github.repository": "acme/docs",
        }
        step_env = {}
        for key, expression in definition.get("env", {}).items():
            reference = re.fullmatch(r"\$\{\{ ([\w.-]+) \}\}", expression).group(1)
            step_env[key] = context.get(reference, "")  # a missing step output reads as empty
        script = self.tmp / f"{step_id}.sh"
        script.write_text(definition["run"], encoding="utf-8")
        output = self.tmp / "github_output"
        output.write_text("", encoding="utf-8")
        environment = {
            "PATH": path if path is not None else f"{self.bin}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(self.tmp / "home"),
            "GITHUB_OUTPUT": str(output),
            "RUNNER_TEMP": str(self.tmp),
            "RUNNER_OS": "Linux",
            "RUNNER_ARCH": "X64",
            "FAKE_ARGS": str(self.tmp / "args"),
            "FAKE_GH_LOG": str(self.gh_log),
            **{key: os.environ[key] for key in ("SYSTEMROOT", "LANG") if key in os.environ},
            **(env or {}),
            **step_env,
        }
        completed = subprocess.run(
            [shutil.which("bash"), "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace, env=environment, capture_output=True, text=True, timeout=60,
        )
        return completed, read_outputs(output)

    def docverify_args(self) -> list[str]:
        args = self.tmp / "args"
        return args.read_text(encoding="utf-8").split("\0")[:-1] if args.exists() else []

    def gh_calls(self) -> list[dict]:
        if not self.gh_log.exists():
            return []
        return [json.loads(line) for line in self.gh_log.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def runner(action: dict, tmp_path: Path) -> StepRunner:
    return StepRunner(action, tmp_path)


# The check step


def run_check(runner: StepRunner, fake_exit: int = 1, results: dict | str | None = None, browser_path: str = "",
              **inputs: str) -> tuple[subprocess.CompletedProcess, list[str], dict[str, str]]:
    env = {"FAKE_EXIT": str(fake_exit)}
    if results is not None:
        env["FAKE_RESULTS"] = results if isinstance(results, str) else json.dumps(results)
    completed, outputs = runner.run(
        "check", inputs={name.replace("_", "-"): value for name, value in inputs.items()},
        steps={"browser": {"path": browser_path}}, env=env,
    )
    return completed, runner.docverify_args(), outputs


def test_the_check_step_builds_the_command_and_keeps_the_exit_code(runner: StepRunner) -> None:
    completed, args, outputs = run_check(runner, fake_exit=1)
    assert completed.returncode == 1
    assert args == [
        "check", "docs", "--report", "github,junit,html,json", "--output", "docverify-report", "--fail-on", "drift,fail,env"
    ]
    assert outputs == {"report-dir": f"{runner.workspace}/docverify-report", "exit-code": "1"}
    assert "::error file=docs/a.md,line=3::drift" in completed.stdout  # annotations pass through
    log = (runner.workspace / "docverify-report" / "docverify.log").read_text(encoding="utf-8")
    assert "to stderr" in log


def test_the_check_step_turns_docs_problems_into_annotations_with_the_problem_matcher(runner: StepRunner) -> None:
    completed, _, _ = run_check(runner, fake_exit=0)
    lines = completed.stdout.splitlines()
    added = next(line for line in lines if line.startswith("::add-matcher::"))
    matcher = Path(added.removeprefix("::add-matcher::"))
    assert matcher == ROOT / ".github" / "docverify-problem-matcher.json" and matcher.is_file()
    assert json.loads(matcher.read_text())["problemMatcher"][0]["owner"] == "docverify"
    assert lines.index("::remove-matcher owner=docverify::") > lines.index(added)  # only around docverify's output


def test_the_check_step_passes_every_input_without_evaluating_it(runner: StepRunner, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    completed, args, outputs = run_check(
        runner,
        fake_exit=0,
        paths="docs/a.md#create-bucket 'docs/with space.md'\nguides",
        config=f"ci/docverify.toml$(touch {marker})",
        changed_since=f"origin/main$(touch {marker})",
        args=f'--jobs 4 -k "bucket and not delete" `touch {marker}` ; touch {marker}',
        output="out dir",
        browser_path="/opt/google/chrome/chrome",
    )
    assert completed.returncode == 0, completed.stderr
    assert args == [
        "--config", f"ci/docverify.toml$(touch {marker})",
        "check", "docs/a.md#create-bucket", "docs/with space.md", "guides",
        "--report", "github,junit,html,json", "--output", "out dir", "--fail-on", "drift,fail,env",
        "--changed-since", f"origin/main$(touch {marker})",
        "--browser-path", "/opt/google/chrome/chrome",
        "--jobs", "4", "-k", "bucket and not delete", "`touch", f"{marker}`", ";", "touch", str(marker),
    ]
    assert not marker.exists()
    assert outputs["exit-code"] == "0"


def test_the_shard_input_becomes_the_shard_option(runner: StepRunner) -> None:
    completed, args, _ = run_check(runner, fake_exit=0, shard="2/4", report="html")
    assert completed.returncode == 0, completed.stderr
    assert args[args.index("--shard") + 1] == "2/4"
    assert args[args.index("--report") + 1] == "html,json"  # the merge reads docverify.json
    _, unsharded, _ = run_check(runner, fake_exit=0)
    assert "--shard" not in unsharded


@pytest.mark.parametrize(("report", "passed"), [
    ("github,junit,html", "github,junit,html,json"),
    ("json", "json"),
    ("github, json ,html", "github, json ,html"),
    ("", "json"),
    ("jsonl", "jsonl,json"),
])
def test_the_json_report_is_always_asked_for(runner: StepRunner, report: str, passed: str) -> None:
    _, args, _ = run_check(runner, report=report)
    assert args[args.index("--report") + 1] == passed


def test_the_counts_and_the_results_path_come_from_docverify_json(runner: StepRunner) -> None:
    completed, _, outputs = run_check(runner, fake_exit=1, results={"counts": COUNTS, "results": []})
    assert completed.returncode == 1
    results = f"{runner.workspace}/docverify-report/docverify.json"
    assert outputs == {
        "report-dir": f"{runner.workspace}/docverify-report", "exit-code": "1", "results": results,
        "pass": "2", "drift": "1", "fail": "0", "env-error": "1", "inconclusive": "0", "total": "4",
    }


def test_no_results_no_counts(runner: StepRunner) -> None:
    completed, _, outputs = run_check(runner, fake_exit=2)
    assert completed.returncode == 2
    assert set(outputs) == {"report-dir", "exit-code"}


def test_an_unreadable_docverify_json_warns_and_keeps_the_exit_code(runner: StepRunner) -> None:
    completed, _, outputs = run_check(runner, fake_exit=1, results="{not json")
    assert completed.returncode == 1
    assert "::warning title=docverify::cannot read the counts" in completed.stderr
    assert set(outputs) == {"report-dir", "exit-code"}


def test_unbalanced_quotes_in_args_stop_with_a_clear_error(runner: StepRunner) -> None:
    completed, args, _ = run_check(runner, args='-k "bucket')
    assert completed.returncode == 2 and args == []
    assert "::error title=docverify::the args input has unbalanced quotes" in completed.stdout


# The cache keys


def test_the_pip_cache_is_keyed_by_what_is_installed(runner: StepRunner) -> None:
    completed, outputs = runner.run("keys")
    assert completed.returncode == 0, completed.stderr
    assert outputs["pip-dir"]
    python = f"docverify-pip-Linux-X64-py{'.'.join(map(str, sys.version_info[:3]))}-"
    assert re.fullmatch(re.escape(python) + r"[0-9a-f]{16}-\d{4}-\d{2}", outputs["pip-key"])
    installed = outputs["pip-key"][: -len("2026-01")]
    assert outputs["pip-restore-keys"].splitlines() == [installed, python]
    assert outputs["pip-key"].endswith(time.strftime("%Y-%m", time.gmtime()))
    _, other = runner.run("keys", inputs={"docverify-spec": "docverify[browser]\ndocverify-myconsole"})
    assert other["pip-key"] != outputs["pip-key"] and other["pip-key"].startswith(python)


def test_no_pip_cache_when_pip_has_none(runner: StepRunner) -> None:
    completed, outputs = runner.run("keys", env={"PIP_NO_CACHE_DIR": "1"})
    assert completed.returncode == 0, completed.stderr
    assert outputs == {}


# The browser


def test_chromium_is_cached_under_the_playwright_version(runner: StepRunner) -> None:
    pytest.importorskip("playwright")
    from importlib.metadata import version

    completed, outputs = runner.run("browser")
    assert completed.returncode == 0, completed.stderr
    assert outputs == {
        "playwright-version": version("playwright"),
        "browsers-dir": str(runner.tmp / "home" / ".cache" / "ms-playwright"),
        "kind": "chromium",
    }
    _, outputs = runner.run("browser", env={"XDG_CACHE_HOME": str(runner.tmp / "xdg")})
    assert outputs["browsers-dir"] == str(runner.tmp / "xdg" / "ms-playwright")
    _, outputs = runner.run("browser", env={"PLAYWRIGHT_BROWSERS_PATH": "0"})
    assert outputs["browsers-dir"] == ""  # inside the package: nothing to cache


def test_chrome_is_the_runners_google_chrome(runner: StepRunner) -> None:
    chrome = runner.tool("google-chrome", "#!/bin/sh\necho 'Google Chrome 140.0.7339.80'\n")
    completed, outputs = runner.run("browser", inputs={"browser": "chrome"}, path=str(runner.bin))
    assert completed.returncode == 0, completed.stderr
    assert outputs == {"kind": "chrome", "path": str(chrome)}
    assert "Using Google Chrome 140.0.7339.80 at" in completed.stdout


def test_chrome_missing_is_a_clear_error(runner: StepRunner) -> None:
    completed, outputs = runner.run("browser", inputs={"browser": "chrome"}, path=str(runner.bin),
                                    env={"PROGRAMFILES": str(runner.tmp / "nowhere")})
    assert completed.returncode == 2 and outputs == {}
    assert "::error title=docverify::browser: chrome found no Google Chrome on this runner" in completed.stdout


def test_a_browser_path(runner: StepRunner) -> None:
    browser = runner.tool("my-chromium", "#!/bin/sh\n")
    completed, outputs = runner.run("browser", inputs={"browser": str(browser)})
    assert completed.returncode == 0, completed.stderr
    assert outputs == {"kind": "path", "path": str(browser)}
    plain = runner.tmp / "not-executable"
    plain.write_text("", encoding="utf-8")
    completed, outputs = runner.run("browser", inputs={"browser": str(plain)})
    assert completed.returncode == 2 and outputs == {}
    assert f"browser: {plain} is not an executable file" in completed.stdout


def test_an_unknown_browser_is_a_clear_error(runner: StepRunner) -> None:
    completed, outputs = runner.run("browser", inputs={"browser": "firefox"})
    assert completed.returncode == 2 and outputs == {}
    assert "the browser input must be chromium, chrome or the path of a Chromium executable, not 'firefox'" in completed.stdout


# The failure issue

RUN_ENV = {
    "GITHUB_EVENT_NAME": "schedule", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/docs",
    "GITHUB_RUN_ID": "987", "GITHUB_RUN_NUMBER": "12", "GITHUB_WORKFLOW": "docs check", "GITHUB_REF_NAME": "main",
    "GITHUB_SHA": "0123456789abcdef0123",
}


def run_issue(runner: StepRunner, *, exit_code: str = "1", open_issues: list[dict] | None = None,
              summary: str | None = "### docverify: 1 DRIFT\n", event: str = "schedule",
              **inputs: str) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    report_dir = runner.workspace / "docverify-report"
    report_dir.mkdir(exist_ok=True)
    if summary is not None:
        (report_dir / "summary.md").write_text(summary, encoding="utf-8")
    (report_dir / "docverify.json").write_text(json.dumps({"counts": COUNTS}), encoding="utf-8")
    values = {"create-issue-on-fail": "true", "github-token": "t0ken",
              **{name.replace("_", "-"): value for name, value in inputs.items()}}
    return runner.run(
        "issue", inputs=values,
        steps={"check": {"exit-code": exit_code, "report-dir": str(report_dir)}},
        env={**RUN_ENV, "GITHUB_EVENT_NAME": event, "FAKE_GH_ISSUES": json.dumps(open_issues or [])},
    )


def test_a_failing_run_opens_one_issue_when_none_is_open(runner: StepRunner) -> None:
    other = {"number": 3, "title": "docverify: something else", "url": "https://github.com/acme/docs/issues/3"}
    completed, outputs = run_issue(runner, open_issues=[other])
    assert completed.returncode == 0, completed.stderr
    calls = runner.gh_calls()
    assert [call["args"][:2] for call in calls] == [["issue", "list"], ["label", "create"], ["issue", "create"]]
    listing, label, create = calls
    assert listing["args"] == ["issue", "list", "--state", "open", "--label", "docverify", "--limit", "500",
                               "--json", "number,title,url"]
    assert label["args"][:3] == ["label", "create", "docverify"]
    body_file = create["args"][create["args"].index("--body-file") + 1]
    assert create["args"] == ["issue", "create", "--title", "docverify: documentation check failed",
                              "--body-file", body_file, "--label", "docverify"]
    assert all(call["token"] == "t0ken" and call["repo"] == "acme/docs" for call in calls)
    body = create["body"]
    assert "docverify failed (exit code 1) in [run 12](https://github.com/acme/docs/actions/runs/987)" in body
    assert "`docs check` (schedule on `main`, commit 0123456789ab)" in body
    assert "### docverify: 1 DRIFT" in body
    assert outputs == {"issue": "https://github.com/acme/docs/issues/41"}


def test_a_failing_run_comments_on_the_open_issue_instead_of_opening_another(runner: StepRunner) -> None:
    issues = [
        {"number": 3, "title": "docverify: documentation check failed (old)", "url": "https://github.com/acme/docs/issues/3"},
        {"number": 7, "title": "docverify: documentation check failed", "url": "https://github.com/acme/docs/issues/7"},
    ]
    completed, outputs = run_issue(runner, open_issues=issues)
    assert completed.returncode == 0, completed.stderr
    calls = runner.gh_calls()
    assert [call["args"][:2] for call in calls] == [["issue", "list"], ["issue", "comment"]]
    comment = calls[1]
    assert comment["args"][:3] == ["issue", "comment", "7"]
    assert "### docverify: 1 DRIFT" in comment["body"]
    assert outputs == {"issue": "https://github.com/acme/docs/issues/7"}


@pytest.mark.parametrize("case", [
    {"exit_code": "0"},  # passed
    {"exit_code": ""},  # docverify never ran
    {"create_issue_on_fail": "false"},  # the option is off
    {"event": "pull_request"},
    {"event": "pull_request_target"},
], ids=["passed", "not-run", "off", "pull-request", "pull-request-target"])
def test_no_issue_when_the_run_passed_or_the_option_is_off(runner: StepRunner, case: dict) -> None:
    completed, outputs = run_issue(runner, **case)
    assert completed.returncode == 0, completed.stderr
    assert runner.gh_calls() == [] and outputs == {}


def test_create_issue_on_fail_must_be_true_or_false(runner: StepRunner) -> None:
    completed, _ = run_issue(runner, create_issue_on_fail="yes")
    assert completed.returncode == 2
    assert "create-issue-on-fail must be true or false, not 'yes'" in completed.stdout
    assert runner.gh_calls() == []


def test_issue_labels_are_optional_and_several(runner: StepRunner) -> None:
    completed, _ = run_issue(runner, issue_labels="")
    assert completed.returncode == 0, completed.stderr
    assert [call["args"][:2] for call in runner.gh_calls()] == [["issue", "list"], ["issue", "create"]]
    assert "--label" not in runner.gh_calls()[1]["args"]
    runner.gh_log.unlink()
    completed, _ = run_issue(runner, issue_labels=" docs , nightly,", issue_title="Nightly docs")
    assert completed.returncode == 0, completed.stderr
    listing, *labels, create = runner.gh_calls()
    assert listing["args"][4:8] == ["--label", "docs", "--label", "nightly"]
    assert [label["args"][2] for label in labels] == ["docs", "nightly"]
    assert create["args"][2:4] == ["--title", "Nightly docs"] and create["args"][-4:] == ["--label", "docs", "--label", "nightly"]


def test_an_existing_label_does_not_stop_the_issue(runner: StepRunner) -> None:
    completed, outputs = run_issue(runner, open_issues=[])
    assert completed.returncode == 0
    runner.gh_log.unlink()
    completed, outputs = runner.run(
        "issue", inputs={"create-issue-on-fail": "true", "github-token": "t0ken"},
        steps={"check": {"exit-code": "1", "report-dir": str(runner.workspace / "docverify-report")}},
        env={**RUN_ENV, "FAKE_GH_LABEL_EXIT": "1"},
    )
    assert completed.returncode == 0, completed.stderr
    assert outputs == {"issue": "https://github.com/acme/docs/issues/41"}


def test_the_issue_body_falls_back_to_the_counts_and_stays_under_githubs_limit(runner: StepRunner) -> None:
    completed, _ = run_issue(runner, summary=None)
    assert completed.returncode == 0, completed.stderr
    assert "2 PASS · 1 DRIFT · 0 FAIL · 1 ENV_ERROR · 0 INCONCLUSIVE" in runner.gh_calls()[-1]["body"]
    runner.gh_log.unlink()
    completed, _ = run_issue(runner, summary="| procedure | verdict |\n" * 10000)
    assert completed.returncode == 0, completed.stderr
    body = runner.gh_calls()[-1]["body"]
    assert len(body) < 65536 and "cut here; the whole summary is in the [run]" in body
