"""The ``html`` reporter: one self-contained page a person reads after a run.

Everything is inline (CSS, screenshots as ``data:`` URIs), so the page can be
attached to a CI run or mailed and opened anywhere without fetching anything.
Per procedure: its verdict and reason, the doc's steps with their findings, then
every turn with the page before and after the action, and a link to the
Playwright trace when the run kept one.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from pydantic import Field

from docverify.reporter import Reporter
from docverify.trajectory import ProcedureResult, RunSummary, StepOutcome, Turn
from docverify.verdict import Finding, Verdict
from docverify_reports.output import output_dir, write_text
from docverify_reports.problems import duration

FILE_NAME = "report.html"
TEMPLATE = "report.html.j2"

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif"}


class HtmlReporter(Reporter):
    """Writes <output>/report.html: steps, findings, screenshots and traces on one page."""

    name = "html"
    writes_files = True

    class Options(Reporter.Options):
        screenshots: bool = Field(True, description="embed the before/after screenshots of each turn")

    def run_finished(self, summary: RunSummary, output: Path | None) -> list[Path]:
        """Render ``<output>/report.html``. Screenshots named by the turns are read
        from under ``output`` (missing ones, or names leading outside it, are
        skipped) and embedded as base64 ``data:`` URIs; traces are linked, not
        embedded."""
        directory = output_dir(self.name, output)
        page = render(summary, directory, screenshots=self.options.screenshots)
        return [write_text(directory / FILE_NAME, page)]


@dataclass
class StepView:
    outcome: StepOutcome
    findings: list[Finding]


@dataclass
class TurnView:
    turn: Turn
    before: str | None  #: a data: URI
    after: str | None


@dataclass
class ProcedureView:
    """What the template shows of one result."""

    anchor: str
    result: ProcedureResult
    steps: list[StepView]
    other_findings: list[Finding]  #: findings on no listed step
    turns: list[TurnView]
    trace: str | None  #: a path relative to the page
    artifacts: dict[str, str] = field(default_factory=dict)  #: the other artifacts, kind -> path

    @property
    def open(self) -> bool:
        return self.result.verdict is not Verdict.PASS


def render(summary: RunSummary, directory: Path, *, screenshots: bool = True) -> str:
    """The page for ``summary``; ``directory`` is where the screenshots lie."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    environment = Environment(
        loader=PackageLoader("docverify_reports", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["duration"] = duration
    environment.filters["href"] = _href
    images = ScreenshotReader(directory) if screenshots else None
    views = [procedure_view(result, f"p{i}", images) for i, result in enumerate(summary.results, 1)]
    return environment.get_template(TEMPLATE).render(
        summary=summary, counts=summary.counts(), procedures=views, verdicts=list(Verdict),
    )


def procedure_view(result: ProcedureResult, anchor: str, images: "ScreenshotReader | None") -> ProcedureView:
    """Findings placed under their step (by step number), the rest kept apart;
    turns with their screenshots."""
    placed: list[Finding] = []
    steps = []
    for outcome in result.steps:
        findings = list(outcome.findings)
        findings += [f for f in result.findings if f.step == outcome.number and f not in findings]
        placed += findings
        steps.append(StepView(outcome, findings))
    others = [finding for finding in result.findings if finding not in placed]
    turns = [
        TurnView(turn, images.data_uri(turn.screenshot_before) if images else None,
                 images.data_uri(turn.screenshot_after) if images else None)
        for turn in result.turns
    ]
    artifacts = {kind: path for kind, path in result.artifacts.items() if kind != "trace"}
    return ProcedureView(anchor, result, steps, others, turns, result.artifacts.get("trace"), artifacts)


class ScreenshotReader:
    """Screenshot files under the output directory, as ``data:`` URIs."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()
        self._cache: dict[str, str | None] = {}

    def data_uri(self, name: str | None) -> str | None:
        """``data:image/…;base64,…`` of ``<directory>/<name>``; None when there is no
        name, no such file, an unknown image type, or a name leading outside."""
        if not name:
            return None
        if name not in self._cache:
            self._cache[name] = self._read(name)
        return self._cache[name]

    def _read(self, name: str) -> str | None:
        path = (self.directory / name).resolve()
        mime = IMAGE_TYPES.get(path.suffix.lower())
        if mime is None or not path.is_relative_to(self.directory) or not path.is_file():
            return None
        return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _href(path: str) -> str:
    """A relative link to an artifact (never a URL scheme such as ``javascript:``)."""
    return quote(path.replace("\\", "/"), safe="/._-~")
