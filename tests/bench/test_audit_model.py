"""benchmark/audit_model.py: the audit model's arithmetic on hand-computed inputs, the
bottleneck moving to a shared limit as machines are added, and the script on the
committed results files."""

import importlib.util
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmark" / "results"


def _load():
    spec = importlib.util.spec_from_file_location("audit_model", ROOT / "benchmark" / "audit_model.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["audit_model"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


am = _load()

#: no shared limit near the machines' own (each one a million procedures an hour or more)
LOOSE = dict(accounts=1000, account_rate_h=1000, provision_api_rate_s=1000, audit_api_rate_s=1000, gpus=1000)


def machine(**overrides):
    """A machine that does 1 procedure a second without provisioning and 0.5 with it,
    taking 2 s and 4 s each, 4 at once."""
    figures = dict(backend="local", rate_none=1.0, rate_provisioned=0.5, latency_none=2.0, latency_provisioned=4.0,
                   workers=2, max_workers=4, startup_s=0.0)
    return am.Machine(**(figures | overrides))


def measured(**overrides):
    usage = dict(calls=0.0, tokens=0.0, model_turns=0.0, procedures=1)
    figures = dict(machines={"local": machine(), "ray": machine(backend="ray")}, literal_turns=5.0,
                   served_turns=10.0, served_literal_turns=5.0, tokens_per_call=1000.0, calls_per_turn=1.0,
                   drifted=dict(usage, calls=4.0, tokens=5000.0, model_turns=2.0), clean=usage,
                   local_tokens_s=100.0)
    return am.Measured(**(figures | overrides))


def platform(**overrides):
    figures = dict(name="test", machine=machine(), price_h=0.6, setup_s=45.0, job_limit_s=None, round_minutes=False)
    return am.Platform(**(figures | overrides))


def test_literal_on_two_machines_by_hand():
    a = am.Assumptions(procedures=100, provisioned_share=0.5, **LOOSE)
    load = am.loads(measured(), machine(), a)["literal"]
    # CPU: 0.5 / 1 + 0.5 / 0.5 = 1.5 machine-s; latency 0.5 * 2 + 0.5 * 4 = 3 s
    assert load.cpu_s == pytest.approx(1.5) and load.latency_s == pytest.approx(3.0)
    e = am.estimate(platform(), load, a, 2)
    # 2 machines x 3600 / 1.5 = 4,800 an hour (the slots allow 2 x 4 x 3600 / 3 = 9,600)
    assert e.bottleneck == am.CPU and e.per_hour == pytest.approx(4800)
    assert e.runner_up == am.SLOTS and e.headroom == pytest.approx(2.0)
    # 100 procedures take 75 s after a 45 s setup: 120 s; 2 machines x 120 s = 1/15 machine-h at $0.60
    assert e.work_h * 3600 == pytest.approx(75) and e.wall_h * 3600 == pytest.approx(120)
    assert e.machine_h == pytest.approx(1 / 15) and e.usd == pytest.approx(0.04)
    assert e.gpu_h == 0 and e.tokens == 0


def test_ci_bills_every_started_minute_and_chains_jobs_past_the_limit():
    a = am.Assumptions(procedures=100, provisioned_share=0.5, **LOOSE)
    load = am.loads(measured(), machine(), a)["literal"]
    ci = platform(setup_s=50.0, job_limit_s=3600.0, round_minutes=True)
    e = am.estimate(ci, load, a, 2)
    # 125 s is billed as 3 minutes on each of 2 runners: 0.1 machine-h
    assert e.jobs == 1 and e.wall_h * 3600 == pytest.approx(125)
    assert e.machine_h == pytest.approx(0.1) and e.usd == pytest.approx(0.06)
    # 10,000 procedures: 7,500 s of work; with a 600 s setup a 3,600 s job holds 3,000 s of it: 3 jobs
    long = am.estimate(replace(ci, setup_s=600.0), load, replace(a, procedures=10_000), 2)
    assert long.jobs == 3 and long.wall_h * 3600 == pytest.approx(3 * 600 + 7500)
    assert long.machine_h == pytest.approx(2 * (3600 + 3600 + 600 + 1500) / 3600)  # the last job: setup + 1,500 s


def test_a_shared_limit_takes_over_as_machines_are_added():
    # the pool: 100 accounts x 60 procedures an hour = 6,000; one machine does 2,400
    a = am.Assumptions(procedures=12_000, provisioned_share=0.5, **(LOOSE | dict(accounts=100, account_rate_h=60)))
    load = am.loads(measured(), machine(), a)["literal"]
    rows = {n: am.estimate(platform(), load, a, n) for n in (1, 2, 4, 8)}
    assert [rows[n].bottleneck for n in (1, 2, 4, 8)] == [am.CPU, am.CPU, am.POOL, am.POOL]
    assert rows[2].per_hour == pytest.approx(4800) and rows[4].per_hour == rows[8].per_hour == pytest.approx(6000)
    assert rows[4].wall_h == pytest.approx(rows[8].wall_h)  # past the switch, more machines only cost more
    assert rows[8].usd == pytest.approx(2 * rows[4].usd)
    own, own_name, shared, shared_name = am.saturation(load, a, slots=4)
    assert (own, own_name, shared, shared_name) == (pytest.approx(2400), am.CPU, pytest.approx(6000), am.POOL)


def test_the_audit_logs_rate_limit_binds_and_its_delay_holds_the_slot():
    a = am.Assumptions(procedures=100, provisioned_share=0.0, **(LOOSE | dict(audit_api_rate_s=20)))
    load = am.loads(measured(), machine(), a)["literal"]
    assert am.shared_limits(load, a)[am.AUDIT] == pytest.approx(72_000)  # 20 a second, one look a procedure
    late = replace(a, audit_delay_s=1.0)
    slow = am.loads(measured(), machine(), late)["literal"]
    assert slow.latency_s == pytest.approx(2.0 + 1.0) and slow.cpu_s == pytest.approx(load.cpu_s)
    first, cap = am.poll_schedule()
    assert late.delivery_looks == am.looks(1.0, first, cap) == 4
    assert am.shared_limits(slow, late)[am.AUDIT] == pytest.approx(18_000)
    batched = replace(late, audit_events_per_call=50)
    assert am.shared_limits(slow, batched)[am.AUDIT] == pytest.approx(50 * 18_000)
    # one machine: 3,600 an hour (CPU; its 4 slots allow 4,800); 64 of them wait on the audit log's 18,000
    assert am.estimate(platform(), slow, late, 1).bottleneck == am.CPU
    many = am.estimate(platform(), slow, late, 64)
    assert many.bottleneck == am.AUDIT and many.per_hour == pytest.approx(18_000)


@pytest.mark.parametrize("delay,expected", [(0, 1), (0.25, 2), (1, 4), (31.75, 8), (32, 9), (300, 17)])
def test_looks_follow_the_checkers_backoff(delay, expected):
    # pauses 0.25, 0.5, 1, 2, 4, 8, 16 (31.75 s), then 30 s each
    assert am.looks(delay, 0.25, 30) == expected


def test_model_policies_by_hand():
    a = am.Assumptions(procedures=100, provisioned_share=0.0, drift_share=0.1, served_call_s=2.0,
                       **(LOOSE | dict(gpus=2, gpu_tokens_s=5000)))
    loads = am.loads(measured(), machine(), a)
    literal, served = loads["literal"], loads["served"]
    # served: 10 turns against the literal policy's 5 on the same tasks, a call each of 1,000 tokens
    assert served.tokens == pytest.approx(10_000) and served.served
    assert served.cpu_s == pytest.approx(2 * literal.cpu_s)
    assert served.latency_s == pytest.approx(2 * 2.0 + 10 * 2.0)
    # 2 GPUs x 5,000 tokens/s x 3,600 / 10,000 tokens = 3,600 procedures an hour
    assert am.shared_limits(served, a)[am.SERVING] == pytest.approx(3600)
    # hybrid: a tenth of the procedures drifted, each 4 calls, 5,000 tokens, 2 extra turns
    hybrid = loads["hybrid-served"]
    assert hybrid.tokens == pytest.approx(500)
    assert hybrid.cpu_s == pytest.approx(1.0 + 0.1 * 2 * 1.0 / 5)  # a turn costs cpu / literal turns
    assert hybrid.latency_s == pytest.approx(2.0 + 0.1 * 2 * 2.0 / 5 + 0.1 * 4 * 2.0)
    local = loads["hybrid-local"]  # the model on the machine's CPU: 500 tokens at 100 a second
    assert local.tokens == 0 and not local.served and local.local_model
    assert local.cpu_s == pytest.approx(hybrid.cpu_s + 5.0)
    assert am.machine_limits(local, 4) == {am.CPU_LOCAL_MODEL: pytest.approx(3600 / local.cpu_s),
                                           am.SLOTS: pytest.approx(4 * 3600 / local.latency_s)}
    e = am.estimate(platform(), served, replace(a, gpu_price_h=3.0), 1)
    assert e.gpu_h == pytest.approx(2 * e.wall_h) and e.gpu_usd == pytest.approx(3.0 * e.gpu_h)


def _scale_rows(text):
    """scale.md's first table, split by hand (not through the script's parser)."""
    lines = [line for line in text.splitlines() if line.startswith(("| local", "| ray"))]
    header = [cell.strip() for cell in text.splitlines()[2].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in line.strip("|").split("|")))) for line in lines
            if len(line.split("|")) == len(header) + 2]


