"""A page cut to a model's budget: whole when it fits; else what the step needs first,
the console's chrome last, a table row whole or not at all (docverify.execute.compact)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docverify.execute.compact import CHARS_PER_TOKEN, compact_snapshot, shown_refs, terms

PAGES = Path(__file__).parent / "fixtures" / "pages"  # aria snapshots of the sandbox console's pages
ECS = (PAGES / "ecs-instances.txt").read_text(encoding="utf-8")
NAT = (PAGES / "nat-gateways.txt").read_text(encoding="utf-8")
RELEASE = "Find the instance that you want to release and choose More > Release in the Actions column."


def subtree(snapshot: str, ref: str) -> list[str]:
    """The line with ``ref`` and every line under it."""
    lines = snapshot.splitlines()
    start = next(i for i, line in enumerate(lines) if f"[ref={ref}]" in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next((i for i in range(start + 1, len(lines)) if len(lines[i]) - len(lines[i].lstrip()) <= indent),
               len(lines))
    return lines[start:end]


ROW = subtree(ECS, "f4e78")  # the instance's row: cells, links, buttons


def test_a_page_that_fits_is_whole_less_its_link_targets():
    text = compact_snapshot(NAT, tokens=5000)
    assert "/url:" not in text and "more lines not shown" not in text
    assert text.splitlines() == [line for line in NAT.splitlines() if "/url:" not in line]


def test_a_page_over_budget_keeps_the_steps_table_row_not_the_consoles_chrome():
    text = compact_snapshot(ECS, tokens=600, focus=RELEASE)
    assert len(text) <= 600 * CHARS_PER_TOKEN + 40 and text.endswith("more lines not shown)")
    # the instance's row is there, all of it: its name, its status and its "More" button
    for needed in ('link "i-bp12a324386e25e8d768" [ref=f4e80]', 'cell "Running" [ref=f4e85]',
                   'button "More" [ref=f4e92]', 'columnheader "Actions" [ref=f4e76]', 'heading "Instances"'):
        assert needed in text
    # the header's product menu and language switch are what is left out
    assert "ECS console" not in text and "简体中文" not in text
    # cut top down, as before, the same budget held the header and never reached the row
    assert 'button "More"' not in "\n".join(ECS.splitlines())[:int(600 * CHARS_PER_TOKEN)]


def test_the_focus_brings_a_header_link_in_when_the_step_names_it():
    text = compact_snapshot(ECS, tokens=600, focus="Log on to the NAT Gateway console.")
    assert 'link "NAT Gateway console" [ref=f4e8]' in text
    assert 'link "KMS console"' in text  # every "... console" link shares a word; the step's own is among them


def test_the_lines_come_in_page_order_and_nameless_containers_are_left_out():
    text = compact_snapshot(ECS, tokens=600, focus=RELEASE)
    lines = ECS.splitlines()
    positions = [lines.index(line) for line in text.splitlines()[:-1]]
    assert positions == sorted(positions)
    assert "- listitem [ref=" not in text and "- generic [active]" not in text


def test_a_table_row_is_shown_whole_or_not_at_all():
    for tokens in range(200, 1200, 50):
        shown = set(shown_refs(compact_snapshot(ECS, tokens=tokens, focus="Refresh the list")))
        row_refs = set(shown_refs("\n".join(ROW))) - {"f4e79", "f4e84", "f4e88"}  # less its nameless cells
        assert not shown & row_refs or row_refs <= shown, tokens
        assert row_refs <= shown or tokens < 600, tokens


def test_an_open_dialog_comes_first():
    chrome = "\n".join(f'    - link "Product {i} console" [ref=n{i}]' for i in range(80))
    page = (f"- banner [ref=b1]:\n{chrome}\n- main [ref=m1]:\n  - heading \"Buckets\" [level=1] [ref=h1]\n"
            "- dialog \"Delete Bucket\" [ref=d1]:\n  - text: This cannot be undone.\n"
            "  - button \"OK\" [ref=d2]\n  - button \"Cancel\" [ref=d3]")
    text = compact_snapshot(page, tokens=200)
    assert {"d1", "d2", "d3", "h1"} <= set(shown_refs(text))
    assert len(shown_refs(text)) < 80


def test_chinese_steps_match_by_their_characters():
    others = "\n".join(f'  - link "实例{i}详情" [ref=n{i}]' for i in range(80))
    page = f"- main [ref=m1]:\n{others}\n  - button \"创建Bucket\" [ref=c1]"
    assert 'button "创建Bucket" [ref=c1]' not in compact_snapshot(page, tokens=200, focus="在左侧导航栏，单击概览。")
    assert 'button "创建Bucket" [ref=c1]' in compact_snapshot(page, tokens=200, focus="单击创建 Bucket。")


@pytest.mark.parametrize("text, expected", [
    ("Click **Create Bucket** on the Buckets page.", {"create", "bucket", "buckets"}),
    ("Choose More > Release, then click OK.", {"more", "release", "ok"}),
    ("单击创建", {"单击", "击创", "创建"}),
])
def test_the_words_that_can_name_an_element(text, expected):
    assert terms(text) == expected


def test_a_word_on_every_product_link_weighs_less_than_one_on_a_single_link():
    """The teacher is on step 3 while the prompt's pointer is still on step 1 (step 2
    needed no action): "console" of step 1 is on every product link, "Trails" of step 3
    on one: that link is shown, ahead of the rows that fill the rest."""
    nav = "\n".join(f'      - link "{name}" [ref=s{i}]' for i, name in enumerate(["Event Query", "Trails"]))
    rows = "\n".join(f'      - row [ref=r{i}]:\n        - cell "event {i} of ActionTrail" [ref=c{i}]\n'
                     f'        - cell "{"x" * 120}" [ref=d{i}]' for i in range(12))
    page = (ECS.split("  - generic [ref=f4e29]:")[0] + "  - generic [ref=g1]:\n"
            f"    - navigation \"ActionTrail navigation\" [ref=n1]:\n{nav}\n    - main [ref=m1]:\n"
            f"      - heading \"Query Event Details\" [level=1] [ref=h1]\n{rows}")
    focus = ["Log on to the ActionTrail console.", "In the top navigation bar, select a region.",
             "In the left-side navigation pane, click Trails."]
    text = compact_snapshot(page, tokens=400, focus=focus)
    assert 'link "Trails" [ref=s1]' in text and 'combobox "Region"' in text
    assert 'link "ActionTrail console"' in text and "[ref=r11]" not in text
