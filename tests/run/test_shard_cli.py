"""`docverify check --shard` and `docverify merge` through the CLI, with the fake console,
executor and checker (tests/fake_plugins.py): the shards of a run merge into the run
one machine would have made; what is missing is said and fails the merge; shards of
different runs are refused.

The same with the real sandbox and Chromium: tests/check/test_shard_examples.py."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import fake_plugins
import pytest
from click.testing import CliRunner
from test_fake_check_cli import CLEAN_ENV, DRIFTING, FAKES, passing, write

from docverify.cli import cli
from docverify.cli.app import App
from docverify.errors import ExitCode
from docverify.plugins import load_plugins
from docverify.run.shard import hash_shard

ENV = {**CLEAN_ENV, "DOCVERIFY_SHARD": None, "DOCVERIFY_SHARD_BALANCE": None, "DOCVERIFY_ALLOW_MISSING": None,
       "GITHUB_STEP_SUMMARY": None}


@pytest.fixture(autouse=True)
def site(monkeypatch):
    monkeypatch.setattr(fake_plugins, "SITE", {
        "/": ("Overview", [("link", "Buckets", "/buckets")]),
        "/buckets": ("Buckets", [("button", "Create Bucket", "/create")]),
        "/create": ("Create Bucket", [("textbox", "Bucket Name", None), ("button", "OK", "/done")]),
        "/done": ("Buckets", [("row", "docs-t0 Standard", None)]),
    })


@pytest.fixture
def docs(tmp_path, monkeypatch) -> Path:
    """Eight passing procedures, one per doc, under the working directory."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "docs"
    folder.mkdir()
    for index in range(8):
        write(folder, f"b{index}.md", passing(index))
    return folder


def invoke(*args: str, env: dict | None = None):
    plugins = load_plugins(extra=[fake_plugins])
    return CliRunner().invoke(cli, list(args), obj=App(plugins=plugins), env={**ENV, **(env or {})})


def check(*args: str, env: dict | None = None):
    return invoke("check", *args, *FAKES, env=env)


def shard_of(procedure_id: str, path: str, count: int) -> int:
    return hash_shard(f"{path}#{procedure_id}", count)


def results(folder: Path) -> dict:
    return json.loads((folder / "docverify.json").read_text(encoding="utf-8"))


def run_shards(count: int, *extra: str, prefix: str = "shard") -> list[Path]:
    folders = []
    for index in range(1, count + 1):
        out = Path(f"{prefix}-{index}")
        done = check("docs", "--shard", f"{index}/{count}", "--report", "json", "--output", str(out), *extra)
        assert done.exit_code in (ExitCode.OK, ExitCode.DEFECTS), done.output
        assert f"shard {index}/{count}: " in done.output
        folders.append(out)
    return folders


# -- --shard on check ------------------------------------------------------------------


@pytest.mark.parametrize(("value", "says"), [
    ("0/2", "'0/2': INDEX must be from 1 to 2"),
    ("3/2", "'3/2': INDEX must be from 1 to 2"),
    ("a/b", "'a/b': expected INDEX/COUNT"),
    ("1/0", "'1/0': COUNT must be 1 or more"),
])
def test_a_bad_shard_is_a_usage_error_naming_the_option(docs, value, says):
    done = check("docs", "--shard", value, "--no-store")
    assert done.exit_code == ExitCode.USAGE, done.output
    assert "Invalid value for '--shard'" in done.output and says in done.output
    from_env = check("docs", "--no-store", env={"DOCVERIFY_SHARD": value})
    assert from_env.exit_code == ExitCode.USAGE and says in from_env.output


def test_balance_by_store_without_a_store_is_a_usage_error(docs):
    done = check("docs", "--shard", "1/2", "--shard-balance", "store", "--no-store")
    assert done.exit_code == ExitCode.USAGE
    assert "--shard-balance store" in done.output and "--no-store" in done.output
    bad = check("docs", "--shard", "1/2", "--shard-balance", "time")
    assert bad.exit_code == ExitCode.USAGE and "'--shard-balance'" in bad.output


