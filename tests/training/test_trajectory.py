"""The trajectory format: written and read back, bad lines skipped and counted, TRL examples."""

from __future__ import annotations

import json

import pytest

from docverify_training.trajectory import (
    FORMAT,
    ReadProblems,
    Trajectory,
    TrajectoryError,
    TrajectoryTurn,
    read_trajectories,
    sft_examples,
    sft_messages,
)


def trajectory(**extra) -> Trajectory:
    prompt = [{"role": "system", "content": "You operate a cloud console."}, {"role": "user", "content": "Page: ..."}]
    turns = [TrajectoryTurn(0, prompt, '{"action": "click", "thought": "Step 1", "ref": "e3", "step": "1"}',
                            {"kind": "click", "ref": "e3"}, "1", "literal", "http://c/console", "ok"),
             TrajectoryTurn(1, prompt, '{"action": "done", "thought": "Every step is done.", "status": "success"}',
                            {"kind": "done"}, None, "literal", "http://c/console", "end")]
    return Trajectory({"id": "oss-1", "split": "train", "family": "oss"}, {"policy": "literal"}, "llamacpp",
                      turns=turns, verdict="PASS", success=True, reward=1.0, **extra)


def test_a_trajectory_round_trips_through_its_json_line():
    line = trajectory().to_json()
    assert json.loads(line)["format"] == FORMAT
    back = Trajectory.from_dict(json.loads(line))
    assert back == trajectory()


def test_bad_lines_are_skipped_counted_and_the_first_named_with_its_line(tmp_path):
    good = trajectory().to_json()
    wrong = json.loads(good)
    wrong["turns"][0]["prompt"] = "not messages"
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([good, "{not json", json.dumps(wrong), "", json.dumps({"format": "other/9"}), good]))
    problems = ReadProblems()
    read = list(read_trajectories([path], problems))
    assert len(read) == 2
    assert problems.skipped == 3
    assert problems.first.startswith(f"{path}:2: not JSON")


@pytest.mark.parametrize("change, message", [
    ({"format": None}, "format"),
    ({"task": {}}, "'task'"),
    ({"student": None}, "'student'"),
])
def test_what_is_wrong_is_named(change, message):
    data = json.loads(trajectory().to_json())
    data.update(change)
    with pytest.raises(TrajectoryError, match=message):
        Trajectory.from_dict(data)


def test_sft_examples_put_the_answer_in_the_completion_only():
    examples = sft_examples(trajectory())
    assert len(examples) == 2
    first = examples[0]
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]
    assert first["completion"] == [{"role": "assistant", "content": trajectory().turns[0].completion}]
    messages = sft_messages(trajectory())[1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]


def test_a_written_line_is_valid_against_the_shipped_schema():
    from pathlib import Path

    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[2] / "training" / "trajectory.schema.json").read_text())
    jsonschema.validate(json.loads(trajectory().to_json()), schema)
    broken = json.loads(trajectory().to_json())
    broken["turns"][0]["outcome"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
