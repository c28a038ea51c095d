"""Recording a teacher: the student's prompt for each page, the teacher's action as the
student's answer (read back by the student's own parser), and the quality filters."""

from __future__ import annotations

import asyncio
import json
import textwrap
from types import SimpleNamespace

import pytest

from docverify.check.verdict import Finding, FindingKind
from docverify.execute.actions import Action, ActionKind, Observation
from docverify.parse.parser import parse_text
from docverify.task import make_task
from docverify_literal.policy import LiteralPolicy
from docverify_models.policies import LlamaCppOptions
from docverify_models.schema import to_action
from docverify_training.filters import Filters, drop_reason
from docverify_training.record import Recording, RecordingEpisode, answer_text, thought_for

DOC = """
    # Create a bucket

    1. On the **Buckets** page, click **Create Bucket**.
    2. In the **Create Bucket** panel, enter `logs-archive` in the **Bucket Name** field and click **OK**.
"""

LIST = """
- main [ref=e1]:
  - heading "Buckets" [level=1] [ref=e2]
  - button "Create Bucket" [ref=e3]
"""

PANEL = """
- main [ref=e1]:
  - dialog "Create Bucket" [ref=e5]:
    - textbox "Bucket Name" [ref=e6]
    - button "OK" [ref=e7]
"""


def task():
    document = parse_text(textwrap.dedent(DOC), "oss.md")
    return make_task(document.procedures[0], suffix="abc123", default_region="cn-hangzhou")


def page(snapshot: str, error: str | None = None) -> Observation:
    return Observation("http://console.test/oss", "OSS", snapshot.strip("\n"), error=error)


def test_the_teachers_actions_become_answers_the_student_reads_back_on_its_own_prompts():
    the_task = task()
    recording = Recording(the_task)
    student = LlamaCppOptions()
    episode = RecordingEpisode(LiteralPolicy().start(the_task), the_task, student, "literal", 100, recording)
    loop = asyncio.new_event_loop()
    try:
        first = loop.run_until_complete(episode.next_action(page(LIST)))
        second = loop.run_until_complete(episode.next_action(page(PANEL)))
    finally:
        loop.close()
    assert (first.kind, first.ref) == (ActionKind.CLICK, "e3")
    assert (second.kind, second.ref, second.value) == (ActionKind.FILL, "e6", "logs-archive")
    turns = recording.turns
    assert [t.outcome for t in turns] == ["ok", "end"] and recording.unreadable == 0
    assert [m["role"] for m in turns[0].prompt] == ["system", "user"]
    assert "Create Bucket" in turns[0].prompt[1]["content"] and 'button "Create Bucket" [ref=e3]' in \
        turns[0].prompt[1]["content"]
    assert "# Your recent actions\n- [step 1] click button 'Create Bucket'" in turns[1].prompt[1]["content"]
    answer = json.loads(turns[1].completion)
    assert list(answer)[:2] == ["action", "thought"] and len(answer["thought"]) <= 100
    read = to_action(turns[1].completion, page(PANEL), the_task)
    assert (read.kind, read.ref, read.value, read.step) == (second.kind, second.ref, second.value, second.step)


def test_an_action_on_an_element_the_students_prompt_did_not_show_is_counted():
    """A page over the student's observation budget is cut; the teacher sees the whole page.
    A click on an element the cut page left out teaches the student to name refs it cannot
    see: the recording counts it (the filters drop such an attempt)."""
    chrome = "\n".join(f'  - link "Product {i} console" [ref=n{i}]' for i in range(60))
    big = f"- banner [ref=b1]:\n{chrome}\n- main [ref=e1]:\n  - heading \"Buckets\" [level=1] [ref=e2]\n" \
          '  - button "Create Bucket" [ref=e3]\n  - button "Refresh" [ref=e4]'
    the_task = task()
    loop = asyncio.new_event_loop()
    try:
        for tokens, unseen in ((200, 0), (10_000, 0)):
            recording = Recording(the_task)
            episode = RecordingEpisode(LiteralPolicy().start(the_task), the_task,
                                       LlamaCppOptions(observation_tokens=tokens), "literal", 100, recording)
            assert loop.run_until_complete(episode.next_action(page(big))).ref == "e3"
            assert recording.unseen == unseen
            assert 'button "Create Bucket" [ref=e3]' in recording.turns[0].prompt[1]["content"]
        # the button in a table row too long for the budget: a row is shown whole or not at all
        blind = Recording(the_task)
        cells = "\n".join(f'    - cell "value {i}" [ref=c{i}]' for i in range(80))
        agent_page = f'- main [ref=e1]:\n  - heading "Buckets" [level=1] [ref=e2]\n  - row [ref=r1]:\n{cells}\n    - button "Create Bucket" [ref=e3]'
        episode = RecordingEpisode(LiteralPolicy().start(the_task), the_task, LlamaCppOptions(observation_tokens=200),
                                   "literal", 100, blind)
        assert loop.run_until_complete(episode.next_action(page(agent_page))).ref == "e3"
        assert blind.unseen == 1 and "[ref=e3]" not in blind.turns[0].prompt[1]["content"]
    finally:
        loop.close()


