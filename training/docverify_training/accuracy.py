"""``docverify train accuracy``: next-action accuracy on held-out trajectories.

The environment (``docverify bench run``) is the measure that counts, and on a CPU it
takes an hour or more a stage. This one takes minutes, for a first look between training
runs: the model answers each recorded turn's prompt (the student's own, as the trajectory
holds it) as the policy would — with its engine's constrained decoding, the refs that
prompt shows and the doc's step numbers — and the answer is compared with the teacher's.
An answer **matches** when its action, element (ref) and value are the teacher's (a done:
its status; a flagged step: the step and the finding), as web agents' step accuracy is
counted. It says whether the model reads the page and the doc as the teacher did, not
whether a task ends well: a model can match most turns and still miss a task's goal.

The accuracy is the mean over trajectories of each one's share of matching turns, with a
bootstrap interval over trajectories (the turns of one trajectory are not independent of
each other), as pass@1 is a mean over tasks; the share over all turns is given beside it.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from docverify.engines import Engine, parse_json_object
from docverify_training.trajectory import Trajectory

_PAGE = re.compile(r"<page>\n(.*?)\n</page>", re.S)
_STEP_LINE = re.compile(r"^[> ] (\S+)\. ", re.M)


@dataclass(frozen=True)
class TurnScore:
    """One turn: what the teacher did, what the model answered, and whether they match."""

    task: str
    turn: int
    expected: str  #: the teacher's action kind
    answered: str  #: the model's action kind ("" for an answer that is not a JSON object)
    matched: bool
    step_matched: bool  #: the same doc step number as the teacher's
    answer: str  #: the model's answer (its first 500 characters)
    teacher: str = ""  #: the teacher's answer


@dataclass(frozen=True)
class Accuracy:
    """The turns scored, and the figures over them."""

    turns: list[TurnScore]
    trajectories: int

    def summary(self) -> dict[str, Any]:
        """The accuracy (mean over trajectories, bootstrap interval), the share of all turns
        that match, by the teacher's action kind, and the shares of answers that were usable
        JSON and of step numbers that are the teacher's."""
        from docverify_bench.stats import bootstrap

        turns = self.turns
        by_trajectory: dict[str, list[TurnScore]] = {}
        for turn in turns:
            by_trajectory.setdefault(turn.task, []).append(turn)
        accuracy = bootstrap([_share(group, "matched") for group in by_trajectory.values()])
        kinds: dict[str, dict[str, int]] = {}
        for turn in turns:
            entry = kinds.setdefault(turn.expected, {"turns": 0, "matched": 0})
            entry["turns"] += 1
            entry["matched"] += turn.matched
        return {"turns": len(turns), "trajectories": self.trajectories,
                "accuracy": accuracy.to_dict(), "turn_share": round(_share(turns, "matched"), 6),
                "usable_answers": round(sum(1 for t in turns if t.answered) / len(turns), 6) if turns else 0.0,
                "step_numbers": round(_share(turns, "step_matched"), 6),
                "by_action": dict(sorted(kinds.items(), key=lambda item: -item[1]["turns"]))}

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary(), "details": [asdict(turn) for turn in self.turns]}


def _share(turns: Sequence[TurnScore], field: str) -> float:
    return sum(getattr(turn, field) for turn in turns) / len(turns) if turns else 0.0


