"""`docverify init` as a user runs it: what it writes loads, and it never clobbers."""

import re
import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from docverify.cli import cli
from docverify.cli.app import App
from docverify.cli.init import ACTION, CHECKOUT, WORKFLOW_FILE
from docverify.config import load_config
from docverify.errors import ExitCode

REPOSITORY = Path(__file__).resolve().parents[2]
DOC = "# Create a bucket\n\n1. Log on to the **OSS console**.\n2. Click **Create Bucket**.\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """An empty repository with a docs/ folder, as the working directory."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "create-bucket.md").write_text(DOC)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def init(*args):
    return CliRunner().invoke(cli, ["init", *args])


def workflow(root: Path) -> dict:
    return yaml.safe_load((root / WORKFLOW_FILE).read_text())


def test_writes_config_and_workflow_and_says_what_next(repo):
    result = init()
    assert result.exit_code == 0, result.output
    assert "wrote docverify.toml" in result.stdout
    assert f"wrote {WORKFLOW_FILE}" in result.stdout
    assert "docverify parse docs" in result.stdout
    assert (repo / "docverify.toml").is_file() and (repo / WORKFLOW_FILE).is_file()


def test_written_config_loads_through_the_config_loader(repo):
    assert init().exit_code == 0
    config = load_config(path=repo / "docverify.toml")
    assert config.settings.console.use == ["sandbox"]
    assert config.settings.policy.use == ["literal"]
    assert config.origin("console.use").startswith("docverify.toml:")
    assert config.origin("parse.include") == "default"  # only what it sets is pinned
    App(repo / "docverify.toml").checked_config()  # plugin tables name installed plugins

    result = CliRunner().invoke(cli, ["--config", str(repo / "docverify.toml"), "config", "--json"])
    assert result.exit_code == 0, result.output


def test_every_commented_setting_is_valid_uncommented(repo):
    """What the file suggests (`# key = value`, `# [table]`) is what a user will uncomment."""
    assert init().exit_code == 0
    text = (repo / "docverify.toml").read_text()
    uncommented = re.sub(r"(?m)^# (?=\[|[a-z_]+ = )", "", text)
    assert uncommented.count("\n[") >= 7  # parse, six families, console.sandbox
    (repo / "all.toml").write_text(uncommented)
    app = App(repo / "all.toml")
    config = app.checked_config()
    assert config.settings.jobs == 4 and config.settings.budget == "2.50USD"
    assert config.settings.reporter.use == ["terminal"]
    sandbox = config.plugin_options("console", "sandbox", app.plugins.get("consoles", "sandbox"))
    assert sandbox.release == "2021-06"


def test_workflow_runs_the_action_on_pull_requests_and_nightly(repo):
    assert init().exit_code == 0
    flow = workflow(repo)
    triggers = flow[True]  # YAML 1.1 reads the key `on` as true
    assert "docs/**" in triggers["pull_request"]["paths"]
    assert "docverify.toml" in triggers["pull_request"]["paths"]
    assert triggers["schedule"][0]["cron"]
    assert "workflow_dispatch" in triggers
    assert flow["permissions"] == {}
    assert flow["jobs"]["docverify"]["permissions"] == {"contents": "read", "issues": "write"}
    checkout, step = flow["jobs"]["docverify"]["steps"]
    assert checkout["uses"] == CHECKOUT.split(" #")[0]
    assert re.fullmatch(r"actions/checkout@[0-9a-f]{40}", checkout["uses"])  # pinned by commit SHA
    assert checkout["with"] == {"fetch-depth": 0, "persist-credentials": False}
    assert step["uses"] == ACTION
    assert shlex.split(step["with"]["paths"]) == ["docs"]
    assert "github.base_ref" in step["with"]["changed-since"]
    assert "pull_request" in step["with"]["create-issue-on-fail"]


def test_checkout_is_pinned_as_the_example_workflow_pins_it():
    example = (REPOSITORY / ".github/workflows/docs-check-example.yml").read_text()
    assert re.findall(r"uses: (actions/checkout@.*)", example) == [CHECKOUT]  # the SHA and its version comment


