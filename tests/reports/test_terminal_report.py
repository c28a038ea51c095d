"""The terminal reporter: lines in CI logs, live progress in a terminal, the final table."""

import io

from report_samples import make_summary, task_for
from rich.console import Console

from docverify_reports.terminal import TerminalReporter


def _console(terminal: bool = False) -> Console:
    return Console(file=io.StringIO(), width=120, force_terminal=terminal, color_system=None if not terminal else "standard")


def _run(reporter: TerminalReporter, summary, output=None):
    reporter.run_started(len(summary.results), summary.console, summary.policy)
    for result in summary.results:
        task = task_for(result)
        reporter.procedure_started(task)
        for turn in result.turns:
            reporter.turn(task, turn)
        reporter.procedure_finished(result)
    return reporter.run_finished(summary, output)


def test_ci_log_gets_one_line_per_procedure_then_table_and_doc_lines(summary, tmp_path):
    console = _console()
    reporter = TerminalReporter(console=console)
    assert _run(reporter, summary, tmp_path) == []
    assert list(tmp_path.iterdir()) == []  # writes no file
    text = console.file.getvalue()
    lines = text.splitlines()
    assert "\x1b[" not in text  # not a terminal: no colour, no cursor movement
    assert lines[0] == "docverify: 5 procedures · console sandbox http://127.0.0.1:8765 (release 2026-03) · policy literal"
    assert "DRIFT        ecs#create-an-instance  31.5s  2 steps drifted" in lines
    assert "ENV_ERROR    rds#create-an-instance  1.0s  login failed: HTTP 502" in lines
    assert "PASS         oss#create-a-bucket  4.2s  PutBucket found in the audit log" in lines

    table = text[text.index("verdict"):]
    for result in summary.results:
        assert result.id in table and f"{result.path}:{result.line}" in table
    row = next(line for line in lines if "ecs#create-an-instance" in line and "31.5s" in line and "│" not in line
               and line.lstrip().startswith("DRIFT") and "docs/" in line)
    assert row.split() == ["DRIFT", "ecs#create-an-instance", "docs/ecs/create-instance.md:5", "2", "31.5s"]

    assert (
        "docs/ecs/create-instance.md:14: step 3: label changed: doc: Create Instance; "
        "console: Create, ECS: instance now 100% (nearest: Create ECS Instance)"
    ) in lines
    assert "docs/ecs/create-instance.md:16: step 4: element not found: doc: Next: Networking; " \
           "console: <script>alert('x')</script>" in lines
    assert "docs/vpc/create-vpc.md:7: FAIL: goal not reached: no CreateVpc event" in lines
    assert "docs/rds/create.md:2: ENV_ERROR: login failed: HTTP 502" in lines
    assert not any(line.startswith("docs/ecs/create-instance.md:18:") for line in lines)  # not a defect
    assert not any(line.startswith("docs/oss/") for line in lines)
    assert lines[-1] == "5 procedures: 1 PASS, 1 DRIFT, 1 FAIL, 1 ENV_ERROR, 1 INCONCLUSIVE in 1m02s"


def test_rich_markup_in_results_is_printed_as_text():
    from report_samples import sample_results

    result = sample_results()[2]
    result.reason = "[bold]not markup[/bold] [link=x]"
    console = _console()
    _run(TerminalReporter(console=console), make_summary([result]))
    assert "[bold]not markup[/bold] [link=x]" in console.file.getvalue()


def test_terminal_gets_a_live_display_of_running_procedures(summary):
    console = _console(terminal=True)
    reporter = TerminalReporter(console=console)
    reporter.run_started(5, summary.console, summary.policy)
    try:
        assert reporter.live
        passed, drifted = summary.results[:2]
        reporter.procedure_started(task_for(passed))
        reporter.procedure_started(task_for(drifted))  # --jobs 2: both run at once
        reporter.turn(task_for(drifted), drifted.turns[0])
        reporter.procedure_finished(passed)

        shown = Console(file=io.StringIO(), width=120, color_system=None)
        shown.print(reporter.progress())
        progress = shown.file.getvalue()
        assert "1/5 procedures" in progress
        assert "1 PASS" in progress
        assert "ecs#create-an-instance  step 3: click button 'Create ECS Instance'" in progress
        assert "oss#create-a-bucket" not in progress  # finished: no longer running
        assert "0:0" in progress  # elapsed
    finally:
        reporter.run_finished(summary, None)
    assert not reporter.live
    text = console.file.getvalue()
    assert "docs/vpc/create-vpc.md:7:" in text and "ecs#create-an-instance" in text


