"""training/demo.py, the demonstration's driver: the commands each stage runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def demo_module():
    spec = importlib.util.spec_from_file_location("docverify_demo", ROOT / "training" / "demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commands(tmp_path, *argv: str, stage: str) -> list[list[str]]:
    module = demo_module()
    demo = module.Demo(module.arguments(["--out", str(tmp_path), *argv]))
    ran: list[list[str]] = []
    demo.docverify = lambda *args: ran.append(list(args))
    getattr(demo, stage)()
    return ran


def options(command: list[str]) -> list[str]:
    return [command[i + 1] for i, arg in enumerate(command) if arg == "-O"]


def test_grpo_inside_hybrid_rolls_out_the_hybrid_policy_with_the_students_prompt(tmp_path):
    train, *evaluations = commands(tmp_path, "--grpo-policy", "hybrid", "--grpo-category", "drifted",
                                   "--grpo-category", "stateful", "--grpo-steps", "3", "--grpo-resample", "2",
                                   stage="grpo")
    assert train[:2] == ["train", "grpo"] and "rollout_policy=hybrid" in train and "max_steps=3" in train
    assert "resample_rounds=2" in train
    assert [train[i + 1] for i, arg in enumerate(train) if arg == "--category"] == ["drifted", "stateful"]
    assert {"policy.hybrid.observation_tokens=600", "policy.hybrid.history_tokens=300",
            "policy.llamacpp.observation_tokens=600", "policy.hybrid.close_threshold=1.0"} <= set(options(train))
    # then the GRPO model, evaluated as the llamacpp policy and inside hybrid
    model = str(tmp_path / "grpo" / "model.gguf")
    assert [c[c.index("--policy") + 1] for c in evaluations] == ["llamacpp", "hybrid"]
    assert f"policy.llamacpp.model_path={model}" in options(evaluations[0])
    assert {f"policy.hybrid.model_path={model}", "policy.hybrid.engine=llamacpp",
            "policy.hybrid.observation_tokens=600"} <= set(options(evaluations[1]))


def test_grpo_rolls_out_the_model_alone_by_default(tmp_path):
    train = commands(tmp_path, stage="grpo")[0]
    assert "rollout_policy=llamacpp" in train and "--category" not in train and "resample_rounds=0" in train
    assert not any(option.startswith("policy.hybrid.") for option in options(train))


def test_the_data_stage_records_the_oracles_hand_overs_for_the_hybrid_too(tmp_path):
    oracle, explore, handover = commands(tmp_path, stage="data")
    assert oracle[:3] == ["rollout", "--policy", "oracle"] and explore[0] == "explore"
    assert handover[:3] == ["rollout", "--policy", "oracle"] and "--student" in handover
    assert handover[handover.index("--student") + 1] == "hybrid"
    assert {"policy.oracle.close_threshold=1.0", "policy.hybrid.observation_tokens=600"} <= set(options(handover))
    assert len(commands(tmp_path / "other", "--no-handovers", stage="data")) == 2


def test_sft_data_takes_every_hand_over_then_the_rest_up_to_the_cap(tmp_path):
    import json

    data = tmp_path / "data"
    (data / "explore").mkdir(parents=True)

    def write(path, name, count, turns):
        path.write_text("".join(json.dumps({"name": f"{name}{i}", "turns": [{}] * turns}) + "\n"
                                for i in range(count)))

    write(data / "handover.jsonl", "h", 3, 2)
    write(data / "oracle.jsonl", "o", 10, 5)
    write(data / "explore" / "trajectories.jsonl", "x", 10, 5)
    module = demo_module()
    demo = module.Demo(module.arguments(["--out", str(tmp_path), "--sft-examples", "26"]))
    chosen = [json.loads(line)["name"] for line in demo.sft_data().read_text().splitlines()]
    assert chosen[:3] == ["h0", "h1", "h2"] and len(chosen) == 7  # 6 hand-over turns, then 4 of 5 turns
    assert demo.sft_data().read_text().count("\n") == 7  # written once, read back after


def test_a_stage_can_be_evaluated_one_way_only(tmp_path):
    (tmp_path / "sft").mkdir()
    (tmp_path / "sft" / "model.gguf").write_bytes(b"GGUF")  # trained: the stage only evaluates
    evaluations = commands(tmp_path, "--eval-policy", "hybrid", stage="sft")
    assert [c[c.index("--policy") + 1] for c in evaluations] == ["hybrid"]
    assert evaluations[0][evaluations[0].index("--out") + 1] == str(tmp_path / "sft-hybrid.json")
    assert [c[c.index("--policy") + 1] for c in commands(tmp_path, stage="base")] == ["llamacpp", "hybrid"]


def test_a_stage_can_be_evaluated_on_every_eval_task_of_a_category(tmp_path):
    """--eval-category drifted: every drifted eval task, not the sample, into files of
    their own; the report compares stages within each set of tasks only."""
    import json

    evaluation, = commands(tmp_path, "--eval-policy", "hybrid", "--eval-category", "drifted", stage="base")
    assert evaluation[evaluation.index("--category") + 1] == "drifted" and "--sample" not in evaluation
    assert evaluation[evaluation.index("--out") + 1] == str(tmp_path / "base-hybrid-drifted.json")
    assert evaluation[evaluation.index("--label") + 1] == "base (hybrid, drifted)"

    module = demo_module()
    demo = module.Demo(module.arguments(["--out", str(tmp_path)]))
    ran = []
    demo.docverify = lambda *args: ran.append(list(args)) or (tmp_path / "report").mkdir(exist_ok=True)
    pairs = []
    demo.comparison = lambda policy, tasks, a, b, first, second: pairs.append((tasks, a, b, first.name, second.name)) \
        or "| row |"
    for name in ("base-hybrid.json", "sft-hybrid.json", "base-hybrid-drifted.json", "sft-hybrid-drifted.json"):
        (tmp_path / name).write_text(json.dumps({}))
    demo.report()
    assert [Path(arg).name for arg in ran[0][2:-2]] == ["base-hybrid.json", "sft-hybrid.json",
                                                      "base-hybrid-drifted.json", "sft-hybrid-drifted.json"]
    assert pairs == [("eval sample", "base", "sft", "base-hybrid.json", "sft-hybrid.json"),
                     ("drifted", "base", "sft", "base-hybrid-drifted.json", "sft-hybrid-drifted.json")]
