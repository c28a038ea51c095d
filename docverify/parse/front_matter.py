"""YAML front matter: ``---`` on the first line, closed by ``---`` or ``...``.

The front matter's lines are blanked (not removed) before Markdown parsing so
every later line keeps its number. Bad YAML, a non-mapping or an unterminated
block is a warning; the document is still parsed. Dates become ISO strings so
the result stays JSON-friendly.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

import yaml

from docverify.errors import yaml_error_at
from docverify.parse.model import Diagnostic, Severity

_OPEN = "---"
_CLOSE = ("---", "...")
#: A front matter larger than this is not YAML we want to read.
MAX_LINES = 1000


@dataclass
class FrontMatter:
    data: dict[str, Any] = field(default_factory=dict)
    end: int = 0  #: number of lines it occupies (0: none)
    text: str = ""  #: the YAML between the fences
    diagnostics: list[Diagnostic] = field(default_factory=list)


def split_front_matter(lines: list[str], path: str) -> FrontMatter:
    if not lines or lines[0].rstrip() != _OPEN:
        return FrontMatter()
    for index in range(1, min(len(lines), MAX_LINES)):
        if lines[index].rstrip() in _CLOSE:
            break
    else:
        message = "front matter opened with '---' on line 1 is never closed; read as Markdown"
        return FrontMatter(diagnostics=[Diagnostic(path, 1, Severity.WARNING, message)])
    text = "\n".join(lines[1:index])
    result = FrontMatter(end=index + 1, text=text)
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as error:
        at, problem = yaml_error_at(error)
        line = 2 + at if at is not None else 1
        result.diagnostics.append(Diagnostic(path, line, Severity.WARNING, f"front matter is not valid YAML: {problem}"))
        return result
    except Exception as error:  # noqa: BLE001 - yaml can raise odd errors on odd input
        result.diagnostics.append(Diagnostic(path, 1, Severity.WARNING, f"front matter could not be read: {error}"))
        return result
    if data is None:
        data = {}
    if not isinstance(data, dict):
        message = f"front matter is a YAML {type(data).__name__}, not a mapping; ignored"
        result.diagnostics.append(Diagnostic(path, 1, Severity.WARNING, message))
        return result
    result.data = {str(key): _plain(value) for key, value in data.items()}
    return result


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
