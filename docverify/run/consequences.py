"""Findings that only follow from an earlier one.

When a step's action does not change the page (a click on a close match that was
the wrong control, a menu that did not open), the next steps cannot be reached as
written, and each reports its own finding. Those are not independent defects of
the doc: a writer fixes the first, and the rest go away. :class:`Consequences`
watches a procedure's turns and marks such a finding with the finding it follows
from (:attr:`docverify.check.verdict.Finding.consequence_of`); reports group them under
it and accuracy figures count only the first.
"""

from __future__ import annotations

from dataclasses import replace

from docverify.check.verdict import Finding
from docverify.execute.actions import Observation


class Consequences:
    """One procedure's chain of findings (a policy-independent view of its turns)."""

    def __init__(self) -> None:
        self.root: Finding | None = None  #: the latest independent drift finding
        self.stalled = False  #: a page action since ``root`` left the page as it was

    def finding(self, finding: Finding) -> Finding:
        """``finding`` as reported: marked as a consequence when the page has not
        moved since an earlier finding's step acted on it."""
        if not finding.kind.is_drift:
            return finding
        if self.root is not None and self.stalled:
            return replace(finding, consequence_of=self.root.consequence_of or self.root.where)
        self.root, self.stalled = finding, False
        return finding

    def page_action(self, before: Observation, after: Observation, ok: bool) -> None:
        """A page action was applied: a page that changed ends the chain."""
        if self.root is None:
            return
        if ok and (before.url != after.url or before.snapshot != after.snapshot):
            self.root, self.stalled = None, False
        else:
            self.stalled = True
