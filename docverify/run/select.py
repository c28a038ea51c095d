"""Choosing which procedures a run executes.

Three filters, all optional, combined with "and":

- ``PATH#FRAGMENT`` on the command line: only the named procedures of that file
  (``docs/a.md#create-bucket``, the full id ``docs/a.md#a#create-bucket`` or an
  annotation id ``docs/a.md#oss-create-bucket``);
- ``-k EXPR``: words matched, case-insensitively, as substrings of the procedure's
  id and title, combined with ``and``, ``or``, ``not`` and parentheses, as in
  pytest (``-k "bucket and not delete"``); a quoted phrase is one word;
- ``--changed-since GIT_REF``: only documents changed in git since the merge base
  of the ref and HEAD (committed, staged, unstaged or untracked).

:func:`collect` reads and selects for ``docverify check`` and ``docverify plan``;
:func:`runnable` sorts out the procedures that are skipped, and why.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docverify.errors import UsageError
from docverify.parse.model import Diagnostic, Procedure
from docverify.parse.slugs import slugify

if TYPE_CHECKING:
    from docverify.config import ParseSettings

_K_HINT = (
    "words match the id and title, case-insensitively; combine them with and, or, not and ( ), "
    'e.g. -k "bucket and not delete"'
)
_NO_GIT = "needs git, which is not installed or not on PATH"

# -- PATH#fragment -------------------------------------------------------------


def split_selector(arg: str) -> tuple[str, str | None]:
    """``"docs/a.md#create-bucket"`` -> ``("docs/a.md", "create-bucket")``.

    A path that exists with ``#`` in its name is taken whole; otherwise the longest
    existing path before a ``#`` wins, and failing that the text splits at the first
    ``#`` (fragments may hold ``#`` themselves: full ids do).
    """
    if os.path.exists(arg) or "#" not in arg:
        return arg, None
    cuts = [index for index, char in enumerate(arg) if char == "#"]
    existing = [index for index in cuts if os.path.exists(arg[:index])]
    cut = existing[-1] if existing else cuts[0]
    path, fragment = arg[:cut], arg[cut + 1 :]
    if not path:
        raise UsageError(f"'{arg}': name the file before '#'", hint=f"e.g. docs/page.md{arg}")
    return path, fragment or None


def parse_selectors(args: Iterable[str]) -> tuple[list[str], dict[Path, set[str]]]:
    """Command-line paths -> (paths to discover, resolved file -> wanted fragments).

    A path given without a fragment (or a folder above a file) selects all of that
    file, whatever fragments are also given for it: an empty set means "no filter".
    Folders never appear as keys.
    """
    paths: list[str] = []
    wanted: dict[Path, set[str]] = {}
    whole: list[Path] = []
    for arg in args:
        path, fragment = split_selector(arg)
        if path not in paths:
            paths.append(path)
        resolved = Path(path).resolve()
        if fragment is None:
            whole.append(resolved)
        elif resolved.is_dir():
            raise UsageError(
                f"'{arg}': {path} is a folder; '#' names a procedure of a file", hint=f"e.g. {path}/page.md#{fragment}"
            )
        else:
            wanted.setdefault(resolved, set()).add(fragment)
    for file in wanted:
        if any(file == path or path in file.parents for path in whole):
            wanted[file] = set()
    return paths, wanted


def matches_fragment(procedure: Procedure, fragment: str) -> bool:
    """Whether ``PATH#fragment`` names this procedure.

    The fragment may be the full id (``a#create-bucket``), the part after ``#``
    (``create-bucket``), the annotation id, or the heading itself
    (``Create a bucket``, compared as a slug).
    """
    names = {procedure.id}
    if "#" in procedure.id:
        names.add(procedure.id.split("#", 1)[1])
    if procedure.annotation is not None and procedure.annotation.id:
        names.add(procedure.annotation.id)
    if fragment in names:
        return True
    folded = fragment.casefold()
    return any(folded == name.casefold() for name in names) or slugify(fragment) in names


# -- -k EXPR -------------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    kind: str  #: "word", "and", "or", "not", "(", ")", "end"
    text: str
    column: int  #: 1-based


@dataclass(frozen=True)
class _Word:
    text: str

    def evaluate(self, haystack: str) -> bool:
        return self.text in haystack


@dataclass(frozen=True)
class _Not:
    operand: "_Node"

    def evaluate(self, haystack: str) -> bool:
        return not self.operand.evaluate(haystack)


@dataclass(frozen=True)
class _And:
    left: "_Node"
    right: "_Node"

    def evaluate(self, haystack: str) -> bool:
        return self.left.evaluate(haystack) and self.right.evaluate(haystack)


@dataclass(frozen=True)
class _Or:
    left: "_Node"
    right: "_Node"

    def evaluate(self, haystack: str) -> bool:
        return self.left.evaluate(haystack) or self.right.evaluate(haystack)


@dataclass(frozen=True)
class _Everything:
    def evaluate(self, haystack: str) -> bool:
        return True


_Node = _Word | _Not | _And | _Or | _Everything


class KeywordExpression:
    """A compiled ``-k`` expression.

    Grammar (a small recursive-descent parser, no ``eval``)::

        expression := or_expr END
        or_expr    := and_expr ("or" and_expr)*
        and_expr   := not_expr ("and" not_expr)*
        not_expr   := "not" not_expr | "(" or_expr ")" | WORD

    A WORD is a run of characters other than spaces and parentheses, or a phrase in
    single or double quotes. An empty expression matches everything.
    """

    def __init__(self, source: str, root: _Node) -> None:
        self.source = source
        self._root = root

    @classmethod
    def compile(cls, expr: str) -> "KeywordExpression":
        return cls(expr, _Parser(expr).parse())

    def evaluate(self, text: str) -> bool:
        """Whether the expression holds for ``text`` (matched case-insensitively)."""
        return self._root.evaluate(text.casefold())

    def matches(self, procedure: Procedure) -> bool:
        return self.evaluate(f"{procedure.id} {procedure.title}")

    def __repr__(self) -> str:
        return f"KeywordExpression({self.source!r})"


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = self._lex(source)
        self.index = 0

    def parse(self) -> _Node:
        if self.tokens[0].kind == "end":
            return _Everything()
        node = self._or()
        token = self._peek()
        if token.kind != "end":
            if token.kind == ")":
                self._fail(token, "unmatched ')'")
            self._fail(token, f"expected 'and', 'or' or the end after {self._previous()}, got {self._show(token)}")
        return node

    def _or(self) -> _Node:
        node = self._and()
        while self._peek().kind == "or":
            self._advance()
            node = _Or(node, self._and())
        return node

    def _and(self) -> _Node:
        node = self._not()
        while self._peek().kind == "and":
            self._advance()
            node = _And(node, self._not())
        return node

    def _not(self) -> _Node:
        token = self._peek()
        if token.kind == "not":
            self._advance()
            return _Not(self._not())
        if token.kind == "(":
            self._advance()
            node = self._or()
            closing = self._peek()
            if closing.kind != ")":
                opened = f"the '(' at column {token.column}"
                self._fail(closing, f"expected ')' to close {opened}, got {self._show(closing)}")
            self._advance()
            return node
        if token.kind == "word":
            self._advance()
            return _Word(token.text.casefold())
        where = f"after {self._previous()}" if self.index else "at the start"
        got = f", got {self._show(token)}" if token.kind != "end" else ""
        self._fail(token, f"expected a word {where}{got}")
        raise AssertionError("unreachable")

    def _peek(self) -> _Token:
        return self.tokens[self.index]

    def _advance(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def _previous(self) -> str:
        return f"'{self.tokens[self.index - 1].text}'"

    @staticmethod
    def _show(token: _Token) -> str:
        return "the end" if token.kind == "end" else f"'{token.text}'"

    def _fail(self, token: _Token, message: str) -> None:
        raise UsageError(f"-k '{self.source}': {message} (column {token.column})", hint=_K_HINT)

    def _lex(self, source: str) -> list[_Token]:
        tokens: list[_Token] = []
        position = 0
        while position < len(source):
            char = source[position]
            if char.isspace():
                position += 1
            elif char in "()":
                tokens.append(_Token(char, char, position + 1))
                position += 1
            elif char in "'\"":
                end = source.find(char, position + 1)
                if end < 0:
                    raise UsageError(
                        f"-k '{source}': the quote at column {position + 1} is not closed", hint=_K_HINT
                    )
                phrase = source[position + 1 : end]
                if not phrase.strip():
                    raise UsageError(f"-k '{source}': empty quoted word at column {position + 1}", hint=_K_HINT)
                tokens.append(_Token("word", phrase, position + 1))
                position = end + 1
            else:
                start = position
                while position < len(source) and not source[position].isspace() and source[position] not in "()'\"":
                    position += 1
                word = source[start:position]
                kind = word if word in ("and", "or", "not") else "word"
                tokens.append(_Token(kind, word, start + 1))
        tokens.append(_Token("end", "", len(source) + 1))
        return tokens


# -- --changed-since GIT_REF -----------------------------------------------------


def changed_files(ref: str, cwd: Path) -> set[Path]:
    """Files changed since the merge base of ``ref`` and HEAD, as resolved paths.

    Committed since the merge base, staged, unstaged, and untracked files that
    are not ignored. Deleted files are included (they match no procedure).
    """
    root, base, option = _merge_base(ref, cwd)
    names = _git(["diff", "--name-only", "--no-ext-diff", "--no-renames", "-z", base, "--"], root, option).split("\0")
    names += _git(["ls-files", "--others", "--exclude-standard", "-z"], root, option).split("\0")
    return {(root / name).resolve() for name in names if name}


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def changed_lines(ref: str, cwd: Path) -> dict[Path, set[int] | None]:
    """The lines changed since the merge base of ``ref`` and HEAD: resolved path ->
    line numbers in today's file (None: the whole file is new, e.g. untracked). A
    deletion marks the line that now stands where the deleted lines were."""
    root, base, option = _merge_base(ref, cwd)
    diff = _git(["-c", "core.quotePath=false", "diff", "-U0", "--no-ext-diff", "--no-renames", "--no-color", base,
                 "--"], root, option)
    lines: dict[Path, set[int] | None] = {}
    current: set[int] | None = None
    for row in diff.splitlines():
        if row.startswith("+++ "):
            name = row[4:].rstrip("\t")
            current = None if name == "/dev/null" else lines.setdefault((root / name.removeprefix("b/")).resolve(), set())
        elif current is not None and (hunk := _HUNK.match(row)):
            start, count = int(hunk[1]), int(hunk[2]) if hunk[2] is not None else 1
            current.update(range(start, start + count) if count else (max(start, 1),))
    for name in _git(["ls-files", "--others", "--exclude-standard", "-z"], root, option).split("\0"):
        if name:
            lines[(root / name).resolve()] = None
    return lines


def _merge_base(ref: str, cwd: Path) -> tuple[Path, str, str]:
    """The repository's top folder, the merge base of ``ref`` and HEAD, and the
    option's text for error messages."""
    option = f"--changed-since {ref}"
    if not ref or ref.startswith("-"):
        raise UsageError(f"{option}: not a git ref", hint="give a branch, tag or commit: --changed-since origin/main")
    if shutil.which("git") is None:
        raise UsageError(f"{option} {_NO_GIT}", hint="install git or drop --changed-since")
    top = _git(["rev-parse", "--show-toplevel"], Path(cwd), option, not_repo=True).strip()
    root = Path(top)
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root, option)
    except UsageError:
        raise UsageError(f"{option}: unknown git ref '{ref}'", hint=_fetch_hint(ref, root)) from None
    try:
        base = _git(["merge-base", ref, "HEAD"], root, option).strip()
    except UsageError as error:
        raise UsageError(
            f"{option}: no common ancestor of '{ref}' and HEAD ({error.message.split(': ', 1)[-1]})",
            hint=_fetch_hint(ref, root),
        ) from None
    return root, base, option


