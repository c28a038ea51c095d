"""The ``github`` reporter: workflow-command annotations on the doc's own lines,
and a Markdown job summary.

GitHub Actions reads ``::error file=…,line=…::message`` lines from a step's
stdout and shows them on that line of the pull request's diff; the Markdown
appended to the file named by ``$GITHUB_STEP_SUMMARY`` becomes the job summary.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TextIO
from urllib.parse import quote

from docverify.check.verdict import Verdict
from docverify.report.reporter import Reporter
from docverify.report.trajectory import RunSummary
from docverify_reports.output import write_text
from docverify_reports.problems import DEFECTS, Problem, duration, one_line, problems

SUMMARY_FILE = "summary.md"

EMOJI = {
    Verdict.PASS: "✅",
    Verdict.DRIFT: "❌",
    Verdict.FAIL: "🛑",
    Verdict.ENV_ERROR: "⚠️",
    Verdict.INCONCLUSIVE: "❔",
}


class GithubReporter(Reporter):
    """GitHub Actions: ::error annotations on doc lines and a job summary."""

    name = "github"

    def __init__(
        self,
        options: Reporter.Options | None = None,
        *,
        stdout: TextIO | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(options)
        self._stdout = stdout
        self._environ = environ if environ is not None else os.environ

    def run_finished(self, summary: RunSummary, output: Path | None) -> list[Path]:
        """Print every annotation to stdout (all at once, so parallel procedures do
        not interleave them); append the job summary to ``$GITHUB_STEP_SUMMARY``
        when it is set, and write it to ``<output>/summary.md`` when ``output`` is
        given (the only file returned)."""
        workspace = self._environ.get("GITHUB_WORKSPACE")
        stream = self._stdout if self._stdout is not None else sys.stdout
        changed = changed_doc_lines(summary, self._environ)
        for line in annotations(summary, workspace=workspace, changed=changed):
            stream.write(line + "\n")
        stream.flush()
        markdown = job_summary(summary, workspace=workspace, links=blob_url(self._environ))
        step_summary = self._environ.get("GITHUB_STEP_SUMMARY")
        if step_summary:
            with open(step_summary, "a", encoding="utf-8") as file:
                file.write(markdown)
        if output is None:
            return []
        directory = Path(output)
        directory.mkdir(parents=True, exist_ok=True)
        return [write_text(directory / SUMMARY_FILE, markdown)]


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``), escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, *, file: str, line: int, title: str) -> str:
    """One workflow command: ``::level file=…,line=…,title=…::message``."""
    properties = f"file={escape_property(file)},line={line},title={escape_property(title)}"
    return f"::{level} {properties}::{escape_data(message)}"


#: GitHub shows this many annotations of each level (error, warning, notice) per step
SHOWN_PER_LEVEL = 10


def annotations(summary: RunSummary, *, workspace: str | None = None,
                changed: dict[Path, set[int] | None] | None = None) -> list[str]:
    """The workflow commands of a run, the most useful first.

    Each problem (see :func:`~docverify_reports.problems.problems`) is an
    ``::error`` when the procedure is DRIFT or FAIL, a ``::warning`` when it is
    ENV_ERROR or INCONCLUSIVE (the environment is not the doc's fault); each
    not-verifiable finding is a ``::notice``. Absolute paths under ``workspace``
    are made relative to it, as GitHub wants.

    GitHub shows only :data:`SHOWN_PER_LEVEL` annotations of a level per step, so
    each level is ordered: problems on lines the pull request changed (``changed``,
    from :func:`changed_doc_lines`) first, then the first problem of each procedure,
    then the rest in doc order. What does not fit is left out and counted in one
    last notice that points at the job summary, which lists everything."""
    candidates: list[tuple[str, tuple[int, int, int], str]] = []  # level, rank, command
    for result in summary.results:
        level = "error" if result.verdict in DEFECTS else "warning"
        found = [("notice" if problem.follows else level, problem.message, problem.path, problem.line,
                  f"docverify {problem.kind}") for problem in problems(result)]
        found += [("notice", finding.message, finding.path, finding.line, f"docverify {finding.kind.value}")
                  for finding in result.not_verifiable]
        for index, (kind, message, path, line, title) in enumerate(found):
            rank = (0 if _on_changed_line(path, line, changed) else 1, 0 if index == 0 else 1, len(candidates))
            candidates.append((kind, rank, command(kind, message, file=_repo_path(path, workspace), line=line,
                                                   title=title)))
    by_level = {level: sorted((c for c in candidates if c[0] == level), key=lambda c: c[1])
                for level in ("error", "warning", "notice")}
    hidden = {level: max(0, len(items) - SHOWN_PER_LEVEL) for level, items in by_level.items()}
    if any(hidden.values()):  # the last notice takes the room of one
        hidden["notice"] = max(0, len(by_level["notice"]) - (SHOWN_PER_LEVEL - 1))
    shown = [c for level, items in by_level.items() for c in items[:len(items) - hidden[level]]]
    lines = [text for _, _, text in sorted(shown, key=lambda c: c[1][2])]  # back in run order
    if any(hidden.values()):
        more = ", ".join(f"{n} {level}{'s' if n != 1 else ''}" for level, n in hidden.items() if n)
        lines.append(f"::notice title=docverify::{escape_data(more)} more: GitHub shows {SHOWN_PER_LEVEL} "
                     "annotations of each kind per step; every finding is in the job summary "
                     "(and the reports under --output)")
    return lines


def changed_doc_lines(summary: RunSummary, environ: Mapping[str, str]) -> dict[Path, set[int] | None] | None:
    """The lines the pull request changed: since ``--changed-since``'s ref, else since
    the pull request's base branch (``$GITHUB_BASE_REF``); None when neither is known
    or git cannot tell (the annotations are then only ordered by procedure)."""
    from docverify.errors import UsageError
    from docverify.run.select import changed_lines

    ref = summary.changed_since or (f"origin/{environ['GITHUB_BASE_REF']}" if environ.get("GITHUB_BASE_REF") else None)
    if not ref:
        return None
    try:
        return changed_lines(ref, Path(environ.get("GITHUB_WORKSPACE") or Path.cwd()))
    except UsageError:
        return None


def _on_changed_line(path: str, line: int, changed: dict[Path, set[int] | None] | None) -> bool:
    if not changed:
        return False
    lines = changed.get(Path(path).resolve(), set())
    return lines is None or line in lines


def job_summary(summary: RunSummary, *, workspace: str | None = None, links: str | None = None) -> str:
    """The Markdown job summary: a counts line, a table of procedures and the
    problems as ``path#Lline`` (links into the repository when ``links``, a blob
    URL prefix, is given). Ends with a blank line, so appended summaries stay apart."""
    counts = summary.counts()
    total = len(summary.results)
    parts = [f"{EMOJI[v]} {counts[v.value]} {v.value}" for v in Verdict if counts[v.value]]
    headline = f"**{total} procedure{'s' if total != 1 else ''}**"
    if parts:
        headline += ": " + " · ".join(parts)
    headline += f" in {duration(summary.duration_s)}"
    if summary.resumed:
        headline += f" ({summary.resumed} resumed)"
    if summary.interrupted:
        headline += " — **interrupted**"
    if summary.merged is not None and not summary.merged.complete:
        headline += f" — **{summary.merged.describe()}**"
    out = [
        "## docverify",
        "",
        headline,
        "",
        f"Console: {_code(summary.console)} · policy: {_code(summary.policy)} · run {_code(summary.run_id)}",
        "",
    ]
    usage = summary.usage().describe()
    if usage:
        out += [f"Model: {usage}", ""]
    if summary.results:
        out += ["| verdict | procedure | doc | findings | duration |", "|---|---|---|---|---|"]
        for result in summary.results:
            out.append(
                f"| {EMOJI[result.verdict]} {result.verdict.value} | {_code(result.id)} "
                f"| {_where(result.path, result.line, workspace, links)} | {len(result.drift)} "
                f"| {duration(result.duration_s)} |"
            )
        out.append("")
    out += _missing(summary)
    found = [problem for result in summary.results for problem in problems(result)]
    if found:
        out += ["### Findings", ""]
        out += [_problem_item(problem, workspace, links) for problem in found]
        out.append("")
    not_verifiable = sum(len(result.not_verifiable) for result in summary.results)
    if not_verifiable:
        out += [f"ℹ️ {not_verifiable} step{'s' if not_verifiable != 1 else ''} could not be verified literally.", ""]
    return "\n".join(out) + "\n"


#: missing procedures the job summary lists, one a line
SHOWN_MISSING = 50


def _missing(summary: RunSummary) -> list[str]:
    """A merged run's missing shards and procedures (``docverify merge``)."""
    merged = summary.merged
    if merged is None or merged.complete:
        return []
    out = ["### Missing", ""]
    out += [f"- ⚠️ shard {index}/{merged.count}: no results" for index in merged.missing_shards]
    shown = merged.missing[:SHOWN_MISSING]
    out += [f"- ⚠️ {_code(key)}: no result" for key in shown]
    if len(merged.missing) > len(shown):
        out.append(f"- … and {len(merged.missing) - len(shown)} more procedures without a result")
    return out + [""]


