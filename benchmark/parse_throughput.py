"""Parse throughput of docverify's Markdown parser on one core.

Parses every ``*.md`` file of the corpus N times in this process and prints the
median documents per second and megabytes per second over the repeats. For
scale it also times markdown-it-py alone on the same text (the full CommonMark
parse, and the block structure only, which is what docverify runs on every
line before parsing inline content on demand): docverify cannot be faster
than the block pass, and the full parse is what a naive pipeline would pay.

    python benchmark/parse_throughput.py [CORPUS_DIR] [--repeats 5] [--profile] [--jobs N [--copies K]]

CORPUS_DIR defaults to $DOCVERIFY_CORPUS, then the vendored ``tests/corpus``.
``--profile`` prints the top functions by cumulative time (cProfile).
``--jobs N`` also times ``parse_files`` (files read from disk, the way
``docverify parse`` runs) over K copies of the corpus with 1 and with N
processes, and prints the speed-up.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docverify.parse.parser import parse_text  # noqa: E402
from docverify.parse.source import markdown_parser  # noqa: E402


def default_corpus() -> Path:
    configured = os.environ.get("DOCVERIFY_CORPUS")
    return Path(configured) if configured else ROOT / "tests" / "corpus"


def load(corpus: Path) -> list[tuple[str, str]]:
    files = sorted(path for path in corpus.rglob("*.md") if path.parent != corpus)  # not the corpus's README
    return [(str(file), file.read_bytes().decode("utf-8", errors="replace")) for file in files]


def run_once(documents: list[tuple[str, str]]) -> float:
    start = time.perf_counter()
    for path, text in documents:
        parse_text(text, path)
    return time.perf_counter() - start


def full_parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def time_parser(md, documents: list[tuple[str, str]]) -> float:
    start = time.perf_counter()
    for _, text in documents:
        md.parse(text, {})
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=5, help="timed passes over the corpus (default 5)")
    parser.add_argument("--profile", action="store_true", help="profile one pass with cProfile")
    parser.add_argument("--jobs", type=int, default=0, help="also time parse_files with this many processes")
    parser.add_argument("--copies", type=int, default=8, help="copies of the corpus for --jobs (default 8)")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus()
    documents = load(corpus)
    if not documents:
        print(f"no *.md files under {corpus}", file=sys.stderr)
        return 2
    megabytes = sum(len(text.encode("utf-8")) for _, text in documents) / 1e6
    run_once(documents)  # warm-up: imports, compiled patterns
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        run_once(documents)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    seconds = [run_once(documents) for _ in range(args.repeats)]
    median = statistics.median(seconds)
    baselines = {"markdown-it-py full parse": full_parser(), "markdown-it-py block pass": markdown_parser()}
    reference = {name: statistics.median(time_parser(md, documents) for _ in range(args.repeats))
                 for name, md in baselines.items()}
    print(f"corpus: {corpus} ({len(documents)} documents, {megabytes:.2f} MB)")
    print(f"passes: {args.repeats}, median {median * 1000:.1f} ms per pass")
    print(f"throughput: {len(documents) / median:.0f} docs/s, {megabytes / median:.2f} MB/s (single process, median)")
    best = min(seconds)
    print(f"best pass:  {len(documents) / best:.0f} docs/s, {megabytes / best:.2f} MB/s")
    for name, spent in reference.items():
        print(f"{name + ':':27} {len(documents) / spent:.0f} docs/s (same text, same passes; docverify = {spent / median:.2f}x its speed)")
    if args.jobs > 1:
        time_processes(corpus, args.jobs, args.copies, args.repeats)
    return 0


def time_processes(corpus: Path, jobs: int, copies: int, repeats: int) -> None:
    import shutil
    import tempfile

    from docverify.parse.parser import parse_files

    with tempfile.TemporaryDirectory() as scratch:
        files: list[Path] = []
        for copy in range(copies):
            target = Path(scratch) / f"copy{copy}"
            shutil.copytree(corpus, target, ignore=shutil.ignore_patterns(".git"))
            files.extend(sorted(target.rglob("*.md")))
        timings = {}
        for workers in (1, jobs):
            spent = []
            for _ in range(repeats):
                start = time.perf_counter()
                parse_files(files, jobs=workers)
                spent.append(time.perf_counter() - start)
            timings[workers] = statistics.median(spent)
            print(f"parse_files, {len(files)} files, jobs={workers}: {len(files) / timings[workers]:.0f} docs/s (median)")
        print(f"speed-up with {jobs} processes: {timings[1] / timings[jobs]:.2f}x")


if __name__ == "__main__":
    raise SystemExit(main())
