"""The document being parsed: lines, markdown-it tree, tables and diagnostics.

Block structure is parsed once; inline content is parsed on demand (the core
``inline`` rule is disabled) because most paragraphs of a how-to are prose
that no procedure needs. `Source` hands out the marked text (`inline.py`) of a
paragraph or a table cell and maps tree nodes back to 1-based source lines.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.tree import SyntaxTreeNode

from docverify.parse.inline import clean, parse_inline, render_inline
from docverify.parse.model import Diagnostic, Severity
from docverify.parse.tables import RawTable

_MARKUP = re.compile(r"[\\`*_\[\]!<>&“「『\n]|https?:|www\.")


@lru_cache(maxsize=1)
def markdown_parser() -> MarkdownIt:
    """CommonMark + GFM tables, inline parsing left to `Source.inline`."""
    md = MarkdownIt("commonmark").enable("table")
    md.disable("inline")
    return md


class Source:
    def __init__(self, path: str, lines: list[str], tables: list[RawTable], env: dict) -> None:
        self.path = path
        self.lines = lines
        self.tables = {table.start: table for table in tables}
        self.env = env
        self.md = markdown_parser()
        self.diagnostics: list[Diagnostic] = []
        self._inline: dict[int, list[Token]] = {}

    # -- diagnostics -------------------------------------------------------
    def warn(self, line: int, message: str) -> None:
        self.diagnostics.append(Diagnostic(self.path, line, Severity.WARNING, message))

    def error(self, line: int, message: str) -> None:
        self.diagnostics.append(Diagnostic(self.path, line, Severity.ERROR, message))

    # -- lines -------------------------------------------------------------
    @staticmethod
    def line(node: SyntaxTreeNode) -> int:
        return node.map[0] + 1 if node.map else 0

    def end_line(self, node: SyntaxTreeNode) -> int:
        """Last non-blank line of a block (1-based)."""
        if not node.map:
            return 0
        start, end = node.map
        while end > start + 1 and not self.lines[end - 1].strip():
            end -= 1
        return end

    # -- inline ------------------------------------------------------------
    def inline_tokens(self, node: SyntaxTreeNode) -> list[Token]:
        """Inline tokens of a paragraph or heading node (parsed once)."""
        key = id(node)
        cached = self._inline.get(key)
        if cached is None:
            content = next((child.content for child in node.children if child.type == "inline"), "")
            cached = self._inline[key] = parse_inline(self.md, content, self.env) if content else []
        return cached

    def marked(self, node: SyntaxTreeNode) -> str:
        return render_inline(self.inline_tokens(node))

    def render_cell(self, raw: str) -> str:
        """Marked text of a raw table cell (may span lines)."""
        if not raw:
            return ""
        if not _MARKUP.search(raw):  # plain words: nothing for markdown-it to do
            return clean(raw)
        return render_inline(parse_inline(self.md, raw, self.env))

    def table(self, node: SyntaxTreeNode) -> RawTable | None:
        return self.tables.get(node.map[0]) if node.map else None
