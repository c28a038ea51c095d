"""`docverify check` through the CLI with the fake console, executor and checker
(tests/fake_plugins.py) and the literal policy: reports and their input, exit codes,
--maxfail, Ctrl-C and --resume, without Chromium or the sandbox.

What needs the real browser (no browser left behind, a console that is down, the
sandbox's releases) stays in tests/check/test_check_cli.py."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import textwrap
from pathlib import Path

import fake_plugins
import pytest
from click.testing import CliRunner
from fake_plugins import press_ctrl_c

from docverify.cli import cli
from docverify.cli.app import App
from docverify.errors import ExitCode
from docverify.plugins import load_plugins

PASSING = """\
    # Create a bucket

    <!-- docverify:
    id: bucket-ok
    -->

    1. In the left-side navigation pane, click **{link}**.
    2. On the Buckets page, click **Create Bucket**.
    3. Set **Bucket Name** to `docs-<suffix>`.
    4. Click **OK**.
"""

#: written for an older console: the field is "Bucket Name" now (element_not_found on line 9)
DRIFTING = """\
    # Create a bucket the old way

    <!-- docverify:
    id: bucket-old
    -->

    1. In the left-side navigation pane, click **Buckets**.
    2. On the Buckets page, click **Create Bucket**.
    3. Set **Name of the Bucket** to `docs-old-<suffix>`.
    4. Click **OK**.
