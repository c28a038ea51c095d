"""Recording a teacher: each turn, the prompt the student would see and the answer it should give.

:class:`RecordingPolicy` wraps any policy (the teacher). Its episodes ask the
teacher for each action, and alongside keep a *shadow* of the student's agent loop
(:class:`docverify_models.agent.Agent`, with the student policy's options, never
calling a model): the shadow renders the prompt for the page the teacher saw, the
teacher's action becomes the answer in the loop's JSON format
(:func:`answer_text`, with a short true Thought where the teacher gave none), and
the shadow remembers it as its own, so the next prompt's history is the one the
student would have had.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from docverify.errors import UsageError
from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.compact import shown_refs
from docverify.execute.follow import Delegate, Delegating, Follower, Stuck
from docverify.execute.policy import Episode, Policy
from docverify.parse.model import Step
from docverify.scrub import scrub
from docverify.task import Task
from docverify_models.agent import Agent, ModelOptions
from docverify_reports.problems import one_line
from docverify_training.trajectory import TrajectoryTurn

#: Where a thought is cut (the student's schema bounds free text; the llamacpp engine's at 100).
DEFAULT_MAX_TEXT = 100


def thought_for(action: Action, task: Task, limit: int = DEFAULT_MAX_TEXT) -> str:
    """The teacher's thought, or one that says what is true of the action: the doc
    step it serves and what it does on the page (a policy without a model gives none)."""
    if action.thought:
        return one_line(action.thought, limit)
    steps = {step.number: step for step in task.procedure.all_steps()}
    step = steps.get(action.step or "")
    doc = f"Step {step.number}: {task.resolve(step.text)}" if step is not None else ""
    match action.kind:
        case ActionKind.DONE if action.status == "success":
            text = "Every step of the procedure is done."
        case ActionKind.DONE:
            text = f"Blocked: {action.message or 'the step cannot be done here'}."
        case ActionKind.FLAG_STEP if action.finding is not None:
            text = (f"Step {action.step}: the doc says {action.finding.expected!r}, the console shows "
                    f"{action.finding.observed!r}.")
        case _:
            what = action.describe()
            text = f"{doc} -> {what}" if doc else what
            if len(text) > limit and doc:  # keep the action whole, cut the doc's words
                room = max(limit - len(what) - 4, 12)
                text = f"{one_line(doc, room)} -> {what}"
    return one_line(text, limit)


def answer_text(action: Action, task: Task, limit: int = DEFAULT_MAX_TEXT) -> str:
    """``action`` as the agent loop's answer: one JSON object, the action first (as the
    constrained schema orders it), the thought, then the fields that action takes.
    :func:`docverify_models.schema.to_action` reads it back to the same action."""
    out: dict[str, Any] = {"action": action.kind.value, "thought": thought_for(action, task, limit)}
    if action.kind is ActionKind.DONE:
        out["status"] = action.status
        if action.message:
            out["message"] = one_line(action.message, min(200, limit * 2))
    elif action.kind is ActionKind.FLAG_STEP:
        finding = action.finding
        assert finding is not None
        out.update(step=action.step, finding=finding.kind.value, expected=one_line(finding.expected or "?", 200),
                   observed=one_line(finding.observed or "?", 200))
    else:
        if action.ref:
            out["ref"] = action.ref
        if action.value is not None:
            out["value"] = action.value
        if action.step:
            out["step"] = action.step
    return scrub(json.dumps(out, ensure_ascii=False))


def reads_back(completion: str, action: Action, observation: Observation, task: Task) -> bool:
    """Whether the student's loop reads ``completion`` as ``action`` on this page (same
    kind, element, value and step): an answer it would refuse or misread is no example."""
    from docverify_models.schema import InvalidAnswer, to_action

    try:
        read = to_action(completion, observation, task)
    except InvalidAnswer:
        return False
    if action.kind is ActionKind.FLAG_STEP:
        return read.kind is action.kind and read.step == action.step
    if action.kind is ActionKind.DONE:
        return read.kind is action.kind and read.status == action.status
    return (read.kind, read.ref, read.value, read.step) == (action.kind, action.ref, action.value, action.step)


@dataclass
class Recording:
    """One attempt's turns, in order."""

    task: Task
    turns: list[TrajectoryTurn] = field(default_factory=list)
    invalid_outputs: int = 0  #: answers the teacher's model gave that failed the schema
    unreadable: int = 0  #: answers the student's loop would not read back as the teacher's action
    unseen: int = 0  #: actions on an element the student's prompt did not show

    def observed(self, observation: Observation) -> None:
        """How the last turn's action went, seen on the page it led to."""
        if self.turns and self.turns[-1].outcome == "end":
            self.turns[-1].outcome = "failed" if observation.error else "ok"
            self.turns[-1].error = observation.error

    def add(self, shadow: Agent, observation: Observation, action: Action, *, by: str, max_text: int,
            subgoal: str | None = None, tokens: tuple[int, int] = (0, 0)) -> TrajectoryTurn:
        """The turn in which the teacher answered ``action`` on ``observation``: the prompt
        ``shadow`` (the student's loop) renders for it, the action as the student's answer;
        the shadow then remembers the action as its own."""
        page = shadow.page(observation, subgoal)
        completion = answer_text(action, self.task, max_text)
        if not reads_back(completion, action, observation, self.task):
            self.unreadable += 1
        if action.ref and action.ref not in shown_refs(page):
            self.unseen += 1
        turn = TrajectoryTurn(len(self.turns), shadow.messages(observation, subgoal, page), completion,
                              action.to_dict(), action.step, by, observation.url, outcome="end",
                              tokens_in=tokens[0], tokens_out=tokens[1])
        self.turns.append(turn)
        shadow.remember(action)
        return turn


