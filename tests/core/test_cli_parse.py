"""`docverify parse` as a user runs it."""

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import ExitCode

EXAMPLES = Path(__file__).resolve().parent / "fixtures" / "docs"  # three small docs, kept stable for these tests


@pytest.fixture
def runner():
    return CliRunner(env={"COLUMNS": "200"})


def _json(runner, *args):
    result = runner.invoke(cli, ["parse", *args, "--json"])
    return result, json.loads(result.stdout)


def test_table_lists_example_procedures(runner):
    result = runner.invoke(cli, ["parse", str(EXAMPLES)])
    assert result.exit_code == 0, result.output
    for procedure_id in ("oss-create-bucket", "ram-create-user", "ram-delete-user"):
        assert procedure_id in result.stdout
    assert "4 procedures in 3 files (0 errors, 0 warnings)" in result.stderr


def test_json_has_steps_with_doc_lines(runner):
    result, payload = _json(runner, str(EXAMPLES / "create-security-group.md"))
    assert result.exit_code == 0
    (procedure,) = payload["procedures"]
    assert procedure["product"] == "ECS" and procedure["region"] == "cn-hangzhou"
    steps = procedure["steps"]
    assert [step["line"] for step in steps] == [12, 13, 14, 15, 16, 17, 18]
    assert steps[1]["menu_paths"] == [["Network & Security", "Security Groups"]]
    assert steps[4]["fields"][0]["name"] == "Security Group Name"
    assert steps[4]["fields"][0]["value"] == "docverify-sg"
    assert procedure["annotation"]["requires"] == [{"type": "vpc", "count": 1}]


def test_yaml_output_is_equivalent_to_json(runner):
    _, as_json = _json(runner, str(EXAMPLES))
    result = runner.invoke(cli, ["parse", str(EXAMPLES), "--yaml"])
    assert result.exit_code == 0
    assert yaml.safe_load(result.stdout) == as_json


def test_steps_view_shows_lines_and_intents(runner):
    result = runner.invoke(cli, ["parse", str(EXAMPLES / "create-security-group.md"), "--steps"])
    assert result.exit_code == 0
    assert "2. L13 navigate Network & Security > Security Groups" in result.stdout


def test_missing_path_is_reported_and_others_still_parse(runner, tmp_path):
    missing = tmp_path / "nope.md"
    result = runner.invoke(cli, ["parse", str(missing), str(EXAMPLES / "ram-user.md")])
    assert result.exit_code == ExitCode.USAGE
    assert str(missing) in result.stderr
    assert "ram-create-user" in result.stdout


def test_no_procedures_is_exit_5(runner, tmp_path):
    (tmp_path / "prose.md").write_text("# Just prose\n\nNothing to do here.\n")
    result = runner.invoke(cli, ["parse", str(tmp_path)])
    assert result.exit_code == ExitCode.NO_PROCEDURES
    assert "no procedures found" in result.stderr


def test_bad_annotation_names_file_and_line_and_others_go_on(runner, tmp_path):
    (tmp_path / "a_bad.md").write_text("# Bad\n\n<!-- docverify:\nid: [unclosed\n-->\n1. Click **OK**.\n")
    (tmp_path / "b_good.md").write_text("# Good\n\n1. Click **Create**.\n2. Click **OK**.\n")
    result, payload = _json(runner, str(tmp_path))
    assert result.exit_code == ExitCode.USAGE
    errors = [d for d in payload["diagnostics"] if d["severity"] == "error"]
    assert errors and errors[0]["path"].endswith("a_bad.md") and 3 <= errors[0]["line"] <= 5
    assert any(p["title"] == "Good" for p in payload["procedures"])


def test_invalid_utf8_is_a_warning_and_still_parsed(runner, tmp_path):
    (tmp_path / "latin.md").write_bytes("# Caf\xe9\n\n1. Click **Cr\xe9er**.\n2. Click **OK**.\n".encode("latin-1"))
    result, payload = _json(runner, str(tmp_path))
    assert result.exit_code == 0
    (diagnostic,) = payload["diagnostics"]
    assert diagnostic["severity"] == "warning" and diagnostic["line"] == 1
    assert len(payload["procedures"][0]["steps"]) == 2


def test_oversized_file_is_skipped_with_an_error(runner, tmp_path):
    (tmp_path / "big.md").write_text("# Big\n\n1. Click **OK**.\n" + "x" * 2000)
    result, payload = _json(runner, str(tmp_path), "--max-file-bytes", "1000")
    assert result.exit_code == ExitCode.USAGE
    assert "big.md" in payload["diagnostics"][0]["path"]
    assert payload["procedures"] == []


def test_json_and_yaml_together_is_a_usage_error(runner):
    result = runner.invoke(cli, ["parse", str(EXAMPLES), "--json", "--yaml"])
    assert result.exit_code == ExitCode.USAGE


def test_jobs_option_and_env_reach_the_parser(runner, monkeypatch, tmp_path):
    import docverify.parse.parser as parser_module

    seen = []
    real = parser_module.parse_files

    def spy(files, **kwargs):
        seen.append(kwargs["jobs"])
        return real(files, **kwargs)

    monkeypatch.setattr(parser_module, "parse_files", spy)
    assert runner.invoke(cli, ["parse", str(EXAMPLES), "--jobs", "3"]).exit_code == 0
    assert runner.invoke(cli, ["parse", str(EXAMPLES)], env={"DOCVERIFY_PARSE__JOBS": "1"}).exit_code == 0
    assert runner.invoke(cli, ["parse", str(EXAMPLES)]).exit_code == 0
    assert seen == [3, 1, 0]
    bad = runner.invoke(cli, ["parse", str(EXAMPLES), "--jobs", "-1"])
    assert bad.exit_code == ExitCode.USAGE and "--jobs" in bad.output
