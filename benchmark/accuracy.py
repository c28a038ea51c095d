"""Verdict and finding accuracy on docs nobody tuned for: the accuracy set.

    python benchmark/accuracy.py [--set benchmark/accuracy] [--jobs 2] [--out benchmark/results/accuracy.md]
    python benchmark/accuracy.py --from-runs DIR        # score runs kept by an earlier --keep-runs DIR
    python benchmark/accuracy.py --code ../old-checkout  # the same set, checked by another checkout's code
    python benchmark/accuracy.py --only oss --only ram   # some products' folders only

The set (``benchmark/accuracy/``, see its README) holds procedures written from the
sandbox's rendered pages by writers who never saw the policy, each for one release,
and a truth file per writer: the verdict each procedure should get at each release
and, at the release it was not written for, the findings (doc line, kind) that the
release changelog implies. This script checks the whole set at every release with
``docverify check`` (provisioning on, as a docs repo with prerequisites would run
it) and prints:

- procedure level: confusion of expected vs actual verdicts; DRIFT precision and
  recall; the false-DRIFT rate at each doc's own release (where it should PASS);
- step level: precision and recall of drift findings by doc line, and by line and
  kind (a finding that only follows from an earlier one, ``consequence_of``, is not
  counted: a writer fixes the first and the rest go away);
- success criteria: whether the built-in criteria name the event the writer saw.

Figures are written as Markdown (``--out``) and JSON next to it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
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


def load_truth(folder: Path) -> list[Expected]:
    """Every truth file's procedures; a malformed entry is an error naming it."""
    out: list[Expected] = []
    for path in sorted((folder / "truth").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        writer = str(data.get("writer") or path.stem)
        for index, item in enumerate(data.get("procedures") or []):
            where = f"{path}: procedure {index + 1}"
            try:
                expected = item["expected"]
                verdicts = {str(release): str(expected[release]["verdict"]) for release in RELEASES}
                findings = {str(release): list(expected[release].get("findings") or []) for release in RELEASES}
                entry = Expected(
                    file=str(item["file"]), heading=str(item["heading"]), line=int(item["line"]),
                    language=str(item.get("language", "en")), product=str(item.get("product", "")),
                    written_for=str(item["written_for"]), writer=writer, events=list(item.get("events") or []),
                    verdicts=verdicts, findings=findings,
                )
            except (KeyError, TypeError, ValueError) as error:
                sys.exit(f"{where}: missing or malformed {error}")
            if not (folder / "docs" / entry.file).exists():
                sys.exit(f"{where}: no such doc {entry.file}")
            for release, items in findings.items():
                for finding in items:
                    if finding.get("kind") not in KINDS:
                        sys.exit(f"{where}: {release} finding kind {finding.get('kind')!r} is not one of {', '.join(KINDS)}")
            out.append(entry)
    if not out:
        sys.exit(f"no truth files in {folder / 'truth'}")
    return out


def run(paths: list[Path], release: str, jobs: int, keep: Path | None, code: Path | None) -> dict[str, Any]:
    """``docverify check`` over the set at ``release`` (with another checkout's code
    when ``code`` is given); its JSON report."""
    out = (keep / release) if keep else Path(tempfile.mkdtemp(prefix=f"accuracy-{release}-"))
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    cwd = ROOT
    if code is not None:  # run from that checkout: `python -m` puts the working directory first on the path
        cwd = code.resolve()
        env["PYTHONPATH"] = os.pathsep.join([str(cwd), str(cwd / "plugins"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    started = time.perf_counter()
    process = subprocess.run(
        [sys.executable, "-m", "docverify", "check", *(str(p.resolve()) for p in paths), "--jobs", str(jobs), "--no-store",
         "--report", "json", "--output", str(out), "--set", f"console.sandbox.release={release}",
         "--provisioner", "terraform", "--timeout", "180"],
        capture_output=True, text=True, cwd=cwd, env=env,
    )
    report = out / "docverify.json"
    if not report.exists():
        sys.exit(f"docverify check failed ({process.returncode}):\n{process.stderr[-3000:]}")
    data = json.loads(report.read_text())
    data["wall_s"] = time.perf_counter() - started
    return data


def match(truth: list[Expected], results: list[dict[str, Any]], docs: Path) -> dict[int, dict[str, Any] | None]:
    """Each truth entry's result: same file, same heading line (else same title)."""
    by_key = {}
    for result in results:
        path = Path(result["path"])
        relative = str(path.resolve().relative_to(docs.resolve())) if path.is_absolute() else str(
            (ROOT / path).resolve().relative_to(docs.resolve()))
        by_key[(relative, result["line"])] = result
        by_key.setdefault((relative, result["title"]), result)
    return {index: by_key.get((t.file, t.line)) or by_key.get((t.file, t.heading)) for index, t in enumerate(truth)}


@dataclass
class Tally:
    """Counts for one slice of the set (a release, or all)."""

    confusion: Counter = field(default_factory=Counter)  #: (expected, got) -> n
    own_release: Counter = field(default_factory=Counter)  #: got -> n, at the release a doc was written for
    predicted_lines: int = 0
    predicted_line_hits: int = 0
    predicted_kind_hits: int = 0
    truth_lines: int = 0
    truth_line_found: int = 0
    truth_kind_found: int = 0
    consequences: int = 0
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


def _overlap(these: dict[int, set[str]], those: dict[int, set[str]]) -> tuple[int, int, int]:
    """Of ``these`` findings (line -> kinds): how many lines, how many of them ``those``
    has too, and how many of those with a kind in common."""
    hits = [line for line in these if line in those]
    return len(these), len(hits), sum(1 for line in hits if these[line] & those[line])


def score(truth: list[Expected], results: dict[int, dict[str, Any] | None], release: str) -> Tally:
    tally = Tally()
    for index, expected in enumerate(truth):
        result = results.get(index)
        want = expected.verdicts[release]
        got = result["verdict"] if result else "MISSING"
        tally.confusion[(want, got)] += 1
        if release == expected.written_for:
            tally.own_release[got] += 1
        where = f"{expected.file}"
        truth_findings = expected.findings.get(release, [])
        truth_kinds: dict[int, set[str]] = {}
        for finding in truth_findings:
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
                tally.false_findings.append(f"{release} {where}:{line}: {sorted(kinds)} ({got})")
            elif not kinds & truth_kinds[line]:
                tally.wrong_kind.append(f"{release} {where}:{line}: got {sorted(kinds)}, truth {sorted(truth_kinds[line])}")
        tally.misses += [f"{release} {where}:{line}: {sorted(kinds)} not reported ({got})"
                         for line, kinds in truth_kinds.items() if line not in predicted]
        if result and release == expected.written_for and expected.events:
            tally.criteria_known += 1
            named = {(c.get("service", "").lower(), c.get("event")) for c in result.get("criteria", [])}
            wanted = {(str(e.get("service", "")).lower(), e.get("event")) for e in expected.events}
            if named and named <= wanted:
                tally.criteria_right += 1
    return tally


def ratio(part: int, whole: int) -> str:
    return f"{part / whole:.2f} ({part}/{whole})" if whole else "—"


def figures(tally: Tally) -> dict[str, Any]:
    drift_predicted = sum(n for (want, got), n in tally.confusion.items() if got == "DRIFT")
    drift_right = tally.confusion[("DRIFT", "DRIFT")]
    drift_expected = sum(n for (want, got), n in tally.confusion.items() if want == "DRIFT")
    own = sum(tally.own_release.values())
    return {
        "procedures": sum(tally.confusion.values()),
        "drift_precision": ratio(drift_right, drift_predicted),
        "drift_recall": ratio(drift_right, drift_expected),
        "false_drift_own_release": ratio(tally.own_release["DRIFT"], own),
        "pass_own_release": ratio(tally.own_release["PASS"], own),
        "line_precision": ratio(tally.predicted_line_hits, tally.predicted_lines),
        "line_recall": ratio(tally.truth_line_found, tally.truth_lines),
        "kind_precision": ratio(tally.predicted_kind_hits, tally.predicted_lines),
        "kind_recall": ratio(tally.truth_kind_found, tally.truth_lines),
        "consequences_not_counted": tally.consequences,
        "criteria_right": ratio(tally.criteria_right, tally.criteria_known),
    }


def report(truth: list[Expected], tallies: dict[str, Tally], runs: dict[str, dict[str, Any]]) -> str:
    total = Tally()
    for tally in tallies.values():
        total.add(tally)
    languages = Counter(t.language for t in truth)
    products = Counter(t.product for t in truth)
    lines = [
        "# Accuracy on docs nobody tuned for",
        "",
        f"Set: `benchmark/accuracy/` — {len(truth)} procedures ({languages.get('zh', 0)} in Chinese), "
        f"{len(products)} products, written from the sandbox's rendered pages "
        f"({Counter(t.written_for for t in truth)['2021-06']} for 2021-06, "
        f"{Counter(t.written_for for t in truth)['2026-03']} for 2026-03). "
        "Command: `python benchmark/accuracy.py` (policy literal, provisioner terraform).",
        "",
        "| figure | " + " | ".join(tallies) + " | both |",
        "|---|" + "---|" * (len(tallies) + 1),
    ]
    columns = [figures(t) for t in tallies.values()] + [figures(total)]
    for name in columns[0]:
        lines.append(f"| {name.replace('_', ' ')} | " + " | ".join(str(c[name]) for c in columns) + " |")
    lines += ["", "Verdicts (expected → got):", "", "| release | expected | " + " | ".join(VERDICTS) + " |",
              "|---|---|" + "---|" * len(VERDICTS)]
    for release, tally in tallies.items():
        for want in ("PASS", "DRIFT"):
            lines.append(f"| {release} | {want} | " + " | ".join(str(tally.confusion[(want, got)]) for got in VERDICTS) + " |")
    lines += ["", "Wall time: " + ", ".join(f"{r} {runs[r]['wall_s']:.0f} s" for r in runs), ""]
    for title, items in (("Findings on lines the truth does not name", total.false_findings),
                         ("Truth findings not reported", total.misses),
                         ("Right line, other kind", total.wrong_kind)):
        lines += [f"## {title} ({len(items)})", ""] + [f"- {item}" for item in items] + [""]
    not_pass = [f"- {t.written_for} {t.file} ({t.heading}): {r.get('verdict')}: {r.get('reason', '')[:300]}"
                for t, r in ((t, runs[t.written_for]["_matched"].get(i) or {"verdict": "MISSING"})
                             for i, t in enumerate(truth)) if r.get("verdict") != "PASS"]
    lines += [f"## Not PASS at the release the doc was written for ({len(not_pass)})", ""] + not_pass + [""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="folder", type=Path, default=ROOT / "benchmark" / "accuracy")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as Markdown (and .json) here")
    parser.add_argument("--keep-runs", type=Path, default=None, help="keep each release's JSON report in DIR/<release>/")
    parser.add_argument("--from-runs", type=Path, default=None, help="score the reports kept in DIR instead of running")
    parser.add_argument("--code", type=Path, default=None, help="check with the code of another checkout (PYTHONPATH)")
    parser.add_argument("--only", action="append", default=[], help="only the docs under this folder of docs/ (repeat)")
    args = parser.parse_args()

    truth = load_truth(args.folder)
    docs = args.folder / "docs"
    paths = [docs]
    if args.only:
        truth = [t for t in truth if any(t.file.startswith(only.rstrip("/") + "/") for only in args.only)]
        paths = [docs / only for only in args.only]
    runs: dict[str, dict[str, Any]] = {}
    for release in RELEASES:
        if args.from_runs:
            runs[release] = json.loads((args.from_runs / release / "docverify.json").read_text())
            runs[release].setdefault("wall_s", float(runs[release].get("duration_s") or 0.0))  # the run's own
        else:
            runs[release] = run(paths, release, args.jobs, args.keep_runs, args.code)
        print(f"{release}: {runs[release]['counts']} in {runs[release]['wall_s']:.0f} s", file=sys.stderr)
    tallies = {}
    for release in RELEASES:
        matched = match(truth, runs[release]["results"], docs)
        runs[release]["_matched"] = matched
        tallies[release] = score(truth, matched, release)
    text = report(truth, tallies, runs)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
        total = Tally()
        for tally in tallies.values():
            total.add(tally)
        data = {release: figures(t) for release, t in tallies.items()} | {"both": figures(total)}
        args.out.with_suffix(".json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
