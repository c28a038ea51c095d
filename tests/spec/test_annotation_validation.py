"""The ``docverify:`` annotation is validated by its pydantic model (issue 15): a key
that is unknown or of the wrong type, at any level, is an error naming the file, the
line and the closest valid key; valid annotations read as they always did."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from docverify.check.criteria import expected_events
from docverify.cli import cli
from docverify.errors import ExitCode
from docverify.parse.annotation_model import AnnotationModel
from docverify.parse.model import Severity
from docverify.parse.parser import parse_text

TYPO = """
# Buckets

<!-- docverify:
id: oss-create-bucket
expect:
  - {evnt: PutBucket, service: Oss}
-->
## Create a bucket

1. Click **Create Bucket**.
"""


def parse(markdown: str, path: str = "docs/a.md"):
    return parse_text(textwrap.dedent(markdown).lstrip("\n"), path)


def test_a_misspelt_key_in_an_expect_item_is_an_error_naming_the_valid_key() -> None:
    document = parse(TYPO)
    (error,) = document.errors
    assert str(error).startswith("docs/a.md:5: error: ")  # the `expect:` line of the annotation
    assert "unknown key 'evnt'" in error.message and "item 1" in error.message
    assert "(did you mean 'event'?)" in error.message
    (procedure,) = document.procedures
    assert procedure.id == "oss-create-bucket"  # the rest of the annotation still counts
    assert procedure.annotation.expect == []  # never a half-read criterion


def test_a_misspelt_top_level_key_suggests_the_closest_one() -> None:
    document = parse("""
        <!-- docverify:
        id: a
        reigon: cn-hangzhou
        -->
        ## Create a bucket

        1. Click **Create Bucket**.
    """)
    (error,) = document.errors
    assert (error.path, error.line, error.severity) == ("docs/a.md", 3, Severity.ERROR)
    assert "unknown docverify annotation key 'reigon'" in error.message
    assert "(did you mean 'region'?)" in error.message
    assert document.procedures[0].region is None


@pytest.mark.parametrize(("yaml_lines", "line", "needle"), [
    (["expect: 3"], 2, "'expect' must be a list"),
    (["expect:", "  - {event: PutBucket, params: BucketName}"], 2, "'params' must be a mapping"),
    (["requires:", "  - {type: vpc, count: two}"], 2, "'count' must be a whole number >= 0"),
    (["requires:", "  - {type: vpc, nmae: web}"], 2, "(did you mean 'name'?)"),
    (["skip: 3"], 2, "'skip' must be true/false or a reason string"),
    (["region: [a, b]"], 2, "'region' must be a non-empty string"),
])
def test_wrong_types_and_nested_typos_are_errors_on_the_key_line(yaml_lines, line, needle) -> None:
    text = "<!-- docverify:\n" + "\n".join(yaml_lines) + "\n-->\n## Do it\n\n1. Click **OK**.\n"
    (error,) = parse_text(text, "docs/a.md").errors
    assert error.line == line and needle in error.message, error


def test_valid_annotations_read_as_before() -> None:
    document = parse("""
        # Buckets

        <!-- docverify:
        id: oss-create-bucket
        product: OSS
        region: 2024
        requires: [vpc, {type: ecs_instance, count: 1, attributes: {status: Running}, name: web-<suffix>}]
        expect:
          - Oss:PutBucket
          - {eventName: PutBucketTags, serviceName: Oss, params: {BucketName: docs-<suffix>}}
        skip: false
        x-owner: storage
        -->
        ## Create a bucket

        1. Click **Create Bucket**.
    """)
    assert not document.diagnostics
    annotation = document.procedures[0].annotation
    assert (annotation.id, annotation.product, annotation.region, annotation.skip) == ("oss-create-bucket", "OSS", "2024", False)
    assert annotation.requires == [
        {"type": "vpc"},
        {"type": "ecs_instance", "count": 1, "attributes": {"status": "Running"}, "name": "web-<suffix>"},
    ]
    assert annotation.expect == [
        {"event": "PutBucket", "service": "Oss"},
        {"eventName": "PutBucketTags", "serviceName": "Oss", "params": {"BucketName": "docs-<suffix>"}},
    ]
    assert annotation.extra == {"x-owner": "storage"}
    events = expected_events(document.procedures[0])
    assert [(e.describe(), e.params) for e in events] == [("Oss:PutBucket", {}),
                                                          ("Oss:PutBucketTags", {"BucketName": "docs-<suffix>"})]


def test_a_single_expect_string_is_still_shorthand() -> None:
    document = parse("""
        <!-- docverify: {expect: "Oss:PutBucket"} -->
        ## Create a bucket

        1. Click **Create Bucket**.
    """)
    assert not document.diagnostics
    assert document.procedures[0].annotation.expect == [{"event": "PutBucket", "service": "Oss"}]


def test_the_front_matter_annotation_is_validated_by_the_same_model() -> None:
    document = parse("""
        ---
        title: Buckets
        docverify:
          product: oss
          expect:
            - {event: PutBucket, servce: Oss}
        ---
        1. Click **Create Bucket**.
    """)
    (error,) = document.errors
    assert error.line == 5 and "(did you mean 'service'?)" in error.message


def test_the_model_forbids_extra_keys_at_every_level() -> None:
    schema = AnnotationModel.model_json_schema()
    assert schema["additionalProperties"] is False
    assert all(definition["additionalProperties"] is False for definition in schema["$defs"].values())


def test_check_refuses_to_run_a_doc_with_a_typo(tmp_path) -> None:
    (tmp_path / "a.md").write_text(TYPO.lstrip("\n"), encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(tmp_path / "a.md"), "--dry-run", "--no-store"])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert f"{tmp_path / 'a.md'}:5: error: " in result.output and "did you mean 'event'" in result.output
    assert "nothing was run" in result.output


def test_the_parser_lists_the_keys_the_model_accepts() -> None:
    from docverify.parse import annotation_model, annotations

    assert annotations._VALID == annotation_model._VALID  # annotations.py names them without loading pydantic
