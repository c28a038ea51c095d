"""``docverify resourcecoder`` through the CLI (the plugin registered as a plugin)."""

from __future__ import annotations

import json
from importlib import metadata

import pytest
from click.testing import CliRunner
from coder_helpers import KEY_PAIR

import docverify_terraform.resourcecoder
from docverify.cli import cli
from docverify.cli.app import App
from docverify.plugins import load_plugins
from docverify_terraform.resourcecoder.candidates import Candidate, CandidateStore


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    installed = any(e.name == "resourcecoder" for e in metadata.entry_points(group="docverify"))
    plugins = load_plugins(extra=[] if installed else [docverify_terraform.resourcecoder])

    def invoke(*args: str):
        return CliRunner(env={"COLUMNS": "200"}).invoke(cli, list(args), obj=App(plugins=plugins))

    return invoke


def test_write_finds_a_kept_candidate_and_list_shows_it(run, tmp_path):
    CandidateStore(tmp_path / "c").keep(Candidate(meta_type="key_pair", provider="sandbox",
                                                  resource_type="sandbox_ecs_key_pair", template=KEY_PAIR, model="m"))
    done = run("resourcecoder", "write", "key_pair", "--candidates-dir", "c", "--base-url", "http://127.0.0.1:9/v1")
    assert done.exit_code == 0, done.output
    assert "kept already: c/sandbox/key_pair.tf.j2 (--force writes it again)" in done.output
    listed = run("resourcecoder", "list", "--candidates-dir", "c", "--json")
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.output)["candidates"]
    assert row["meta_type"] == "key_pair" and row["resource_type"] == "sandbox_ecs_key_pair" and row["model"] == "m"


def test_an_unknown_type_is_a_usage_error_naming_the_valid_ones(run):
    done = run("resourcecoder", "write", "server")
    assert done.exit_code == 2
    assert "unknown META type 'server'" in done.output and "ecs_instance" in done.output


def test_help_has_examples(run):
    done = run("resourcecoder", "write", "-h")
    assert done.exit_code == 0 and "--max-rounds" in done.output and "Exit codes" in done.output
