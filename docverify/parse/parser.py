"""Public entry points of the parse stage: text, file or paths -> `Document`s.

`parse_text` never raises, whatever the input: every problem becomes a
`Diagnostic` with the file's own line. The pipeline is

1. front matter (`front_matter.py`) is read and its lines blanked;
2. pipe tables are rebuilt from the raw lines and masked (`tables.py`);
3. markdown-it parses the block structure once;
4. `ProcedureAssembler` walks the blocks into procedures (`procedures.py`,
   `steps.py`);
5. each procedure gets its id, product, language, placeholders and effective
   annotation here.

Product comes from the annotation, then the front matter (``product``,
``ms.service``), then the console opened by a step ("Log on to the ECS
console" -> "ECS"), then the console opened anywhere else in the document.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from pathlib import Path

from markdown_it.tree import SyntaxTreeNode

from docverify.parse.annotations import ParsedAnnotation, combine, for_procedure, from_front_matter
from docverify.parse.decoding import decode, normalize
from docverify.parse.discovery import discover
from docverify.parse.front_matter import split_front_matter
from docverify.parse.intents import cloud_named, console_mentioned, product_from_console
from docverify.parse.language import detect_language
from docverify.parse.model import Diagnostic, Document, Intent, Procedure, Severity
from docverify.parse.procedures import ProcedureAssembler
from docverify.parse.sequence import link_parts
from docverify.parse.slugs import IdAllocator
from docverify.parse.source import Source, markdown_parser
from docverify.parse.tables import find_tables, mask

DEFAULT_MAX_BYTES = 5_000_000
#: Fewer files than this are parsed in this process: starting workers would cost more.
PARALLEL_MIN_FILES = 100

__all__ = ["DEFAULT_MAX_BYTES", "discover", "parse_file", "parse_files", "parse_paths", "parse_text"]

log = logging.getLogger(__name__)


def parse_text(text: str, path: str = "<string>") -> Document:
    """Parse Markdown `text`; `path` names it in ids and diagnostics."""
    document = Document(path=path)
    try:
        _parse_into(document, normalize(text))
    except RecursionError:
        document.procedures = []
        document.diagnostics.append(Diagnostic(path, 0, Severity.ERROR, "document is nested too deeply to parse"))
    except Exception as error:  # noqa: BLE001 - the contract is "never raises"; report instead
        document.procedures = []
        message = f"internal parser error ({type(error).__name__}: {error}); please report this document"
        document.diagnostics.append(Diagnostic(path, 0, Severity.ERROR, message))
    return document


def parse_file(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """Read and parse one file; I/O and decoding problems become diagnostics."""
    name = os.fspath(path)
    try:
        size = os.stat(name).st_size
        if size > max_bytes:
            message = f"file is {size} bytes, larger than the {max_bytes}-byte limit; skipped"
            return Document(path=name, diagnostics=[Diagnostic(name, 0, Severity.ERROR, message)])
        with open(name, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        reason = error.strerror or str(error)
        return Document(path=name, diagnostics=[Diagnostic(name, 0, Severity.ERROR, f"cannot read file: {reason}")])
    if len(data) > max_bytes:
        message = f"file is larger than the {max_bytes}-byte limit; skipped"
        return Document(path=name, diagnostics=[Diagnostic(name, 0, Severity.ERROR, message)])
    text, problems = decode(data, name)
    document = parse_text(text, name)
    document.diagnostics[:0] = problems
    return document


def parse_paths(paths: Iterable[str | Path], *, max_bytes: int = DEFAULT_MAX_BYTES, jobs: int = 0) -> list[Document]:
    """Discover Markdown files under `paths` and parse each one.

    A path that does not exist is reported as a `Document` holding only its
    error diagnostic, so one bad path or file never hides the others.
    """
    files, problems = discover(paths)
    documents = [Document(path=problem.path, diagnostics=[problem]) for problem in problems]
    documents.extend(parse_files(files, max_bytes=max_bytes, jobs=jobs))
    return documents


def parse_files(files: Sequence[str | Path], *, max_bytes: int = DEFAULT_MAX_BYTES, jobs: int = 0) -> list[Document]:
    """Parse `files`, in their order; a large set across `jobs` processes.

    ``jobs`` 0 means one process per available core, 1 means this process only.
    Parsing is CPU-bound pure Python, so processes (not threads) are what
    scales it. A worker that dies (killed, out of memory) does not lose the
    run: the files are parsed again in this process.
    """
    workers = min(jobs or available_cores(), len(files))
    if workers <= 1 or len(files) < PARALLEL_MIN_FILES:
        return [parse_file(file, max_bytes=max_bytes) for file in files]
    chunk = max(1, len(files) // (workers * 8))  # small enough to balance, large enough to amortise pickling
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=_worker_context()) as pool:
            return list(pool.map(partial(parse_file, max_bytes=max_bytes), files, chunksize=chunk))
    except (BrokenProcessPool, OSError) as error:
        log.warning("parallel parsing failed (%s); parsing %d files in one process", error, len(files))
        return [parse_file(file, max_bytes=max_bytes) for file in files]


def _worker_context() -> multiprocessing.context.BaseContext:
    """Workers forked from a clean server process that has imported the parser (never
    from this process, which may run threads by now), else spawned."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        return context
    return multiprocessing.get_context("spawn")


