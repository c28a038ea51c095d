"""What other tools run of docverify: the pre-commit hook (.pre-commit-hooks.yaml) and the
GitHub problem matcher (.github/docverify-problem-matcher.json) over `docverify parse`."""

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import ExitCode

REPOSITORY = Path(__file__).resolve().parents[2]
GOOD = "# Create a bucket\n\n1. Log on to the **OSS console**.\n2. Click **Create Bucket**.\n"
BROKEN = "# Create a bucket\n\n<!-- docverify: {product: oss, bogus: 1} -->\n\n1. Click **Create Bucket**.\n2. Click **OK**.\n"
UNCLOSED = "# Delete a bucket\n\n<!-- docverify: product: oss\n\n1. Click **Delete**.\n2. Click **OK**.\n"
WARNED = "# Empty annotation\n\n<!-- docverify: -->\n\n1. Click **Create Bucket**.\n2. Click **OK**.\n"
PROSE = "# About buckets\n\nA bucket holds objects.\n"


@pytest.fixture
def docs(tmp_path):
    for name, text in {"good.md": GOOD, "broken.md": BROKEN, "unclosed.mdx": UNCLOSED,
                       "warned.md": WARNED, "prose.md": PROSE}.items():
        (tmp_path / name).write_text(text)
    return tmp_path


# -- the pre-commit hook ---------------------------------------------------------


def hook() -> dict:
    hooks = yaml.safe_load((REPOSITORY / ".pre-commit-hooks.yaml").read_text())
    (found,) = [h for h in hooks if h["id"] == "docverify-parse"]
    return found


def run_hook(files: list[Path]) -> subprocess.CompletedProcess:
    """The hook's entry with the files pre-commit would pass, as pre-commit runs it."""
    program, *arguments = shlex.split(hook()["entry"])
    assert program == "docverify"
    script = shutil.which("docverify", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "docverify"]
    return subprocess.run([*command, *arguments, *map(str, files)], capture_output=True, text=True, timeout=120)


def test_hook_is_a_python_hook_over_markdown_files():
    definition = hook()
    assert definition["language"] == "python"
    assert definition["pass_filenames"] is True
    files = re.compile(definition["files"])  # pre-commit matches it with Python's re.search
    assert all(files.search(name) for name in ("docs/a.md", "guide/b.mdx", "Create a bucket.md"))
    assert not any(files.search(name) for name in ("a.txt", "a.md.bak", "mdx", "README.rst"))


def test_hook_fails_on_an_error_and_names_file_and_line(docs):
    result = run_hook([docs / "good.md", docs / "broken.md"])
    assert result.returncode == ExitCode.USAGE
    assert f"{docs / 'broken.md'}:3: error: unknown docverify annotation key 'bogus'" in result.stderr


def test_hook_passes_good_docs_warnings_and_pages_of_prose(docs):
    assert run_hook([docs / "good.md"]).returncode == 0
    assert run_hook([docs / "prose.md"]).returncode == 0  # a changed concept page is not a failure
    warned = run_hook([docs / "warned.md", docs / "prose.md"])
    assert warned.returncode == 0
    assert "warning: empty docverify annotation" in warned.stderr


def test_allow_empty_only_changes_the_exit_code_of_no_procedures(docs):
    runner = CliRunner()
    assert runner.invoke(cli, ["parse", str(docs / "prose.md")]).exit_code == ExitCode.NO_PROCEDURES
    assert runner.invoke(cli, ["parse", "--allow-empty", str(docs / "prose.md")]).exit_code == ExitCode.OK
    assert runner.invoke(cli, ["parse", "--allow-empty", str(docs / "unclosed.mdx")]).exit_code == ExitCode.USAGE


# -- the problem matcher ---------------------------------------------------------


def matcher() -> dict:
    config = json.loads((REPOSITORY / ".github" / "docverify-problem-matcher.json").read_text())
    (found,) = config["problemMatcher"]
    return found


def pattern() -> re.Pattern:
    (single,) = matcher()["pattern"]
    source = single["regexp"]
    # The runner compiles it with .NET's ECMAScript option: keep to what that, JavaScript and
    # Python read alike (no (?...) groups, lookarounds, \A \Z, \p{...}; \d as [0-9]: re.ASCII).
    assert not re.search(r"\(\?|\\[AZzGpP]", source), source
    return re.compile(source, re.ASCII)


def test_matcher_groups_are_the_ones_it_names():
    definition = matcher()
    assert definition["owner"] == "docverify"
    (single,) = definition["pattern"]
    assert (single["file"], single["line"], single["severity"], single["message"]) == (1, 2, 3, 4)
    assert pattern().groups == 4


def test_matcher_reads_every_problem_docverify_parse_prints(docs, monkeypatch):
    monkeypatch.chdir(docs)  # relative paths, as in a workflow's workspace
    result = CliRunner().invoke(cli, ["parse", "broken.md", "unclosed.mdx", "warned.md", "good.md", "nope.md"])
    assert result.exit_code == ExitCode.USAGE
    lines = result.stderr.splitlines()
    matched = [m.groups() for m in map(pattern().match, lines) if m]
    assert matched == [
        ("nope.md", "0", "error", "path does not exist: nope.md"),
        ("broken.md", "3", "error",
         "unknown docverify annotation key 'bogus'; valid keys: id, product, region, requires, expect, skip, x-<name>"),
        ("unclosed.mdx", "3", "error", "docverify annotation comment is never closed with '-->'"),
        ("warned.md", "3", "warning", "empty docverify annotation; ignored"),
    ]
    assert not pattern().match(lines[-1])  # "2 procedures in 4 files (3 errors, 1 warnings)"


@pytest.mark.parametrize("line", [
    "error: no procedures found in docs (a procedure is an ordered list of steps)",
    "docs/a.md:3: a#create-bucket skipped by its annotation: skip: true",
    "/usr/lib/python3.12/site-packages/x.py:12: DeprecationWarning: old",
    "docs/a.md:3: Error: capitalised is not docverify's",
])
def test_matcher_leaves_other_lines_alone(line):
    assert not pattern().match(line)


def test_matcher_takes_notices_and_paths_with_colons_and_spaces():
    found = pattern().match(r"C:\docs\Create a bucket.md:12: notice: step 3: not verifiable")
    assert found.groups() == (r"C:\docs\Create a bucket.md", "12", "notice", "step 3: not verifiable")
