"""Scores, comparisons and the report, on results files with known attempts."""

import json

import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.errors import ConfigError
from docverify_bench.cli import print_scores
from docverify_bench.compare import compare
from docverify_bench.run import FORMAT
from docverify_bench.score import env_cause, score


def results(policy: str, passes: dict[str, list[bool | None]], version: str = "1.0") -> dict:
    """A results file: per task, its attempts (True pass, False fail, None ENV_ERROR)."""
    tasks = {task_id: {"family": task_id.rsplit("-", 1)[0], "category": "standard" if "std" in task_id else "drifted",
                       "product": "oss" if task_id.startswith("oss") else "ram",
                       "split": "eval" if task_id.endswith(("1", "2")) else "train", "release": "2026-03"}
             for task_id in passes}
    attempts = [{"task": task_id, "run": run, "success": bool(ok), "env_error": ok is None,
                 "verdict": "ENV_ERROR" if ok is None else ("PASS" if ok else "FAIL"), "goal_reached": ok,
                 "duration_s": 2.0, "turns": 6, "calls": 0, "tokens_in": 0, "tokens_out": 0,
                 "cost_usd": 0.01 if policy == "model" else 0.0, "cost_cny": 0.0}
                for task_id, runs in passes.items() for run, ok in enumerate(runs, 1)]
    return {"format": FORMAT, "task_set": {"path": "t", "version": version}, "policy": policy, "split": None,
            "runs": 3, "config": {}, "tasks": tasks, "attempts": attempts}


RUNS = {
    "oss-std-1": [True, True, True], "oss-std-2": [True, False, True], "oss-hard-1": [False, False, None],
    "ram-std-3": [True, True, True], "ram-hard-4": [None, None, None], "ram-hard-2": [False, True, False],
}


def test_scores_leave_env_errors_out_and_use_the_closed_forms():
    scores = score(results("literal", RUNS)["tasks"], results("literal", RUNS)["attempts"])
    everything = scores["all"]
    # ram-hard-4 had only ENV_ERRORs: not scored; oss-hard-1 scores 0/2
    assert everything["tasks"] == 6 and everything["scored"] == 5
    assert everything["env_error_rate"] == pytest.approx(4 / 18)
    assert everything["pass@1"]["value"] == pytest.approx((1 + 2 / 3 + 0 + 1 + 1 / 3) / 5)
    # k up to the fewest counted runs (2, oss-hard-1): pass@2 of 2/3 is 1, of 1/3 is 2/3
    assert everything["pass@2"]["value"] == pytest.approx((1 + 1 + 0 + 1 + 2 / 3) / 5)
    assert everything["pass^2"]["value"] == pytest.approx((1 + 1 / 3 + 0 + 1 + 0) / 5)
    assert "pass@3" not in everything
    assert set(scores["product"]) == {"oss", "ram"} and scores["split"]["eval"]["scored"] == 4


def test_readiness_counts_only_environments_that_were_not_ready():
    data = results("literal", RUNS)
    causes = iter(["Prerequisite missing at step 3: 'vpc-1' acts on an existing resource, but the list is empty",
                   "terraform apply failed: sandbox_vpc_vpc.vpc_1: 500", "destroy failed: DependencyViolation",
                   "the console did not answer"])
    for attempt in data["attempts"]:
        if attempt["env_error"]:
            attempt["env_cause"] = env_cause(next(causes))
    assert [a["env_cause"] for a in data["attempts"] if a["env_error"]] == [
        "prerequisite missing", "provisioning failed", "teardown failed", "other"]
    everything = score(data["tasks"], data["attempts"])["all"]
    # 18 attempts, 4 ENV_ERROR; a failed teardown or a console that went away leave the task ready
    assert everything["readiness"] == pytest.approx(16 / 18)
    assert everything["env_error_rate"] == pytest.approx(4 / 18)


def test_compare_pairs_tasks_and_refuses_other_task_sets():
    better = {task_id: [True, True, True] for task_id in RUNS}
    data = compare(results("literal", RUNS), results("model", better))
    overall = data["groups"]["all"]
    assert overall["tasks"] == 5 and overall["difference"]["value"] > 0 and overall["only_a"] == 0
    assert set(data["groups"]) == {"all", "eval", "train"}
    with pytest.raises(ConfigError, match="different task sets"):
        compare(results("literal", RUNS), results("model", better, version="2.0"))
    assert compare(results("literal", RUNS), results("model", better, version="2.0"), force=True)["groups"]


