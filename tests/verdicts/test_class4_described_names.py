"""Class 4: accessible names that include a description.

A switch or radio labelled "Release Protection" whose accessible name is the label
followed by its help text is the doc's "Release Protection", found as such (no
finding), while a longer label that merely starts the same is not.
"""

from __future__ import annotations

from verdict_helpers import act, episode, page

from docverify.execute.actions import ActionKind
from docverify.execute.locate import MatchKind, locate, parse_snapshot

FORM = '''
- dialog "Create Instance" [ref=e1]:
  - switch "Release Protection Prevents the instance from being released by mistake." [ref=e2]
  - radio "Pay-As-You-Go You pay for what you use, by the second." [ref=e3]
  - textbox "Name Prefix" [ref=e4]
  - checkbox "启用删除保护 开启后，实例不能被误删除。" [ref=e5]
'''


def test_a_label_followed_by_its_help_text_is_found_as_normalized():
    elements = parse_snapshot(FORM)
    for label, ref in (("Release Protection", "e2"), ("Pay-As-You-Go", "e3"), ("启用删除保护", "e5")):
        found = locate(label, elements, ("switch", "radio", "checkbox"))
        assert (found.element.ref, found.kind) == (ref, MatchKind.NORMALIZED), label
    assert locate("Name", elements, ("textbox",)).element is None  # "Name Prefix" is another field


def test_turning_on_a_described_switch_is_no_finding():
    ep = episode("""
        # Create

        1. Turn on **Release Protection**.
    """)
    check = act(ep, page(FORM))
    assert (check.kind, check.ref) == (ActionKind.CHECK, "e2")