def test_it_reads_the_committed_results():
    m = am.read_measured(RESULTS)
    rows = _scale_rows((RESULTS / "scale.md").read_text(encoding="utf-8"))
    for backend in ("local", "ray"):
        for provisioning, attribute in (("none", "rate_none"), ("terraform", "rate_provisioned")):
            best = max(float(r["proc/min once up"]) for r in rows
                       if r["backend"] == backend and r["provisioning"] == provisioning)
            assert getattr(m.machines[backend], attribute) * 60 == pytest.approx(best)
    literal = json.loads((RESULTS / "bench" / "literal.json").read_text(encoding="utf-8"))
    oracle = json.loads((RESULTS / "bench" / "oracle-eval.json").read_text(encoding="utf-8"))
    models = json.loads((RESULTS / "models.json").read_text(encoding="utf-8"))
    assert m.literal_turns == literal["scores"]["all"]["turns_per_task"]
    assert m.served_turns == oracle["scores"]["all"]["turns_per_task"]
    assert m.local_tokens_s == models["speed"]["tokens_per_s"]
    drifted = next(e for e in models["share"] if e["folder"] == "examples/drifted")
    assert m.drifted["calls"] == pytest.approx(drifted["usage"]["calls"] / drifted["procedures"])


def test_the_script_writes_a_table_per_platform_with_every_row(tmp_path, capsys):
    out = tmp_path / "audit-model.md"
    text = am.main(["--machines", "1", "64", "-o", str(out)])
    assert out.read_text(encoding="utf-8") == text and text in capsys.readouterr().out
    tables = am.markdown_tables(text)
    estimates = [t for t in tables if t and "bottleneck; next limit, its headroom" in t[0]]
    assert len(estimates) == 2  # CI runners, a Ray cluster
    for rows in estimates:
        assert [(r["machines"], r["policy"]) for r in rows] == [
            (n, am.POLICY_TEXT[p]) for n in ("1", "64") for p in am.POLICIES]
        assert all(r["bottleneck; next limit, its headroom"].split(";")[0] in {
            am.CPU, am.CPU_LOCAL_MODEL, am.SLOTS, am.POOL, am.PROVISIONING, am.AUDIT, am.SERVING} for r in rows)
    # every assumption is printed with its option and its source
    for name in am.Assumptions.__dataclass_fields__:
        assert f"`--{name.replace('_', '-')}`" in text
    assert "GitHub" in text and "LookupEvents" in text