"""


class CtrlC:
    """What clicking the "Archive" link does: the first time, a Ctrl-C (SIGINT to this
    process, as a terminal sends it; or SIGTERM, as a CI runner cancelling the job) while
    its page never loads; then it opens the bucket list."""

    def __init__(self, swallow: bool = False, sig: int = signal.SIGINT) -> None:
        self.pressed = 0
        self.swallow = swallow  #: fail instead of being cancelled, as a plugin whose browser closed under it
        self.sig = sig

    async def __call__(self, session) -> str:
        if self.pressed:
            return "/buckets"
        self.pressed += 1
        await press_ctrl_c(sig=self.sig)
        try:
            await asyncio.Event().wait()  # until the interrupted run cancels this procedure
        except asyncio.CancelledError:
            if self.swallow:
                raise RuntimeError("Target page, context or browser has been closed") from None
            raise
        raise AssertionError("not reached")


@pytest.fixture
def ctrl_c(request) -> CtrlC:
    swallow, sig = getattr(request, "param", (False, signal.SIGINT))
    return CtrlC(swallow=swallow, sig=sig)


@pytest.fixture(autouse=True)
def site(monkeypatch, ctrl_c):
    monkeypatch.setattr(fake_plugins, "SITE", {
        "/": ("Overview", [("link", "Buckets", "/buckets"), ("link", "Archive", ctrl_c)]),
        "/buckets": ("Buckets", [("button", "Create Bucket", "/create")]),
        "/create": ("Create Bucket", [("textbox", "Bucket Name", None), ("button", "OK", "/done")]),
        "/done": ("Buckets", [("row", "docs-t0 Standard", None)]),
    })


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """The docs folder, under the working directory (where the results store goes)."""
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    return docs


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def passing(index: int | str = "ok", link: str = "Buckets") -> str:
    return PASSING.replace("bucket-ok", f"bucket-{index}").replace("{link}", link)


#: the fakes, whatever the environment configures
FAKES = ["-O", "console.use=fake-console", "-O", "executor.use=fake-browser", "-O", "checker.use=fake-goal"]
CLEAN_ENV = {name: None for name in ("DOCVERIFY_CONSOLE", "DOCVERIFY_POLICY", "DOCVERIFY_EXECUTOR", "DOCVERIFY_CHECKER",
                                     "DOCVERIFY_CONFIG", "DOCVERIFY_JOBS", "DOCVERIFY_OUTPUT", "DOCVERIFY_FAIL_ON")}


def check(*args: str):
    plugins = load_plugins(extra=[fake_plugins])
    return CliRunner().invoke(cli, ["check", *args, *FAKES], obj=App(plugins=plugins), env=CLEAN_ENV)


def test_pass_and_drift_with_reports(folder, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    write(folder, "ok.md", passing())
    old = write(folder, "old.md", DRIFTING)
    out = tmp_path / "out"
    result = check(str(folder), "--jobs", "2", "--report", "json,junit,github", "--output", str(out), "--no-store")
    assert result.exit_code == ExitCode.DEFECTS, result.output
    data = json.loads((out / "docverify.json").read_text())
    # where the run's time went (benchmark/single_check.py reads it)
    assert set(data["timings"]) == {"startup_s", "prepare_s", "console_s", "browser_s", "procedures_s", "close_s"}
    assert all(seconds >= 0 for seconds in data["timings"].values())
    verdicts = {r["id"]: r for r in data["results"]}
    assert set(verdicts) == {"bucket-ok", "bucket-old"}
    assert verdicts["bucket-ok"]["verdict"] == "PASS", verdicts["bucket-ok"]["reason"]
    assert verdicts["bucket-ok"]["check"]["goal_reached"] is True
    drifted = verdicts["bucket-old"]
    assert drifted["verdict"] == "DRIFT"
    [finding] = drifted["findings"]
    assert (finding["kind"], finding["line"], finding["expected"]) == ("element_not_found", 9, "field Name of the Bucket")
    # the GitHub annotation points at the doc's own line
    assert f"::error file={old},line=9," in result.output
    assert "bucket-old" in summary.read_text()
    junit = (out / "junit.xml").read_text()
    assert 'tests="2"' in junit and "bucket-old" in junit


def test_exitfirst_starts_nothing_after_the_first_failure(folder, tmp_path):
    write(folder, "a-old.md", DRIFTING)
    for index in range(2):
        write(folder, f"b{index}.md", passing(index))
    out = tmp_path / "out"
    result = check(str(folder), "-x", "--jobs", "1", "--no-store", "--report", "json", "--output", str(out))
    assert result.exit_code == ExitCode.DEFECTS, result.output
    data = json.loads((out / "docverify.json").read_text())
    assert [r["id"] for r in data["results"]] == ["bucket-old"]
    assert "stopped after 1 failed procedure (--maxfail 1): 2 not run" in result.stdout
    # --fail-on decides what counts as failed: a drift that does not fail the run does not stop it
    again = check(str(folder), "--maxfail", "1", "--fail-on", "fail,env", "--jobs", "1", "--no-store", "-q")
    assert again.exit_code == 0, again.output
    assert again.stdout.strip().splitlines()[-1].startswith("3 procedures: 2 PASS, 1 DRIFT")
    assert "bucket-0" not in again.stdout  # -q: no line for a PASS


@pytest.mark.skipif(signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
                    reason="Ctrl-C is not Python's KeyboardInterrupt in this process")
@pytest.mark.parametrize("ctrl_c", [(False, signal.SIGINT), (True, signal.SIGINT), (False, signal.SIGTERM)],
                         ids=["cancelled", "failing-when-cancelled", "sigterm"], indirect=True)
def test_ctrl_c_saves_what_finished_marks_the_run_interrupted_and_resume_runs_the_rest(folder, tmp_path, ctrl_c):
    # the second one is interrupted: the first is saved, the others never start; the second
    # has no result even when it ends in an error instead of being cancelled (a plugin caught
    # the cancellation, or failed because its browser or console closed)
    for index in range(4):
        write(folder, f"b{index}.md", passing(index, link="Archive" if index == 1 else "Buckets"))
    try:
        interrupted = check(str(folder), "--jobs", "1")
    except KeyboardInterrupt:  # not the test session's to stop
        pytest.fail("the Ctrl-C escaped `docverify check`")
    assert ctrl_c.pressed == 1
    assert interrupted.exit_code == ExitCode.INTERRUPTED, interrupted.output
    assert "--resume" in interrupted.output
    assert interrupted.output.count("interrupted") == 1, interrupted.output  # said once, by the counts line
    with sqlite3.connect(tmp_path / ".docverify" / "results.db") as connection:
        saved = [row[0] for row in connection.execute("select procedure_id from results")]
        flags = [row[0] for row in connection.execute("select interrupted from runs")]
    assert saved == ["bucket-0"] and flags == [1]

    resumed = check(str(folder), "--resume", "--report", "json", "--output", str(tmp_path / "out"))
    assert resumed.exit_code == 0, resumed.output
    data = json.loads((tmp_path / "out" / "docverify.json").read_text())
    assert data["resumed"] == 1 and [r["id"] for r in data["results"]] == [f"bucket-{i}" for i in range(4)]
    assert resumed.output.count("(resumed)") == 1, resumed.output  # marked in the live output
    assert [r["id"] for r in data["results"] if r.get("resumed_from")] == ["bucket-0"]
    assert all(r["verdict"] == "PASS" for r in data["results"]), data["results"]