def test_report_writes_markdown_and_plots(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(results("literal", RUNS)))
    b.write_text(json.dumps(results("model", {task_id: [True, True, False] for task_id in RUNS})))
    done = CliRunner().invoke(cli, ["bench", "report", str(a), str(b), "-o", str(tmp_path / "report")])
    assert done.exit_code == 0, done.output
    text = (tmp_path / "report" / "report.md").read_text()
    assert "| literal | all | 5 |" in text and "| model | all | 6 |" in text
    assert "## pass@1 by category" in text and "drifted" in text
    # the environment: files that do not record it read it from their configuration
    assert "| literal | seeded | none | 18 | 100.0% | 0 | 0 | 0 | 4 |" in text
    for name in ("success-by-category.png", "success-by-product.png", "cost-vs-success.png", "readiness.png"):
        assert (tmp_path / "report" / name).read_bytes()[:4] == b"\x89PNG"
    assert "## Hand-overs" not in text  # neither run records hand-overs


def test_hybrid_hand_overs_are_scored_by_what_the_model_said_and_by_the_audit_log(tmp_path, capsys):
    data = results("hybrid", RUNS)
    # (hand-overs, of them finished by the model) per attempt, in order; ENV_ERRORs never count
    handovers = iter([(0, 0), (1, 1), (0, 0), (2, 1), (0, 0), (1, 1), (1, 0), (3, 3), (5, 5),
                      (0, 0), (0, 0), (0, 0), (9, 9), (9, 9), (9, 9), (1, 0), (1, 1), (0, 0)])
    for attempt in data["attempts"]:
        attempt["handovers"], attempt["handovers_done"] = next(handovers)
    everything = score(data["tasks"], data["attempts"])["all"]
    # counted attempts with a hand-over: oss-std-1 run 2 (pass), oss-std-2 runs 1 (pass) and 3 (pass),
    # oss-hard-1 runs 1 and 2 (fail), ram-hard-2 runs 1 (fail) and 2 (pass); oss-hard-1 run 3 is an ENV_ERROR
    assert everything["handovers"] == {"attempts": 7, "handovers": 10, "done": 7, "done_rate": pytest.approx(0.7),
                                       "goal_reached": 4, "goal_rate": pytest.approx(4 / 7)}
    print_scores(score(data["tasks"], data["attempts"]))
    assert "hand-overs 7/10 finished, 4/7 attempts reached the goal" in capsys.readouterr().out.splitlines()[0]
    path = tmp_path / "hybrid.json"
    path.write_text(json.dumps(data))
    done = CliRunner().invoke(cli, ["bench", "report", str(path), "-o", str(tmp_path / "report")])
    assert done.exit_code == 0, done.output
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Hand-overs" in text and "| hybrid | 7 | 10 | 7 (70.0%) | 4 (57.1%) |" in text


def test_a_file_that_is_not_a_results_file_is_named(tmp_path):
    other = tmp_path / "docverify.json"
    other.write_text(json.dumps({"run_id": "x"}))
    done = CliRunner().invoke(cli, ["bench", "compare", str(other), str(other)])
    assert done.exit_code != 0 and "not a docverify bench results file" in done.output


@pytest.mark.parametrize("reason, provisioned, env_error, cause", [
    # without provisioning, the policy's claim stands: the environment was not ready
    ("prerequisite missing at step 3: 'default-vpc' acts on an existing resource, but the list is empty", False,
     True, "prerequisite missing"),
    # provisioning made what the task declares (a key disabled on purpose): stopping is the policy's failure
    ("prerequisite not ready at step 4: 'Disable' is disabled for the key the step acts on", True,
     False, "prerequisite missing"),
    ("terraform apply failed: sandbox_kms_key.kms_key_1: 500", True, True, "provisioning failed"),
])
def test_whose_failure_an_env_error_is(reason, provisioned, env_error, cause):
    from types import SimpleNamespace

    from docverify.check.verdict import Verdict
    from docverify.report.trajectory import ProcedureResult
    from docverify_bench.run import attempt_record

    result = ProcedureResult(id="t-1", title="T", path="t.md", line=1, verdict=Verdict.ENV_ERROR, reason=reason,
                             env_error=reason)
    attempt = attempt_record(SimpleNamespace(id="t-1"), 1, result, provisioned=provisioned)
    assert (attempt["env_error"], attempt["env_cause"], attempt["success"]) == (env_error, cause, False)
