"""Fixtures of the reporter tests: a sample run and an output directory holding
the screenshots its turns name (samples in report_samples.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_samples import make_summary, tiny_png

from docverify.report.trajectory import RunSummary


@pytest.fixture
def summary() -> RunSummary:
    return make_summary()


@pytest.fixture
def png() -> bytes:
    return tiny_png()


@pytest.fixture
def output(tmp_path: Path, png: bytes) -> Path:
    """An output directory holding the screenshots the sample turns name
    (``screens/missing.png`` is missing on purpose; ``../outside.png`` exists
    outside it)."""
    directory = tmp_path / "out"
    (directory / "screens").mkdir(parents=True)
    (directory / "screens" / "oss-1-before.png").write_bytes(png)
    (directory / "screens" / "oss-1-after.png").write_bytes(png)
    (tmp_path / "outside.png").write_bytes(png)
    return directory