def _git(arguments: list[str], cwd: Path, option: str, *, not_repo: bool = False) -> str:
    environment = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    try:
        completed = subprocess.run(
            ["git", *arguments], cwd=cwd, env=environment, capture_output=True, text=True,
            encoding="utf-8", errors="surrogateescape", check=False,
        )
    except FileNotFoundError:
        raise UsageError(f"{option} {_NO_GIT}", hint="install git or drop --changed-since") from None
    except NotADirectoryError:
        raise UsageError(f"{option}: {cwd} is not a folder") from None
    if completed.returncode != 0:
        detail = next((line.strip() for line in completed.stderr.splitlines() if line.strip()), "")
        if not_repo and "not a git repository" in detail:
            raise UsageError(
                f"{option}: {cwd} is not inside a git repository",
                hint="run docverify from the docs repository's checkout, or drop --changed-since",
            )
        raise UsageError(f"{option}: git {arguments[0]} failed: {detail or f'exit status {completed.returncode}'}")
    return completed.stdout


def _fetch_hint(ref: str, root: Path) -> str:
    remote, _, branch = ref.partition("/")
    shallow = ""
    try:
        shallow = _git(["rev-parse", "--is-shallow-repository"], root, "").strip()
    except UsageError:
        pass
    fetch = f"git fetch {remote} {branch} --depth=1000" if branch else f"git fetch origin {ref} --depth=1000"
    advice = f"fetch the ref first: {fetch}"
    if shallow == "true":
        advice += " (this clone is shallow; in GitHub Actions use actions/checkout with fetch-depth: 0)"
    return advice