@pytest.mark.parametrize("count", [2, 3])
def test_the_shards_run_every_procedure_once_and_record_the_whole_selection(docs, count):
    folders = run_shards(count, "--no-store")
    ran = [result["id"] for folder in folders for result in results(folder)["results"]]
    assert sorted(ran) == sorted(f"bucket-{index}" for index in range(8))  # each exactly once
    for index, folder in enumerate(folders, 1):
        data = results(folder)
        shard = data["shard"]
        assert (shard["index"], shard["count"], shard["balance"]) == (index, count, "hash")
        assert shard["selected"] == [f"docs/b{n}.md#bucket-{n}" for n in range(8)]  # in run order
        assert shard["assigned"] == [f"docs/b{n}.md#bucket-{n}" for n in range(8)
                                     if shard_of(f"bucket-{n}", f"docs/b{n}.md", count) == index]
        assert [r["id"] for r in data["results"]] == [key.split("#")[1] for key in shard["assigned"]]
        assert Path(shard["root"]) == Path.cwd()
    assert len({results(folder)["shard"]["plan_digest"] for folder in folders}) == 1


def test_a_shard_is_the_same_whatever_the_path_looks_like(docs):
    plain = check("docs", "--shard", "1/2", "--dry-run")
    dotted = check("./docs/", "--shard", "1/2", "--dry-run")
    absolute = check(str(docs), "--shard", "1/2", "--dry-run")
    listed = [line.split()[0] for line in plain.stdout.splitlines() if line.startswith("bucket-")]
    assert listed and listed == [line.split()[0] for line in dotted.stdout.splitlines() if line.startswith("bucket-")]
    assert listed == [line.split()[0] for line in absolute.stdout.splitlines() if line.startswith("bucket-")]


def test_an_empty_shard_runs_nothing_and_passes(docs):
    (docs / "b1.md").unlink()
    for index in range(2, 8):
        (docs / f"b{index}.md").unlink()
    index = shard_of("bucket-0", "docs/b0.md", 2)
    other = 3 - index
    done = check("docs", "--shard", f"{other}/2", "--report", "json", "--output", "empty", "--no-store")
    assert done.exit_code == ExitCode.OK, done.output
    assert f"shard {other}/2: 0 of 1 procedures" in done.output
    data = results(Path("empty"))
    assert data["results"] == [] and data["shard"]["selected"] == ["docs/b0.md#bucket-0"]


# -- merge -------------------------------------------------------------------------------


