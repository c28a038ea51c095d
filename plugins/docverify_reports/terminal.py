"""The ``terminal`` reporter (formerly ``console``): live progress while a run goes,
a table when it ends.

Results go to stdout: one line per finished procedure, then a table of every
procedure, each problem as ``path:line: message`` (clickable in most terminals)
and the counts. Progress goes to stderr, as pytest and hatch do: the run's
header line and, in a terminal, a live display (rich) of procedures done/total,
what each running procedure is doing (several run at once with ``--jobs``), the
verdicts so far and the elapsed time; finished procedures scroll above it.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING

from pydantic import Field

from docverify.check.verdict import Verdict
from docverify.report.reporter import Reporter
from docverify.report.trajectory import ProcedureResult, RunSummary, Turn
from docverify.scrub import scrub
from docverify.task import Task
from docverify_reports.problems import duration, one_line, problems, why

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console, RenderableType
    from rich.live import Live
    from rich.text import Text

STYLE = {
    Verdict.PASS: "green",
    Verdict.DRIFT: "bold red",
    Verdict.FAIL: "red",
    Verdict.ENV_ERROR: "magenta",
    Verdict.INCONCLUSIVE: "yellow",
}
#: how many running procedures the live display lists before "+N more"
MAX_RUNNING_SHOWN = 8
REASON_WIDTH = 100


class TerminalReporter(Reporter):
    """Live progress in the terminal, then a table of verdicts and the doc lines at fault."""

    name = "terminal"

    class Options(Reporter.Options):
        verbosity: int = Field(0, ge=-2, le=2, description=(
            "-2: the counts only; -1: no line per PASS, failures only in the table; 0: a line per procedure; "
            "1 and up: every step as it runs too (docverify check -q/-v)"))

    def __init__(self, options: Reporter.Options | None = None, *, console: Console | None = None,
                 progress: Console | None = None) -> None:
        """``console`` is where results go (default: stdout), ``progress`` where the
        header and the live display go (default: stderr; tests pass ``console`` alone
        and get both in one)."""
        super().__init__(options)
        self._console = console
        self._progress = progress or console
        self._lock = threading.RLock()  # hooks may come from several worker threads
        self._total = 0
        self._done = 0
        self._counts: Counter[Verdict] = Counter()
        self._running: dict[str, str] = {}  # task id -> what it is doing now
        self._started = time.monotonic()
        self._live: Live | None = None

    @property
    def console(self) -> Console:
        """Where results go: stdout."""
        if self._console is None:
            self._console = _terminal_or_log(stderr=False)
        return self._console

    @property
    def progress_console(self) -> Console:
        """Where progress goes: stderr."""
        if self._progress is None:
            self._progress = _terminal_or_log(stderr=True)
        return self._progress

    @property
    def live(self) -> bool:
        """Whether a live display is showing."""
        return self._live is not None

    def run_started(self, total: int, console: str, policy: str) -> None:
        """Print what runs where; start the live display when writing to a terminal."""
        from rich.text import Text

        with self._lock:
            self._total, self._done, self._started = total, 0, time.monotonic()
            self._counts.clear()
            self._running.clear()
        plural = "s" if total != 1 else ""
        progress = self.progress_console
        if self.options.verbosity >= 0:
            progress.print(
                Text(f"docverify: {total} procedure{plural} · console {console} · policy {policy}"), highlight=False
            )
        if self._live is not None:  # a second run on the same reporter
            self._live.stop()
            self._live = None
        if progress.is_terminal and not progress.is_dumb_terminal and self.options.verbosity > -2:
            from rich.live import Live

            # results printed to stdout scroll above the display when both are this terminal;
            # stdout redirected to a file keeps its own lines and the display stays on stderr
            shared = progress is self.console or self.console.is_terminal
            self._live = Live(
                console=progress, get_renderable=self.progress, refresh_per_second=4, transient=True,
                redirect_stdout=shared and progress is not self.console, redirect_stderr=False,
            )
            self._live.start()

    def procedure_started(self, task: Task) -> None:
        with self._lock:
            self._running[task.id] = "starting"

    def turn(self, task: Task, turn: Turn) -> None:
        doing = f"step {turn.step}: {turn.description}" if turn.step else turn.description
        if not turn.ok:
            doing += f" ✗ {turn.error or 'failed'}"
        doing = scrub(doing)  # a value the console revealed a moment ago may be in it
        with self._lock:
            self._running[task.id] = one_line(doing, REASON_WIDTH)
        if self.options.verbosity > 0:  # -v: every step as it runs, above the live display
            from rich.text import Text

            line = Text(f"  {task.id}  ", style="dim")
            line.append(one_line(doing, REASON_WIDTH), style=None if turn.ok else "red")
            self.console.print(line, highlight=False, soft_wrap=True)

    def procedure_finished(self, result: ProcedureResult) -> None:
        """Count the verdict and print the procedure's line (above the live display)."""
        from rich.text import Text

        with self._lock:
            self._running.pop(result.id, None)
            self._done += 1
            self._counts[result.verdict] += 1
        if (self.options.verbosity < 0 and result.verdict is Verdict.PASS) or self.options.verbosity < -1:
            return
        line = Text()
        line.append(f"{result.verdict.value:<12}", style=STYLE[result.verdict])
        line.append(f" {result.id}", style="bold")
        line.append(f"  {duration(result.duration_s)}", style="dim")
        if result.resumed_from:
            line.append("  (resumed)", style="dim")
        if why(result):
            line.append(f"  {one_line(why(result), REASON_WIDTH)}")
        self.console.print(line, highlight=False, soft_wrap=True)

    def run_finished(self, summary: RunSummary, output: Path | None) -> list[Path]:
        """Stop the live display; print the table, the problems and the counts.
        Writes no file."""
        if self._live is not None:
            self._live.stop()
            self._live = None
        out = self.console
        quiet = self.options.verbosity < 0
        shown = [r for r in summary.results if r.verdict is not Verdict.PASS] if quiet else summary.results
        if shown and self.options.verbosity > -2:
            out.print(results_table(summary, shown))
        lines = [problem for result in summary.results for problem in problems(result)]
        if lines and self.options.verbosity > -2:
            from rich.text import Text

            out.print()
            for problem in lines:
                text = Text()
                if problem.follows:  # listed under the finding it follows from
                    text.append("  └ ", style="dim")
                text.append(f"{problem.location}:", style="bold")
                text.append(f" {one_line(problem.message)}", style="dim" if problem.follows else STYLE[problem.verdict])
                out.print(text, highlight=False, soft_wrap=True)
        out.print()
        out.print(counts_line(summary), highlight=False, soft_wrap=True)
        return []

    def progress(self) -> RenderableType:
        """The live display: a bar with done/total, the verdict counts and the
        elapsed time, then one line per running procedure."""
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        with self._lock:
            total, done = self._total, self._done
            counts = dict(self._counts)
            running = list(self._running.items())
        head = Table.grid(padding=(0, 1))
        head.add_row(
            ProgressBar(total=max(total, 1), completed=done, width=30),
            Text(f"{done}/{total} procedures"),
            _counts_text({verdict.value: n for verdict, n in counts.items()}),
            Text(_clock(time.monotonic() - self._started), style="dim"),
        )
        grid = Table.grid(padding=(0, 1))
        grid.add_row(head)
        for task_id, doing in running[:MAX_RUNNING_SHOWN]:
            row = Text("  › ")
            row.append(task_id, style="bold")
            row.append(f"  {doing}", style="dim")
            grid.add_row(row)
        if len(running) > MAX_RUNNING_SHOWN:
            grid.add_row(Text(f"  … {len(running) - MAX_RUNNING_SHOWN} more running", style="dim"))
        return grid


