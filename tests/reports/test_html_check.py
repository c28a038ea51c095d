"""`docverify check --report html` for real (sandbox console, Chromium): failures keep
their screenshots, with the finding's element outlined; passes keep none unless asked."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from bucket_docs import DRIFTING, PASSING
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import ExitCode

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    (folder / "ok.md").write_text(textwrap.dedent(PASSING), encoding="utf-8")
    (folder / "old.md").write_text(textwrap.dedent(DRIFTING), encoding="utf-8")
    return folder


def check(*args: str):
    return CliRunner().invoke(cli, ["check", *args, "--no-store"])


def test_failures_keep_jpeg_screenshots_with_the_finding_outlined_passes_none(docs, tmp_path, chromium):
    out = tmp_path / "out"
    result = check(str(docs), "--jobs", "2", "--report", "html,json", "--output", str(out))
    assert result.exit_code == ExitCode.DEFECTS, result.output
    results = {r["id"]: r for r in json.loads((out / "docverify.json").read_text())["results"]}
    passed, drifted = results["bucket-ok"], results["bucket-old"]
    assert (passed["verdict"], drifted["verdict"]) == ("PASS", "DRIFT")

    # the pass: screenshots taken, then dropped with the verdict, and no turn names one
    assert passed["turns"] and not any("screenshot_after" in turn for turn in passed["turns"])
    assert not (out / "artifacts" / "bucket-ok").exists()
    # the drift: every page action's screenshot, as JPEG
    names = [turn["screenshot_after"] for turn in drifted["turns"] if "screenshot_after" in turn]
    assert names and all(name.endswith(".jpg") for name in names)
    assert all((out / name).read_bytes()[:2] == b"\xff\xd8" for name in names)

    # the finding: the page it was raised on, and the renamed field's box on it
    [finding] = drifted["findings"]
    assert (finding["kind"], finding["line"], finding["observed"]) == ("label_changed", 14, "ACL")
    assert finding["screenshot"] in [turn.get("screenshot_before") for turn in drifted["turns"]] + names
    box = finding["box"]
    assert set(box) == {"x", "y", "width", "height"}
    assert 0 <= box["x"] < box["x"] + box["width"] <= 1 and 0 <= box["y"] < box["y"] + box["height"] <= 1
    assert 0 < box["width"] < 0.9 and 0 < box["height"] < 0.2  # one field, not the page

    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.index('data-verdict="DRIFT"') < page.index('data-verdict="PASS"')
    assert page.count("data:image/jpeg") >= 1
    style = "; ".join(f"{prop}: {round(box[key] * 100, 2):g}%" for prop, key in
                      (("left", "x"), ("top", "y"), ("width", "width"), ("height", "height")))
    assert f'<span class="outline" style="{style}"></span>' in page
    passing = page[re.search(r'<details class="procedure" id="p\d+" data-verdict="PASS"', page).start():]
    assert 'class="shot"' not in passing  # nothing kept of the pass
    assert not any(path.suffix == ".zip" and "bucket-ok" in path.name for path in (out / "artifacts").iterdir())


def test_pass_screenshots_keeps_them_for_passes_too(docs, tmp_path, chromium):
    out = tmp_path / "out"
    result = check(str(docs / "ok.md"), "--pass-screenshots", "--report", "json", "--output", str(out))
    assert result.exit_code == ExitCode.OK, result.output
    [passed] = json.loads((out / "docverify.json").read_text())["results"]
    names = [turn["screenshot_after"] for turn in passed["turns"] if "screenshot_after" in turn]
    assert names and all((out / name).is_file() for name in names)
    assert re.fullmatch(r"artifacts/bucket-ok/turn-\d{3}\.jpg", names[0])
