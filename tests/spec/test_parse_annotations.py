"""``docverify:`` annotations in comments and front matter, with their errors."""

from __future__ import annotations

import textwrap

from docverify.parse.model import Severity
from docverify.parse.parser import parse_text


def parse(markdown: str):
    return parse_text(textwrap.dedent(markdown).lstrip("\n"), "docs/buckets.md")


def test_procedure_annotation_before_a_heading_overrides_document_defaults() -> None:
    document = parse(
        """
        <!-- docverify:
          product: oss
          region: cn-hangzhou
          x-owner: storage-team
        -->
        # Buckets

        <!-- docverify:
          id: create-bucket
          region: cn-shanghai
          requires:
            - type: ecs_instance
              count: 1
              attributes: {zone: cn-shanghai-b}
          expect:
            - {event: PutBucket, service: Oss}
        -->
        ## Create a bucket

        1. Click **Create Bucket**.

        ## Delete a bucket

        1. Click **Delete**.
        """
    )
    assert not document.diagnostics
    create, delete = document.procedures
    assert create.id == "create-bucket"
    assert (create.product, create.region) == ("oss", "cn-shanghai")
    assert create.annotation.requires == [{"type": "ecs_instance", "count": 1, "attributes": {"zone": "cn-shanghai-b"}}]
    assert create.annotation.expect == [{"event": "PutBucket", "service": "Oss"}]
    assert create.annotation.extra == {"x-owner": "storage-team"}
    assert create.annotation.line == 8
    assert delete.id == "buckets#delete-a-bucket"
    assert (delete.product, delete.region) == ("oss", "cn-hangzhou")
    assert delete.annotation.id is None and delete.annotation.requires == []


def test_annotation_right_before_a_list_starts_a_new_procedure() -> None:
    document = parse(
        """
        ## Steps

        1. Click **A**.

        <!-- docverify: {id: second, skip: "needs a real account"} -->
        1. Click **B**.
        """
    )
    assert [p.id for p in document.procedures] == ["buckets#steps", "second"]
    assert document.procedures[1].annotation.skip == "needs a real account"


def test_shorthand_skip_and_front_matter_annotation() -> None:
    document = parse(
        """
        ---
        title: Buckets
        docverify:
          product: oss
          expect:
            - event: PutBucket
        ---
        # Buckets

        <!-- docverify: skip -->
        ## Create

        1. Click **Create**.
        """
    )
    assert not document.diagnostics
    procedure = document.procedures[0]
    assert procedure.annotation.skip is True
    assert procedure.product == "oss"
    assert procedure.annotation.expect == [{"event": "PutBucket"}]


def test_unknown_key_is_an_error_on_its_line_listing_valid_keys() -> None:
    document = parse(
        """
        # Buckets

        <!-- docverify:
          id: a
          prodcut: oss
        -->
        1. Click **Create**.
        """
    )
    (error,) = document.errors
    assert error.line == 5
    assert "prodcut" in error.message and "id, product, region, requires, expect, skip" in error.message


def test_invalid_yaml_is_an_error_on_the_line_inside_the_file() -> None:
    document = parse(
        """
        # Buckets

        Some text.

        <!-- docverify:
          id: a
          requires: [unclosed
          region: x
        -->
        1. Click **Create**.
        """
    )
    (error,) = document.errors
    assert error.severity is Severity.ERROR
    assert error.line in (7, 8)
    assert "not valid YAML" in error.message


def test_wrong_types_and_duplicate_ids_are_errors() -> None:
    document = parse(
        """
        # Buckets

        <!-- docverify: {id: same, requires: 3, skip: 3} -->
        ## One

        1. Click **A**.

        <!-- docverify: {id: same} -->
        ## Two

        1. Click **B**.
        """
    )
    messages = [(d.line, d.message) for d in document.errors]
    assert any(line == 3 and "'requires' must be a list" in m for line, m in messages)
    assert any(line == 3 and "'skip' must be" in m for line, m in messages)
    assert any(line == 8 and "already used on line 3" in m for line, m in messages)
    assert document.procedures[0].id == "same"
    assert document.procedures[1].id == "buckets#two"


def test_front_matter_annotation_errors_point_at_front_matter_lines() -> None:
    document = parse(
        """
        ---
        docverify:
          product: oss
          colour: blue
        ---
        1. Click **A**.
        """
    )
    (error,) = document.errors
    assert error.line == 4 and "colour" in error.message


def test_unclosed_comments_and_stray_annotations_are_reported() -> None:
    unclosed = parse(
        """
        # Buckets

        <!-- docverify: id: a
        1. Click **A**.
        """
    )
    assert [(d.severity, d.line) for d in unclosed.diagnostics] == [(Severity.ERROR, 3)]

    stray = parse(
        """
        # Buckets

        1. Click **A**.

        <!-- docverify: {region: x} -->
        Trailing words.
        """
    )
    assert [d.severity for d in stray.diagnostics] == [Severity.WARNING]
    assert stray.procedures[0].region is None

    comment = parse("# T\n\n1. Click **A**.\n\n<!-- an ordinary comment that never ends\n\n2. B\n")
    assert [d.line for d in comment.diagnostics] == [5]
