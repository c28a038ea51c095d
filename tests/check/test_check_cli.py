"""`docverify check` as a user runs it: real sandbox, real Chromium, real exit codes.

Reports, --maxfail and --resume are the run's own logic: tested with the fake plugins,
without a browser, in tests/run/test_fake_check_cli.py."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import fake_plugins
import pytest
from bucket_docs import DRIFTING, PASSING
from click.testing import CliRunner

from docverify.cli import cli
from docverify.cli.app import App
from docverify.errors import ExitCode
from docverify.plugins import load_plugins


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


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def invoke_without_browser(*args: str):
    """``invoke`` with the fake executor (tests/fake_plugins.py): a check warms the
    configured browser up as soon as it starts, and these checks end before any
    procedure runs."""
    plugins = load_plugins(extra=[fake_plugins])
    return CliRunner().invoke(cli, [*args, "-O", "executor.use=fake-browser"], obj=App(plugins=plugins))


# -- without a browser -------------------------------------------------------------------


def test_dry_run_plans_without_running(docs):
    result = invoke_without_browser("check", str(docs), "--dry-run", "--no-store")
    assert result.exit_code == 0, result.output
    assert "bucket-ok" in result.output and "Oss:PutBucket" in result.output
    assert "2 procedure(s) would run" in result.output


def test_a_path_without_procedures_exits_5(tmp_path):
    write(tmp_path, "notes.md", "# Notes\n\nNothing to do here.\n")
    result = invoke_without_browser("check", str(tmp_path), "--no-store")
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
    result = invoke_without_browser("check", str(tmp_path), "--no-store")
    assert result.exit_code == ExitCode.NO_PROCEDURES
    assert "skipped by its annotation: needs a real-name verified account" in result.output
    assert "(all skipped)" in result.output


def test_bad_options_are_usage_errors(docs):
    result = invoke_without_browser("check", str(docs), "--fail-on", "drift,oops", "--no-store")
    assert result.exit_code == ExitCode.USAGE and "unknown oops" in result.output
    result = invoke_without_browser("check", str(docs), "--report", "json", "--no-store")
    assert result.exit_code == ExitCode.USAGE and "--output" in result.output
    result = invoke_without_browser("check", str(docs), "-k", "bucket and", "--no-store")
    assert result.exit_code == ExitCode.USAGE and "expected a word after 'and'" in result.output
    result = invoke_without_browser("check", f"{docs / 'ok.md'}#nope", "--no-store", "--dry-run")
    assert result.exit_code == ExitCode.USAGE and "bucket-ok" in result.output
    result = invoke_without_browser("check", str(docs), "--set", "console.sandbox.nosuch=1", "--no-store")
    assert result.exit_code == ExitCode.USAGE and "nosuch" in result.output


def test_selection_by_fragment_and_keyword(docs):
    result = invoke_without_browser("check", f"{docs / 'ok.md'}#bucket-ok", "--dry-run", "--no-store")
    assert "bucket-ok" in result.output and "bucket-old" not in result.output
    result = invoke_without_browser("check", str(docs), "-k", "old and not ok", "--dry-run", "--no-store")
    assert "bucket-old" in result.output and "bucket-ok" not in result.output


# -- with the browser -------------------------------------------------------------------


@pytest.mark.browser
def test_the_2021_release_passes_the_old_doc(docs, chromium):
    pytest.importorskip("alibabacloud_actiontrail20200706",
                        reason="the actiontrail checker decides it: pip install -e '.[actiontrail]'")
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
def test_ctrl_c_saves_results_and_closes_the_browser(tmp_path, chromium):
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
