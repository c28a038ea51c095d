"""Pipe tables rebuilt from the raw source lines.

Alibaba Cloud's docs are generated with table rows whose cells span several
source lines: a row starts with ``|`` and only ends at the next line that ends
with ``|``; the lines in between hold bullets, notes and paragraphs, often at
column 0 (see "Create a security group.md"). GFM, and so markdown-it, ends the
table at the first such line and turns the rest into stray lists and
paragraphs. So before Markdown parsing, `find_tables` scans the lines itself:

- a table is a header line containing ``|`` followed by a delimiter row
  (``|---|:--|``) with the same number of cells;
- when the header ends with ``|`` every row must too: a row that does not end
  with ``|`` continues on the following lines (blank ones included) until a
  line that does. A heading, a code fence, a new table or an ordered-list
  marker left of the table stops the search: the row then ends on its own line
  and a warning says so;
- otherwise (no trailing pipe) each line is one row, as in GFM.

`mask` then replaces every line of each table with a one-cell dummy row at the
header's indentation. markdown-it still sees a table at the same place in the
same container (list item, block quote), line numbers stay the same, and the
walker looks the real `RawTable` up by the table's first line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from docverify.parse.model import Diagnostic, Severity

_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_ORDERED_ITEM = re.compile(r"^(\s*)\d{1,9}[.)](?:\s|$)")
#: A row that never closes is not searched for beyond this many lines.
MAX_ROW_LINES = 400


@dataclass
class RawRow:
    line: int  #: 1-based line where the row starts
    cells: list[str]  #: raw Markdown of each cell, outer pipes removed


@dataclass
class RawTable:
    start: int  #: 0-based index of the header line
    end: int  #: 0-based index after the last line
    indent: str
    header: list[str]
    rows: list[RawRow] = field(default_factory=list)

    @property
    def line(self) -> int:
        return self.start + 1


def split_cells(row: str) -> list[str]:
    """Cells of a row: split on unescaped pipes, outer pipes dropped, ``\\|`` kept."""
    text = row.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    cells: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append("|" if char == "|" else "\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "|":
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if escaped:
        current.append("\\")
    cells.append("".join(current).strip())
    return cells


def _closes(text: str) -> bool:
    return text.endswith("|") and not text.endswith("\\|")


def find_tables(lines: list[str], path: str) -> tuple[list[RawTable], list[Diagnostic]]:
    tables: list[RawTable] = []
    problems: list[Diagnostic] = []
    fence: str | None = None
    index = 0
    count = len(lines)
    while index < count - 1:
        line = lines[index]
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match[1]
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            index += 1
            continue
        if fence is not None or "|" not in line or "-" not in lines[index + 1] or not _DELIMITER.match(lines[index + 1]):
            index += 1
            continue
        header = split_cells(line)
        delimiter = split_cells(lines[index + 1])
        if len(header) != len(delimiter):
            message = (
                f"table header has {len(header)} cells but its delimiter row has {len(delimiter)}; "
                "not read as a table"
            )
            problems.append(Diagnostic(path, index + 1, Severity.WARNING, message))
            index += 2
            continue
        table = _scan_rows(lines, index, header, path, problems)
        tables.append(table)
        index = table.end
    return tables, problems


def _scan_rows(lines: list[str], start: int, header: list[str], path: str, problems: list[Diagnostic]) -> RawTable:
    header_line = lines[start]
    indent = header_line[: len(header_line) - len(header_line.lstrip())]
    table = RawTable(start=start, end=start + 2, indent=indent, header=header)
    multiline = _closes(header_line.strip()) and header_line.strip().startswith("|")
    index = start + 2
    count = len(lines)
    while index < count:
        text = lines[index].strip()
        if not text or "|" not in text or _HEADING.match(lines[index]) or _FENCE.match(lines[index]):
            break
        if multiline and not text.startswith("|"):
            break
        row_lines = [text]
        end = index + 1
        if multiline and not _closes(text):
            closing = _find_closing_line(lines, index, len(indent))
            if closing is None:
                if len(split_cells(text)) < len(header):  # a full row may omit the closing pipe (GFM)
                    message = f"table row starting on line {index + 1} is never closed with '|'; read as one line"
                    problems.append(Diagnostic(path, index + 1, Severity.WARNING, message))
            else:
                row_lines = [lines[i].strip() for i in range(index, closing + 1)]
                end = closing + 1
        cells = split_cells("\n".join(row_lines))
        table.rows.append(RawRow(line=index + 1, cells=cells))
        index = end
    table.end = index
    return table


def _find_closing_line(lines: list[str], start: int, indent: int) -> int | None:
    for index in range(start + 1, min(len(lines), start + MAX_ROW_LINES)):
        line = lines[index]
        if _HEADING.match(line) or _FENCE.match(line):
            return None
        text = line.strip()
        if text.startswith("|") and index + 1 < len(lines) and _DELIMITER.match(lines[index + 1]) and "-" in lines[index + 1]:
            return None
        item = _ORDERED_ITEM.match(line)
        if item and len(item[1]) < indent:
            return None
        if _closes(text):
            return index
    return None


def mask(lines: list[str], tables: list[RawTable]) -> list[str]:
    """A copy of `lines` in which each table is a one-column dummy table."""
    masked = list(lines)
    for table in tables:
        masked[table.start] = table.indent + "|x|"
        masked[table.start + 1] = table.indent + "|-|"
        for index in range(table.start + 2, table.end):
            masked[index] = table.indent + "|x|"
    return masked
