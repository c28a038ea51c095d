"""The ``html`` reporter: one self-contained page a person reads after a run.

Everything is inline (CSS, a little JavaScript, screenshots as ``data:`` URIs), so
the page can be attached to a CI run or mailed and opened anywhere without
fetching anything. At the top, a verdict bar (one segment per verdict, as wide as
its share) and filters by verdict and by finding kind (JavaScript; without it the
filters stay hidden and everything shows). Procedures come failures first
(:data:`ORDER`). Per procedure: its verdict and reason, the doc's steps with their
findings — each with the screenshot of the page it was raised on, the element it
points at outlined (``Finding.box``), click to enlarge — then every turn with the
page after its action, and a link to the Playwright trace when the run kept one.

Each picture is embedded once, however many turns and findings show it: a CSS
class whose background is the ``data:`` URI (:class:`Screenshots`).
"""

from __future__ import annotations

import base64
import hashlib
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import Field

from docverify.check.verdict import Finding, Verdict
from docverify.report.reporter import Reporter
from docverify.report.trajectory import ProcedureResult, RunSummary, StepOutcome, Turn
from docverify_reports.output import output_dir, write_text
from docverify_reports.problems import duration

FILE_NAME = "report.html"
TEMPLATE = "report.html.j2"

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif"}
#: The order procedures are shown in: failures first, the doc's defects before the rest.
ORDER = (Verdict.DRIFT, Verdict.FAIL, Verdict.ENV_ERROR, Verdict.INCONCLUSIVE, Verdict.PASS)
#: The finding-kind filter's name for procedures without findings.
NO_FINDINGS = "none"


class HtmlReporter(Reporter):
    """Writes <output>/report.html: verdict bar, filters, steps, findings on their screenshots, turns, traces."""

    name = "html"
    writes_files = True

    class Options(Reporter.Options):
        screenshots: bool = Field(True, description="embed the screenshots the run kept (by default `docverify "
                                                    "check` keeps those of procedures that did not pass)")

    def run_finished(self, summary: RunSummary, output: Path | None) -> list[Path]:
        """Render ``<output>/report.html``. Screenshots named by the turns and findings
        are read from under ``output`` (missing ones, or names leading outside it, are
        skipped) and embedded once each as base64 ``data:`` URIs; traces are linked,
        not embedded."""
        directory = output_dir(self.name, output)
        page = render(summary, directory, screenshots=self.options.screenshots)
        return [write_text(directory / FILE_NAME, page)]


@dataclass
class Image:
    """One embedded picture: the CSS class that shows it, its ``data:`` URI and size."""

    css: str
    uri: str
    width: int | None = None
    height: int | None = None

    @property
    def ratio(self) -> float:
        """Width over height (the default viewport's, 1280×900, when unknown)."""
        return round(self.width / self.height, 4) if self.width and self.height else round(1280 / 900, 4)


@dataclass
class Shot:
    """A screenshot where the page shows it: a figure that enlarges when clicked (its
    ``id`` becomes the URL's target) and closes back to ``back``."""

    id: str
    image: Image
    caption: str
    back: str
    outline: str | None = None  #: the inline style of the box drawn over the image


@dataclass
class FindingView:
    id: str
    finding: Finding
    shot: Shot | None


@dataclass
class StepView:
    outcome: StepOutcome
    findings: list[FindingView]


@dataclass
class TurnView:
    id: str
    turn: Turn
    shots: list[Shot]  #: the page before (when no turn before showed it) and after the action


@dataclass
class ProcedureView:
    """What the template shows of one result."""

    anchor: str
    result: ProcedureResult
    steps: list[StepView]
    other_findings: list[FindingView]  #: findings on no listed step
    turns: list[TurnView]
    trace: str | None  #: a path relative to the page
    artifacts: dict[str, str] = field(default_factory=dict)  #: the other artifacts, kind -> path

    @property
    def open(self) -> bool:
        return self.result.verdict is not Verdict.PASS

    @property
    def kinds(self) -> str:
        """Its finding kinds, space-separated, for the filter (``none`` without findings)."""
        return " ".join(sorted({f.kind.value for f in self.result.findings})) or NO_FINDINGS


@dataclass
class Segment:
    """One verdict's part of the verdict bar."""

    verdict: Verdict
    count: int
    percent: float
    first: str  #: the anchor of its first procedure


def ordered(results: list[ProcedureResult]) -> list[ProcedureResult]:
    """Failures first (:data:`ORDER`); the run's order within a verdict."""
    rank = {verdict: i for i, verdict in enumerate(ORDER)}
    return sorted(results, key=lambda result: rank.get(result.verdict, len(ORDER)))


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
    images = Screenshots(directory) if screenshots else None
    views = [procedure_view(result, f"p{i}", images) for i, result in enumerate(ordered(summary.results), 1)]
    counts = summary.counts()
    total = len(views)
    bar = [Segment(verdict, counts[verdict.value], round(100 * counts[verdict.value] / total, 2),
                   next(v.anchor for v in views if v.result.verdict is verdict))
           for verdict in ORDER if counts[verdict.value]]
    kinds = Counter(kind for view in views for kind in view.kinds.split())
    return environment.get_template(TEMPLATE).render(
        summary=summary, counts=counts, procedures=views, verdicts=list(ORDER), bar=bar,
        kinds=sorted(kinds.items(), key=lambda item: (item[0] == NO_FINDINGS, item[0])),
        images=images.images if images else [],
    )


