"""Selection: PATH#fragment, -k expressions, --changed-since on real git repos."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from docverify.errors import UsageError
from docverify.parse.parser import parse_paths
from docverify.run.select import (
    KeywordExpression,
    changed_files,
    matches_fragment,
    parse_selectors,
    select,
    split_selector,
)

BUCKETS = """\
# Buckets

## Create a bucket

1. Log on to the OSS console.
2. Click **Create Bucket**.

<!-- docverify:
id: oss-delete-bucket
-->
## Delete a bucket

1. Log on to the OSS console.
2. Click **Delete**.
"""

USERS = """\
# Users

## Create a RAM user

1. Log on to the RAM console.
2. Click **Create User**.
"""


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "buckets.md").write_text(BUCKETS, encoding="utf-8")
    (folder / "users.md").write_text(USERS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return folder


def procedures(*paths: str | Path):
    return [procedure for document in parse_paths(paths) for procedure in document.procedures]


def ids(selected) -> list[str]:
    return [procedure.id for procedure in selected]


# -- PATH#fragment ---------------------------------------------------------------


def test_split_selector(docs: Path) -> None:
    assert split_selector("docs/buckets.md#create-a-bucket") == ("docs/buckets.md", "create-a-bucket")
    assert split_selector("docs/buckets.md#buckets#create-a-bucket") == ("docs/buckets.md", "buckets#create-a-bucket")
    assert split_selector("docs/buckets.md") == ("docs/buckets.md", None)
    assert split_selector("docs/buckets.md#") == ("docs/buckets.md", None)
    assert split_selector("missing.md#x") == ("missing.md", "x")
    with pytest.raises(UsageError, match="name the file before '#'"):
        split_selector("#create-a-bucket")


def test_a_real_path_with_hash_in_its_name_wins(docs: Path) -> None:
    odd = docs / "c#" / "notes#1.md"
    odd.parent.mkdir()
    odd.write_text(USERS, encoding="utf-8")
    assert split_selector("docs/c#/notes#1.md") == ("docs/c#/notes#1.md", None)
    assert split_selector("docs/c#/notes#1.md#create-a-ram-user") == ("docs/c#/notes#1.md", "create-a-ram-user")


def test_matches_fragment_on_id_slug_annotation_id_and_title(docs: Path) -> None:
    create, delete = procedures(docs / "buckets.md")
    assert create.id == "buckets#create-a-bucket" and delete.id == "oss-delete-bucket"
    for fragment in ("buckets#create-a-bucket", "create-a-bucket", "Create-A-Bucket", "Create a bucket"):
        assert matches_fragment(create, fragment), fragment
    assert matches_fragment(delete, "oss-delete-bucket")
    assert not matches_fragment(create, "delete-a-bucket")
    assert not matches_fragment(create, "create")


def test_select_by_fragment(docs: Path) -> None:
    paths, fragments = parse_selectors(["docs/buckets.md#oss-delete-bucket", "docs/users.md"])
    assert paths == ["docs/buckets.md", "docs/users.md"]
    assert fragments == {(docs / "buckets.md").resolve(): {"oss-delete-bucket"}}
    assert ids(select(procedures(*paths), fragments=fragments)) == ["oss-delete-bucket", "users#create-a-ram-user"]


def test_a_whole_path_wins_over_fragments_of_files_under_it(docs: Path) -> None:
    paths, fragments = parse_selectors(["docs/buckets.md#create-a-bucket", "docs"])
    assert fragments == {(docs / "buckets.md").resolve(): set()}
    assert len(select(procedures(*paths), fragments=fragments)) == 3


def test_a_fragment_on_a_folder_is_a_usage_error(docs: Path) -> None:
    with pytest.raises(UsageError, match="is a folder"):
        parse_selectors(["docs#create-a-bucket"])


def test_an_unknown_fragment_lists_the_ids_with_a_suggestion(docs: Path) -> None:
    _, fragments = parse_selectors(["docs/buckets.md#create-bucket"])
    with pytest.raises(UsageError) as caught:
        select(procedures(docs), fragments=fragments)
    error = caught.value
    assert error.message == "docs/buckets.md#create-bucket: no procedure 'create-bucket' in docs/buckets.md"
    assert "did you mean 'create-a-bucket'" in error.hint
    assert "buckets#create-a-bucket, oss-delete-bucket" in error.hint
    assert "users#" not in error.hint


def test_a_fragment_of_a_file_without_procedures(docs: Path) -> None:
    (docs / "empty.md").write_text("# Nothing to do\n\nJust prose.\n", encoding="utf-8")
    _, fragments = parse_selectors(["docs/empty.md#x"])
    with pytest.raises(UsageError, match="has no procedures"):
        select(procedures(docs), fragments=fragments)


# -- -k ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("bucket", ["buckets#create-a-bucket", "oss-delete-bucket"]),
        ("BUCKET and not delete", ["buckets#create-a-bucket"]),
        ("ram or delete", ["oss-delete-bucket", "users#create-a-ram-user"]),
        ("create and (ram or bucket)", ["buckets#create-a-bucket", "users#create-a-ram-user"]),
        ("not (create or delete)", []),
        ("not not ram", ["users#create-a-ram-user"]),
        ("users#create", ["users#create-a-ram-user"]),  # ids hold '#'
        ('"delete a bucket"', ["oss-delete-bucket"]),  # a quoted phrase, matched in the title
        ("", ["buckets#create-a-bucket", "oss-delete-bucket", "users#create-a-ram-user"]),
    ],
)
def test_keyword_expressions(docs: Path, expression: str, expected: list[str]) -> None:
    assert ids(select(procedures(docs), keyword=expression)) == expected


def test_and_binds_tighter_than_or() -> None:
    expression = KeywordExpression.compile("a or b and c")
    assert expression.evaluate("a") and not expression.evaluate("b") and expression.evaluate("b c")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("bucket and", "-k 'bucket and': expected a word after 'and' (column 11)"),
        ("or bucket", "-k 'or bucket': expected a word at the start, got 'or' (column 1)"),
        ("bucket ram", "-k 'bucket ram': expected 'and', 'or' or the end after 'bucket', got 'ram' (column 8)"),
        ("(bucket", "-k '(bucket': expected ')' to close the '(' at column 1, got the end (column 8)"),
        ("bucket)", "-k 'bucket)': unmatched ')' (column 7)"),
        ("not", "-k 'not': expected a word after 'not' (column 4)"),
        ("()", "-k '()': expected a word after '(', got ')' (column 2)"),
        ('"open', "-k '\"open': the quote at column 1 is not closed"),
    ],
)
def test_keyword_syntax_errors_name_the_expression_and_position(expression: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        KeywordExpression.compile(expression)
    assert caught.value.message == message
    assert "and, or, not" in caught.value.hint


# -- --changed-since ------------------------------------------------------------

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    environment = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, env=environment, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(docs: Path) -> Path:
    root = docs.parent
    (root / "other.md").write_text(USERS, encoding="utf-8")
    (root / ".gitignore").write_text("ignored.md\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "docs")
    git(root, "checkout", "-q", "-b", "feature")
    return root


@needs_git
def test_changed_files_covers_committed_staged_unstaged_and_untracked(repo: Path) -> None:
    assert changed_files("main", repo) == set()
    (repo / "docs" / "buckets.md").write_text(BUCKETS + "\nEdited.\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "edit buckets")
    (repo / "docs" / "users.md").write_text(USERS + "\nStaged.\n", encoding="utf-8")
    git(repo, "add", "docs/users.md")
    (repo / "other.md").write_text(USERS + "\nUnstaged.\n", encoding="utf-8")
    (repo / "docs" / "new doc.md").write_text(USERS, encoding="utf-8")
    (repo / "ignored.md").write_text(USERS, encoding="utf-8")
    docs = repo / "docs"
    expected = {docs / "buckets.md", docs / "users.md", docs / "new doc.md", repo / "other.md"}
    assert changed_files("main", repo) == {path.resolve() for path in expected}
    assert changed_files("main", repo / "docs") == {path.resolve() for path in expected}  # from a subfolder


@needs_git
def test_changed_since_uses_the_merge_base(repo: Path) -> None:
    (repo / "docs" / "users.md").write_text(USERS + "\nOn feature.\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "feature edit")
    git(repo, "checkout", "-q", "main")
    (repo / "docs" / "buckets.md").write_text(BUCKETS + "\nOn main.\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "main edit")
    git(repo, "checkout", "-q", "feature")
    # buckets.md changed on main after the branch point: not this branch's change
    assert changed_files("main", repo) == {(repo / "docs" / "users.md").resolve()}


@needs_git
def test_select_changed_only(repo: Path, docs: Path) -> None:
    (docs / "users.md").write_text(USERS.replace("Create User", "Add User"), encoding="utf-8")
    selected = select(procedures(docs), changed=changed_files("main", repo))
    assert ids(selected) == ["users#create-a-ram-user"]
    assert select(procedures(docs), changed=set()) == []


@needs_git
def test_all_filters_combine(repo: Path, docs: Path) -> None:
    (docs / "buckets.md").write_text(BUCKETS + "\n", encoding="utf-8")
    (docs / "users.md").write_text(USERS + "\n", encoding="utf-8")
    _, fragments = parse_selectors(["docs/buckets.md#create-a-bucket", "docs/users.md"])
    selected = select(procedures(docs), fragments=fragments, keyword="create", changed=changed_files("main", repo))
    assert ids(selected) == ["buckets#create-a-bucket", "users#create-a-ram-user"]


@needs_git
def test_an_unknown_ref_says_to_fetch_it(repo: Path) -> None:
    with pytest.raises(UsageError) as caught:
        changed_files("origin/release", repo)
    assert caught.value.message == "--changed-since origin/release: unknown git ref 'origin/release'"
    assert "git fetch origin release --depth=" in caught.value.hint


@needs_git
def test_not_a_git_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    with pytest.raises(UsageError, match="is not inside a git repository") as caught:
        changed_files("main", tmp_path)
    assert "drop --changed-since" in caught.value.hint


def test_git_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UsageError, match="needs git, which is not installed"):
        changed_files("main", tmp_path)


def test_an_option_is_not_a_ref(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a git ref"):
        changed_files("--output=/tmp/x", tmp_path)


@needs_git
def test_a_shallow_ci_clone_is_told_to_fetch_more(repo: Path, tmp_path: Path) -> None:
    (repo / "docs" / "users.md").write_text(USERS + "\nOn feature.\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "feature edit")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--single-branch", "--branch", "feature", repo.as_uri(), str(clone))
    with pytest.raises(UsageError) as caught:
        changed_files("origin/main", clone)
    assert "git fetch origin main --depth=" in caught.value.hint
    assert "shallow" in caught.value.hint and "fetch-depth: 0" in caught.value.hint


@needs_git
def test_a_change_that_touches_no_procedure_passes_check_and_plan(repo: Path) -> None:
    """A prose-only pull request must not fail the docs CI: nothing to check is exit 0."""
    from click.testing import CliRunner

    from docverify.cli import cli

    (repo / "README.txt").write_text("Only prose changed.\n", encoding="utf-8")
    git(repo, "add", "README.txt")
    git(repo, "commit", "-q", "-m", "prose")
    for command in ("check", "plan"):
        result = CliRunner().invoke(cli, [command, "docs", "--changed-since", "main"])
        assert result.exit_code == 0, result.output
        assert "no procedures changed since main: nothing to check" in result.stderr
    # a path that is not there is still a usage error, changes or not
    missing = CliRunner().invoke(cli, ["check", "no-such-folder", "--changed-since", "main"])
    assert missing.exit_code == 2 and "path does not exist" in missing.stderr, missing.output
    # a change to a doc is still checked (here: only planned, no browser needed)
    (repo / "docs" / "users.md").write_text(USERS + "\nEdited.\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["plan", "docs", "--changed-since", "main"])
    assert result.exit_code == 0 and "users" in result.output and "buckets" not in result.output, result.output


@needs_git
def test_changed_lines_are_the_new_files_lines_since_the_merge_base(repo: Path) -> None:
    from docverify.run.select import changed_lines

    users = repo / "docs" / "users.md"
    original = USERS.splitlines()
    edited = original[:2] + ["An edited line."] + original[3:] + ["An added line."]
    users.write_text("\n".join(edited) + "\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "edit users")
    (repo / "docs" / "新文档.md").write_text(USERS, encoding="utf-8")  # untracked: every line is new
    lines = changed_lines("main", repo)
    assert lines[users.resolve()] == {3, len(edited)}
    assert lines[(repo / "docs" / "新文档.md").resolve()] is None
    assert (repo / "docs" / "buckets.md").resolve() not in lines
