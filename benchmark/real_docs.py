"""Check the real Alibaba Cloud docs of the shared corpus against the sandbox's 2021
release and its current release, and write the outcome table a user would see.

    python benchmark/real_docs.py [CORPUS_DIR] [--out benchmark/results/real-docs.md] [--jobs 4] [--provisioner none]
    python benchmark/real_docs.py --keep-runs DIR     # also keep each release's report in DIR/<release>.json
    python benchmark/real_docs.py --from-runs DIR     # write the table from kept reports (labels edited since)

For each procedure: its verdict at each release and, for the current release, the
drift findings that the 2021 run did not have — the drift the console's changes
introduced. Provisioning is on (terraform), as a docs repo with prerequisites runs it.

At 2021-06 the docs describe the console they were written for, so every procedure that
does not PASS there is explained by a label in ``benchmark/results/real-docs-labels.yaml``
(procedure id -> ``label`` and ``note``): ``fragment`` (a part of a longer procedure that
starts where the part before it ends), ``sandbox`` (the sandbox lacks what the real 2021
console had), ``literal`` (a step only a reader or a model can take: free text, a CLI
command), ``true_drift`` (the doc does not match the console it describes), or
``tool_error`` (docverify's own mistake, to be driven to zero). A non-PASS without a
label, or a label left on a procedure that now passes, is printed. Writes a Markdown
table and a JSON file next to it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT / "tests" / "corpus" / "real-docs" / "alibaba_AlibabaCloudDocs"
RELEASES = ("2021-06", "2026-03")
LABELS = ROOT / "benchmark" / "results" / "real-docs-labels.yaml"
KINDS = ("fragment", "sandbox", "literal", "true_drift", "tool_error")


def run(corpus: Path, release: str, jobs: int, provisioner: str) -> tuple[dict, float, int]:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        process = subprocess.run(
            [sys.executable, "-m", "docverify", "check", str(corpus), "--jobs", str(jobs), "--no-store",
             "--report", "json", "--output", out, "--set", f"console.sandbox.release={release}",
             "--provisioner", provisioner, "--timeout", "120"],
            capture_output=True, text=True, cwd=ROOT,
        )
        wall = time.perf_counter() - started
        report = Path(out) / "docverify.json"
        if not report.exists():
            sys.exit(f"docverify check failed ({process.returncode}):\n{process.stderr[-3000:]}")
        return json.loads(report.read_text()), wall, process.returncode


def key(finding: dict) -> tuple:
    return finding["path"], finding["line"], finding["kind"], finding["expected"]


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmark" / "results" / "real-docs.md")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--provisioner", default="terraform", help="terraform (default) or none")
    parser.add_argument("--keep-runs", type=Path, default=None, help="keep each release's report in DIR/<release>.json")
    parser.add_argument("--from-runs", type=Path, default=None, help="read the reports kept in DIR instead of running")
    args = parser.parse_args()
    import yaml

    labels = yaml.safe_load(LABELS.read_text(encoding="utf-8")) if LABELS.exists() else {}
    for pid, label in (labels or {}).items():
        if not isinstance(label, dict) or label.get("label") not in KINDS:
            sys.exit(f"{LABELS}: {pid}: 'label' must be one of {', '.join(KINDS)}")

    runs = {}
    for release in RELEASES:
        kept = args.from_runs / f"{release}.json" if args.from_runs else None
        if kept is not None:
            if not kept.exists():
                sys.exit(f"{kept}: no kept report for {release} (write one with --keep-runs {args.from_runs})")
            saved = json.loads(kept.read_text(encoding="utf-8"))
            data, wall, code = saved["report"], saved["wall_s"], saved["exit_code"]
        else:
            data, wall, code = run(args.corpus, release, args.jobs, args.provisioner)
        if args.keep_runs is not None:
            args.keep_runs.mkdir(parents=True, exist_ok=True)
            (args.keep_runs / f"{release}.json").write_text(json.dumps(
                {"report": data, "wall_s": wall, "exit_code": code}, ensure_ascii=False), encoding="utf-8")
        runs[release] = (data, wall, code)
        print(f"{release}: {data['counts']} in {wall:.0f} s (exit {code})", file=sys.stderr)

    old, new = ({r["id"]: r for r in runs[release][0]["results"]} for release in RELEASES)
    rows, introduced_total, kinds = [], 0, Counter()
    for pid, result in new.items():
        before = old.get(pid)
        seen = {key(f) for f in before["findings"]} if before else set()
        introduced = [f for f in result["findings"] if f["kind"] != "not_verifiable" and key(f) not in seen]
        introduced_total += len(introduced)
        kinds.update(f["kind"] for f in introduced)
        path = result["path"].split("alibaba_AlibabaCloudDocs/")[-1]
        rows.append({
            "id": pid, "doc": f"{path}:{result['line']}", "title": result["title"],
            "v2021": before["verdict"] if before else "-", "v2026": result["verdict"],
            "introduced": [f"L{f['line']} {f['kind']}: {f['expected']} → {f['observed']}" for f in introduced],
            "reason2021": before["reason"] if before else "",
            "label": (labels.get(pid) or {}).get("label") if before and before["verdict"] != "PASS" else None,
            "note": (labels.get(pid) or {}).get("note", "") if before and before["verdict"] != "PASS" else "",
        })
    for row in rows:
        if row["v2021"] not in ("PASS", "-") and row["label"] is None:
            print(f"unlabelled: {row['id']} ({row['v2021']} at 2021-06): {row['reason2021'][:200]}", file=sys.stderr)
    passing = {row["id"] for row in rows if row["v2021"] == "PASS"}
    for pid in sorted(set(labels or {}) & passing):
        print(f"label of a procedure that now passes at 2021-06: {pid}", file=sys.stderr)
    by_label = Counter(row["label"] or "unlabelled" for row in rows if row["v2021"] not in ("PASS", "-"))

    lines = [
        "# Real docs against the sandbox: 2021 release vs current release",
        "",
        f"Corpus: `{args.corpus.relative_to(ROOT.parent) if args.corpus.is_relative_to(ROOT.parent) else args.corpus}` "
        f"({len(rows)} procedures). Policy: literal. Command: "
        "`docverify check <corpus> --set console.sandbox.release=<R> --report json` "
        f"(written by `python benchmark/real_docs.py`, {time.strftime('%Y-%m-%d')}).",
        "",
        "| release | " + " | ".join(runs[RELEASES[0]][0]["counts"]) + " | wall |",
        "|---|" + "---|" * (len(runs[RELEASES[0]][0]["counts"]) + 1),
    ]
    for release in RELEASES:
        data, wall, _ = runs[release]
        lines.append(f"| {release} | " + " | ".join(str(v) for v in data["counts"].values()) + f" | {wall:.0f} s |")
    lines += [
        "",
        f"Drift introduced by the current release (findings at 2026-03 that the 2021-06 run did not have): "
        f"{introduced_total} — " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()) + ".",
        "",
        "Reading the table: at 2021-06 the docs match the console they were written for, so what does not",
        "PASS there is a limit of this setup or a tool error, and the last column — what changed between",
        "the two runs — is the drift a user would be shown. Why each 2021-06 non-PASS happens "
        "(`benchmark/results/real-docs-labels.yaml`): " + ", ".join(f"{k} {v}" for k, v in by_label.most_common()) + ".",
        "`fragment`: a part of a longer procedure that starts where the part before it ends; `sandbox`: the",
        "sandbox lacks what the real 2021 console had; `literal`: a step only a reader or a model can take;",
        "`true_drift`: the doc does not match the console it describes; `tool_error`: docverify's mistake.",
        "",
        "| procedure | doc | 2021-06 | why, at 2021-06 | 2026-03 | drift introduced by the current release |",
        "|---|---|---|---|---|---|",
    ]
    for row in sorted(rows, key=lambda r: r["doc"]):
        why = f"{row['label']}: {row['note']}" if row["label"] else ("—" if row["v2021"] == "PASS" else "unlabelled")
        lines.append(f"| {cell(row['title'])} | `{row['doc']}` | {row['v2021']} | {cell(why)} | {row['v2026']} | "
                     f"{cell('; '.join(row['introduced'])) or '—'} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(
        {"releases": {r: {"counts": runs[r][0]["counts"], "wall_s": round(runs[r][1], 1)} for r in RELEASES},
         "why_not_pass_2021": dict(by_label), "procedures": rows}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