# -- all together ----------------------------------------------------------------


def select(
    procedures: Iterable[Procedure],
    *,
    fragments: Mapping[Path | str, set[str]] | None = None,
    keyword: str | KeywordExpression | None = None,
    changed: set[Path] | None = None,
) -> list[Procedure]:
    """The procedures to run, in the order given.

    ``fragments`` maps a resolved file path to the fragments wanted in it (an empty
    set: all of it; a file not in the map: all of it). ``keyword`` is a ``-k``
    expression; ``changed`` the resolved paths from :func:`changed_files`. A
    fragment that names no procedure of its file is a ``UsageError`` listing the
    ids there, nearest first.
    """
    procedures = list(procedures)
    resolved: dict[str, Path] = {}

    def file_of(procedure: Procedure) -> Path:
        if procedure.path not in resolved:
            resolved[procedure.path] = Path(procedure.path).resolve()
        return resolved[procedure.path]

    if fragments:
        wanted = {Path(path).resolve(): set(names) for path, names in fragments.items()}
        _check_fragments(procedures, wanted, file_of)
        procedures = [
            procedure
            for procedure in procedures
            if not wanted.get(file_of(procedure))
            or any(matches_fragment(procedure, fragment) for fragment in wanted[file_of(procedure)])
        ]
    if changed is not None:
        changed_paths = {Path(path).resolve() for path in changed}
        procedures = [procedure for procedure in procedures if file_of(procedure) in changed_paths]
    if keyword is not None:
        expression = keyword if isinstance(keyword, KeywordExpression) else KeywordExpression.compile(keyword)
        procedures = [procedure for procedure in procedures if expression.matches(procedure)]
    return procedures