def available_cores() -> int:
    """Cores this process may run on (the affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _parse_into(document: Document, text: str) -> None:
    path = document.path
    lines = text.split("\n")
    front_matter = split_front_matter(lines, path)
    document.front_matter = front_matter.data
    document.diagnostics.extend(front_matter.diagnostics)
    body = [""] * front_matter.end + lines[front_matter.end :]
    tables, problems = find_tables(body, path)
    document.diagnostics.extend(problems)

    env: dict = {}
    tokens = markdown_parser().parse("\n".join(mask(body, tables)), env)
    source = Source(path, body, tables, env)
    stem = Path(path).stem if path and not path.startswith("<") else "document"
    fallback_title = str(front_matter.data.get("title") or stem)
    assembled = ProcedureAssembler(source, fallback_title).run(SyntaxTreeNode(tokens))
    document.diagnostics.extend(source.diagnostics)
    document.title = assembled.title or (str(front_matter.data["title"]) if front_matter.data.get("title") else None)

    document_annotation = assembled.document_annotation
    if "docverify" in front_matter.data:
        parsed, problems = from_front_matter(front_matter.data["docverify"], front_matter.text, path)
        document.diagnostics.extend(problems)
        document_annotation = combine(parsed, document_annotation)
    _finish(document, assembled.procedures, document_annotation, stem)
    document.diagnostics.sort(key=lambda d: d.line)


def _finish(
    document: Document,
    found: list[tuple[Procedure, ParsedAnnotation | None]],
    document_annotation: ParsedAnnotation | None,
    stem: str,
) -> None:
    ids = IdAllocator()
    explicit: dict[str, int] = {}
    for procedure, own in found:
        if own is not None and own.annotation.id:
            if own.annotation.id in explicit:
                message = (
                    f"docverify annotation id '{own.annotation.id}' is already used on line "
                    f"{explicit[own.annotation.id]}; ids must be unique in a document"
                )
                document.diagnostics.append(Diagnostic(document.path, own.annotation.line, Severity.ERROR, message))
            else:
                explicit[own.annotation.id] = own.annotation.line
                ids.reserve(own.annotation.id)
    front = document.front_matter
    document_console = next((product for procedure, _ in found if (product := _console_product(procedure))), None)
    for procedure, own in found:
        if not procedure.steps:
            continue
        annotation = for_procedure(document_annotation, own)
        procedure.annotation = annotation
        if own is not None and own.annotation.id and explicit.get(own.annotation.id) == own.annotation.line:
            procedure.id = own.annotation.id
        else:
            procedure.id = ids.allocate(stem, procedure.title)
        procedure.product = (
            (annotation.product if annotation else None)
            or _string(front.get("product"))
            or _string(front.get("ms.service"))
            or _console_product(procedure)
            or document_console
        )
        procedure.region = annotation.region if annotation else None
        steps = procedure.all_steps()
        procedure.placeholders = list(dict.fromkeys(p for step in steps for p in step.placeholders))
        procedure.language = detect_language(procedure.title + "\n" + "\n".join(step.text for step in steps))
        procedure.cloud = _cloud(procedure, front)
        document.procedures.append(procedure)
    link_parts(document.procedures)
    document_cloud = next((p.cloud for p in document.procedures if p.cloud), None)
    for procedure in document.procedures:  # a fragment of a doc for one cloud is for that cloud too
        procedure.cloud = procedure.cloud or document_cloud


def _cloud(procedure: Procedure, front: dict) -> str | None:
    """Whose console the procedure is for: the consoles its steps open and the links
    they follow, else the front matter (Azure docs carry ``ms.service``)."""
    consoles = [text for step in procedure.all_steps() for action in step.actions
                if action.intent in (Intent.OPEN_CONSOLE, Intent.OPEN_URL)
                for text in (action.target or "", action.url or "")]
    found = cloud_named(consoles)
    if found is None and "ms.service" in front:
        return "azure"
    return found


def _console_product(procedure: Procedure) -> str | None:
    """The console a step opens, else one a step names ("in the ECS console")."""
    steps = procedure.all_steps()
    for step in steps:
        for action in step.actions:
            if action.intent is Intent.OPEN_CONSOLE and action.target:
                product = product_from_console(action.target)
                if product:
                    return product
    for step in steps[:3]:
        product = console_mentioned(step.text)
        if product:
            return product
    return None


def _string(value: object) -> str | None:
    return str(value) if isinstance(value, (str, int, float)) and str(value).strip() else None