def test_workflow_gives_the_action_only_inputs_it_has(repo):
    assert init().exit_code == 0
    inputs = yaml.safe_load((REPOSITORY / "action.yml").read_text())["inputs"]
    step = workflow(repo)["jobs"]["docverify"]["steps"][1]
    assert set(step["with"]) <= set(inputs)


def test_action_option_names_the_action(repo):
    assert init("--action", "acme/docverify@0123abc").exit_code == 0
    assert workflow(repo)["jobs"]["docverify"]["steps"][1]["uses"] == "acme/docverify@0123abc"


def test_existing_file_is_kept_without_force(repo):
    (repo / "docverify.toml").write_text("jobs = 2\n")
    result = init()
    assert result.exit_code == ExitCode.USAGE
    assert "docverify.toml already exists" in result.stderr and "--force" in result.stderr
    assert (repo / "docverify.toml").read_text() == "jobs = 2\n"
    assert not (repo / WORKFLOW_FILE).exists()  # nothing is written when anything would be clobbered


def test_force_overwrites(repo):
    (repo / "docverify.toml").write_text("jobs = 2\n")
    (repo / WORKFLOW_FILE).parent.mkdir(parents=True)
    (repo / WORKFLOW_FILE).write_text("name: old\n")
    result = init("--force")
    assert result.exit_code == 0, result.output
    assert "overwrote docverify.toml" in result.stdout
    assert workflow(repo)["name"] == "docverify"


def test_no_workflow_writes_the_config_only(repo):
    result = init("--no-workflow")
    assert result.exit_code == 0, result.output
    assert (repo / "docverify.toml").is_file()
    assert not (repo / ".github").exists()


def test_docs_folder_is_found_where_documents_are(tmp_path, monkeypatch):
    (tmp_path / "docs").mkdir()  # empty: not the docs
    (tmp_path / "doc" / "node_modules").mkdir(parents=True)
    (tmp_path / "doc" / "node_modules" / "readme.md").write_text(DOC)  # never entered
    (tmp_path / "content" / "guides").mkdir(parents=True)
    (tmp_path / "content" / "guides" / "bucket.mdx").write_text(DOC)
    monkeypatch.chdir(tmp_path)
    result = init("--no-workflow")
    assert result.exit_code == 0, result.output
    assert "docverify parse content" in result.stdout


def test_no_docs_folder_says_to_name_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = init()
    assert result.exit_code == ExitCode.USAGE
    assert "no docs folder found" in result.stderr and "--docs" in result.stderr
    assert not (tmp_path / "docverify.toml").exists()


def test_docs_option_with_a_space_reaches_the_action_quoted(repo):
    (repo / "user guide").mkdir()
    result = init("--docs", "user guide")
    assert result.exit_code == 0, result.output
    step = workflow(repo)["jobs"]["docverify"]["steps"][1]
    assert shlex.split(step["with"]["paths"]) == ["user guide"]  # the action splits it like a shell
    assert "user guide/**" in workflow(repo)[True]["pull_request"]["paths"]
    load_config(path=repo / "docverify.toml")


def test_docs_at_the_root_watch_every_markdown_file(repo):
    assert init("--docs", ".").exit_code == 0
    assert workflow(repo)[True]["pull_request"]["paths"][:2] == ["**/*.md", "**/*.mdx"]


def test_docs_outside_this_folder_are_refused(repo, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    result = init("--docs", str(elsewhere))
    assert result.exit_code == ExitCode.USAGE
    assert "inside this folder" in result.stderr


def test_workflow_below_the_repository_root_is_refused(repo):
    site = repo / "site"
    (site / "docs").mkdir(parents=True)
    (site / "docs" / "a.md").write_text(DOC)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(site)
        refused = init()
        assert refused.exit_code == ExitCode.USAGE
        assert "repository's root" in refused.stderr and "--no-workflow" in refused.stderr
        assert not (site / "docverify.toml").exists()
        assert init("--no-workflow").exit_code == 0