def test_merged_shards_are_the_run_one_machine_makes(docs, tmp_path, monkeypatch):
    write(docs, "old.md", DRIFTING)
    summary = tmp_path / "step-summary.md"
    full = check("docs", "--report", "json", "--output", "full", "--no-store")
    assert full.exit_code == ExitCode.DEFECTS, full.output
    folders = run_shards(2, "--no-store")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    merged = invoke("merge", *map(str, folders), "-o", "merged", "--report", "junit,github,html", "--no-store",
                    env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert merged.exit_code == ExitCode.DEFECTS == full.exit_code, merged.output
    one, together = results(Path("full")), results(Path("merged"))
    assert [(r["id"], r["verdict"]) for r in together["results"]] == [(r["id"], r["verdict"]) for r in one["results"]]
    assert together["counts"] == one["counts"]
    [finding] = next(r for r in together["results"] if r["id"] == "bucket-old")["findings"]
    assert (finding["kind"], finding["line"]) == ("element_not_found", 9)
    info = together["merged"]
    assert info["count"] == 2 and info["missing_shards"] == [] and info["missing"] == []
    assert sorted(shard["index"] for shard in info["shards"]) == [1, 2]
    assert "shard" not in together
    # every report of the merged run: annotations, job summary, JUnit, HTML
    assert "::error file=docs/old.md,line=9," in merged.stdout
    assert "bucket-old" in summary.read_text() and "Missing" not in summary.read_text()
    junit = (Path("merged") / "junit.xml").read_text()
    assert 'tests="9"' in junit and 'failures="1"' in junit and 'name="merged_shards" value="2"' in junit
    assert "2 shards merged" in (Path("merged") / "report.html").read_text()
    assert "9 procedures: 8 PASS, 1 DRIFT" in merged.stdout
    # --fail-on as for check: the drift does not fail it
    assert invoke("merge", *map(str, folders), "--fail-on", "fail,env", "--no-store").exit_code == ExitCode.OK


def test_a_missing_shard_is_named_and_fails_the_merge(docs, tmp_path):
    first, second, third = run_shards(3, "--no-store")
    merged = invoke("merge", str(first), str(third), "-o", "merged", "--report", "github,junit,html", "--no-store",
                    env={"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")})
    assert merged.exit_code == ExitCode.ENVIRONMENT, merged.output
    lacking = [f"docs/b{n}.md#bucket-{n}" for n in range(8) if shard_of(f"bucket-{n}", f"docs/b{n}.md", 3) == 2]
    assert lacking, "shard 2/3 holds none of the eight: choose other docs"
    assert f"shard 2/3 missing: no folder holds it ({len(lacking)} procedure" in merged.output
    assert all(f"  {key}" in merged.output for key in lacking)
    assert "--allow-missing" in merged.output
    data = results(Path("merged"))
    assert data["merged"]["missing_shards"] == [2] and data["merged"]["missing"] == lacking
    assert "incomplete: shard 2/3 missing" in merged.output  # the terminal's counts line
    text = (tmp_path / "summary.md").read_text()
    assert "### Missing" in text and "shard 2/3: no results" in text and all(key in text for key in lacking)
    assert 'name="missing_shards" value="2/3"' in (Path("merged") / "junit.xml").read_text()
    page = (Path("merged") / "report.html").read_text()
    assert "incomplete: shard 2/3 missing" in page and all(key in page for key in lacking)
    # a drift elsewhere (fail-on) still wins: exit 1; --allow-missing accepts the rest
    allowed = invoke("merge", str(first), str(third), "--allow-missing", "--no-store")
    assert allowed.exit_code == ExitCode.OK, allowed.output
    assert "shard 2/3 missing" in allowed.output  # still said
    not_env = invoke("merge", str(first), str(third), "--fail-on", "drift", "--no-store")
    assert not_env.exit_code == ExitCode.ENVIRONMENT  # missing results are not a verdict --fail-on can drop


def test_a_shard_that_did_not_finish_leaves_its_procedures_missing(docs):
    folders = run_shards(2, "--no-store")
    data = results(folders[0])
    assert data["results"], "shard 1/2 ran nothing"
    dropped = data["results"].pop()
    data["interrupted"] = True
    (folders[0] / "docverify.json").write_text(json.dumps(data), encoding="utf-8")
    merged = invoke("merge", *map(str, folders), "--no-store")
    assert merged.exit_code == ExitCode.ENVIRONMENT, merged.output
    assigned = len(data["shard"]["assigned"])
    assert f"has results for {assigned - 1} of its {assigned} procedures (interrupted)" in merged.output
    assert f"docs/{Path(dropped['path']).name}#{dropped['id']}" in merged.output


def test_shards_of_different_runs_are_refused(docs):
    two = run_shards(2, "--no-store", prefix="two")
    three = run_shards(3, "--no-store", prefix="three")
    done = invoke("merge", str(two[0]), str(three[1]), "--no-store")
    assert done.exit_code == ExitCode.USAGE, done.output
    assert "is shard 2/3" in done.output and "shards of different runs" in done.output and "--force" in done.output
    # the same shard twice
    again = invoke("merge", str(two[0]), str(two[0] / "docverify.json"), str(two[1]), "--no-store")
    assert again.exit_code != ExitCode.USAGE  # one file given twice is one file
    copy = Path("copy-1")
    copy.mkdir()
    (copy / "docverify.json").write_text((two[0] / "docverify.json").read_text())
    twice = invoke("merge", str(two[0]), str(copy), str(two[1]), "--no-store")
    assert twice.exit_code == ExitCode.USAGE and "shard 1/2 is in two folders" in twice.output
    # another selection: -k left some procedures out
    narrow = check("docs", "-k", "not bucket-7", "--shard", "2/2", "--report", "json", "--output", "narrow",
                   "--no-store")
    assert narrow.exit_code == ExitCode.OK, narrow.output
    refused = invoke("merge", str(two[0]), "narrow", "--no-store")
    assert refused.exit_code == ExitCode.USAGE
    assert "selected different procedures" in refused.output and "docs/b7.md#bucket-7" in refused.output
    # --force merges them anyway and says what it let through
    forced = invoke("merge", str(two[0]), "narrow", "--force", "--no-store", "-o", "forced")
    assert forced.exit_code in (ExitCode.OK, ExitCode.ENVIRONMENT), forced.output
    assert "warning: --force: " in forced.output
    assert results(Path("forced"))["merged"]["forced"]


