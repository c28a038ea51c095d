"""The ``json`` reporter: the whole run, trajectories included, as one JSON file."""

from __future__ import annotations

import json
from pathlib import Path

from docverify.report.reporter import Reporter
from docverify.report.trajectory import RunSummary
from docverify_reports.output import output_dir, write_text

FILE_NAME = "docverify.json"


class JsonReporter(Reporter):
    """Writes <output>/docverify.json: every result with its full trajectory."""

    name = "json"
    writes_files = True

    def run_finished(self, summary: RunSummary, output: Path | None) -> list[Path]:
        """Write ``RunSummary.to_dict()`` (UTF-8, indent 2) to ``<output>/docverify.json``;
        ``RunSummary.from_dict`` reads it back, ``docverify schema results`` is its schema."""
        directory = output_dir(self.name, output)
        text = json.dumps(summary.to_dict(), indent=2, ensure_ascii=False) + "\n"
        return [write_text(directory / FILE_NAME, text)]