def same_action(answer: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Whether an answer is the teacher's action: the same kind, and the same element and
    value (a done: the same status; a flagged step: the same step and finding)."""
    kind = _text(answer.get("action"))
    if kind != _text(expected.get("action")):
        return False
    if kind == "done":
        return _text(answer.get("status")) == _text(expected.get("status"))
    if kind == "flag_step":
        return all(_text(answer.get(key)) == _text(expected.get(key)) for key in ("step", "finding"))
    return all(_text(answer.get(key)) == _text(expected.get(key)) for key in ("ref", "value"))


def _text(value: Any) -> str:
    return " ".join(str(value).split()).casefold() if value not in (None, "") else ""


def turn_schema(engine: Engine, prompt: list[dict[str, str]]) -> dict[str, Any]:
    """The answer schema the agent loop gives ``engine`` for this prompt: for a constrained
    decoder, the refs of the prompt's page that each action fits and the step numbers
    its procedure lists."""
    from docverify_models.schema import answer_schema

    user = prompt[-1]["content"]
    page = _PAGE.search(user)
    procedure = user.split("# Procedure", 1)[-1].split("\n# ", 1)[0]
    return answer_schema(engine, page=page.group(1) if page else "", steps=_STEP_LINE.findall(procedure))


async def score(engine: Engine, trajectories: Sequence[Trajectory], *, max_tokens: int = 320,
                progress: Callable[[int, int], None] | None = None) -> Accuracy:
    """Every turn of ``trajectories`` answered by ``engine`` (greedy, under the agent loop's
    token cap) and compared with the teacher's."""
    from docverify_models.schema import answer_cap

    total = sum(len(t.turns) for t in trajectories)
    scores: list[TurnScore] = []
    for number, trajectory in enumerate(trajectories):
        key = f"{number}:{trajectory.task['id']}#{trajectory.run}"
        for turn in trajectory.turns:
            expected = json.loads(turn.completion)
            schema = turn_schema(engine, turn.prompt)
            completion = await engine.complete(turn.prompt, schema, name="agent_action",
                                               max_tokens=answer_cap(engine, schema, max_tokens), temperature=0.0)
            try:
                answer = parse_json_object(completion.text)
            except ValueError:
                answer = {}
            scores.append(TurnScore(key, turn.index, _text(expected.get("action")), _text(answer.get("action")),
                                    bool(answer) and same_action(answer, expected),
                                    bool(answer) and _text(answer.get("step")) == _text(expected.get("step")),
                                    completion.text[:500], turn.completion))
            if progress is not None:
                progress(len(scores), total)
    return Accuracy(scores, len(trajectories))


def held_out(trajectories: Sequence[Trajectory], exclude: Sequence[Trajectory]) -> list[Trajectory]:
    """``trajectories`` less those in ``exclude`` (the training data): the same task, run and teacher."""
    seen = {_identity(t) for t in exclude}
    return [t for t in trajectories if _identity(t) not in seen]


def _identity(trajectory: Trajectory) -> tuple[str, int, str]:
    return trajectory.task["id"], trajectory.run, json.dumps(trajectory.teacher, sort_keys=True)


def sample(trajectories: Sequence[Trajectory], turns: int, seed: int = 0) -> list[Trajectory]:
    """Whole trajectories drawn at random (seeded) until about ``turns`` turns: the same
    draw for every model compared on it."""
    pool = list(trajectories)
    random.Random(seed).shuffle(pool)
    chosen, count = [], 0
    for trajectory in pool:
        if count >= turns:
            break
        chosen.append(trajectory)
        count += len(trajectory.turns)
    return chosen


class NotPaired(ValueError):
    """Two accuracy results that did not score the same turns."""


class NotAResult(NotPaired):
    """A file that is not a ``train accuracy --out`` result."""


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """B against A (two ``train accuracy --out`` results) on the same turns: the mean over
    trajectories of B's share of matching turns less A's, its bootstrap interval and
    p-value (trajectories resampled, as the accuracy's interval is), and McNemar's exact
    test on the turns one model matched and the other did not. :class:`NotPaired` when
    the two scored different turns (other data, --exclude, --turns or --seed)."""
    from docverify_bench.stats import bootstrap, bootstrap_p_value, mcnemar, mean

    turns_a, turns_b = (turn_matches(result) for result in (a, b))
    if turns_a.keys() != turns_b.keys():
        only_a, only_b = len(turns_a.keys() - turns_b.keys()), len(turns_b.keys() - turns_a.keys())
        raise NotPaired(f"the two results scored different turns ({only_a} only in the first, {only_b} only in "
                        "the second)")
    if not turns_a:
        raise NotPaired("the results scored no turn")
    trajectories: dict[str, list[tuple[bool, bool]]] = {}
    for key in sorted(turns_a):
        trajectories.setdefault(key[0], []).append((turns_a[key], turns_b[key]))
    deltas = [sum(y - x for x, y in pairs) / len(pairs) for pairs in trajectories.values()]
    shares = [mean([mean([pair[side] for pair in pairs]) for pairs in trajectories.values()]) for side in (0, 1)]
    every = [pair for pairs in trajectories.values() for pair in pairs]
    only_a, only_b = sum(x and not y for x, y in every), sum(y and not x for x, y in every)
    return {"a": a.get("model"), "b": b.get("model"), "trajectories": len(trajectories), "turns": len(turns_a),
            "accuracy_a": round(shares[0], 6), "accuracy_b": round(shares[1], 6),
            "difference": bootstrap(deltas).to_dict(), "p_value": _significant(bootstrap_p_value(deltas)),
            "trajectories_better": sum(d > 0 for d in deltas), "trajectories_worse": sum(d < 0 for d in deltas),
            "turns_only_a": only_a, "turns_only_b": only_b, "mcnemar_p": _significant(mcnemar(only_a, only_b))}


def turn_matches(result: dict[str, Any]) -> dict[tuple[str, int], bool]:
    """Whether each turn (trajectory key, turn index) of a ``train accuracy --out`` result matched."""
    try:
        return {(str(turn["task"]), int(turn["turn"])): bool(turn["matched"]) for turn in result["details"]}
    except (KeyError, TypeError, ValueError):
        raise NotAResult("not a `train accuracy --out` result: it has no per-turn 'details'") from None


def describe_comparison(comparison: dict[str, Any], names: tuple[str, str]) -> list[str]:
    """The comparison of results ``names`` (A, B) as lines for a terminal."""
    difference = comparison["difference"]
    return [f"A {100 * comparison['accuracy_a']:.1f}% ({names[0]}, {comparison['a']})",
            f"B {100 * comparison['accuracy_b']:.1f}% ({names[1]}, {comparison['b']})",
            f"B - A {100 * difference['value']:+.1f} pp [{100 * difference['low']:+.1f}, "
            f"{100 * difference['high']:+.1f}], p {_p(comparison['p_value'])} (over {comparison['trajectories']} "
            f"trajectories: {comparison['trajectories_better']} better, {comparison['trajectories_worse']} worse)",
            f"turns: {comparison['turns_only_b']} matched by B only, {comparison['turns_only_a']} by A only "
            f"(of {comparison['turns']}), McNemar p {_p(comparison['mcnemar_p'])}"]


def _significant(value: float) -> float:
    """``value`` to 3 significant digits (a p-value of 1e-9 stays one, not 0)."""
    return float(f"{value:.3g}")


def _p(value: float) -> str:
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def describe(summary: dict[str, Any]) -> list[str]:
    """The summary as lines for a terminal."""
    accuracy = summary["accuracy"]
    lines = [f"next-action accuracy {100 * accuracy['value']:.1f}% [{100 * accuracy['low']:.1f}, "
             f"{100 * accuracy['high']:.1f}] (mean over {summary['trajectories']} trajectories; "
             f"{100 * summary['turn_share']:.1f}% of their {summary['turns']} turns)",
             f"usable answers {100 * summary['usable_answers']:.1f}%, step numbers as the teacher's "
             f"{100 * summary['step_numbers']:.1f}%"]
    for kind, entry in summary["by_action"].items():
        lines.append(f"  {kind or '?':<10} {100 * entry['matched'] / entry['turns']:5.1f}%  ({entry['turns']} turns)")
    return lines
