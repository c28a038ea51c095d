"""Two example docs checked end to end in two shards on the embedded sandbox console
and Chromium, then merged: the merged run has the verdicts and findings of the
unsharded run, and its reports. (The fake-plugin version of these, with the refusals
and missing shards: tests/run/test_shard_cli.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import ExitCode

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "examples" / "docs"
#: one procedure in each shard of two (their PATH#ID keys' hashes, pinned in tests/run/test_shard.py)
SELECTED = {"examples/docs/eip.md#eip-apply": 1, "examples/docs/vpc.md#vpc-create-vswitch": 2}
CLEAN_ENV = {"DOCVERIFY_CONSOLE": None, "DOCVERIFY_POLICY": None, "DOCVERIFY_CONSOLE__SANDBOX__RELEASE": None,
             "DOCVERIFY_CONFIG": None, "DOCVERIFY_JOBS": None, "DOCVERIFY_SHARD": None, "DOCVERIFY_OUTPUT": None,
             "DOCVERIFY_FAIL_ON": None, "GITHUB_STEP_SUMMARY": None}


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env=CLEAN_ENV, catch_exceptions=False)


def results(folder: Path) -> dict:
    return json.loads((folder / "docverify.json").read_text(encoding="utf-8"))


def verdicts(data: dict) -> list[tuple]:
    return [(r["id"], r["verdict"], [(f["kind"], f["line"]) for f in r["findings"]]) for r in data["results"]]


def test_two_shards_merge_into_the_unsharded_run(chromium, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the keys' paths are relative to the working folder
    paths = [str(ROOT / key) for key in SELECTED]  # absolute PATH#ID: the same keys
    common = [*paths, "--no-store", "--report", "json", "--browser-path", str(chromium.path)]
    full = invoke("check", *common, "--jobs", "2", "--output", str(tmp_path / "full"))
    assert (tmp_path / "full" / "docverify.json").exists(), full.output
    shards = []
    for index in (1, 2):
        out = tmp_path / f"shard-{index}"
        done = invoke("check", *common, "--shard", f"{index}/2", "--output", str(out))
        assert done.exit_code == full.exit_code, done.output
        data = results(out)
        assert data["shard"]["selected"] == list(SELECTED)
        assert [f"examples/docs/{Path(r['path']).name}#{r['id']}" for r in data["results"]] == \
               [key for key, shard in SELECTED.items() if shard == index]
        shards.append(out)
    merged = invoke("merge", *map(str, shards), "--output", str(tmp_path / "merged"), "--report", "junit,html",
                    "--no-store")
    assert merged.exit_code == full.exit_code, merged.output
    one, together = results(tmp_path / "full"), results(tmp_path / "merged")
    assert verdicts(together) == verdicts(one), merged.output
    assert together["counts"] == one["counts"]
    assert together["merged"]["missing"] == [] and together["merged"]["missing_shards"] == []
    assert (tmp_path / "merged" / "junit.xml").is_file() and (tmp_path / "merged" / "report.html").is_file()
    assert full.exit_code == ExitCode.OK, full.output  # the examples pass on the sandbox's current release
