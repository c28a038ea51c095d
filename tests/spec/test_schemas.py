"""The JSON Schemas shipped under schemas/ are the ones the models generate."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.schemas import REFRESH_COMMAND, SCHEMA_FILES, SHIPPED, render


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_shipped_schema_is_up_to_date(name) -> None:
    shipped = SHIPPED / SCHEMA_FILES[name]
    assert shipped.is_file(), f"{shipped} is missing: run `{REFRESH_COMMAND}`"
    assert shipped.read_text(encoding="utf-8") == render(name), (
        f"{shipped} is stale (its model changed): run `{REFRESH_COMMAND}` and commit the result"
    )


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_schema_command_prints_it(name) -> None:
    result = CliRunner().invoke(cli, ["schema", name])
    assert result.exit_code == 0, result.output
    assert result.output == render(name)
    json.loads(result.output)


def test_annotation_schema_accepts_the_shorthand_and_plugin_keys() -> None:
    schema = json.loads(render("annotation"))
    assert {"const": "skip"} in schema["anyOf"]
    body = schema["$defs"]["AnnotationModel"]
    assert set(body["properties"]) == {"id", "product", "region", "requires", "expect", "skip"}
    assert body["additionalProperties"] is False and "^x-" in body["patternProperties"]
    assert "evnt" not in schema["$defs"]["ExpectedAuditEvent"]["properties"]


def test_config_schema_is_the_settings_model() -> None:
    schema = json.loads(render("config"))
    assert schema["title"] == "docverify.toml" and schema["additionalProperties"] is False
    assert {"jobs", "parse", "console", "policy", "checker", "reporter"} <= set(schema["properties"])
    assert schema["$defs"]["ParseSettings"]["additionalProperties"] is False