class RecordingEpisode(Episode):
    def __init__(self, inner: Episode, task: Task, student: ModelOptions, teacher: str, max_text: int,
                 recording: Recording) -> None:
        super().__init__()
        self.inner = inner
        self.usage = inner.usage  # the teacher's usage is the episode's
        self.task = task
        self.teacher = teacher
        self.max_text = max_text
        self.recording = recording
        self.shadow = Agent(task, backend=None, options=student, meter=None, usage=None)  # type: ignore[arg-type]

    async def next_action(self, observation: Observation) -> Action:
        self.recording.observed(observation)
        self.shadow.outcome(observation)
        before = (self.usage.tokens_in, self.usage.tokens_out)
        action = await self.inner.next_action(observation)
        self.recording.invalid_outputs = self.usage.invalid_outputs
        self.recording.add(self.shadow, observation, action, by=action.by or self.teacher, max_text=self.max_text,
                           tokens=(self.usage.tokens_in - before[0], self.usage.tokens_out - before[1]))
        return action

    def provisioned(self, report: str) -> None:
        self.shadow.state.reports.append(report)
        self.inner.provisioned(report)

    def resume(self) -> bool:
        return self.inner.resume()


class HandOverRecorder(Delegate):
    """A teacher's delegate, recorded as a ``hybrid`` policy's model would have seen its work.

    The hybrid's model is asked only for the steps its literal follower cannot follow
    (:meth:`stuck`, and :meth:`unverifiable` free text), with the step as a sub-goal
    that says what the follower could not do. So only the teacher's actions there are
    turns, each in the prompt the hybrid renders for that hand-over, and a hand-over
    ends with the answer the hybrid expects, ``done`` (success), on the page the last
    action led to. Everything else the episode did (the follower's actions, the
    teacher's own preparations) is history in those prompts, as the hybrid notes it;
    a flag the teacher raised is the hybrid policy's to report, not the model's."""

    def __init__(self, inner: Delegate, task: Task, student: ModelOptions, teacher: str, max_text: int,
                 recording: Recording) -> None:
        self.inner = inner
        self.task = task
        self.teacher = teacher
        self.max_text = max_text
        self.recording = recording
        self.shadow = Agent(task, backend=None, options=student, meter=None, usage=None)  # type: ignore[arg-type]
        self.observation: Observation | None = None
        self.handed: Action | None = None  #: the hand-over's action just given, not the follower's to note
        self.handing_over = False  #: inside a hand-over (the hybrid's model takes one step at a time)

    def started(self, follower: Follower) -> None:
        self.inner.started(follower)

    def observe(self, observation: Observation) -> None:
        self.observation = observation
        self.recording.observed(observation)
        self.shadow.outcome(observation)
        self.inner.observe(observation)

    def decided(self, action: Action) -> None:
        self.inner.decided(action)
        handed, self.handed = self.handed, None
        if action is handed or action.kind is ActionKind.DONE:  # a hand-over's: remembered, or the policy's flag
            return
        self.shadow.note(action.describe(), action.step)

    def provisioned(self, report: str) -> None:
        self.shadow.state.reports.append(report)
        self.inner.provisioned(report)

    def halts_on(self, failed: Action) -> bool:
        return self.inner.halts_on(failed)

    async def before_step(self, follower: Follower, step: Step) -> AsyncIterator[Action]:
        async for action in self.inner.before_step(follower, step):
            yield action

    async def not_ready(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        async for action in self.inner.not_ready(follower, stuck):
            yield action

    async def stuck(self, follower: Follower, stuck: Stuck) -> AsyncIterator[Action]:
        actions = self.inner.stuck(follower, stuck)
        if follower.missing_prerequisite(stuck):  # the hybrid hands nothing over then
            async for action in actions:
                yield action
            return
        async for action in self.hand_over(stuck.step, stuck.finding.message, actions):
            yield action

    async def unverifiable(self, follower: Follower, step: Step, reason: str) -> AsyncIterator[Action]:
        async for action in self.hand_over(step, reason, self.inner.unverifiable(follower, step, reason)):
            yield action

    async def hand_over(self, step: Step, problem: str, actions: AsyncIterator[Action]) -> AsyncIterator[Action]:
        from docverify_models.agent import subgoal_text

        if self.handing_over:  # the teacher's way past one step got stuck again: still the first hand-over's
            async for action in actions:
                yield action
            return
        goal = subgoal_text(self.task, step, problem)
        self.shadow.state.current_step = step.number
        taken = False
        self.handing_over = True
        try:
            async for action in actions:
                if action.kind not in (ActionKind.FLAG_STEP, ActionKind.DONE) and self.observation is not None:
                    self.recording.add(self.shadow, self.observation, action, by=action.by or self.teacher,
                                       max_text=self.max_text, subgoal=goal)
                    taken = True
                self.handed = action
                yield action
        finally:
            self.handing_over = False
        if taken and self.observation is not None:
            done = Action(ActionKind.DONE, status="success", step=step.number,
                          thought=f"Step {step.number} is done the way the console offers it now.",
                          message=f"step {step.number} done")
            self.recording.add(self.shadow, self.observation, done, by=self.teacher, max_text=self.max_text,
                               subgoal=goal).outcome = "ok"


class PolicyWrapper(Policy):
    """A policy around another (``inner``): its meter, preparation, screenshots and
    closing are the inner policy's; a subclass changes how episodes start."""

    name = "wrapped"

    def __init__(self, inner: Policy) -> None:
        super().__init__(inner.options)
        self.inner = inner

    @property
    def meter(self):  # type: ignore[override]
        return self.inner.meter

    @meter.setter
    def meter(self, value) -> None:
        self.inner.meter = value

    @property
    def sees_screenshots(self) -> bool:
        return self.inner.sees_screenshots

    def prepare(self) -> None:
        self.inner.prepare()

    def start(self, task: Task) -> Episode:
        return self.inner.start(task)

    def close(self) -> None:
        self.inner.close()


class RecordingPolicy(PolicyWrapper):
    """The teacher, recorded: every episode's turns land in :attr:`recordings` by task id."""

    name = "recording"

    def __init__(self, teacher: Policy, student: ModelOptions, max_text: int = DEFAULT_MAX_TEXT, *,
                 hand_overs: bool = False) -> None:
        super().__init__(teacher)
        if hand_overs and not isinstance(teacher, Delegating):
            raise UsageError(f"a hybrid student learns the steps its follower hands over: the teacher "
                             f"{teacher.name} hands no step over",
                             hint="use a teacher that follows the doc and hands steps over: oracle, or hybrid")
        self.teacher = teacher
        self.student = student
        self.max_text = max_text
        self.hand_overs = hand_overs  #: record the teacher's hand-overs only, as a hybrid's model sees them
        self.recordings: dict[str, Recording] = {}
        self.lock = threading.Lock()

    def start(self, task: Task) -> Episode:
        recording = Recording(task)
        with self.lock:
            self.recordings[task.id] = recording
        if not self.hand_overs:
            return RecordingEpisode(self.teacher.start(task), task, self.student, self.teacher.name, self.max_text,
                                    recording)
        teacher: Any = self.teacher
        recorder = HandOverRecorder(teacher.delegate_for(task), task, self.student, self.teacher.name,
                                    self.max_text, recording)
        return teacher.follower.start(task, recorder)

    def take(self, task_id: str) -> Recording | None:
        """The recording of ``task_id``'s attempt, removed from the policy."""
        with self.lock:
            return self.recordings.pop(task_id, None)
