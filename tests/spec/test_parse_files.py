"""Files and folders: discovery, I/O and decoding problems as diagnostics."""

from __future__ import annotations

from pathlib import Path

from docverify.parse.model import Severity
from docverify.parse.parser import discover, parse_file, parse_paths

GOOD = "# Create\n\n1. Click **Create**.\n"


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def test_discover_is_recursive_sorted_deduplicated_and_skips_excluded(tmp_path: Path) -> None:
    write(tmp_path / "b.md", GOOD)
    write(tmp_path / "a" / "c.mdx", GOOD)
    write(tmp_path / "a" / "notes.txt", "x")
    write(tmp_path / "node_modules" / "x.md", GOOD)
    write(tmp_path / ".git" / "y.md", GOOD)
    write(tmp_path / ".venv" / "z.md", GOOD)
    files, problems = discover([tmp_path, tmp_path / "b.md", tmp_path / "a"])
    assert problems == []
    assert files == [tmp_path / "a" / "c.mdx", tmp_path / "b.md"]


def test_discover_reports_missing_paths(tmp_path: Path) -> None:
    files, problems = discover([tmp_path / "missing.md"])
    assert files == []
    assert [(p.line, p.severity) for p in problems] == [(0, Severity.ERROR)]
    assert "missing.md" in problems[0].message and problems[0].path.endswith("missing.md")


def test_invalid_utf8_is_a_warning_at_the_first_bad_line(tmp_path: Path) -> None:
    path = write(tmp_path / "latin1.md", "# Title\n\n1. Click **Save**.\n2. Caf".encode() + b"\xe9 **OK**.\n")
    document = parse_file(path)
    assert [(d.severity, d.line) for d in document.diagnostics] == [(Severity.WARNING, 4)]
    assert "invalid UTF-8" in document.diagnostics[0].message
    assert [s.text for s in document.procedures[0].steps] == ["Click Save.", "Caf\ufffd OK."]


def test_oversized_and_unreadable_files_are_errors(tmp_path: Path) -> None:
    big = write(tmp_path / "big.md", GOOD * 100)
    document = parse_file(big, max_bytes=100)
    assert [(d.severity, d.line) for d in document.diagnostics] == [(Severity.ERROR, 0)]
    assert "limit" in document.diagnostics[0].message and document.procedures == []

    folder_as_file = parse_file(tmp_path)
    assert folder_as_file.errors and folder_as_file.errors[0].line == 0


def test_one_bad_file_never_stops_the_others(tmp_path: Path) -> None:
    write(tmp_path / "a.md", GOOD)
    write(tmp_path / "b.md", b"\xff\xfe\x00garbage \x00\x00 | |\n|-|\n")
    write(tmp_path / "c.md", "<!-- docverify: [broken\n-->\n" + GOOD)
    documents = parse_paths([tmp_path, tmp_path / "nope.md"])
    by_name = {Path(d.path).name: d for d in documents}
    assert set(by_name) == {"a.md", "b.md", "c.md", "nope.md"}
    assert by_name["a.md"].procedures and not by_name["a.md"].diagnostics
    assert by_name["c.md"].procedures and by_name["c.md"].errors
    assert by_name["nope.md"].errors


def test_crlf_and_bom_keep_line_numbers(tmp_path: Path) -> None:
    path = write(tmp_path / "win.md", b"\xef\xbb\xbf# T\r\n\r\n1. Click **A**.\r\n2. Click **B**.\r\n")
    document = parse_file(path)
    assert [s.line for s in document.procedures[0].steps] == [3, 4]


def _many_files(root: Path, count: int) -> list[Path]:
    files = []
    for index in range(count):
        text = f"# Task {index}\n\n1. Log on to the ECS console.\n2. Click **Create {index}**.\n"
        if index % 10 == 3:
            text = b"# Broken\n\n1. Click **\xff**.\n"  # a decoding problem travels back with its document
        files.append(write(root / f"d{index:03}.md", text))
    return files


def test_parallel_parsing_returns_the_same_documents_in_order(tmp_path: Path) -> None:
    from docverify.parse.parser import PARALLEL_MIN_FILES, parse_files

    files = _many_files(tmp_path, PARALLEL_MIN_FILES + 5)
    serial = parse_files(files, jobs=1)
    parallel = parse_files(files, jobs=2)
    assert [d.path for d in parallel] == [str(f) for f in files]
    assert [(d.path, [p.to_dict() for p in d.procedures], [str(x) for x in d.diagnostics]) for d in parallel] == [
        (d.path, [p.to_dict() for p in d.procedures], [str(x) for x in d.diagnostics]) for d in serial
    ]
    assert any(d.diagnostics for d in parallel) and all(d.procedures for d in parallel)


def test_a_dead_worker_pool_falls_back_to_this_process(tmp_path: Path, monkeypatch, caplog) -> None:
    from concurrent.futures.process import BrokenProcessPool

    import docverify.parse.parser as parser_module

    class DyingPool:
        def __init__(self, *args, **kwargs) -> None:
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            return None

        def map(self, *args, **kwargs):
            raise BrokenProcessPool("a worker was killed")

    monkeypatch.setattr(parser_module, "ProcessPoolExecutor", DyingPool)
    files = _many_files(tmp_path, parser_module.PARALLEL_MIN_FILES)
    documents = parser_module.parse_files(files, jobs=4)
    assert [d.path for d in documents] == [str(f) for f in files]
    assert all(d.procedures for d in documents)
    assert f"parsing {parser_module.PARALLEL_MIN_FILES} files in one process" in caplog.text