def test_an_empty_run_prints_the_counts_only():
    console = _console()
    _run(TerminalReporter(console=console), make_summary([]))
    assert console.file.getvalue().splitlines()[-1] == "0 procedures in 1m02s"


def test_results_go_to_one_stream_and_progress_to_the_other(summary):
    """As pytest and hatch do: verdicts and findings on stdout, the header (and the
    live display) on stderr, so `docverify check docs > results.txt` keeps the results."""
    out, err = _console(), _console()
    _run(TerminalReporter(console=out, progress=err), summary)
    results, progress = out.file.getvalue(), err.file.getvalue()
    assert progress.splitlines() == [
        "docverify: 5 procedures · console sandbox http://127.0.0.1:8765 (release 2026-03) · policy literal"]
    assert "docverify:" not in results
    assert "DRIFT        ecs#create-an-instance  31.5s  2 steps drifted" in results.splitlines()
    assert "docs/vpc/create-vpc.md:7: FAIL: goal not reached: no CreateVpc event" in results.splitlines()
    assert results.splitlines()[-1] == "5 procedures: 1 PASS, 1 DRIFT, 1 FAIL, 1 ENV_ERROR, 1 INCONCLUSIVE in 1m02s"


def test_a_live_display_on_stderr_leaves_redirected_stdout_alone(summary):
    out, err = _console(), _console(terminal=True)
    reporter = TerminalReporter(console=out, progress=err)
    reporter.run_started(5, summary.console, summary.policy)
    try:
        assert reporter.live
        reporter.procedure_finished(summary.results[0])
    finally:
        reporter.run_finished(summary, None)
    assert "PASS         oss#create-a-bucket" in out.file.getvalue()
    assert "oss#create-a-bucket" not in err.file.getvalue()


def _with_verbosity(verbosity: int) -> "tuple[TerminalReporter, Console]":
    console = _console()
    return TerminalReporter(TerminalReporter.Options(verbosity=verbosity), console=console), console


def test_quiet_shows_failures_only_and_very_quiet_the_counts_only(summary):
    reporter, console = _with_verbosity(-1)
    _run(reporter, summary)
    text = console.file.getvalue()
    assert "docverify:" not in text  # no header
    assert "oss#create-a-bucket" not in text  # the PASS: neither a line nor a table row
    assert "DRIFT        ecs#create-an-instance  31.5s  2 steps drifted" in text.splitlines()
    assert "docs/vpc/create-vpc.md:7: FAIL: goal not reached: no CreateVpc event" in text.splitlines()
    reporter, console = _with_verbosity(-2)
    _run(reporter, summary)
    assert console.file.getvalue().strip().splitlines() == [
        "5 procedures: 1 PASS, 1 DRIFT, 1 FAIL, 1 ENV_ERROR, 1 INCONCLUSIVE in 1m02s"]


def test_verbose_prints_every_step_as_it_runs(summary):
    reporter, console = _with_verbosity(1)
    _run(reporter, summary)
    lines = console.file.getvalue().splitlines()
    drifted = summary.results[1]
    steps = [line for line in lines if line.startswith(f"  {drifted.id}  ")]
    assert len(steps) == len(drifted.turns)
    assert any("click button 'Create ECS Instance'" in line for line in steps)


def test_a_run_stopped_by_maxfail_says_so_in_the_counts_line(summary):
    summary.stopped = "stopped after 1 failed procedure (--maxfail 1): 3 not run"
    console = _console()
    _run(TerminalReporter(console=console), summary)
    assert console.file.getvalue().splitlines()[-1].endswith(
        "in 1m02s — stopped after 1 failed procedure (--maxfail 1): 3 not run")