def test_results_are_read_not_built_in(tmp_path):
    copy = tmp_path / "results"
    (copy / "bench").mkdir(parents=True)
    for name in ("scale.md", "models.json"):
        shutil.copy(RESULTS / name, copy / name)
    for name in ("literal", "oracle-eval", "llamacpp", "empty-none"):
        shutil.copy(RESULTS / "bench" / f"{name}.json", copy / "bench" / f"{name}.json")
    scale = copy / "scale.md"
    lines = scale.read_text(encoding="utf-8").splitlines()
    header = [c.strip() for c in lines[2].strip("|").split("|")]
    column = header.index("proc/min once up") + 1
    for i, line in enumerate(lines):  # every local machine twice as fast
        cells = line.split("|")
        if line.startswith("| local") and len(cells) == len(header) + 2:
            cells[column] = f" {2 * float(cells[column]):.1f} "
            lines[i] = "|".join(cells)
    scale.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before, after = am.read_measured(RESULTS), am.read_measured(copy)
    assert after.machines["local"].rate_none == pytest.approx(2 * before.machines["local"].rate_none)
    a = am.Assumptions()

    def cpu_limit(m):
        return am.machine_limits(am.loads(m, m.machines["local"], a)["literal"], 4)[am.CPU]

    assert cpu_limit(after) == pytest.approx(2 * cpu_limit(before))
    assert am.main(["--results", str(copy), "--machines", "1"]) != am.main(["--machines", "1"])


def test_an_option_changes_the_answer():
    default = am.main(["--machines", "64"])
    few = am.main(["--machines", "64", "--accounts", "2", "--tenants", "100"])
    assert "| 64 | literal |" in few and am.POOL in few.split("| 64 | literal |")[1].splitlines()[0]
    assert default != few
    with pytest.raises(SystemExit):
        am.main(["--provisioned-share", "1.5"])
