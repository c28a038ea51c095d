"""``docverify rollout``: a teacher policy over benchmark tasks, kept as trajectories.

The teacher runs as ``docverify bench run`` runs a policy (the task set's tasks, one
check per release, provisioning, the audit log deciding), wrapped in a
:class:`~docverify_training.record.RecordingPolicy`. Each attempt that reached its
goal and passes the quality filters (:mod:`docverify_training.filters`) becomes one
JSONL line (:mod:`docverify_training.trajectory`), written as it ends; the rest are
counted by reason. The teacher's bench results go next to the trajectories
(``FILE.results.json``), the statistics to ``FILE.stats.json``.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docverify_training.filters import REASONS, Filters, drop_reason
from docverify_training.record import Recording, RecordingPolicy
from docverify_training.trajectory import Trajectory


def sidecar(out: Path, kind: str) -> Path:
    """The file beside the trajectories: ``FILE.stats.json``, ``FILE.results.json``."""
    return out.with_name(f"{out.name}.{kind}.json")


@dataclass(frozen=True)
class Student:
    """The policy whose prompts the trajectories are in: its name, its agent loop's
    options (observation and history budgets) and its engine's bound on free text."""

    name: str
    options: Any
    max_text: int
    hand_overs: bool = False  #: a policy that follows the doc and hands its model steps (hybrid)

    @classmethod
    def configured(cls, name: str, config: Any, plugins: Any) -> "Student":
        """``name``'s options as ``config`` sets them (``[policy.NAME]``); a policy
        without a model's agent loop is refused, naming those that have one."""
        from docverify.engines import Engine, get_engine
        from docverify.errors import PluginError, UsageError
        from docverify.execute.follow import Delegating
        from docverify_models.agent import ModelOptions

        policies = plugins.registry("policies")
        model_policies = sorted(n for n in policies.names() if issubclass(policies.get(n).Options, ModelOptions))
        if name not in model_policies:
            raise UsageError(f"--student {name}: not a model policy (trajectories are in a model's prompt format)",
                             hint=f"use one of {', '.join(model_policies)}")
        cls_ = policies.get(name)
        options = config.plugin_options("policy", name, cls_)
        engine = getattr(options, "engine", None) or name
        try:
            max_text = get_engine(engine).max_text
        except PluginError:  # an engine that is not installed: the default bound
            max_text = Engine.max_text
        return cls(name, options, max_text, hand_overs=issubclass(cls_, Delegating))


@dataclass
class RolloutStats:
    attempts: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)  #: reason -> attempts
    turns_kept: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"attempts": self.attempts, "kept": self.kept,
                "dropped": {reason: self.dropped.get(reason, 0) for reason in REASONS},
                "turns_kept": self.turns_kept, "turns_per_kept": round(self.turns_kept / self.kept, 2) if self.kept else 0,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "cost_usd": round(self.cost_usd, 6),
                "duration_s": round(self.duration_s, 1)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RolloutStats":
        return cls(data.get("attempts", 0), data.get("kept", 0), Counter(data.get("dropped") or {}),
                   data.get("turns_kept", 0), data.get("tokens_in", 0), data.get("tokens_out", 0),
                   data.get("cost_usd", 0.0), data.get("duration_s", 0.0))


def trajectory_of(recording: Recording, attempt: dict[str, Any], task: Any, teacher: dict[str, Any],
                  student: str) -> Trajectory:
    """The trajectory of one attempt: its recorded turns and what the benchmark kept of it."""
    return Trajectory(
        task={"id": task.id, "split": task.split, "family": task.family, "category": task.category,
              "product": task.product, "release": task.release, "path": task.file},
        teacher=teacher, student=student, run=attempt["run"], turns=list(recording.turns), verdict=attempt["verdict"],
        success=bool(attempt["success"]), reward=1.0 if attempt["success"] else 0.0, channel="audit",
        cost_usd=attempt.get("cost_usd") or 0.0, duration_s=attempt.get("duration_s") or 0.0)


class TrajectoryWriter:
    """Keeps or drops each finished attempt, appends kept ones to the JSONL file and
    keeps the statistics (rewritten after every attempt, so an interrupted rollout
    loses nothing)."""

    def __init__(self, out: Path, tasks: Sequence[Any], teacher: dict[str, Any], student: Student, filters: Filters,
                 stats: RolloutStats | None = None, progress: Callable[[str], None] = lambda line: None) -> None:
        self.out = out
        self.by_id = {task.id: task for task in tasks}
        self.teacher = teacher
        self.student = student
        self.filters = filters
        self.stats = stats or RolloutStats()
        self.progress = progress
        self.lock = threading.Lock()
        self.policy: RecordingPolicy | None = None

    @property
    def stats_path(self) -> Path:
        return sidecar(self.out, "stats")

    def wrap(self, teacher: Any) -> RecordingPolicy:
        """The teacher, recorded in the student's prompt format (for ``run_benchmark``)."""
        self.policy = RecordingPolicy(teacher, self.student.options, self.student.max_text,
                                      hand_overs=self.student.hand_overs)
        return self.policy

    def attempt(self, attempt: dict[str, Any], result: Any) -> None:
        assert self.policy is not None
        recording = self.policy.take(result.id)
        task = self.by_id[result.id]
        with self.lock:
            stats = self.stats
            stats.attempts += 1
            stats.tokens_in += attempt.get("tokens_in") or 0
            stats.tokens_out += attempt.get("tokens_out") or 0
            stats.cost_usd += attempt.get("cost_usd") or 0.0
            stats.duration_s += attempt.get("duration_s") or 0.0
            if recording is None:  # never started (budget spent, the console did not start)
                reason = "not successful"
            else:
                reason = drop_reason(recording.turns, success=bool(attempt["success"]) and not attempt["env_error"],
                                     steps=len(task.procedure.all_steps()), invalid_outputs=recording.invalid_outputs,
                                     unreadable=recording.unreadable, unseen=recording.unseen,
                                     filters=self.filters, hand_overs=self.student.hand_overs)
            if reason is None:
                trajectory = trajectory_of(recording, attempt, task, self.teacher, self.student.name)
                with self.out.open("a", encoding="utf-8") as lines:
                    lines.write(trajectory.to_json() + "\n")
                stats.kept += 1
                stats.turns_kept += len(trajectory.turns)
            else:
                stats.dropped[reason] += 1
            self.stats_path.write_text(json.dumps(stats.to_dict(), indent=2) + "\n", encoding="utf-8")
        self.progress(f"[run {attempt['run']}] {'kept   ' if reason is None else 'dropped'} {result.id}"
                      + (f"  ({reason})" if reason else f"  {len(recording.turns) if recording else 0} turns"))
