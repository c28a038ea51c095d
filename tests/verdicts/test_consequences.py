"""Deliverable 5: a finding that only follows from an earlier failed action.

When a step's click leaves the page as it was (the close match was the wrong
control), the next step's finding is reported as its consequence, grouped under
it, and not as an independent defect.
"""

from __future__ import annotations

from docverify.check.verdict import Finding, FindingKind, Verdict
from docverify.execute.actions import Observation
from docverify.report.trajectory import ProcedureResult
from docverify.run.consequences import Consequences
from docverify_reports.problems import problems

PAGE = Observation("http://console.test/x", "Console", '- button "Create ECS Instance" [ref=e1]')
NEXT = Observation("http://console.test/wizard", "Wizard", '- button "Next" [ref=e2]')


def finding(line: int, kind: FindingKind = FindingKind.ELEMENT_NOT_FOUND) -> Finding:
    return Finding(kind, "doc.md", line, str(line), "x", "y")


def test_a_finding_after_a_click_that_changed_nothing_is_a_consequence():
    chain = Consequences()
    root = chain.finding(finding(10, FindingKind.LABEL_CHANGED))
    chain.page_action(PAGE, PAGE, ok=True)  # the click on the close match did nothing
    follower = chain.finding(finding(12))
    assert root.consequence_of is None and follower.consequence_of == "doc.md:10"
    again = chain.finding(finding(14))
    assert again.consequence_of == "doc.md:10"  # still the same root


def test_a_page_that_moved_on_starts_a_new_chain():
    chain = Consequences()
    chain.finding(finding(10, FindingKind.LABEL_CHANGED))
    chain.page_action(PAGE, NEXT, ok=True)
    assert chain.finding(finding(12)).consequence_of is None
    # two findings with no page action between them (two missing fields) are independent
    assert chain.finding(finding(13)).consequence_of is None


def test_reports_list_a_consequence_right_after_its_root():
    root, follower, other = finding(10), finding(12), finding(11)
    follower.consequence_of = "doc.md:10"
    result = ProcedureResult(id="p", title="P", path="doc.md", line=1, verdict=Verdict.DRIFT, reason="",
                             findings=[follower, other, root])
    listed = problems(result)
    assert [(p.line, p.follows) for p in listed] == [(10, None), (12, "doc.md:10"), (11, None)]
    assert "follows from the finding at line 10" in listed[1].message