def collect(paths: Iterable[str], settings: ParseSettings, keyword: str | None, changed_since: str | None,
            cwd: Path | None = None) -> tuple[list[Procedure], list[Diagnostic]]:
    """The procedures the command line selects (``PATH[#ID]``, ``-k``,
    ``--changed-since``, in ``cwd``), and the input problems found reading them.
    ``docverify check`` and ``docverify plan`` both select with it."""
    from docverify.parse.parser import discover, parse_files

    plain, fragments = parse_selectors(paths)
    expression = KeywordExpression.compile(keyword) if keyword else None  # a syntax error before any work
    files, problems = discover(plain, include=settings.include, exclude=settings.exclude)
    changed = changed_files(changed_since, cwd or Path.cwd()) if changed_since else None
    procedures: list[Procedure] = []
    for document in parse_files(files, max_bytes=settings.max_file_bytes, jobs=settings.jobs):
        problems.extend(document.diagnostics)
        procedures.extend(document.procedures)
    return select(procedures, fragments=fragments or None, keyword=expression, changed=changed), problems


# -- what is left to run -------------------------------------------------------

#: How skip reasons name the clouds a doc can be written for.
CLOUD_NAMES = {"alibaba": "Alibaba Cloud", "aws": "AWS", "azure": "Azure", "gcp": "Google Cloud"}


@dataclass(frozen=True)
class Skipped:
    """A selected procedure that is not run, and why (said after its id)."""

    procedure: Procedure
    reason: str  #: "skipped by its annotation: flaky", "has no steps: nothing to check", ...
    by_annotation: bool = False  #: its own ``skip:`` annotation skips it


