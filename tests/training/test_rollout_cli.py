"""`docverify rollout` end to end: the literal teacher on reference solutions of the
train split, against the sandbox, kept as trajectories a student reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify_training.trajectory import ReadProblems, read_trajectories, sft_examples

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "benchmark" / "solutions"


def rollout(*args: str):
    return CliRunner().invoke(cli, ["rollout", "--policy", "literal", "--tasks", str(SOLUTIONS), *args],
                              catch_exceptions=False)


@pytest.mark.browser
def test_the_literal_teacher_on_solutions_gives_trajectories(tmp_path):
    out = tmp_path / "sft" / "literal.jsonl"
    result = rollout("--family", "ecs-create-key-pair", "--jobs", "2", "--out", str(out),
                     "-O", "console.sandbox.latency_ms=0")
    assert result.exit_code == 0, result.output
    assert "kept 3 of 3 attempts" in result.output
    problems = ReadProblems()
    trajectories = list(read_trajectories([out], problems))
    assert problems.skipped == 0 and len(trajectories) == 3
    for trajectory in trajectories:
        assert trajectory.success and trajectory.reward == 1.0 and trajectory.task["split"] == "train"
        assert trajectory.student == "llamacpp" and trajectory.teacher == {"policy": "literal"}
        assert json.loads(trajectory.turns[-1].completion) == {
            "action": "done", "thought": "Every step of the procedure is done.", "status": "success",
            "message": "every step followed"}
        assert all(turn.outcome == "ok" for turn in trajectory.turns[:-1])
        assert "<page>" in trajectory.turns[0].prompt[1]["content"]
    assert sum(len(sft_examples(t)) for t in trajectories) == sum(len(t.turns) for t in trajectories)
    stats = json.loads((tmp_path / "sft" / "literal.jsonl.stats.json").read_text())
    assert stats["kept"] == 3 and stats["attempts"] == 3 and not any(stats["dropped"].values())
    results = json.loads((tmp_path / "sft" / "literal.jsonl.results.json").read_text())
    assert len(results["attempts"]) == 3

    again = rollout("--family", "ecs-create-key-pair", "--out", str(out))
    assert again.exit_code != 0 and "exists" in again.output
    resumed = rollout("--family", "ecs-create-key-pair", "--out", str(out), "--resume")
    assert resumed.exit_code == 0 and "kept 3 of 3" in resumed.output  # nothing left to run
    assert len(out.read_text().splitlines()) == 3


def test_a_student_without_an_agent_loop_is_refused(tmp_path):
    result = rollout("--family", "ecs-create-key-pair", "--out", str(tmp_path / "t.jsonl"), "--student", "literal")
    assert result.exit_code != 0
    assert "not a model policy" in result.output and "llamacpp" in result.output


def test_the_eval_split_is_rolled_out_only_with_a_warning(tmp_path):
    existing = tmp_path / "t.jsonl"
    existing.write_text("")
    result = rollout("--split", "eval", "--family", "alb-create-instance", "--out", str(existing))
    assert "warning: rolling out the eval split" in result.output
    assert result.exit_code != 0 and "exists" in result.output  # and nothing ran
    assert "no task matches" in rollout("--family", "no-such-family", "--out", str(existing)).output


@pytest.mark.browser
def test_a_hybrid_student_learns_the_steps_its_follower_hands_over(tmp_path):
    """--student hybrid: only the teacher's hand-overs are turns, in the prompt the hybrid
    gives its model (the step as a sub-goal, what the follower could not do), each ending
    with done. A follower that takes only exact labels hands the renamed button over."""
    out = tmp_path / "hybrid.jsonl"
    result = CliRunner().invoke(cli, [
        "rollout", "--policy", "oracle", "--tasks", str(ROOT / "benchmark" / "tasks"), "--family",
        "rds-modify-whitelist-2021", "--student", "hybrid", "--jobs", "2", "--out", str(out),
        "-O", "console.sandbox.latency_ms=0", "-O", "policy.oracle.close_threshold=1.0"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "kept 4 of 4 attempts (8 turns" in result.output
    for trajectory in read_trajectories([out]):
        assert trajectory.student == "hybrid"
        click, done = trajectory.turns
        user = click.prompt[1]["content"]
        assert "# Your sub-goal\nComplete doc step 5 on the current page" in user
        assert "could not: step 5: element not found: doc: Modify Whitelist" in user
        assert "- [step 4] click tab 'Data Security'" in user  # the follower's actions are the history
        assert json.loads(click.completion)["action"] == "click" and click.by == "oracle" and click.outcome == "ok"
        assert "- [step 5] click button 'Modify IP Whitelist'" in done.prompt[1]["content"]
        assert json.loads(done.completion) == {
            "action": "done", "thought": "Step 5 is done the way the console offers it now.", "status": "success",
            "message": "step 5 done"}

    # a follower that never hands a step over has nothing for a hybrid student
    refused = rollout("--family", "ecs-create-key-pair", "--student", "hybrid", "--out", str(tmp_path / "l.jsonl"))
    assert refused.exit_code != 0 and "the teacher literal hands no step over" in refused.output
