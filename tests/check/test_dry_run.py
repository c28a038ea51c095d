"""``docverify check --dry-run=browse`` on the sandbox with the literal policy: it signs in,
follows the example docs up to the first action that changes the console's state and
stops there. The sandbox is served by the test, so its audit log and its resources can
be read after the run: no write event but the sign-in, nothing made, nothing changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import ExitCode
from docverify.parse.parser import parse_paths
from docverify_sandbox.server import build_app, running
from docverify_sandbox.state import DEFAULT_ACCOUNTS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ENV = {"DOCVERIFY_CONSOLE": None, "DOCVERIFY_POLICY": None, "DOCVERIFY_CONSOLE__SANDBOX__RELEASE": None,
       "DOCVERIFY_CONFIG": None, "DOCVERIFY_JOBS": None, "DOCVERIFY_FAIL_ON": None}
#: The account a sandbox served elsewhere signs in to.
ACCOUNT = DEFAULT_ACCOUNTS[0].account_id


@pytest.fixture
def sandbox():
    """A sandbox of the current release served here: (its URL, its store)."""
    app = build_app(None, None, 0, 0, "seeded")
    with running(app) as url:
        yield url, app.state.sandbox.store


def state(store) -> tuple[list[tuple[str, str]], int]:
    """What the account did and holds: its write events but the sign-ins, and how many resources."""
    with store.lock:
        events = store.conn.execute("SELECT event_name, service_name FROM events WHERE account_id=? "
                                    "AND event_rw='Write' AND event_name!='ConsoleSignin'", (ACCOUNT,)).fetchall()
        resources = store.conn.execute("SELECT count(*) FROM resources WHERE account_id=?", (ACCOUNT,)).fetchone()[0]
    return [tuple(row) for row in events], resources


def browse(url: str, output: Path, chromium, *paths: str | Path, options: tuple[str, ...] = ()) -> dict:
    args = ["check", *map(str, paths), "--dry-run=browse", "--set", f"console.sandbox.url={url}", "--report", "json",
            "--output", str(output), "--browser-path", str(chromium.path), "--jobs", "2", *options]
    result = CliRunner().invoke(cli, args, env=ENV, catch_exceptions=False)
    report = output / "docverify.json"
    assert report.exists(), f"docverify {' '.join(args)} wrote no report (exit {result.exit_code}):\n{result.output}"
    data = json.loads(report.read_text(encoding="utf-8"))
    data["exit_code"], data["output"] = result.exit_code, result.output
    return data


def last_step(path: Path, procedure_id: str):
    procedure = next(p for d in parse_paths([path]) for p in d.procedures if p.id == procedure_id)
    return procedure.steps[-1]


@pytest.mark.parametrize("args, words", [
    (["--dry-run=browse", "--resume"], "--resume: a dry run (--dry-run=browse) keeps no results to resume from"),
    (["--dry-run=look"], "'look' is neither plan nor browse"),
])
def test_a_dry_run_asked_for_wrongly_says_so(args, words):
    result = CliRunner().invoke(cli, ["check", str(EXAMPLES / "docs" / "ram.md"), *args], env=ENV)
    assert result.exit_code == ExitCode.USAGE and words in result.output, result.output


def test_a_path_after_a_bare_dry_run_is_said_to_belong_before_it():
    result = CliRunner().invoke(cli, ["check", "--dry-run", str(EXAMPLES / "docs")], env=ENV)
    assert result.exit_code == ExitCode.USAGE
    assert "give PATHS before a bare --dry-run" in result.output
    planned = CliRunner().invoke(cli, ["check", str(EXAMPLES / "docs" / "ram.md"), "--dry-run"], env=ENV)
    assert planned.exit_code == ExitCode.OK and "4 procedure(s) would run (dry run)" in planned.output


@pytest.mark.browser
@pytest.mark.slow
def test_a_dry_run_follows_the_steps_stops_before_the_first_change_and_changes_nothing(sandbox, chromium, tmp_path):
    url, store = sandbox
    before = state(store)
    docs = EXAMPLES / "docs"
    report = browse(url, tmp_path / "out", chromium, docs / "ram.md", docs / "eip.md", docs / "oss-buckets.md",
                    docs / "ecs-instance.md", options=("-k", "user or group or eip or create-bucket or wizard"))
    # INCONCLUSIVE (no goal verified), yet the dry run did what it was asked: it exits 0
    assert report["dry_run"] is True and report["exit_code"] == ExitCode.OK
    assert "dry run" in report["output"]
    results = {r["id"]: r for r in report["results"]}
    files = {"ram-create-user": "ram.md", "ram-create-group": "ram.md", "ram-grant-permission": "ram.md",
             "eip-apply": "eip.md", "oss-create-bucket": "oss-buckets.md", "ecs-create-instance-wizard": "ecs-instance.md"}
    assert set(results) == set(files)
    for procedure_id, result in results.items():
        # every example ends by submitting its form: that is the step the dry run stops before, on its line
        path = docs / files[procedure_id]
        last = last_step(path, procedure_id)
        if procedure_id == "oss-create-bucket":  # its last step checks the list; step 4 submits
            last = next(s for s in parse_paths([path])[0].procedures[0].steps if s.number == "4")
        stopped = result["stopped"]
        assert result["verdict"] == "INCONCLUSIVE" and result["dry_run"] is True, result["reason"]
        assert stopped["by"] == "dry_run" and stopped["step"] == last.number and stopped["line"] == last.line
        earlier = f"steps 1-{int(last.number) - 1} followed as written"
        assert result["reason"] == (f"dry run: stopped before step {last.number} at {path}:{last.line} "
                                    f"({stopped['action']}: {stopped['effect']}); {earlier}")
        assert result["check"] is None and result["findings"] == []  # no audit log is read
        assert result["turns"][-1]["action"]["kind"] == "stop"
        statuses = {s["number"]: s["status"] for s in result["steps"]}
        assert statuses[last.number] == "not_reached" and statuses["1"] == "followed"
    assert results["ram-create-group"]["stopped"]["effect"] == "submits the dialog 'Create Group'"
    assert results["ecs-create-instance-wizard"]["stopped"]["effect"] == \
        "acts by itself: no step after it fills in a form"
    # the sandbox's audit log and resources: nothing written, nothing made
    assert state(store) == before


@pytest.mark.browser
@pytest.mark.slow
def test_a_drifted_doc_is_drift_in_a_dry_run_and_the_exit_code_follows_fail_on(sandbox, chromium, tmp_path):
    url, store = sandbox
    before = state(store)
    drifted = EXAMPLES / "drifted"
    report = browse(url, tmp_path / "drifted", chromium, drifted / "ram-create-user.md", drifted / "slb-create.md")
    assert report["exit_code"] == ExitCode.DEFECTS
    for result in report["results"]:
        assert result["verdict"] == "DRIFT", result["reason"]
        [finding] = [f for f in result["findings"] if f["kind"] == "menu_moved"]
        assert finding["line"] == 20 and result["reason"].startswith(f"{result['path']}:20: step 2: menu moved")
        assert result["stopped"]["by"] == "dry_run"  # followed on, and stopped before the doc's last OK
    # the same without drift: a stop before the first change is no failure, whatever --fail-on says
    quiet = browse(url, tmp_path / "fail-on", chromium, EXAMPLES / "docs" / "ram.md", options=("-k", "create-group",
                                                                                                "--fail-on", "drift,env"))
    assert [r["verdict"] for r in quiet["results"]] == ["INCONCLUSIVE"] and quiet["exit_code"] == ExitCode.OK
    assert state(store) == before