def _problem_item(problem: Problem, workspace: str | None, links: str | None) -> str:
    where = _where(problem.path, problem.line, workspace, links)
    return f"- {EMOJI[problem.verdict]} {where} ({_code(problem.procedure)}): {_markdown(problem.message)}"


def _where(path: str, line: int, workspace: str | None, links: str | None) -> str:
    relative = _repo_path(path, workspace)
    text = _code(f"{relative}#L{line}")
    if links and not PurePosixPath(relative).is_absolute() and not relative.startswith(".."):
        return f"[{text}]({links}/{quote(relative)}#L{line})"
    return text


def _repo_path(path: str, workspace: str | None) -> str:
    """``path`` relative to the workspace when it lies under it, with / separators."""
    if workspace and os.path.isabs(path):
        try:
            return Path(path).resolve().relative_to(Path(workspace).resolve()).as_posix()
        except ValueError:
            return path
    return path.replace(os.sep, "/")


def blob_url(environ: Mapping[str, str]) -> str | None:
    """``https://github.com/OWNER/REPO/blob/SHA`` from the Actions environment, if there."""
    server, repository, sha = (environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA"))
    if server and repository and sha:
        return f"{server.rstrip('/')}/{repository}/blob/{sha}"
    return None


def _code(text: str) -> str:
    """``text`` as an inline code span, safe inside a table cell."""
    return "`" + one_line(text).replace("`", "'").replace("|", "\\|") + "`"


_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|~"})


def _markdown(text: str) -> str:
    """``text`` on one line with Markdown and HTML syntax escaped: shown as it is."""
    return one_line(text).translate(_MARKDOWN_SPECIAL)
