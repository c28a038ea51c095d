"""Property-based fuzzing: `parse_text` never raises and keeps lines in the file."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests_spec_helpers import all_lines

from docverify.parse.parser import parse_text

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)

_WORDS = st.sampled_from(
    [
        "Click", "**Create**", "**OK**", "\\>", ">", "选择", "**人员管理**", "单击", "“确定”", "「取消」",
        "Log on to the [ECS console](https://ecs.console.aliyun.com)", "enter docs_db in the **Name** field",
        "<your-name>", "{bucket}", "i-bp1****", "**Note:**", "**Important**", "[!NOTE]", "|", "\\|", "`code`",
        "*it*", "one of the following", "Method 1:", "You can also", "(Optional)", "\\(", "\t", "\x00", "\r",
        "<!--", "-->", "docverify:", "id: x", "---", "```", "#", "1.", "-", "+", ":", "\u2028", "\ufeff",
    ]
)
_LINE_PREFIX = st.sampled_from(["", "", "1. ", "1.  ", "2) ", "- ", "+ ", "    ", "   ", "> ", "# ", "## ", "#### [ Console ]", "|", "    |", "**To "])
_LINE = st.builds(lambda prefix, words: prefix + " ".join(words), _LINE_PREFIX, st.lists(_WORDS, max_size=8))
_TABLE = st.builds(
    lambda indent, header, rows: "\n".join(
        [indent + "|" + "|".join(header) + "|", indent + "|" + "|".join("---" for _ in header) + "|"]
        + [indent + row for row in rows]
    ),
    st.sampled_from(["", "    "]),
    st.lists(st.sampled_from(["Parameter", "Value", "Description", "Required", "参数", "说明", "Step"]), min_size=1, max_size=4),
    st.lists(_LINE, max_size=6),
)
_FRONT = st.sampled_from(["", "---\ntitle: x\n---\n", "---\n[bad\n---\n", "---\nno end\n", "---\ndocverify: {id: 1}\n---\n"])
_COMMENT = st.sampled_from(
    ["", "<!-- docverify: skip -->", "<!-- docverify:\n  id: a\n  bogus: 1\n-->", "<!-- docverify: [x", "<!-- plain -->"]
)
MARKDOWNISH = st.builds(
    lambda front, blocks: front + "\n".join(blocks),
    _FRONT,
    st.lists(st.one_of(_LINE, _TABLE, _COMMENT, st.just("")), max_size=25),
)


def _check(text: str) -> None:
    document = parse_text(text, "fuzz.md")
    line_count = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    for line in all_lines(document):
        assert 1 <= line <= line_count, (line, line_count)
    for diagnostic in document.diagnostics:
        assert 0 <= diagnostic.line <= line_count


@FUZZ
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    _check(text)


@FUZZ
@given(MARKDOWNISH)
def test_markdownish_text_never_raises(text: str) -> None:
    _check(text)


def test_pathological_inputs() -> None:
    for text in [
        "x" * 200_000,
        "**" * 20_000,
        "1. " + "**a** > " * 5_000,
        "\n".join("    " * depth + "1. step" for depth in range(200)),
        ">" * 5_000 + " deep quote",
        "|a|b|\n|-|-|\n|" + "x\n" * 2_000,
        "<!--" + "\n" * 1_000,
        "\x00" * 1_000,
        "---\n" + "key: value\n" * 2_000,
    ]:
        _check(text)
