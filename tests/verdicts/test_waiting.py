"""A step that waits for a state ("Wait until the status of the EIP changes to **In Use**"):
the literal follower waits for it to show (a console refreshes rows on their way to another
status) instead of going on while the resource is still changing; a state that never comes
is no drift of its own and stops nothing."""

from __future__ import annotations

from verdict_helpers import act, episode, page, procedure

from docverify.check.verdict import FindingKind
from docverify.execute.actions import ActionKind, Observation
from docverify_literal.policy import awaited_state

DOC = """
    # Bind an EIP

    1. Click **Bind**.
    2. Wait until the status of the EIP changes to **In Use**.
    3. Click **Unbind**.
"""

BINDING = page('''
    - main [ref=m1]:
      - row "eip-1 Binding" [ref=r1]:
        - cell "Binding" [ref=c1]
        - button "Bind" [ref=b1]
        - button "Unbind" [disabled] [ref=b2]
''')

IN_USE = page('''
    - main [ref=m1]:
      - row "eip-1 In Use" [ref=r1]:
        - cell "In Use" [ref=c1]
        - button "Bind" [ref=b1]
        - button "Unbind" [ref=b2]
''')


def test_the_awaited_state_is_the_label_the_wait_names():
    steps = procedure("""
        # Waits

        1. Wait until the status of the EIP changes to **In Use**.
        2. Click **Elastic IP Addresses** to refresh the list. Wait until the status changes to **In Use**. Then click **OK**.
        3. Wait for the instance to enter the **Running** state.
        4. Check that the status is **Running**.
    """).steps
    assert [awaited_state(step) for step in steps] == ["In Use", "In Use", "Running", None]


def test_the_follower_waits_for_the_state_before_the_next_step():
    ep = episode(DOC)
    assert act(ep, BINDING).ref == "b1"
    wait = act(ep, BINDING)
    assert (wait.kind, wait.value, wait.step) == (ActionKind.WAIT_FOR, "In Use", "2")
    assert act(ep, IN_USE).ref == "b2"  # it came: on to step 3, on the refreshed row


def test_a_state_already_shown_is_not_waited_for():
    ep = episode(DOC)
    act(ep, IN_USE)
    assert act(ep, IN_USE).ref == "b2"


def test_a_state_that_never_comes_stops_nothing_and_is_no_drift():
    ep = episode(DOC)
    act(ep, BINDING)
    act(ep, BINDING)
    timed_out = Observation(BINDING.url, BINDING.title, BINDING.snapshot,
                            error="'In Use' did not appear within 15 s")
    flag = act(ep, timed_out)
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.kind is FindingKind.NOT_VERIFIABLE
    following = act(ep, BINDING)  # step 3 is tried: the disabled Unbind tells what it means
    assert (following.kind, following.step, following.finding.expected) == (ActionKind.FLAG_STEP, "3", "Unbind")
