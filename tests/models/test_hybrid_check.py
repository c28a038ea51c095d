"""`docverify check` with the hybrid policy and the judges, as a user runs it: real
sandbox, real Chromium, a fake OpenAI-protocol model on loopback. And a scan of
everything the run wrote and sent for secrets."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Reply, action, first_user, ref_of

from docverify_sandbox.state import DEFAULT_ACCOUNTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
#: The 2021 EIP doc with its create button named so that no literal follower could take it
#: for the console's ("Purchase Public Address" for "Apply for EIP"): a step for the model.
UNFOLLOWABLE = Path(__file__).resolve().parent / "eip-unfollowable.md"
API_KEY = "sk-fake-hybrid-key-9876543210"
SUBGOAL = re.compile(r"# Your sub-goal\n(.*)")


def oracle(body, fake):
    """A model that does what a good one would in a hand-over: click the nearest
    candidate the literal follower named, then say the step is done."""
    prompt = first_user(body)
    subgoal = SUBGOAL.search(prompt)
    if subgoal is None:
        return Reply(action("done", status="blocked", message="I only take sub-goals"))
    nearest = re.search(r"\(nearest: ([^,)]+)", subgoal.group(1))
    history = prompt.split("# Your recent actions", 1)[1].split("# Current page", 1)[0]
    if nearest is None:
        return Reply(action("done", status="blocked", message="no candidate"))
    if f"'{nearest.group(1)}'" in history:
        return Reply(action("done", status="success", message=f"clicked {nearest.group(1)} instead"))
    return Reply(action("click", ref=ref_of(body, nearest.group(1)), thought="the console renamed it"))


def run_check(tmp_path: Path, chromium, doc: Path, server: FakeOpenAI, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    shutil.copy(doc, docs / doc.name)
    args = [sys.executable, "-m", "docverify", "check", "docs", "--jobs", "1", "--output", "out", "--report",
            "json,junit,github,html", "--browser-path", str(chromium.path),
            "-O", f"policy.hybrid.base_url={server.url}", "-O", "policy.hybrid.model=fake-model",
            "-O", "policy.hybrid.api_key_env=FAKE_KEY", *extra]
    env = {"PATH": "/usr/bin:/bin", "FAKE_KEY": API_KEY, "HOME": str(tmp_path),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md")}
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    report = json.loads((tmp_path / "out" / "docverify.json").read_text())
    return done, report


def test_the_model_takes_over_a_renamed_button_and_the_drift_says_what_it_did(tmp_path, chromium):
    with FakeOpenAI(oracle) as server:
        done, report = run_check(tmp_path, chromium, UNFOLLOWABLE, server)
    assert done.returncode == 1, done.stderr
    result = report["results"][0]
    assert result["verdict"] == "DRIFT" and result["goal_reached"] is True  # drift, yet the EIP was created
    # the doc meets two changes in the current console: the model found its way past the button no
    # literal follower could take, and the literal policy followed the field it recognised by its value
    first, second = result["findings"]
    assert (first["kind"], first["line"], first["expected"]) == ("element_not_found", 20, "Allocate EIP")
    # the click brought up the form step 3 fills in: the step is done, without asking the model again
    assert first["resolved_by"] == ("model: click button 'Apply for EIP' -> done (the page now shows step 3's "
                                    "'Billing Method')")
    assert (second["kind"], second["line"], second["expected"], second["observed"]) == \
        ("label_changed", 27, "Connection Type", "Line Type")
    assert "resolved_by" not in second
    usage = result["usage"]
    assert usage["calls"] == 1 and usage["model_turns"] == 1 and usage["literal_turns"] == 4
    assert usage["handovers"] == 1 and usage["handovers_done"] == 1
    assert usage["tokens_in"] == 100 and usage["tokens_out"] == 20
    by_model = [t["description"] for t in result["turns"] if t.get("by") == "model" and t["action"]["kind"] == "click"]
    assert by_model == ["click button 'Apply for EIP'"]
    assert report["usage"]["model_turns"] == 1  # and the run's totals
    assert "model: 1 model call · 100 tokens in / 20 out · ? / ? · 1 turn decided by the model, 4 literally · " \
        "1 of 1 hand-over finished by the model" in " ".join((done.stdout + done.stderr).split())
    assert "1 turn decided by the model" in (tmp_path / "step-summary.md").read_text()


def test_no_secret_reaches_a_prompt_a_report_a_trace_or_the_terminal(tmp_path, chromium):
    with FakeOpenAI(oracle) as server:
        done, report = run_check(tmp_path, chromium, UNFOLLOWABLE, server)
        prompts = json.dumps(server.requests)
    account = DEFAULT_ACCOUNTS[0]
    secrets = [API_KEY, account.admin_password, account.admin_access_key_secret, account.access_key_secret,
               account.root_password]
    texts = {"stdout": done.stdout, "stderr": done.stderr, "prompts": prompts}
    for path in [*(tmp_path / "out").rglob("*"), *(tmp_path / ".docverify").rglob("*"), tmp_path / "step-summary.md"]:
        if not path.is_file():
            continue
        if path.suffix == ".zip":  # Playwright traces: every member, uncompressed
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    texts[f"{path}!{member}"] = archive.read(member).decode("utf-8", "replace")
        else:
            texts[str(path)] = path.read_bytes().decode("utf-8", "replace")
    assert any(name.endswith(".zip") or ".zip!" in name for name in texts), "the DRIFT run keeps a trace to scan"
    assert len(texts) > 6
    leaks = [(name, secret[:4] + "…") for name, text in texts.items() for secret in secrets if secret in text]
    assert leaks == []


def test_the_budget_stops_model_calls_before_it_is_exceeded(tmp_path, chromium):
    """--budget with a priced model ($0.001 a token; the fake bills 120 tokens a call, a
    call's worst case — the prompt estimate plus the longest answer — is ~$1.8): the first
    procedure's one call fits in $1.9, the second procedure's would not and is never
    sent. The finding of the step the model was on is still reported; the next procedure
    is not started."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in (1, 2, 3):
        shutil.copy(UNFOLLOWABLE, docs / f"eip-{n}.md")
        text = (docs / f"eip-{n}.md").read_text().replace("id: drifted-eip-create", f"id: eip-{n}")
        (docs / f"eip-{n}.md").write_text(text)
    (tmp_path / "docverify.toml").write_text(textwrap.dedent("""\
        [prices.fake-model]
        input_usd = 1000.0
        output_usd = 1000.0
        """))
    with FakeOpenAI(oracle) as server:
        args = [sys.executable, "-m", "docverify", "check", "docs", "--jobs", "1", "--output", "out", "--report", "json",
                "--browser-path", str(chromium.path), "--no-store", "--budget", "1.9USD",
                "-O", f"policy.hybrid.base_url={server.url}", "-O", "policy.hybrid.model=fake-model",
                "-O", "policy.hybrid.api_key_env=FAKE_KEY", "-O", "policy.hybrid.max_answer_tokens=64"]
        done = subprocess.run(args, cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "FAKE_KEY": API_KEY, "HOME": str(tmp_path)},
                              capture_output=True, text=True, timeout=240)
        calls = len(server.requests)
    report = json.loads((tmp_path / "out" / "docverify.json").read_text())
    first, second, third = report["results"]
    assert calls == report["usage"]["calls"] == first["usage"]["calls"] == 1  # only what fitted was sent
    assert report["usage"]["cost_usd"] == pytest.approx(0.12)
    assert first["verdict"] == "DRIFT" and first["findings"][0]["resolved_by"].startswith("model: click button")
    assert second["verdict"] == "DRIFT"  # the drift it was handling is still reported, on its line
    finding = second["findings"][0]
    assert finding["line"] == 20
    assert finding["resolved_by"] == "model: nothing -> gave up (stopped: the cost budget ran out)"
    assert third["verdict"] == "INCONCLUSIVE" and third["reason"].startswith("not run: the cost budget (1.9 USD)")
    assert done.returncode == 1
