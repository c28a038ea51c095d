"""Render the benchmark's task families into task files.

A family (``benchmark/families/<family>.yaml``) is one operation written once as a
Markdown template, in the style of the real corpus, with its variants (names and
values). Each variant becomes one task, ``benchmark/tasks/<product>/<family>/<id>.md``,
whose annotation carries its id, success criteria (audit events with field
matches), Resource META and ``x-bench`` (family, category, release). The files are
committed; ``docverify bench manifest --write`` then records their checksums.

    python benchmark/generate_tasks.py            # render every family
    python benchmark/generate_tasks.py --check    # fail when a rendered file is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jinja2
import yaml

ROOT = Path(__file__).resolve().parent
FAMILIES = ROOT / "families"
TASKS = ROOT / "tasks"
KEYS = {"family", "product", "category", "release", "template", "variants"}
OPTIONAL = {"written_for"}  #: a drifted family: the release its docs were written for


def render_family(path: Path) -> dict[Path, str]:
    """The task files of one family: path -> text."""
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    unknown = set(spec) - KEYS - OPTIONAL
    missing = KEYS - set(spec)
    if unknown or missing:
        raise SystemExit(f"{path}: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}")
    if spec["family"] != path.stem:
        raise SystemExit(f"{path}: family {spec['family']!r} must be the file's name")
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    template = environment.from_string(spec["template"])
    out: dict[Path, str] = {}
    for index, variant in enumerate(spec["variants"], 1):
        task_id = f"{spec['family']}-{index}"
        values = {"id": task_id, "family": spec["family"], "category": spec["category"],
                  "release": spec["release"], "product": spec["product"], "written_for": spec.get("written_for"),
                  **variant}
        try:
            text = template.render(**values)
        except jinja2.UndefinedError as error:
            raise SystemExit(f"{path}: variant {index}: {error}") from None
        out[TASKS / spec["product"].lower() / spec["family"] / f"{task_id}.md"] = text
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when a rendered file differs or is missing")
    args = parser.parse_args()
    stale = []
    rendered = 0
    for path in sorted(FAMILIES.glob("*.yaml")):
        for target, text in render_family(path).items():
            rendered += 1
            if target.is_file() and target.read_text(encoding="utf-8") == text:
                continue
            stale.append(target)
            if not args.check:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
    if args.check and stale:
        print("stale task files (run python benchmark/generate_tasks.py):", *stale, sep="\n  ", file=sys.stderr)
        return 1
    print(f"{rendered} tasks from {len(list(FAMILIES.glob('*.yaml')))} families; {len(stale)} written"
          if not args.check else f"{rendered} tasks up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
