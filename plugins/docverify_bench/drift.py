"""``docverify bench drift``: verdict and finding accuracy on a labelled set of docs.

The set (``benchmark/accuracy/``, see its README) holds procedures written from the
sandbox's rendered pages by writers who never saw the policy, each for one release,
and a truth file per writer: the verdict each procedure should get at each release
and, at the release it was not written for, the findings (doc line, kind) that the
release changelog implies. The set is checked at every release and scored:

- procedure level: the confusion of expected and actual verdicts; DRIFT precision
  and recall; the false-DRIFT rate at each doc's own release (where it should
  PASS) and on the docs no change touched (PASS at every release);
- step level: precision and recall of drift findings by doc line, and by line and
  kind. A finding that only follows from an earlier one (``consequence_of``: the
  page never changed, an earlier action failed) is noise, not a finding: it is
  counted apart and neither helps nor hurts;
- success criteria: whether the built-in criteria name the event the writer saw.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from docverify.errors import yaml_error_at
from docverify_bench.tasks import BenchError

#: The sandbox releases a doc of the set is written for, and checked at.
RELEASES = ("2021-06", "2026-03")
VERDICTS = ("PASS", "DRIFT", "FAIL", "ENV_ERROR", "INCONCLUSIVE", "MISSING")
KINDS = ("label_changed", "element_not_found", "menu_moved", "value_rejected", "missing_step", "extra_step")


@dataclass
class Expected:
    """One procedure of the set and what should come of it."""

    file: str  #: relative to the set's docs/
    heading: str
    line: int
    language: str
    product: str
    written_for: str
    writer: str
    events: list[dict[str, Any]]
    verdicts: dict[str, str]  #: release -> PASS or DRIFT
    findings: dict[str, list[dict[str, Any]]]  #: release -> [{line, kind, also}]

    @property
    def untouched(self) -> bool:
        """No change between the releases touches it: it should PASS at every one."""
        return all(verdict == "PASS" for verdict in self.verdicts.values())


def load_truth(folder: Path) -> list[Expected]:
    """Every truth file's procedures; a malformed entry is a BenchError naming it."""
    out: list[Expected] = []
    truth = folder / "truth"
    if not truth.is_dir():
        raise BenchError(f"{folder}: no truth/ folder", hint="give the accuracy set's folder (benchmark/accuracy)")
    for path in sorted(truth.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as error:
            at, problem = yaml_error_at(error)
            raise BenchError(f"{path}:{(at or 0) + 1}: not YAML ({problem})") from None
        writer = str(data.get("writer") or path.stem)
        for index, item in enumerate(data.get("procedures") or []):
            where = f"{path}: procedure {index + 1}"
            try:
                expected = item["expected"]
                entry = Expected(
                    file=str(item["file"]), heading=str(item["heading"]), line=int(item["line"]),
                    language=str(item.get("language", "en")), product=str(item.get("product", "")),
                    written_for=str(item["written_for"]), writer=writer, events=list(item.get("events") or []),
                    verdicts={release: str(expected[release]["verdict"]) for release in RELEASES},
                    findings={release: list(expected[release].get("findings") or []) for release in RELEASES},
                )
            except (KeyError, TypeError, ValueError) as error:
                raise BenchError(f"{where}: missing or malformed {error}",
                                 hint="see the truth entry format in benchmark/accuracy/README.md") from None
            if entry.written_for not in RELEASES:
                raise BenchError(f"{where}: written_for {entry.written_for!r} is not one of {', '.join(RELEASES)}")
            if not (folder / "docs" / entry.file).exists():
                raise BenchError(f"{where}: no such doc {folder / 'docs' / entry.file}")
            for release, items in entry.findings.items():
                for finding in items:
                    if finding.get("kind") not in KINDS:
                        raise BenchError(f"{where}: {release} finding kind {finding.get('kind')!r} is not one of "
                                         + ", ".join(KINDS))
            out.append(entry)
    if not out:
        raise BenchError(f"no truth entries in {truth}")
    return out


def match(truth: Sequence[Expected], results: Iterable[Mapping[str, Any]], docs: Path,
          cwd: Path | None = None) -> dict[int, Mapping[str, Any] | None]:
    """Each truth entry's result: same file, same heading line (else same title)."""
    base = (cwd or Path.cwd()).resolve()
    root = docs.resolve()
    by_key: dict[tuple[str, Any], Mapping[str, Any]] = {}
    for result in results:
        path = Path(result["path"])
        path = path if path.is_absolute() else base / path
        try:
            relative = path.resolve().relative_to(root).as_posix()
        except ValueError:
            continue  # not a doc of this set
        by_key[(relative, result["line"])] = result
        by_key.setdefault((relative, result["title"]), result)
    return {index: by_key.get((t.file, t.line)) or by_key.get((t.file, t.heading)) for index, t in enumerate(truth)}


@dataclass
class Tally:
    """Counts for one slice of the set (a release, or all)."""

    confusion: Counter = field(default_factory=Counter)  #: (expected, got) -> n
    own_release: Counter = field(default_factory=Counter)  #: got -> n, at the release a doc was written for
    untouched: Counter = field(default_factory=Counter)  #: got -> n, docs no change touches
    predicted_lines: int = 0
    predicted_line_hits: int = 0
    predicted_kind_hits: int = 0
    truth_lines: int = 0
    truth_line_found: int = 0
    truth_kind_found: int = 0
    consequences: int = 0  #: findings that only follow from an earlier one: noise, not counted
    criteria_right: int = 0
    criteria_known: int = 0
    misses: list[str] = field(default_factory=list)
    false_findings: list[str] = field(default_factory=list)
    wrong_kind: list[str] = field(default_factory=list)

    def add(self, other: "Tally") -> None:
        for name, value in vars(other).items():
            mine = getattr(self, name)
            if isinstance(value, Counter):
                mine.update(value)
            elif isinstance(value, list):
                mine.extend(value)
            else:
                setattr(self, name, mine + value)


def _overlap(these: Mapping[int, set[str]], those: Mapping[int, set[str]]) -> tuple[int, int, int]:
    """Of ``these`` findings (line -> kinds): how many lines, how many of them ``those``
    has too, and how many of those with a kind in common."""
    hits = [line for line in these if line in those]
    return len(these), len(hits), sum(1 for line in hits if these[line] & those[line])


def score(truth: Sequence[Expected], results: Mapping[int, Mapping[str, Any] | None], release: str) -> Tally:
    """The tally of one release's results against the truth."""
    tally = Tally()
    for index, expected in enumerate(truth):
        result = results.get(index)
        want = expected.verdicts[release]
        got = result["verdict"] if result else "MISSING"
        tally.confusion[(want, got)] += 1
        if release == expected.written_for:
            tally.own_release[got] += 1
        if expected.untouched:
            tally.untouched[got] += 1
        truth_kinds: dict[int, set[str]] = {}
        for finding in expected.findings.get(release, []):
            truth_kinds.setdefault(int(finding["line"]), set()).update([finding["kind"], *(finding.get("also") or [])])
        predicted: dict[int, set[str]] = {}
        for finding in (result or {}).get("findings", []):
            if finding["kind"] == "not_verifiable":
                continue
            if finding.get("consequence_of"):
                tally.consequences += 1
                continue
            predicted.setdefault(int(finding["line"]), set()).add(finding["kind"])
        lines, line_hits, kind_hits = _overlap(predicted, truth_kinds)
        tally.predicted_lines += lines
        tally.predicted_line_hits += line_hits
        tally.predicted_kind_hits += kind_hits
        lines, line_hits, kind_hits = _overlap(truth_kinds, predicted)
        tally.truth_lines += lines
        tally.truth_line_found += line_hits
        tally.truth_kind_found += kind_hits
        for line, kinds in predicted.items():
            if line not in truth_kinds:
                tally.false_findings.append(f"{release} {expected.file}:{line}: {sorted(kinds)} ({got})")
            elif not kinds & truth_kinds[line]:
                tally.wrong_kind.append(f"{release} {expected.file}:{line}: got {sorted(kinds)}, "
                                        f"truth {sorted(truth_kinds[line])}")
        tally.misses += [f"{release} {expected.file}:{line}: {sorted(kinds)} not reported ({got})"
                         for line, kinds in truth_kinds.items() if line not in predicted]
        if result and release == expected.written_for and expected.events:
            tally.criteria_known += 1
            named = {(str(c.get("service", "")).lower(), c.get("event")) for c in result.get("criteria", [])}
            wanted = {(str(e.get("service", "")).lower(), e.get("event")) for e in expected.events}
            if named and named <= wanted:
                tally.criteria_right += 1
    return tally


def ratio(part: int, whole: int) -> dict[str, Any]:
    """A figure: its value (None without cases), and what it is made of."""
    return {"value": part / whole if whole else None, "part": part, "whole": whole}


def figures(tally: Tally) -> dict[str, Any]:
    """The scores of a tally."""
    drift_predicted = sum(n for (_, got), n in tally.confusion.items() if got == "DRIFT")
    drift_expected = sum(n for (want, _), n in tally.confusion.items() if want == "DRIFT")
    drift_right = tally.confusion[("DRIFT", "DRIFT")]
    return {
        "procedures": sum(tally.confusion.values()),
        "drift_precision": ratio(drift_right, drift_predicted),
        "drift_recall": ratio(drift_right, drift_expected),
        "false_drift_own_release": ratio(tally.own_release["DRIFT"], sum(tally.own_release.values())),
        "false_drift_untouched": ratio(tally.untouched["DRIFT"], sum(tally.untouched.values())),
        "pass_own_release": ratio(tally.own_release["PASS"], sum(tally.own_release.values())),
        "line_precision": ratio(tally.predicted_line_hits, tally.predicted_lines),
        "line_recall": ratio(tally.truth_line_found, tally.truth_lines),
        "kind_precision": ratio(tally.predicted_kind_hits, tally.predicted_lines),
        "kind_recall": ratio(tally.truth_kind_found, tally.truth_lines),
        "consequences_not_counted": tally.consequences,
        "criteria_right": ratio(tally.criteria_right, tally.criteria_known),
    }


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return f"{value['value']:.2f} ({value['part']}/{value['whole']})" if value["whole"] else "—"
    return str(value)


@dataclass
class DriftScores:
    """A scored set: the truth, each release's results and tally, and their figures."""

    truth: list[Expected]
    runs: dict[str, dict[str, Any]]  #: release -> {"results": [...], "wall_s": ...}
    matched: dict[str, dict[int, Mapping[str, Any] | None]]
    tallies: dict[str, Tally]

    @property
    def total(self) -> Tally:
        total = Tally()
        for tally in self.tallies.values():
            total.add(tally)
        return total

    def figures(self) -> dict[str, dict[str, Any]]:
        return {release: figures(t) for release, t in self.tallies.items()} | {"both": figures(self.total)}


def score_runs(truth: list[Expected], runs: dict[str, dict[str, Any]], docs: Path, cwd: Path | None = None) -> DriftScores:
    matched = {release: match(truth, run["results"], docs, cwd) for release, run in runs.items()}
    return DriftScores(truth, runs, matched, {release: score(truth, matched[release], release) for release in runs})


def markdown(scores: DriftScores, *, command: str, plots: Sequence[Path] = ()) -> str:
    """The drift benchmark's report."""
    truth, tallies, runs = scores.truth, scores.tallies, scores.runs
    languages = Counter(t.language for t in truth)
    written = Counter(t.written_for for t in truth)
    lines = [
        "# Drift benchmark: accuracy on docs nobody tuned for", "",
        f"{len(truth)} procedures ({languages.get('zh', 0)} in Chinese), "
        f"{len({t.product for t in truth})} products, written from the sandbox's rendered pages ("
        + ", ".join(f"{written[r]} for {r}" for r in RELEASES) + f"); {sum(t.untouched for t in truth)} "
        f"touched by no change. Command: `{command}`.", "",
        "| figure | " + " | ".join(tallies) + " | both |",
        "|---|" + "---|" * (len(tallies) + 1),
    ]
    columns = list(scores.figures().values())
    for name in columns[0]:
        lines.append(f"| {name.replace('_', ' ')} | " + " | ".join(_show(c[name]) for c in columns) + " |")
    lines += ["", "Verdicts (expected → got):", "", "| release | expected | " + " | ".join(VERDICTS) + " |",
              "|---|---|" + "---|" * len(VERDICTS)]
    for release, tally in tallies.items():
        for want in ("PASS", "DRIFT"):
            lines.append(f"| {release} | {want} | "
                         + " | ".join(str(tally.confusion[(want, got)]) for got in VERDICTS) + " |")
    lines += ["", "Wall time: " + ", ".join(f"{r} {runs[r].get('wall_s', 0.0):.0f} s" for r in runs), ""]
    total = scores.total
    for title, items in (("Findings on lines the truth does not name", total.false_findings),
                         ("Truth findings not reported", total.misses),
                         ("Right line, other kind", total.wrong_kind)):
        lines += [f"## {title} ({len(items)})", ""] + [f"- {item}" for item in items] + [""]
    not_pass = []
    for index, expected in enumerate(truth):
        result = scores.matched.get(expected.written_for, {}).get(index) or {"verdict": "MISSING"}
        if result.get("verdict") != "PASS":
            not_pass.append(f"- {expected.written_for} {expected.file} ({expected.heading}): {result.get('verdict')}: "
                            f"{str(result.get('reason', ''))[:300]}")
    lines += [f"## Not PASS at the release the doc was written for ({len(not_pass)})", ""] + not_pass + [""]
    if plots:
        lines += ["## Plots", ""] + [f"![{path.stem}]({path.name})" for path in plots] + [""]
    return "\n".join(lines)


def plot(scores: DriftScores, path: Path) -> Path:
    """Precision and recall per release (procedure DRIFT, finding line, line and kind) as a PNG."""
    from docverify_bench.report import pyplot

    plt = pyplot()
    names = [("drift_precision", "DRIFT P"), ("drift_recall", "DRIFT R"), ("line_precision", "line P"),
             ("line_recall", "line R"), ("kind_precision", "line+kind P"), ("kind_recall", "line+kind R"),
             ("false_drift_untouched", "false DRIFT\n(untouched)")]
    figure, axes = plt.subplots(figsize=(8, 4))
    columns = scores.figures()
    width = 0.8 / len(columns)
    for index, (release, data) in enumerate(columns.items()):
        xs = [i + index * width for i in range(len(names))]
        axes.bar(xs, [100 * (data[key]["value"] or 0.0) for key, _ in names], width, label=release)
    axes.set_xticks([i + width * (len(columns) - 1) / 2 for i in range(len(names))], [label for _, label in names],
                    fontsize=8)
    axes.set_ylabel("%")
    axes.set_ylim(0, 105)
    axes.set_title("Drift detection: precision and recall")
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def check_release(app: Any, paths: Sequence[Path], release: str, policy: str, jobs: int,
                  settings: Mapping[str, object], progress: Callable[[str], None]) -> dict[str, Any]:
    """``check`` of ``paths`` at ``release`` (provisioning with Terraform, as a docs
    repo with prerequisites runs it); each procedure's record, and the wall time."""
    from docverify.cli.check import select_tasks
    from docverify.run.check import CheckOptions, CheckRun
    from docverify_bench.run import DEFAULT_PROVISIONER, AttemptRecorder

    overrides = {"policy.use": policy, "provisioner.use": DEFAULT_PROVISIONER, "reporter.use": [], "jobs": jobs,
                 "console.sandbox.release": release, **settings}
    config = app.checked_config(overrides, {key: f"-O {key}" for key in settings})
    tasks, _ = select_tasks(tuple(str(p) for p in paths), config, None, None, app.plugins)  # as `check` selects
    results: list[dict[str, Any]] = []

    def keep(result: Any) -> None:
        results.append(result.to_dict())
        progress(f"[{release}] {result.verdict.value:<12} {result.path}:{result.line}")

    started = time.perf_counter()
    CheckRun(config, app.plugins, CheckOptions(jobs=jobs, store=None), [AttemptRecorder(keep)]).run(tasks)
    counts = Counter(r["verdict"] for r in results)
    return {"results": results, "counts": dict(counts), "wall_s": time.perf_counter() - started}


def read_run(folder: Path, release: str) -> dict[str, Any]:
    """A kept run (``--keep-runs``), or any ``docverify check --report json`` output, at ``release``."""
    path = folder / release / "docverify.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{path}: no run kept for {release}",
                         hint=f"keep one with --keep-runs DIR, or `docverify check ... --report json --output {path.parent}`"
                         ) from None
    except json.JSONDecodeError as error:
        raise BenchError(f"{path}:{error.lineno}: not JSON ({error.msg})") from None
    if "results" not in data:
        raise BenchError(f"{path}: not a docverify JSON report (no 'results')")
    data.setdefault("wall_s", float(data.get("duration_s") or 0.0))
    return data
