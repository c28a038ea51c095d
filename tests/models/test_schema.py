"""The answer schema a grammar-constrained decoder gets: each action that acts on an
element can name only the shown elements it fits (docverify_models.schema)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from docverify.execute.actions import ActionKind
from docverify.execute.locate import parse_snapshot
from docverify_models.schema import answer_bound, answer_cap, answer_schema, targets

ECS = (Path(__file__).parents[1] / "core" / "fixtures" / "pages" / "ecs-instances.txt").read_text(encoding="utf-8")
CONSTRAINED = SimpleNamespace(constrained=True, max_text=100)


def roles(page: str, refs: list[str]) -> set[str]:
    by_ref = {e.ref: e.role for e in parse_snapshot(page)}
    return {by_ref[ref] for ref in refs}


def test_on_a_console_page_a_click_names_a_control_and_a_fill_a_text_box():
    found = targets(ECS)
    assert roles(ECS, found[ActionKind.CLICK]) == {"link", "button", "combobox"}
    assert "f4e89" in found[ActionKind.CLICK]  # the instance row's "Manage"
    # headers, cells, rows, the table and the nameless containers are no answer to "click"
    assert not {"f4e69", "f4e79", "f4e78", "f4e66", "f4e63"} & set(found[ActionKind.CLICK])
    assert found[ActionKind.FILL] == ["f4e18", "f4e64"]  # the region's combobox and the search box
    assert found[ActionKind.SELECT] == ["f4e18"]
    assert found[ActionKind.CHECK] == found[ActionKind.UNCHECK] == []


def test_what_the_page_marks_clickable_can_be_clicked_and_what_it_disables_cannot():
    page = "\n".join(['- dialog "Create VPC" [ref=e1]:',
                      '  - generic "Advanced" [ref=e2] [cursor=pointer]',
                      '  - textbox "Name" [ref=e3]',
                      '  - switch "IPv6" [ref=e4]',
                      '  - button "OK" [disabled] [ref=e5]',
                      '  - heading "Basic" [ref=e6]'])
    found = targets(page)
    assert found[ActionKind.CLICK] == ["e2", "e4"]
    assert found[ActionKind.FILL] == ["e3"] and found[ActionKind.CHECK] == ["e4"]


def test_an_action_with_nothing_to_act_on_is_no_branch_of_the_grammar():
    page = '- main [ref=e1]:\n  - heading "Buckets" [ref=e2]\n  - link "Create Bucket" [ref=e3] [cursor=pointer]'
    schema = answer_schema(CONSTRAINED, page=page, steps=["1", "2"])
    branches = {b["properties"]["action"]["const"]: b["properties"] for b in schema["anyOf"]}
    assert branches["click"]["ref"]["enum"] == ["e3"] and branches["click"]["step"]["enum"] == ["1", "2"]
    assert not {"fill", "select", "check", "uncheck"} & set(branches)
    assert {"scroll", "goto", "back", "done", "flag_step", "press", "wait_for"} <= set(branches)
    # an engine that is not constrained gets the plain schema: any ref, checked after the answer
    plain = answer_schema(SimpleNamespace(constrained=False, max_text=100), page=page, steps=["1"])
    assert "enum" not in plain["properties"]["ref"] and '"e3"' not in json.dumps(plain)


def test_a_constrained_answer_may_always_be_as_long_as_its_schema_allows():
    """The base model's flag_step filled thought, expected and observed with "2.2.2.2…" to
    their 100-character bounds: over the 320-token cap, cut off, JSON that never closes, and
    the greedy retry cut at the same place (INCONCLUSIVE: "the answer is not JSON"). The
    cap of a constrained decoder covers the longest branch's texts, a few tokens a character."""
    page = '- main [ref=e1]:\n  - textbox "Name" [ref=e2]\n  - button "OK" [ref=e3]'
    schema = answer_schema(CONSTRAINED, page=page, steps=["1", "2"])
    flag = next(b for b in schema["anyOf"] if b["properties"]["action"]["const"] == "flag_step")
    texts = sum(prop.get("maxLength", 0) for prop in flag["properties"].values())
    assert texts == 300  # thought, expected, observed
    assert answer_bound(schema) >= 2 * texts and answer_bound(schema) > answer_bound({"anyOf": [
        b for b in schema["anyOf"] if b["properties"]["action"]["const"] != "flag_step"]})
    assert answer_cap(CONSTRAINED, schema, 320) == answer_bound(schema)
    assert answer_cap(CONSTRAINED, schema, 4000) == 4000  # a higher setting stands
    plain = answer_schema(SimpleNamespace(constrained=False, max_text=100), page=page, steps=["1"])
    assert answer_cap(SimpleNamespace(constrained=False), plain, 320) == 320  # an endpoint's answer is checked after