def procedure_view(result: ProcedureResult, anchor: str, images: "Screenshots | None") -> ProcedureView:
    """Findings placed under their step (by step number), the rest kept apart, each
    with the screenshot it was raised on; turns with theirs."""
    numbered: dict[int, FindingView] = {}  #: id(finding) -> its view: a finding listed twice is one view

    def view_of(finding: Finding) -> FindingView:
        if id(finding) not in numbered:
            ident = f"{anchor}-f{len(numbered) + 1}"
            image = images.get(finding.screenshot) if images else None
            shot = Shot(f"{ident}-shot", image, "the page it was raised on", ident, outline(finding.box)) if image else None
            numbered[id(finding)] = FindingView(ident, finding, shot)
        return numbered[id(finding)]

    placed: list[Finding] = []
    steps = []
    for outcome in result.steps:
        findings = list(outcome.findings)
        findings += [f for f in result.findings if f.step == outcome.number and f not in findings]
        placed += findings
        steps.append(StepView(outcome, [view_of(f) for f in findings]))
    others = [view_of(finding) for finding in result.findings if finding not in placed]
    artifacts = {kind: path for kind, path in result.artifacts.items() if kind != "trace"}
    return ProcedureView(anchor, result, steps, others, turn_views(result.turns, anchor, images),
                         result.artifacts.get("trace"), artifacts)


def turn_views(turns: list[Turn], anchor: str, images: "Screenshots | None") -> list[TurnView]:
    """Each turn with the page after its action, and the page before it where that is
    not the page the turn before left (the first action's start page)."""
    views = []
    shown: str | None = None
    for turn in turns:
        ident = f"{anchor}-t{turn.index}"
        shots = []
        for name, when in ((turn.screenshot_before, "before"), (turn.screenshot_after, "after")):
            image = images.get(name) if images and (when == "after" or name != shown) else None
            if image is not None:
                shots.append(Shot(f"{ident}-{when}", image, f"{when} turn {turn.index}", ident))
        shown = turn.screenshot_after or shown
        views.append(TurnView(ident, turn, shots))
    return views


def outline(box: dict[str, Any] | None) -> str | None:
    """The inline style that draws ``box`` (fractions of the screenshot, as
    ``Finding.box`` has it) over the image, in percent of its size; None for no box
    or one that is not four numbers."""
    if not box:
        return None
    try:
        x, y, width, height = (min(max(float(box[key]), 0.0), 1.0) for key in ("x", "y", "width", "height"))
    except (KeyError, TypeError, ValueError):
        return None
    if width <= 0 or height <= 0:
        return None
    return "; ".join(f"{prop}: {round(value * 100, 2):g}%" for prop, value in
                     (("left", x), ("top", y), ("width", min(width, 1 - x)), ("height", min(height, 1 - y))))


class Screenshots:
    """Screenshot files under the output directory, each picture embedded once: a CSS
    class (``s1``, ``s2``…) whose background is its ``data:`` URI, shared by every turn
    and finding that names a file with the same bytes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()
        self._by_name: dict[str, Image | None] = {}
        self._by_digest: dict[str, Image] = {}

    @property
    def images(self) -> list[Image]:
        """Every picture the page shows, in the order first asked for."""
        return list(self._by_digest.values())

    def get(self, name: str | None) -> Image | None:
        """The picture of ``<directory>/<name>``; None when there is no name, no such
        file, an unknown image type, or a name leading outside."""
        if not name:
            return None
        if name not in self._by_name:
            self._by_name[name] = self._read(name)
        return self._by_name[name]

    def _read(self, name: str) -> Image | None:
        path = (self.directory / name).resolve()
        mime = IMAGE_TYPES.get(path.suffix.lower())
        if mime is None or not path.is_relative_to(self.directory) or not path.is_file():
            return None
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self._by_digest:
            width, height = image_size(data) or (None, None)
            uri = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
            self._by_digest[digest] = Image(f"s{len(self._by_digest) + 1}", uri, width, height)
        return self._by_digest[digest]


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of a PNG or JPEG from its header; None for anything else."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    if data[:2] != b"\xff\xd8":
        return None
    at = 2
    while at + 9 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            at += 2
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start of frame
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        at += 2 + struct.unpack(">H", data[at + 2:at + 4])[0]
    return None


def _href(path: str) -> str:
    """A relative link to an artifact (never a URL scheme such as ``javascript:``)."""
    return quote(path.replace("\\", "/"), safe="/._-~")