@pytest.mark.parametrize("action", [
    Action(ActionKind.GOTO, value="http://console.test/oss", step="1"),
    Action(ActionKind.DONE, status="success", message="every step followed"),
    Action(ActionKind.DONE, status="blocked", message="the list on Buckets is empty"),
    Action(ActionKind.FLAG_STEP, step="2", finding=Finding(FindingKind.LABEL_CHANGED, "oss.md", 4, "2",
                                                           "Bucket Name", "Name")),
])
def test_every_kind_of_action_reads_back(action):
    the_task = task()
    text = answer_text(action, the_task)
    renamed = page(PANEL.replace('textbox "Bucket Name"', 'textbox "Name"'))  # as the flag says
    read = to_action(text, renamed, the_task)
    assert read.kind is action.kind and read.step == action.step and read.status == action.status


def test_a_thought_is_true_and_bounded():
    the_task = task()
    click = Action(ActionKind.CLICK, ref="e3", target="button 'Create Bucket'", step="1")
    assert thought_for(click, the_task, 100).endswith("click button 'Create Bucket'")
    assert thought_for(click, the_task, 100).startswith("Step 1: On the")
    assert len(thought_for(click, the_task, 60)) <= 60
    assert thought_for(Action(ActionKind.CLICK, ref="e3", thought="Open the panel.  "), the_task) == "Open the panel."


def turns(*actions, failed: int | None = None, url: str = "u"):
    return [SimpleNamespace(action=a, outcome="failed" if i == failed else "ok", url=url)
            for i, a in enumerate(actions)]


CLICK = {"kind": "click", "ref": "e3"}
FILL = {"kind": "fill", "ref": "e6", "value": "x"}


@pytest.mark.parametrize("recorded, kwargs, reason", [
    (turns(CLICK, FILL), {}, None),
    (turns(CLICK, FILL), {"success": False}, "not successful"),
    ([], {"hand_overs": True}, "no hand-over"),
    ([], {}, None),
    (turns(CLICK, FILL), {"invalid_outputs": 1}, "invalid output"),
    (turns(CLICK, FILL), {"unreadable": 1}, "unreadable answer"),
    (turns(CLICK, FILL), {"unseen": 1}, "unseen element"),
    (turns(CLICK, FILL, failed=0), {}, "failed action"),
    (turns(CLICK, CLICK, CLICK, FILL), {}, "loop"),
    (turns(CLICK, FILL, CLICK, FILL, CLICK, FILL, CLICK), {"steps": 10}, "loop"),  # the same click 4 times on one page
    (turns(*[{"kind": "click", "ref": f"e{i}"} for i in range(9)]), {"steps": 2}, "redundant turns"),
    (turns(*[{"kind": "click", "ref": f"e{i}"} for i in range(8)]), {"steps": 2}, None),
])
def test_filters(recorded, kwargs, reason):
    arguments = {"success": True, "steps": 2, **kwargs}
    assert drop_reason(recorded, filters=Filters(), **arguments) == reason


def test_a_hand_over_whose_way_gets_stuck_again_is_recorded_once():
    """The teacher's way past a step can lead the follower into another stuck step, whose
    actions come back through the recorder: they are still the first hand-over's turns,
    each recorded once, and the hand-over ends with one done."""
    from docverify.execute.follow import Delegate, Stuck
    from docverify_training.record import HandOverRecorder

    the_task = task()
    step = the_task.procedure.all_steps()[1]
    finding = Finding(FindingKind.ELEMENT_NOT_FOUND, "oss.md", step.line, step.number, "Create", "not on the page")
    stuck = Stuck(step, None, finding, fatal=True)
    follower = SimpleNamespace(missing_prerequisite=lambda stuck: False)

    class Teacher(Delegate):
        """Flags, fills, then gets stuck again (through the recorder) and clicks."""

        again = False

        async def stuck(self, follower_, stuck_):
            if self.again:
                yield Action(ActionKind.CLICK, ref="e7", step=step.number, target="button 'OK'")
                return
            self.again = True
            yield Action(ActionKind.FLAG_STEP, finding=finding, step=step.number)
            yield Action(ActionKind.FILL, ref="e6", value="b", step=step.number, target="textbox 'Bucket Name'")
            async for action in recorder.stuck(follower, stuck):
                yield action

    recording = Recording(the_task)
    recorder = HandOverRecorder(Teacher(), the_task, LlamaCppOptions(), "oracle", 100, recording)

    async def run():
        recorder.observe(page(PANEL))
        return [action.kind async for action in recorder.stuck(follower, stuck)]

    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(run()) == [ActionKind.FLAG_STEP, ActionKind.FILL, ActionKind.CLICK]
    finally:
        loop.close()
    assert [json.loads(turn.completion)["action"] for turn in recording.turns] == ["fill", "click", "done"]
    assert all("# Your sub-goal" in turn.prompt[1]["content"] for turn in recording.turns)
