"""Kept template candidates, and template folders composed of several layers.

A candidate that passed validation is kept under the candidates folder (default
``.docverify/template-candidates``) in the layout ``--templates`` reads::

    <provider>/<meta_type>.tf.j2     the template
    <provider>/<meta_type>.json      how it was made: model, rounds, validation output, tokens
    <provider>/types.yaml            META type -> Terraform resource type, for every kept candidate

so ``docverify plan docs --templates .docverify/template-candidates`` renders with them,
and a reviewed candidate can be moved into ``terraform_templates/<provider>/``.

:func:`compose` builds the one folder :func:`docverify_terraform.stack.render_stack` takes from
several (the user's ``--templates``, then chosen candidates), first layer wins.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from docverify.cost import Usage
from docverify_terraform.engine import locked

#: Where kept candidates go unless configured.
DEFAULT_CANDIDATES_DIR = ".docverify/template-candidates"


@dataclass
class Candidate:
    """A template ResourceCoder wrote and validated (or found kept from an earlier run)."""

    meta_type: str
    provider: str
    resource_type: str  #: the Terraform resource type it creates
    template: str  #: the Jinja2 text
    model: str = ""
    rounds: int = 0  #: model answers it took; 0: found kept, not written now
    validation: dict[str, Any] = field(default_factory=dict)  #: what validate and plan said at the end
    history: list[dict[str, Any]] = field(default_factory=list)  #: each round's problems
    usage: Usage = field(default_factory=Usage)
    path: Path | None = None  #: the kept template file
    written_at: str = ""

    @property
    def record_path(self) -> Path | None:
        return self.path.with_suffix("").with_suffix(".json") if self.path else None

    def record(self) -> dict[str, Any]:
        return {"meta_type": self.meta_type, "provider": self.provider, "resource_type": self.resource_type,
                "model": self.model, "rounds": self.rounds, "written_at": self.written_at,
                "usage": self.usage.to_dict(), "validation": self.validation, "history": self.history}


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(tmp, 0o644)  # templates to review and commit, not secrets
    os.replace(tmp, path)


class CandidateStore:
    """The candidates folder."""

    def __init__(self, root: str | Path = DEFAULT_CANDIDATES_DIR) -> None:
        self.root = Path(root)

    def folder(self, provider: str) -> Path:
        return self.root / provider

    def types(self, provider: str) -> dict[str, str]:
        path = self.folder(provider) / "types.yaml"
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except (OSError, yaml.YAMLError):
            return {}
        return {str(k): str(v) for k, v in (data or {}).items()} if isinstance(data, dict) else {}

    def find(self, provider: str, meta_type: str) -> Candidate | None:
        """The kept candidate for ``meta_type``, or None."""
        path = self.folder(provider) / f"{meta_type}.tf.j2"
        resource_type = self.types(provider).get(meta_type)
        if not path.is_file() or not resource_type:
            return None
        record: dict[str, Any] = {}
        try:
            record = json.loads(path.with_suffix("").with_suffix(".json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
        return Candidate(meta_type=meta_type, provider=provider, resource_type=resource_type,
                         template=path.read_text(encoding="utf-8"), model=str(record.get("model", "")),
                         rounds=0, validation=dict(record.get("validation") or {}),
                         history=list(record.get("history") or []), usage=Usage(), path=path,
                         written_at=str(record.get("written_at", "")))

    def kept(self, provider: str) -> list[str]:
        """The META types with a kept candidate."""
        return sorted(t for t in self.types(provider) if (self.folder(provider) / f"{t}.tf.j2").is_file())

    def lock(self, provider: str, meta_type: str):
        """Held while one writer writes ``meta_type``: a second waits, then finds it kept."""
        return locked(self.folder(provider) / f".{meta_type}.lock")

    def keep(self, candidate: Candidate) -> Path:
        """Write the template, its record and its types.yaml entry; returns the template's path."""
        folder = self.folder(candidate.provider)
        path = folder / f"{candidate.meta_type}.tf.j2"
        write_atomic(path, candidate.template if candidate.template.endswith("\n") else candidate.template + "\n")
        candidate.path = path
        write_atomic(path.with_suffix("").with_suffix(".json"), json.dumps(candidate.record(), indent=2) + "\n")
        with locked(folder / ".types.lock"):
            types = self.types(candidate.provider)
            types[candidate.meta_type] = candidate.resource_type
            write_atomic(folder / "types.yaml",
                         "# META type -> Terraform resource type of the templates ResourceCoder wrote\n"
                         + yaml.safe_dump(dict(sorted(types.items())), sort_keys=False))
        return path


def compose(dest: Path, provider: str, layers: list[tuple[Path | None, set[str] | None]],
            extra: dict[str, tuple[str, str]] | None = None) -> Path:
    """One templates folder (``dest/<provider>/``) from ``layers``, first wins.

    Each layer is a folder holding ``<provider>/`` and the META types to take from it
    (None: every file of the layer, helpers and ``provider.tf.j2`` included).
    ``extra``: META type -> (resource type, template text) placed before every layer.
    Returns ``dest``, for ``render_stack(templates=dest)``."""
    folder = dest / provider
    folder.mkdir(parents=True, exist_ok=True)
    types: dict[str, Any] = {}  #: a type name, or a mapping marking a paid type (stack.TemplateSet)
    for meta_type, (resource_type, text) in (extra or {}).items():
        (folder / f"{meta_type}.tf.j2").write_text(text, encoding="utf-8")
        types[meta_type] = resource_type
    for root, only in layers:
        if root is None or not (root / provider).is_dir():
            continue
        source = root / provider
        mapping: dict[str, Any] = {}
        if (source / "types.yaml").is_file():
            mapping = yaml.safe_load((source / "types.yaml").read_text(encoding="utf-8")) or {}
        for key, value in (mapping.items() if isinstance(mapping, dict) else ()):
            if (only is None or key in only) and key not in types:
                types[str(key)] = dict(value) if isinstance(value, dict) else str(value)
        for path in sorted(source.iterdir()):
            if not path.is_file() or path.name == "types.yaml" or path.name.startswith("."):
                continue
            meta_type = path.name[: -len(".tf.j2")] if path.name.endswith(".tf.j2") else None
            if only is not None and meta_type not in only:
                continue
            if not (folder / path.name).exists():
                shutil.copyfile(path, folder / path.name)
    write_atomic(folder / "types.yaml", yaml.safe_dump(types, sort_keys=True) if types else "{}\n")
    return dest


def candidate_dict(candidate: Candidate) -> dict[str, Any]:
    """A candidate as JSON data (``docverify resourcecoder write --json``)."""
    data = candidate.record()
    data["path"] = str(candidate.path) if candidate.path else None
    data["template"] = candidate.template
    return data

