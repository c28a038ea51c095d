"""Render the benchmark's task families into task files, and their reference solutions.

A family (``benchmark/families/<family>.yaml``) is one operation written once as a
Markdown template, in the style of the real corpus, with its variants (names and
values). Each variant becomes one task, ``benchmark/tasks/<product>/<family>/<id>.md``,
whose annotation carries its id, success criteria (audit events with field
matches), Resource META and ``x-bench`` (family, category, release). The files are
committed; ``docverify bench manifest --write`` then records their checksums.

Each task also gets a *reference solution*,
``benchmark/solutions/<product>/<family>/<id>.md``: a procedure that reaches the
task's goal on the release the task runs against, with the task's annotation
(same id, success criteria and Resource META). It is the family's ``solution``
template (a drifted doc brought up to date, a doc that says what the task leaves
to the reader), or else the task itself (a doc that matches its console). The literal
policy on the solutions proves every task reachable and gives the benchmark's
upper-bound reference (``docverify bench run --tasks benchmark/solutions``). The
solutions' manifest takes its version and splits from the tasks' manifest.

    python benchmark/generate_tasks.py            # render every family, then the solutions' manifest
    python benchmark/generate_tasks.py --check    # fail when a rendered file or the solutions' manifest is stale
    python benchmark/generate_tasks.py FAMILY...  # render these families only (while writing them)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import jinja2
import yaml

from docverify_bench.tasks import MANIFEST, build_manifest

ROOT = Path(__file__).resolve().parent
FAMILIES = ROOT / "families"
TASKS = ROOT / "tasks"
SOLUTIONS = ROOT / "solutions"
KEYS = {"family", "product", "category", "release", "template", "variants"}
#: written_for: a drifted family's release its docs were written for; solution: the
#: reference solution when the task's doc is not one
OPTIONAL = {"written_for", "solution"}
#: A task's annotation, whose meaning its solution must keep (all but written_for).
ANNOTATION = re.compile(r"<!-- docverify:.*?-->", re.S)


def load_family(path: Path) -> dict:
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(spec, dict):
        raise SystemExit(f"{path}: a family is a mapping of {sorted(KEYS | OPTIONAL)}")
    unknown = set(spec) - KEYS - OPTIONAL
    missing = KEYS - set(spec)
    if unknown or missing:
        raise SystemExit(f"{path}: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}")
    if spec["family"] != path.stem:
        raise SystemExit(f"{path}: family {spec['family']!r} must be the file's name")
    return spec


def render_family(path: Path) -> dict[Path, str]:
    """The task files and reference solutions of one family: path -> text."""
    spec = load_family(path)
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    template = environment.from_string(spec["template"])
    solution = environment.from_string(spec["solution"]) if "solution" in spec else None
    out: dict[Path, str] = {}
    for index, variant in enumerate(spec["variants"], 1):
        task_id = f"{spec['family']}-{index}"
        values = {"id": task_id, "family": spec["family"], "category": spec["category"],
                  "release": spec["release"], "product": spec["product"], "written_for": spec.get("written_for"),
                  **variant}
        relative = Path(spec["product"].lower()) / spec["family"] / f"{task_id}.md"
        try:
            text = template.render(**values)
            out[TASKS / relative] = text
            # a solution is no drifted doc: it is written for the release it runs against
            answer = solution.render(**values) if solution is not None else text
        except jinja2.UndefinedError as error:
            raise SystemExit(f"{path}: variant {index}: {error}") from None
        if annotation(answer) != annotation(text):
            raise SystemExit(f"{path}: variant {index}: the solution's docverify annotation differs from the "
                             "task's (id, expect, requires and x-bench must be the same; written_for may go)")
        out[SOLUTIONS / relative] = answer
    return out


def annotation(text: str) -> list[str]:
    """The docverify annotations of a rendered file, without ``written_for``."""
    return [re.sub(r",\s*written_for:\s*\"[^\"]*\"", "", block) for block in ANNOTATION.findall(text)]


def solutions_manifest() -> str | None:
    """The solutions' manifest: the tasks' version and splits, the solutions'
    checksums; None while the tasks' manifest does not cover every family yet."""
    tasks_manifest = TASKS / MANIFEST
    if not tasks_manifest.is_file():
        return None
    previous = json.loads(tasks_manifest.read_text(encoding="utf-8"))
    families = {path.stem for path in FAMILIES.glob("*.yaml")}
    if families - set(previous.get("families", {})):
        return None
    data = build_manifest(SOLUTIONS, previous["version"], previous)
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="fail when a rendered file or the solutions' manifest differs or is missing")
    parser.add_argument("families", nargs="*", metavar="FAMILY", help="render only these families")
    args = parser.parse_args()
    stale: list[Path] = []
    rendered: set[Path] = set()
    families = sorted(FAMILIES.glob("*.yaml"))
    if args.families:
        missing = sorted(set(args.families) - {path.stem for path in families})
        if missing:
            raise SystemExit(f"no such family: {', '.join(missing)} (in {FAMILIES})")
        families = [path for path in families if path.stem in args.families]
    for path in families:
        for target, text in render_family(path).items():
            rendered.add(target)
            if target.is_file() and target.read_text(encoding="utf-8") == text:
                continue
            stale.append(target)
            if not args.check:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
    if args.families:
        print(f"{len(stale)} of {len(rendered)} files written ({', '.join(args.families)})")
        return 1 if args.check and stale else 0
    # a file no family renders any more (a removed variant or family)
    leftover = [p for folder in (TASKS, SOLUTIONS) for p in sorted(folder.rglob("*.md")) if p not in rendered]
    for path in leftover:
        stale.append(path)
        if not args.check:
            path.unlink()
    manifest = solutions_manifest()
    manifest_path = SOLUTIONS / "manifest.json"
    if manifest is None:
        print("the tasks' manifest does not cover every family: run "
              "`docverify bench manifest --tasks benchmark/tasks --write`, then this again", file=sys.stderr)
        if args.check:
            return 1
    elif not manifest_path.is_file() or manifest_path.read_text(encoding="utf-8") != manifest:
        stale.append(manifest_path)
        if not args.check:
            manifest_path.write_text(manifest, encoding="utf-8")
    if args.check and stale:
        print("stale files (run python benchmark/generate_tasks.py):", *stale, sep="\n  ", file=sys.stderr)
        return 1
    tasks = sum(1 for p in rendered if p.is_relative_to(TASKS))
    print(f"{tasks} tasks up to date" if args.check
          else f"{tasks} tasks and their solutions from {len(families)} families; {len(stale)} files written or removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