def runnable(procedures: list[Procedure], *, cloud: str | None = None,
             parts: bool = True) -> tuple[list[Procedure], list[Skipped]]:
    """The selected procedures that can run, in order, and those skipped: by their
    ``skip:`` annotation; with no steps; written for another cloud's console than
    ``cloud`` (the console's, when known). With ``parts``, a procedure that goes on
    from parts before it (``Procedure.continues``) gets them as its lead-in
    (:func:`~docverify.parse.sequence.with_lead_in`), and is skipped when one of them
    is; without, each procedure is taken alone (``docverify plan``)."""
    from docverify.parse.sequence import with_lead_in

    found = _Parts(procedures) if parts else None
    ready: list[Procedure] = []
    skipped: list[Skipped] = []
    for procedure in procedures:
        annotation = procedure.annotation
        chain = found.before(procedure) if found is not None else []
        skipping = next((part for part in chain if part.annotation is not None and part.annotation.skip), None)
        if annotation is not None and annotation.skip:
            reason = annotation.skip if isinstance(annotation.skip, str) else "skip: true"
            skipped.append(Skipped(procedure, f"skipped by its annotation: {reason}", by_annotation=True))
        elif skipping is not None:
            skipped.append(Skipped(procedure, f"skipped: it goes on from '{skipping.title}' (line {skipping.line}), "
                                              "which its annotation skips"))
        elif not procedure.all_steps():
            skipped.append(Skipped(procedure, "has no steps: nothing to check"))
        elif procedure.cloud and cloud and procedure.cloud != cloud:
            skipped.append(Skipped(procedure, f"not applicable: written for the "
                                              f"{CLOUD_NAMES.get(procedure.cloud, procedure.cloud)} console; this run "
                                              f"checks {CLOUD_NAMES.get(cloud, cloud)}'s"))
        else:
            ready.append(with_lead_in(procedure, chain) if parts else procedure)
    return ready, skipped


class _Parts:
    """The parts of a doc a procedure goes on from (``Procedure.continues``), found
    among the selected procedures, else by reading the procedure's file again (a
    procedure selected alone by ``FILE#ID`` still gets the parts before it)."""

    def __init__(self, procedures: list[Procedure]) -> None:
        self.known: dict[tuple[str, str], Procedure] = {(p.path, p.id): p for p in procedures}
        self.read: set[str] = set()

    def find(self, path: str, procedure_id: str) -> Procedure | None:
        if (path, procedure_id) not in self.known and path not in self.read:
            from docverify.parse.parser import parse_file

            self.read.add(path)
            for other in parse_file(path).procedures:
                self.known.setdefault((path, other.id), other)
        return self.known.get((path, procedure_id))

    def before(self, procedure: Procedure) -> list[Procedure]:
        from docverify.parse.sequence import lead_in

        return lead_in(procedure, lambda procedure_id: self.find(procedure.path, procedure_id))


def _check_fragments(procedures: list[Procedure], wanted: dict[Path, set[str]], file_of) -> None:
    by_file: dict[Path, list[Procedure]] = {}
    for procedure in procedures:
        by_file.setdefault(file_of(procedure), []).append(procedure)
    for file, names in wanted.items():
        in_file = by_file.get(file, [])
        shown = _display(file)
        for fragment in sorted(names):
            if any(matches_fragment(procedure, fragment) for procedure in in_file):
                continue
            if not in_file:
                raise UsageError(f"{shown}#{fragment}: {shown} has no procedures", hint=f"see: docverify parse {shown}")
            ids = [procedure.id for procedure in in_file]
            candidates = ids + [procedure.id.split("#", 1)[1] for procedure in in_file if "#" in procedure.id]
            close = difflib.get_close_matches(fragment, candidates, n=3, cutoff=0.5)
            suggestion = f"did you mean {' or '.join(repr(name) for name in close)}? " if close else ""
            raise UsageError(
                f"{shown}#{fragment}: no procedure '{fragment}' in {shown}",
                hint=f"{suggestion}procedures there: {', '.join(ids)}",
            )


def _display(path: Path) -> str:
    """Relative to the working directory when under it, else absolute."""
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