def results_table(summary: RunSummary, results: list[ProcedureResult] | None = None) -> RenderableType:
    """Every procedure (or those of ``results``): verdict, id, doc location, drift
    findings, duration."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("verdict")
    table.add_column("procedure", overflow="fold")
    table.add_column("doc", overflow="fold")
    table.add_column("findings", justify="right")
    table.add_column("duration", justify="right")
    for result in summary.results if results is None else results:
        table.add_row(
            Text(result.verdict.value, style=STYLE[result.verdict]),
            Text(result.id),
            Text(f"{result.path}:{result.line}"),
            Text(str(len(result.drift))),
            Text(duration(result.duration_s)),
        )
    return table


def counts_line(summary: RunSummary) -> Text:
    """The last line, coloured: "5 procedures: 1 PASS, 2 DRIFT … in 1m02s"."""
    from rich.text import Text

    total = len(summary.results)
    line = Text(f"{total} procedure{'s' if total != 1 else ''}", style="bold")
    counts = summary.counts()
    if any(counts.values()):
        line.append(": ")
        line.append_text(_counts_text(counts, separator=", "))
    line.append(f" in {duration(summary.duration_s)}")
    if summary.resumed:
        line.append(f" ({summary.resumed} resumed)")
    if summary.interrupted:
        line.append(" — interrupted", style="bold yellow")
    if summary.stopped:
        line.append(f" — {summary.stopped}", style="bold yellow")
    if summary.dry_run:
        line.append(" — dry run: stopped before the first change of state, nothing provisioned, no audit log checked",
                    style="bold yellow")
    if summary.merged is not None and not summary.merged.complete:
        line.append(f" — {summary.merged.describe()}", style="bold yellow")
    usage = summary.usage().describe()
    if usage:
        line.append(f"\nmodel: {usage}", style="dim")
    return line


def _counts_text(counts: dict[str, int], separator: str = " · ") -> Text:
    from rich.text import Text

    text = Text()
    shown = [verdict for verdict in Verdict if counts.get(verdict.value)]
    for i, verdict in enumerate(shown):
        if i:
            text.append(separator)
        text.append(f"{counts[verdict.value]} {verdict.value}", style=STYLE[verdict])
    return text


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _terminal_or_log(*, stderr: bool) -> Console:
    """rich's console on stdout or stderr; in a CI log (no terminal to fit) 140
    columns wide, so that ids stay on one line."""
    from rich.console import Console

    console = Console(stderr=stderr)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(stderr=stderr, width=140)
    return console