def test_a_run_without_shard_is_refused_unless_forced(docs):
    assert check("docs", "--report", "json", "--output", "whole", "--no-store").exit_code == ExitCode.OK
    done = invoke("merge", "whole", "--no-store")
    assert done.exit_code == ExitCode.USAGE and "not a shard" in done.output
    forced = invoke("merge", "whole", "--force", "--no-store")
    assert forced.exit_code == ExitCode.OK, forced.output


def test_merge_reads_a_folder_of_artifacts_and_names_what_it_cannot_read(docs):
    folders = run_shards(2, "--no-store")
    artifacts = Path("artifacts")
    artifacts.mkdir()
    for folder in folders:
        folder.rename(artifacts / folder.name)
    done = invoke("merge", "artifacts", "--no-store")
    assert done.exit_code == ExitCode.OK, done.output
    assert "merging shards 1, 2 of 2: 8 results" in done.output
    Path("empty").mkdir()
    nothing = invoke("merge", "empty", "--no-store")
    assert nothing.exit_code == ExitCode.USAGE and "empty: no docverify.json" in nothing.output
    missing = invoke("merge", "nowhere", "--no-store")
    assert missing.exit_code == ExitCode.USAGE and "nowhere: no such file or folder" in missing.output
    Path("broken").mkdir()
    (Path("broken") / "docverify.json").write_text("{not json", encoding="utf-8")
    broken = invoke("merge", "broken", "--no-store")
    assert broken.exit_code == ExitCode.USAGE and "not a docverify.json" in broken.output
    into_shard = invoke("merge", "artifacts", "-o", str(artifacts / "shard-1"), "--no-store")
    assert into_shard.exit_code == ExitCode.USAGE and "would overwrite" in into_shard.output


def test_merge_copies_the_artifacts_the_results_name(docs):
    (docs / "b0.md").write_text((docs / "b0.md").read_text().replace("**Buckets**", "**Bucketz**"), encoding="utf-8")
    folders = run_shards(2, "--no-store", "--screenshots")
    names = [turn["screenshot_after"] for folder in folders for result in results(folder)["results"]
             for turn in result["turns"] if turn.get("screenshot_after")]
    assert names, "the drifted procedure kept no screenshot"
    done = invoke("merge", *map(str, folders), "-o", "merged", "--report", "html", "--no-store")
    assert done.exit_code == ExitCode.DEFECTS, done.output
    assert all((Path("merged") / name).is_file() for name in names)


# -- balanced by the results store ---------------------------------------------------------------------------------


