"""`docverify check` as a user runs it: real sandbox, real Chromium, real exit codes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import ExitCode

from bucket_docs import DRIFTING, PASSING


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    write(folder, "ok.md", PASSING)
    write(folder, "old.md", DRIFTING)
    return folder


def invoke(*args: str, cwd: Path | None = None):
    runner = CliRunner()
    if cwd is None:
        return runner.invoke(cli, list(args))
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(cli, list(args))
    finally:
        os.chdir(old)


# -- without a browser -------------------------------------------------------------------


def test_dry_run_plans_without_running(docs):
    result = invoke("check", str(docs), "--dry-run", "--no-store")
    assert result.exit_code == 0, result.output
    assert "bucket-ok" in result.output and "Oss:PutBucket" in result.output
    assert "2 procedure(s) would run" in result.output


def test_a_path_without_procedures_exits_5(tmp_path):
    write(tmp_path, "notes.md", "# Notes\n\nNothing to do here.\n")
    result = invoke("check", str(tmp_path), "--no-store")
    assert result.exit_code == ExitCode.NO_PROCEDURES
    assert "no procedures to check" in result.output


def test_skipped_procedures_are_said_and_not_run(tmp_path):
    write(tmp_path, "skip.md", """\
        <!-- docverify:
        skip: needs a real-name verified account
        -->
        # Verify

        1. Click **Verify**.
    """)
    result = invoke("check", str(tmp_path), "--no-store")
    assert result.exit_code == ExitCode.NO_PROCEDURES
    assert "skipped by its annotation: needs a real-name verified account" in result.output
    assert "(all skipped)" in result.output


def test_bad_options_are_usage_errors(docs):
    result = invoke("check", str(docs), "--fail-on", "drift,oops", "--no-store")
    assert result.exit_code == ExitCode.USAGE and "unknown oops" in result.output
    result = invoke("check", str(docs), "--report", "json", "--no-store")
    assert result.exit_code == ExitCode.USAGE and "--output" in result.output
    result = invoke("check", str(docs), "-k", "bucket and", "--no-store")
    assert result.exit_code == ExitCode.USAGE and "expected a word after 'and'" in result.output
    result = invoke("check", f"{docs / 'ok.md'}#nope", "--no-store", "--dry-run")
    assert result.exit_code == ExitCode.USAGE and "bucket-ok" in result.output
    result = invoke("check", str(docs), "--set", "console.sandbox.nosuch=1", "--no-store")
    assert result.exit_code == ExitCode.USAGE and "nosuch" in result.output


def test_selection_by_fragment_and_keyword(docs):
    result = invoke("check", f"{docs / 'ok.md'}#bucket-ok", "--dry-run", "--no-store")
    assert "bucket-ok" in result.output and "bucket-old" not in result.output
    result = invoke("check", str(docs), "-k", "old and not ok", "--dry-run", "--no-store")
    assert "bucket-old" in result.output and "bucket-ok" not in result.output


# -- with the browser -------------------------------------------------------------------


@pytest.mark.browser
def test_pass_and_drift_with_reports(docs, tmp_path, chromium, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out = tmp_path / "out"
    result = invoke("check", str(docs), "--jobs", "2", "--report", "json,junit,github", "--output", str(out),
                    "--no-store")
    assert result.exit_code == ExitCode.DEFECTS, result.output
    data = json.loads((out / "docverify.json").read_text())
    # where the run's time went (benchmark/single_check.py reads it)
    assert set(data["timings"]) == {"startup_s", "prepare_s", "console_s", "browser_s", "procedures_s", "close_s"}
    assert all(seconds >= 0 for seconds in data["timings"].values())
    verdicts = {r["id"]: r for r in data["results"]}
    assert verdicts["bucket-ok"]["verdict"] == "PASS", verdicts["bucket-ok"]["reason"]
    assert verdicts["bucket-ok"]["check"]["goal_reached"] is True
    old = verdicts["bucket-old"]
    assert old["verdict"] == "DRIFT"
    [finding] = old["findings"]
    assert (finding["kind"], finding["line"], finding["observed"]) == ("label_changed", 14, "ACL")
    assert old["goal_reached"] is True  # the goal was still reached, by the renamed field
    # the GitHub annotation points at the doc's own line
    assert f"::error file={docs / 'old.md'},line=14," in result.output
    assert "bucket-old" in summary.read_text()
    assert (out / "junit.xml").exists()


@pytest.mark.browser
def test_the_2021_release_passes_the_old_doc(docs, chromium):
    result = invoke("check", f"{docs / 'old.md'}", "--set", "console.sandbox.release=2021-06", "--no-store")
    assert result.exit_code == 0, result.output


@pytest.mark.browser
def test_a_console_that_is_down_is_env_error_naming_it(docs, chromium):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = invoke("check", str(docs / "ok.md"), "--set", f"console.sandbox.url=http://127.0.0.1:{port}",
                    "--no-store")
    assert result.exit_code == ExitCode.ENVIRONMENT, result.output
    assert f"http://127.0.0.1:{port}" in result.output and "ENV_ERROR" in result.output


def chromium_pids(marker: str) -> set[int]:
    """Chromium processes started under a run whose environment holds ``marker``
    (browsers of other tests running at the same time do not count)."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
                environ = (entry / "environ").read_bytes() if b"chrom" in cmd.split(b"\0")[0] else b""
            except OSError:
                continue
            if marker.encode() in environ.split(b"\0"):
                pids.add(int(entry.name))
    return pids


