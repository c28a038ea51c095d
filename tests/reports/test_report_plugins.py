"""The `reports` plugin registers the five reporters; file reporters need --output."""

from pathlib import Path

import pytest
from report_samples import task_for

from docverify.errors import ExitCode, UsageError
from docverify.plugins import load_plugins
from docverify.report.reporter import Reporter

REPORTERS = ["github", "html", "json", "junit", "terminal"]
FILE_REPORTERS = ["html", "json", "junit"]


def test_reporters_register_through_entry_points():
    plugin_set = load_plugins()
    registry = plugin_set.registry("reporters")
    assert set(REPORTERS) <= set(registry.names())
    for name in REPORTERS:
        entry = registry.entry(name)
        assert entry.plugin == "reports"
        assert plugin_set.origin(entry).builtin
        assert issubclass(entry.obj, Reporter)
        assert entry.obj.summary()
    assert sorted(n for n in REPORTERS if registry.get(n).writes_files) == FILE_REPORTERS
    # the terminal reporter is the default, and still answers to its former name
    assert registry.default() == "terminal" and registry.entry("terminal").aliases == ("console",)
    assert registry.get("console") is registry.get("terminal") and "console" not in registry.names()


@pytest.mark.parametrize("name", FILE_REPORTERS)
def test_file_reporter_without_output_is_a_usage_error(name, summary):
    reporter = load_plugins().get("reporters", name)()
    with pytest.raises(UsageError, match=f"--report {name} needs --output DIR") as raised:
        reporter.run_finished(summary, None)
    assert raised.value.exit_code is ExitCode.USAGE


@pytest.mark.parametrize("name", FILE_REPORTERS)
def test_file_reporter_creates_the_output_dir_and_returns_its_files(name, summary, tmp_path: Path):
    output = tmp_path / "a" / "b"
    reporter = load_plugins().get("reporters", name)()
    written = reporter.run_finished(summary, output)
    assert len(written) == 1 and written[0].parent == output and written[0].stat().st_size > 0
    assert sorted(p.name for p in output.iterdir()) == [written[0].name]  # no partial file left


@pytest.mark.parametrize("name", FILE_REPORTERS)
def test_file_reporters_write_nothing_before_the_run_ends(name, summary, tmp_path: Path):
    reporter = load_plugins().get("reporters", name)()
    reporter.run_started(len(summary.results), summary.console, summary.policy)
    for result in summary.results:
        reporter.procedure_started(task_for(result))
        for turn in result.turns:
            reporter.turn(task_for(result), turn)
        reporter.procedure_finished(result)
    assert list(tmp_path.iterdir()) == []