def test_balance_by_store_uses_merged_durations_and_ignores_the_shards_own(docs):
    # a merged run in the store: slow procedures 0 and 1, the rest quick
    folders = run_shards(2, prefix="first")
    assert invoke("merge", *map(str, folders)).exit_code == ExitCode.OK
    store = Path(".docverify") / "results.db"
    with sqlite3.connect(store) as connection:
        [(merged_run,)] = connection.execute("SELECT run_id FROM runs WHERE options LIKE '%merged%'").fetchall()
        for procedure_id, seconds in (("bucket-0", 300.0), ("bucket-1", 280.0)):
            connection.execute("UPDATE results SET result = json_set(result, '$.duration_s', ?) "
                               "WHERE run_id = ? AND procedure_id = ?", (seconds, merged_run, procedure_id))
    balanced = run_shards(2, "--shard-balance", "store", prefix="balanced")
    infos = [results(folder)["shard"] for folder in balanced]
    assert [info["balance"] for info in infos] == ["store", "store"]
    # the two slow ones go to different shards; each shard saw the same store (its own run does not count)
    slow = {"docs/b0.md#bucket-0", "docs/b1.md#bucket-1"}
    assert [len(slow & set(info["assigned"])) for info in infos] == [1, 1]
    assert infos[0]["plan_digest"] == infos[1]["plan_digest"]
    assert sorted(key for info in infos for key in info["assigned"]) == sorted(infos[0]["selected"])
    merged = invoke("merge", *map(str, balanced), "--no-store")
    assert merged.exit_code == ExitCode.OK, merged.output
    # hash-split shards and store-split shards of the same selection are not one run
    refused = invoke("merge", str(folders[0]), str(balanced[1]), "--no-store")
    assert refused.exit_code == ExitCode.USAGE and "split the procedures differently" in refused.output


def test_balance_by_store_without_history_splits_by_hash(docs):
    done = check("docs", "--shard", "1/2", "--shard-balance", "store", "--report", "json", "--output", "s")
    assert done.exit_code == ExitCode.OK, done.output
    assert "has no durations for these procedures yet: split by hash" in done.output
    assert results(Path("s"))["shard"]["balance"] == "hash"


# -- in a git checkout ---------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_shards_record_the_commit_and_shards_of_another_commit_are_refused(docs):
    from test_select import git

    git(Path.cwd(), "init", "-q", "-b", "main")
    git(Path.cwd(), "add", "docs")
    git(Path.cwd(), "commit", "-q", "-m", "docs")
    head = git(Path.cwd(), "rev-parse", "HEAD").strip()
    first = run_shards(2, "--no-store")
    assert [results(folder)["shard"]["commit"] for folder in first] == [head, head]
    assert invoke("merge", *map(str, first), "--no-store").exit_code == ExitCode.OK
    git(Path.cwd(), "commit", "-q", "--allow-empty", "-m", "later")
    later = run_shards(2, "--no-store", prefix="later")
    refused = invoke("merge", str(first[0]), str(later[1]), "--no-store")
    assert refused.exit_code == ExitCode.USAGE and f"of commit {head[:12]}" in refused.output


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_shards_with_nothing_changed_write_empty_parts_that_merge(docs):
    from test_select import git

    git(Path.cwd(), "init", "-q", "-b", "main")
    git(Path.cwd(), "add", "docs")
    git(Path.cwd(), "commit", "-q", "-m", "docs")
    folders = run_shards(2, "--no-store", "--changed-since", "HEAD")
    assert all(results(folder)["shard"]["selected"] == [] for folder in folders)
    merged = invoke("merge", *map(str, folders), "--no-store")
    assert merged.exit_code == ExitCode.OK, merged.output
    assert "0 procedures" in merged.output
    # unsharded, nothing changed is still nothing written
    plain = check("docs", "--changed-since", "HEAD", "--report", "json", "--output", "plain", "--no-store")
    assert plain.exit_code == ExitCode.OK and not Path("plain").exists()


def test_dry_run_shards_merge_into_a_dry_run_and_do_not_mix_with_a_real_one(docs):
    dry = run_shards(2, "--no-store", "--dry-run=browse", prefix="dry")  # INCONCLUSIVE stops: exit 0
    merged = invoke("merge", *map(str, dry), "--no-store", "-o", "merged-dry")
    assert merged.exit_code == ExitCode.OK, merged.output  # INCONCLUSIVE: stopped before the first change
    assert results(Path("merged-dry"))["dry_run"] is True
    real = run_shards(2, "--no-store", prefix="real")
    mixed = invoke("merge", str(dry[0]), str(real[1]), "--no-store")
    assert mixed.exit_code == ExitCode.USAGE, mixed.output
    assert "not a dry run (--dry-run=browse)" in mixed.output