def gone(processes, within: float = 10.0) -> bool:
    """Whether ``processes()`` comes back empty within ``within`` seconds (a process
    the run closed may take a moment to leave the process table)."""
    deadline = time.monotonic() + within
    while processes():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.browser
def test_a_check_that_ends_before_it_runs_leaves_no_browser(tmp_path, chromium):
    """The browser launches while the docs are read; docs with nothing to run close it."""
    folder = tmp_path / "docs"
    folder.mkdir()
    write(folder, "prose.md", "# Prose only\n\nNo procedure here.\n")
    marker = f"DOCVERIFY_TEST_RUN={uuid.uuid4().hex}"
    env = {**os.environ, marker.split("=")[0]: marker.split("=")[1]}
    done = subprocess.run([sys.executable, "-m", "docverify", "check", str(folder), "--no-store"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == ExitCode.NO_PROCEDURES, done.stderr
    assert "no procedures to check" in done.stderr and "Traceback" not in done.stderr
    assert gone(lambda: chromium_pids(marker)), "a browser process was left behind"


@pytest.mark.browser
@pytest.mark.slow
def test_ctrl_c_saves_results_closes_the_browser_and_resumes(tmp_path, chromium):
    folder = tmp_path / "docs"
    folder.mkdir()
    for index in range(4):
        write(folder, f"b{index}.md", PASSING.replace("bucket-ok", f"bucket-{index}"))
    marker = f"DOCVERIFY_TEST_RUN={uuid.uuid4().hex}"  # inherited by the browser the run starts
    env = {**os.environ, "DOCVERIFY_JOBS": "1", marker.split("=")[0]: marker.split("=")[1]}
    process = subprocess.Popen([sys.executable, "-m", "docverify", "check", str(folder)], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    db = tmp_path / ".docverify" / "results.db"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:  # wait until one result is saved
        if db.exists():
            try:
                with sqlite3.connect(db) as connection:
                    if connection.execute("select count(*) from results").fetchone()[0] >= 1:
                        break
            except sqlite3.Error:
                pass
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    output = process.communicate(timeout=60)[0].decode()
    assert process.returncode == ExitCode.INTERRUPTED, output
    assert "--resume" in output
    assert output.count("interrupted") == 1, output  # said once, by the counts line
    assert "never retrieved" not in output and "Connection closed" not in output, output
    assert gone(lambda: chromium_pids(marker)), "a browser process was left behind"
    with sqlite3.connect(db) as connection:
        saved = connection.execute("select count(*) from results").fetchone()[0]
        interrupted = connection.execute("select interrupted from runs").fetchone()[0]
    assert saved >= 1 and interrupted == 1
    resumed = invoke("check", str(folder), "--resume", "--report", "json", "--output", str(tmp_path / "out"),
                     cwd=tmp_path)
    assert resumed.exit_code == 0, resumed.output
    data = json.loads((tmp_path / "out" / "docverify.json").read_text())
    assert data["resumed"] == saved and len(data["results"]) == 4
    assert resumed.output.count("(resumed)") == saved, resumed.output  # marked in the live output
    assert sum(1 for r in data["results"] if r.get("resumed_from")) == saved


@pytest.mark.browser
def test_exitfirst_starts_nothing_after_the_first_failure(tmp_path, chromium):
    folder = tmp_path / "docs"
    folder.mkdir()
    write(folder, "a-old.md", DRIFTING)
    for index in range(2):
        write(folder, f"b{index}.md", PASSING.replace("bucket-ok", f"bucket-{index}"))
    out = tmp_path / "out"
    result = invoke("check", str(folder), "-x", "--jobs", "1", "--no-store", "--report", "json", "--output", str(out))
    assert result.exit_code == ExitCode.DEFECTS, result.output
    data = json.loads((out / "docverify.json").read_text())
    assert [r["id"] for r in data["results"]] == ["bucket-old"]
    assert "stopped after 1 failed procedure (--maxfail 1): 2 not run" in result.stdout
    # --fail-on decides what counts as failed: a drift that does not fail the run does not stop it
    again = invoke("check", str(folder), "--maxfail", "1", "--fail-on", "fail,env", "--jobs", "1", "--no-store", "-q")
    assert again.exit_code == 0, again.output
    assert again.stdout.strip().splitlines()[-1].startswith("3 procedures: 2 PASS, 1 DRIFT")
    assert "bucket-0" not in again.stdout  # -q: no line for a PASS
