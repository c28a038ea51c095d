"""Trajectories: what a policy saw and did on one task, as training data (JSONL).

One line per attempt, format :data:`FORMAT`. The agent loop renders a fresh prompt
each turn (task, doc steps, recent actions, the page), so a trajectory is a list of
turns, each with the **prompt** the student model sees (system and user messages,
exactly as the ``student`` policy's agent loop renders them) and the **completion**
it should answer (one JSON action in that loop's answer format: action, thought,
then its fields). Training and inference therefore see the same text.

    {"format": "docverify-trajectory/1",
     "task": {"id", "split", "family", "category", "product", "release", "path"},
     "teacher": {"policy", "label"}, "student": "llamacpp", "run": 1,
     "turns": [{"index", "step", "prompt": [{"role", "content"}...], "completion",
                "action": {...}, "by", "url", "outcome": "ok"|"failed"|"end", "error",
                "tokens_in", "tokens_out"}...],
     "verdict": "PASS", "success": true, "reward": 1.0, "channel": "audit",
     "cost_usd": 0.0, "duration_s": 12.3}

``reward`` is 1.0 when the goal was reached and 0.0 otherwise; ``channel`` says who
decided it: the audit log (``audit``) or the two judges (``judges``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "docverify-trajectory/1"
OUTCOMES = ("ok", "failed", "end")


class TrajectoryError(ValueError):
    """A line that is not a trajectory of this format; the message says what is wrong."""


@dataclass
class TrajectoryTurn:
    index: int
    prompt: list[dict[str, str]]  #: the student's messages this turn: system, user
    completion: str  #: the answer to learn: one JSON action in the agent loop's format
    action: dict[str, Any]  #: the action as the run recorded it
    step: str | None = None  #: the doc step it served
    by: str = "policy"  #: who decided it: the teacher's name, or "model" for a hybrid's hand-over
    url: str = ""  #: the page it acted on
    outcome: str = "ok"  #: ok; failed (the page reported an error after it); end (the last turn)
    error: str | None = None
    tokens_in: int = 0  #: the teacher's model tokens for this turn (0 for a policy without a model)
    tokens_out: int = 0


@dataclass
class Trajectory:
    task: dict[str, Any]
    teacher: dict[str, Any]
    student: str
    run: int = 1
    turns: list[TrajectoryTurn] = field(default_factory=list)
    verdict: str = ""
    success: bool = False
    reward: float = 0.0
    channel: str = "audit"
    cost_usd: float = 0.0
    duration_s: float = 0.0

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, **asdict(self)}, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Any) -> "Trajectory":
        if not isinstance(data, dict):
            raise TrajectoryError("not a JSON object")
        if data.get("format") != FORMAT:
            raise TrajectoryError(f"format is {data.get('format')!r}, not {FORMAT!r}")
        task = data.get("task")
        if not isinstance(task, dict) or not isinstance(task.get("id"), str):
            raise TrajectoryError("'task' must be an object with an 'id'")
        turns = data.get("turns")
        if not isinstance(turns, list):
            raise TrajectoryError("'turns' must be a list")
        parsed = []
        for number, turn in enumerate(turns):
            if not isinstance(turn, dict):
                raise TrajectoryError(f"turn {number}: not an object")
            prompt, completion = turn.get("prompt"), turn.get("completion")
            if not isinstance(prompt, list) or not prompt or not all(
                    isinstance(m, dict) and m.get("role") in ("system", "user") and isinstance(m.get("content"), str)
                    for m in prompt):
                raise TrajectoryError(f"turn {number}: 'prompt' must be a list of system/user messages")
            if not isinstance(completion, str) or not completion:
                raise TrajectoryError(f"turn {number}: 'completion' must be the answer text")
            if turn.get("outcome", "ok") not in OUTCOMES:
                raise TrajectoryError(f"turn {number}: 'outcome' must be one of {', '.join(OUTCOMES)}")
            known = {name: turn[name] for name in TrajectoryTurn.__dataclass_fields__ if name in turn}
            try:
                parsed.append(TrajectoryTurn(**{"action": {}, **known}))
            except TypeError as error:
                raise TrajectoryError(f"turn {number}: {error}") from None
        fields = {name: data[name] for name in cls.__dataclass_fields__ if name in data and name != "turns"}
        if not isinstance(fields.get("student"), str):
            raise TrajectoryError("'student' must name the policy whose prompts these are")
        fields.setdefault("teacher", {})
        return cls(turns=parsed, **fields)


@dataclass
class ReadProblems:
    """Lines a reader skipped: how many, and the first one's place and reason."""

    skipped: int = 0
    first: str | None = None

    def add(self, where: str, why: str) -> None:
        self.skipped += 1
        if self.first is None:
            self.first = f"{where}: {why}"


def read_trajectories(paths: Iterable[Path], problems: ReadProblems | None = None) -> Iterator[Trajectory]:
    """Every trajectory in ``paths`` (JSONL). A malformed line is skipped and counted
    in ``problems`` (the first one named ``FILE:LINE: why``); a missing file is an
    OSError for the caller to report."""
    problems = problems if problems is not None else ReadProblems()
    for path in paths:
        with Path(path).open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    yield Trajectory.from_dict(json.loads(line))
                except json.JSONDecodeError as error:
                    problems.add(f"{path}:{number}", f"not JSON ({error.msg}, column {error.colno})")
                except TrajectoryError as error:
                    problems.add(f"{path}:{number}", str(error))


def sft_examples(trajectory: Trajectory) -> list[dict[str, Any]]:
    """TRL's conversational prompt-completion examples, one per turn: the loss falls
    on the completion (the assistant's answer) only, never on the prompt's page text."""
    return [{"prompt": [dict(message) for message in turn.prompt],
             "completion": [{"role": "assistant", "content": turn.completion}],
             "task": trajectory.task["id"], "turn": turn.index}
            for turn in trajectory.turns]


def sft_messages(trajectory: Trajectory) -> list[dict[str, Any]]:
    """The same turns in TRL's conversational ``messages`` format (for
    ``assistant_only_loss``)."""
    return [{"messages": [*(dict(message) for message in turn.prompt),
                          {"role": "assistant", "content": turn.completion}]}
            for turn in trajectory.turns]
