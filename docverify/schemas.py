"""JSON Schemas of what users write and what a run writes: the ``docverify:``
annotation, ``docverify.toml`` and ``docverify.json``.

Each is generated from the pydantic models that validate it
(:class:`docverify.parse.annotation_model.AnnotationModel`, :class:`docverify.config.Settings`,
:class:`docverify.report.trajectory.RunSummary`), so the schema an editor or a
consumer checks against is the rule docverify applies. The repository ships them
under ``schemas/`` (a test fails when they are stale); ``docverify schema
annotation|config|results`` prints them.

Refresh the shipped files with ``python -m docverify.schemas``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

#: schema name -> its file under schemas/
SCHEMA_FILES: dict[str, str] = {
    "annotation": "annotation.schema.json",
    "config": "docverify.toml.schema.json",
    "results": "docverify.json.schema.json",
}
#: The folder the repository ships them in.
SHIPPED = Path(__file__).resolve().parent.parent / "schemas"
REFRESH_COMMAND = "python -m docverify.schemas"


def annotation_schema() -> dict[str, Any]:
    """``<!-- docverify: ... -->`` (and the front matter's ``docverify:``): a mapping of
    keys, or the shorthand ``skip``."""
    from docverify.parse.annotation_model import AnnotationModel

    body = AnnotationModel.model_json_schema(mode="validation")
    definitions = body.pop("$defs", {})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "docverify annotation",
        "description": (
            "The YAML of <!-- docverify: ... --> before a procedure, or of the front matter's docverify: key. "
            "'skip' alone means skip: true. Keys starting with x- are kept for plugins; any other key is an error."
        ),
        "anyOf": [{"$ref": "#/$defs/AnnotationModel"}, {"const": "skip"}],
        "$defs": {**definitions, "AnnotationModel": body},
    }


def config_schema() -> dict[str, Any]:
    """``docverify.toml``: :class:`docverify.config.Settings`. A plugin's options table
    (``[console.sandbox]``) is checked by the plugin's own ``Options`` model, so the
    family tables allow other keys here."""
    from docverify.config import Settings

    body = Settings.model_json_schema(mode="validation")
    family = body.get("$defs", {}).get("FamilySettings", {})
    # the file is merged over the defaults (a table may leave `use` out), and `use` may be
    # one string, comma-separated ("json,junit"), as FamilySettings reads it
    family.pop("required", None)
    if "use" in family.get("properties", {}):
        use = family["properties"]["use"]
        family["properties"]["use"] = {
            "anyOf": [{"type": "string"}, {"items": use.get("items", {"type": "string"}), "type": "array"}],
            **{key: value for key, value in use.items() if key not in ("items", "type")},
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **body,
        "title": "docverify.toml",
    }


def results_schema() -> dict[str, Any]:
    """``docverify.json`` (the ``json`` reporter's file): :class:`RunSummary` as
    written, derived counts and usage included."""
    from pydantic import TypeAdapter

    from docverify.report.trajectory import RunSummary

    body = TypeAdapter(RunSummary).json_schema(mode="serialization", by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **body,
        "title": "docverify.json",
        "description": "A docverify run: its summary, then every procedure's result with its findings, "
                       "steps and trajectory. 'version' changes when the layout does.",
    }


SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "annotation": annotation_schema, "config": config_schema, "results": results_schema,
}


def render(name: str) -> str:
    """The schema ``name`` (a key of :data:`SCHEMAS`) as the shipped file's text."""
    return json.dumps(SCHEMAS[name](), indent=2, ensure_ascii=False) + "\n"


def write(folder: Path = SHIPPED) -> list[Path]:
    """Write every schema into ``folder``; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, file_name in SCHEMA_FILES.items():
        path = folder / file_name
        path.write_text(render(name), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write(Path(sys.argv[1]) if len(sys.argv) > 1 else SHIPPED):
        print(f"wrote {path}")
