"""A model of the wall time and cost of auditing many procedures (the paper's 54,000) on N
machines — CI runners or a Ray cluster — with the literal, hybrid and a served-model policy,
and of where the bottleneck moves as N grows: the machines' browsers (CPU), their slots
(procedures waiting on something), the account pool, the provisioning API's rate limit, the
audit log's rate limit, or model serving.

Every measured input is read from the committed results (``benchmark/results/``): a
machine's sustained throughput and per-procedure seconds at its best concurrency from
``scale.md``; turns, tokens and calls per procedure from ``bench/*.json``; the hybrid
policy's share of model work and the local model's speed from ``models.json``. What no
file holds (prices, rate limits, a GPU's tokens/s, the share of procedures that need
provisioning, ...) is an assumption: a named option below, printed with its source.

    python benchmark/audit_model.py [--procedures 54000] [--machines 1 4 16 64 256]
        [--results benchmark/results] [-o benchmark/results/audit-model.md] [--ASSUMPTION VALUE ...]

``--help`` lists every assumption, its unit and its source.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmark" / "results"

POLICIES = ("literal", "hybrid-local", "hybrid-served", "served")
POLICY_TEXT = {
    "literal": "literal",
    "hybrid-local": "hybrid, local model",
    "hybrid-served": "hybrid, served model",
    "served": "served model",
}

# the names of the resources that can bind
CPU = "browser (CPU)"
CPU_LOCAL_MODEL = "browser + local model (CPU)"
SLOTS = "browser slots (waiting)"
POOL = "account pool"
PROVISIONING = "provisioning API"
AUDIT = "audit-log API"
SERVING = "model serving (GPUs)"


def _assumption(default: float, unit: str, source: str) -> float:
    return field(default=default, metadata={"unit": unit, "source": source})


@dataclass(frozen=True)
class Assumptions:
    """What no results file holds. Each field is a command-line option (``--runner-price-min``)."""

    procedures: int = _assumption(
        54_000, "procedures", "the paper's audit (AliyunConsoleAgent, 2026): 54,000 procedures, 4,399 defects found")
    provisioned_share: float = _assumption(
        0.66, "share", "the paper: ~34% of procedures were ready on an empty real account without provisioning "
                       "(README, Readiness); the rest need their prerequisites provisioned")
    drift_share: float = _assumption(
        4399 / 54000, "share", "the paper's 4,399 defects in 54,000 procedures, taken as the share of procedures where "
                               "the literal follower is stuck and the hybrid policy asks its model (one defect each)")
    runner_price_min: float = _assumption(
        0.006, "USD/min", "GitHub's 'Actions runner pricing': a Linux 2-core x64 runner (Linux Advanced 2-core) "
                          "from 2026-01-01, $0.008 before; standard runners are free for public repositories")
    runner_setup_s: float = _assumption(
        120, "s/job", "assumed, not measured here: a CI job's checkout, pip install of docverify and Chromium's download")
    job_limit_h: float = _assumption(
        6, "h/job", "GitHub's limit on one job on a GitHub-hosted runner; longer shards are resumed in chained jobs")
    vm_price_h: float = _assumption(
        0.09, "USD/h", "assumed: on-demand list price of a 2-vCPU compute VM (e.g. AWS c7i.large in us-east-1)")
    node_boot_s: float = _assumption(
        180, "s", "assumed: a VM booting from an image with docverify installed and joining the Ray cluster")
    head_nodes: int = _assumption(1, "VMs", "assumed: the Ray head, where the command (and every result) runs")
    slots: int = _assumption(
        0, "procedures/machine", "procedures one machine runs at once; 0: the most workers scale.md ran on one "
                                   "machine of the backend")
    accounts: int = _assumption(200, "accounts", "assumed: the test accounts in the pool (one procedure each at a time)")
    account_rate_h: float = _assumption(
        60, "procedures/account/h", "assumed: the console's tolerance for one signed-in account (risk controls, "
                                    "captchas); no published figure")
    tenants: int = _assumption(
        1, "quotas", "Alibaba Cloud accounts x regions the pool spreads over: API rate limits count per API, "
                     "per account (its RAM users and the console's own calls included), per region")
    provision_api_rate_s: float = _assumption(
        10, "calls/s", "assumed order of magnitude for one provisioning API's quota; the real one per API is in "
                       "Quota Center > API Rate Limits (Alibaba's throttling doc gives 200/60 s and 5/1 s as examples)")
    provision_hot_calls: float = _assumption(
        4, "calls/provisioned procedure", "assumed: calls to the most-called API (a Describe* polled while a "
                                          "resource most stacks hold is created and destroyed)")
    audit_api_rate_s: float = _assumption(
        2, "calls/s", "ActionTrail's LookupEvents API reference: event details can be queried at most twice per "
                      "second (taken as per account and region)")
    audit_events_per_call: float = _assumption(
        1, "events/call", "today's checker: one LookupEvents call per expected event and look; a what-if for "
                          "look-ups batched per account and time window (a page holds up to 50 events)")
    criteria_per_procedure: float = _assumption(
        1, "events", "assumed: expected audit events per procedure (most benchmark tasks `expect:` one)")
    audit_delay_s: float = _assumption(
        0, "s", "the sandbox delivers audit events at once; real ActionTrail takes minutes (docs/aliyun-console.md), "
                "and the procedure holds its slot and account while the checker polls")
    provision_wait_s: float = _assumption(
        0, "s/provisioned procedure", "extra wait for a real cloud's resource creation and deletion (the sandbox's "
                                      "is in scale.md's figures)")
    gpus: int = _assumption(
        8, "GPUs", "assumed: one 8-GPU vLLM server shared by the fleet, a replica of a 32B model on each GPU")
    gpu_price_h: float = _assumption(
        3.0, "USD/GPU-h", "assumed: a typical on-demand H100 price at GPU clouds (hyperscalers charge more)")
    gpu_tokens_s: float = _assumption(
        5000, "tokens/s/GPU", "assumed, not measured: a 32B model on one H100 under vLLM on ~2,000-token prompts "
                              "(2 x 32e9 FLOPs a prompt token at ~40% of 989 dense BF16 TFLOPS ~ 6,000 tokens/s, "
                              "less decoding)")
    served_call_s: float = _assumption(
        1.5, "s/call", "assumed: one answer's latency from the loaded server (prefill of ~2,000 tokens, ~30 tokens "
                       "decoded)")

    @property
    def delivery_looks(self) -> int:
        """LookupEvents calls per expected event (see :func:`looks`)."""
        first, cap = poll_schedule()
        return looks(self.audit_delay_s, first, cap)


def poll_schedule() -> tuple[float, float]:
    """The actiontrail checker's first pause and the aliyun console's pause cap, from the code."""
    from docverify_actiontrail.checker import POLL_FIRST_S
    from docverify_aliyun.console import AliyunConsole

    return POLL_FIRST_S, float(AliyunConsole.Options.model_fields["audit_poll_cap_s"].default)


def looks(delay_s: float, first_s: float, cap_s: float) -> int:
    """How many times the checker asks the audit log for one event delivered ``delay_s`` after
    the procedure: at once, then after pauses of ``first_s``, doubling up to ``cap_s``."""
    count, waited, pause = 1, 0.0, first_s
    while waited < delay_s:
        waited += pause
        count += 1
        pause = min(pause * 2, max(cap_s, first_s))
    return count


# ---------------------------------------------------------------------------------------
# measured inputs


@dataclass(frozen=True)
class Machine:
    """One machine of a platform, as scale.md measured it at its best concurrency."""

    backend: str
    rate_none: float  #: procedures a second it sustains once up, no provisioning
    rate_provisioned: float  #: the same with Terraform provisioning
    latency_none: float  #: seconds one procedure takes at that concurrency
    latency_provisioned: float
    workers: int  #: the concurrency of those rows
    max_workers: int  #: the most procedures scale.md ran at once on one machine of this backend
    startup_s: float  #: docverify's start-up before the first procedure
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Measured:
    """Everything the model takes from the results files, with where it came from."""

    machines: dict[str, Machine]  #: backend -> its machine
    literal_turns: float  #: page actions per procedure, literal policy
    served_turns: float  #: turns of a policy that reaches every goal (the oracle)
    served_literal_turns: float  #: the literal policy's turns on the same tasks
    tokens_per_call: float  #: model tokens (prompt + completion) per model call
    calls_per_turn: float
    drifted: dict[str, float]  #: hybrid on drifted docs, per procedure: calls, tokens, model_turns
    clean: dict[str, float]  #: hybrid on current docs, per procedure
    local_tokens_s: float  #: the local model's tokens a second on one 2-core machine
    context: dict[str, object] = field(default_factory=dict)  #: sample sizes, dates, cross-checks
    sources: dict[str, str] = field(default_factory=dict)  #: figure -> "file: field"


def markdown_tables(text: str) -> list[list[dict[str, str]]]:
    """Every pipe table of a Markdown text, as rows keyed by header."""
    tables: list[list[dict[str, str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) - 1:
        line, rule = lines[i].strip(), lines[i + 1].strip()
        if line.startswith("|") and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", rule):
            header = [cell.strip() for cell in line.strip("|").split("|")]
            rows = []
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                cells = [cell.strip() for cell in lines[i].strip().strip("|").split("|")]
                rows.append(dict(zip(header, cells)))
                i += 1
            tables.append(rows)
        else:
            i += 1
    return tables


SCALE_TITLE = re.compile(r"\((?P<procedures>\d+) procedures of (?P<docs>.*?); literal policy; median of "
                         r"(?P<rounds>\d+) round\(s\); (?P<cpus>\d+) CPUs\)")


def read_scale(path: Path) -> tuple[dict[str, Machine], dict[str, object]]:
    """Each backend's machine from scale.md: per provisioning mode, the row with the most
    procedures a minute once up (more workers on a tie)."""
    text = path.read_text(encoding="utf-8")
    rows = next(t for t in markdown_tables(text) if t and "proc/min once up" in t[0])
    title = SCALE_TITLE.search(text)
    context = {key: title[key] for key in ("procedures", "docs", "rounds", "cpus")} if title else {}
    machines = {}
    for backend in sorted({row["backend"] for row in rows}):
        best = {}
        for provisioner in ("none", "terraform"):
            candidates = [row for row in rows if row["backend"] == backend and row["provisioning"] == provisioner]
            if not candidates:
                raise ValueError(f"{path}: no {backend}/{provisioner} rows")
            best[provisioner] = max(candidates, key=lambda row: (float(row["proc/min once up"]), int(row["workers"])))
        none, tf = best["none"], best["terraform"]
        machines[backend] = Machine(
            backend=backend,
            rate_none=float(none["proc/min once up"]) / 60, rate_provisioned=float(tf["proc/min once up"]) / 60,
            latency_none=float(none["s/procedure"]), latency_provisioned=float(tf["s/procedure"]),
            workers=max(int(none["workers"]), int(tf["workers"])),
            max_workers=max(int(row["workers"]) for row in rows if row["backend"] == backend),
            startup_s=max(float(none["start-up s"]), float(tf["start-up s"])),
            sources=tuple(f"{path.name}: {backend}/{row['provisioning']}, {row['workers']} workers: "
                          f"'proc/min once up' {row['proc/min once up']}, 's/procedure' {row['s/procedure']}, "
                          f"'start-up s' {row['start-up s']}" for row in (none, tf)))
    return machines, context


def _bench(results: Path, name: str) -> dict:
    return json.loads((results / "bench" / f"{name}.json").read_text(encoding="utf-8"))


def _folder(models: dict, folder: str) -> dict:
    return next(entry for entry in models["share"] if entry["folder"] == folder)


def read_measured(results: Path = RESULTS) -> Measured:
    machines, scale = read_scale(results / "scale.md")
    literal, oracle, llamacpp = _bench(results, "literal"), _bench(results, "oracle-eval"), _bench(results, "llamacpp")
    empty = _bench(results, "empty-none")
    models = json.loads((results / "models.json").read_text(encoding="utf-8"))

    oracle_tasks = {attempt["task"] for attempt in oracle["attempts"]}
    same = [attempt["turns"] for attempt in literal["attempts"] if attempt["task"] in oracle_tasks]
    llama = llamacpp["scores"]["all"]

    def per_procedure(entry: dict) -> dict[str, float]:
        usage, n = entry["usage"], entry["procedures"]
        return {"calls": usage["calls"] / n, "tokens": (usage["tokens_in"] + usage["tokens_out"]) / n,
                "model_turns": usage["model_turns"] / n, "procedures": n}

    def minutes(run: dict) -> float:
        span = datetime.fromisoformat(run["finished_at"]) - datetime.fromisoformat(run["started_at"])
        return span.total_seconds() / 60

    drifted, clean = _folder(models, "examples/drifted"), _folder(models, "examples/docs")
    return Measured(
        machines=machines,
        literal_turns=literal["scores"]["all"]["turns_per_task"],
        served_turns=oracle["scores"]["all"]["turns_per_task"],
        served_literal_turns=sum(same) / len(same),
        tokens_per_call=(llama["tokens_in_per_task"] + llama["tokens_out_per_task"]) / llama["calls_per_task"],
        calls_per_turn=llama["calls_per_task"] / llama["turns_per_task"],
        drifted=per_procedure(drifted), clean=per_procedure(clean),
        local_tokens_s=models["speed"]["tokens_per_s"],
        context={
            "scale": scale,
            "literal_tasks": len(literal["attempts"]), "oracle_tasks": len(oracle["attempts"]),
            "llamacpp_tasks": len(llamacpp["attempts"]), "llamacpp_label": llamacpp.get("label"),
            "models_machine": models.get("machine"), "speed_procedures": models["speed"]["procedures"],
            "bench_literal_per_min": len(literal["attempts"]) / minutes(literal), "bench_literal_jobs": literal["jobs"],
            "bench_literal_date": literal["started_at"][:10],
            "empty_unready_share": empty["scores"]["all"]["env_error_rate"],
            "empty_tasks": len(empty["attempts"]),
        },
        sources={
            "literal_turns": "bench/literal.json: scores.all.turns_per_task",
            "served_turns": "bench/oracle-eval.json: scores.all.turns_per_task (a policy that reaches all 130 goals)",
            "served_literal_turns": "bench/literal.json: attempts[].turns on the oracle's tasks",
            "tokens_per_call": "bench/llamacpp.json: scores.all (tokens_in_per_task + tokens_out_per_task) / "
                               "calls_per_task",
            "calls_per_turn": "bench/llamacpp.json: scores.all calls_per_task / turns_per_task",
            "drifted": "models.json: share[examples/drifted].usage (calls, tokens_in + tokens_out, model_turns) / "
                       "procedures",
            "clean": "models.json: share[examples/docs].usage / procedures",
            "local_tokens_s": "models.json: speed.tokens_per_s (SmolLM2-135M, llama.cpp, 2 cores)",
        },
    )


# ---------------------------------------------------------------------------------------
# the model


@dataclass(frozen=True)
class Load:
    """What one procedure of a policy asks of each resource."""

    policy: str
    cpu_s: float  #: machine-seconds of a saturated machine
    latency_s: float  #: seconds it holds a slot and an account
    tokens: float  #: served-model tokens
    served: bool  #: uses the shared GPU server
    local_model: bool = False  #: its model runs on the machine's CPU


def loads(measured: Measured, machine: Machine, a: Assumptions) -> dict[str, Load]:
    """Each policy's load per procedure on ``machine``. The literal policy's CPU and latency mix
    scale.md's rows by the provisioned share; a model policy adds turns (each costing what a
    literal turn costs) and model time."""
    p = a.provisioned_share
    cpu = (1 - p) / machine.rate_none + p / machine.rate_provisioned
    latency = (1 - p) * machine.latency_none + p * machine.latency_provisioned
    waits = a.audit_delay_s + p * a.provision_wait_s
    turn_cpu, turn_latency = cpu / measured.literal_turns, latency / measured.literal_turns
    d = a.drift_share
    mix = {key: d * measured.drifted[key] + (1 - d) * measured.clean[key] for key in ("calls", "tokens", "model_turns")}
    local_s = mix["tokens"] / measured.local_tokens_s
    ratio = measured.served_turns / measured.served_literal_turns
    served_calls = measured.served_turns * measured.calls_per_turn
    return {
        "literal": Load("literal", cpu, latency + waits, 0.0, served=False),
        "hybrid-local": Load("hybrid-local", cpu + mix["model_turns"] * turn_cpu + local_s,
                             latency + mix["model_turns"] * turn_latency + local_s + waits, 0.0,
                             served=False, local_model=True),
        "hybrid-served": Load("hybrid-served", cpu + mix["model_turns"] * turn_cpu,
                              latency + mix["model_turns"] * turn_latency + mix["calls"] * a.served_call_s + waits,
                              mix["tokens"], served=True),
        "served": Load("served", cpu * ratio, latency * ratio + served_calls * a.served_call_s + waits,
                       served_calls * measured.tokens_per_call, served=True),
    }


def slots_of(machine: Machine, a: Assumptions) -> int:
    return a.slots or machine.max_workers


def machine_limits(load: Load, slots: int) -> dict[str, float]:
    """Procedures an hour one machine can do, by what would stop it."""
    return {CPU_LOCAL_MODEL if load.local_model else CPU: 3600 / load.cpu_s, SLOTS: slots * 3600 / load.latency_s}


def shared_limits(load: Load, a: Assumptions) -> dict[str, float]:
    """Procedures an hour the whole fleet can do, by each shared resource (whatever N is)."""
    limits = {POOL: a.accounts * min(a.account_rate_h, 3600 / load.latency_s)}
    if a.provisioned_share > 0:
        limits[PROVISIONING] = a.tenants * a.provision_api_rate_s * 3600 / (a.provisioned_share * a.provision_hot_calls)
    limits[AUDIT] = (a.tenants * a.audit_api_rate_s * 3600 * a.audit_events_per_call
                     / (a.criteria_per_procedure * a.delivery_looks))
    if load.served and load.tokens > 0:
        limits[SERVING] = a.gpus * a.gpu_tokens_s * 3600 / load.tokens
    return limits


def fleet_limits(load: Load, a: Assumptions, n: int, slots: int) -> dict[str, float]:
    limits = {name: n * rate for name, rate in machine_limits(load, slots).items()}
    limits.update(shared_limits(load, a))
    return limits


@dataclass(frozen=True)
class Platform:
    """Where the machines come from and how they are paid."""

    name: str
    machine: Machine
    price_h: float  #: per machine-hour
    setup_s: float  #: before docverify starts (a CI job's setup, a VM's boot)
    job_limit_s: float | None  #: longest job (CI), None: no limit
    round_minutes: bool  #: billed per started minute of each job
    extra_machines: int = 0  #: paid for but running no procedure (a Ray head)


def platforms(measured: Measured, a: Assumptions) -> list[Platform]:
    return [
        Platform("CI runners (GitHub-hosted, 2 cores, local backend)", measured.machines["local"],
                 price_h=a.runner_price_min * 60, setup_s=a.runner_setup_s, job_limit_s=a.job_limit_h * 3600,
                 round_minutes=True),
        Platform("Ray cluster (2-vCPU VMs, ray backend)", measured.machines["ray"], price_h=a.vm_price_h,
                 setup_s=a.node_boot_s, job_limit_s=None, round_minutes=False, extra_machines=a.head_nodes),
    ]


@dataclass(frozen=True)
class Estimate:
    platform: str
    policy: str
    machines: int
    per_hour: float  #: procedures an hour the fleet sustains
    bottleneck: str
    runner_up: str  #: the next limit
    headroom: float  #: the next limit / the bottleneck's
    work_h: float  #: procedures / per_hour
    wall_h: float
    jobs: int  #: jobs per machine (chained CI jobs), 1 elsewhere
    machine_h: float  #: billed machine-hours (every machine, the whole run)
    gpu_h: float
    machine_usd: float
    gpu_usd: float
    tokens: float  #: served-model tokens in all

    @property
    def usd(self) -> float:
        return self.machine_usd + self.gpu_usd


def _billed_s(seconds: float, round_minutes: bool) -> float:
    return math.ceil(seconds / 60 - 1e-9) * 60 if round_minutes else seconds


def estimate(platform: Platform, load: Load, a: Assumptions, n: int) -> Estimate:
    """The wall time, machine-hours and money of ``a.procedures`` procedures on ``n`` machines."""
    limits = fleet_limits(load, a, n, slots_of(platform.machine, a))
    ranked = sorted(limits.items(), key=lambda item: item[1])
    (bottleneck, per_hour), (runner_up, next_rate) = ranked[0], ranked[1]
    work_s = 3600 * a.procedures / per_hour
    start_s = platform.setup_s + platform.machine.startup_s
    if platform.job_limit_s is None:
        jobs, wall_s, billed_s = 1, start_s + work_s, start_s + work_s
    else:
        budget = platform.job_limit_s - start_s
        if budget <= 0:
            raise ValueError("a job's setup takes longer than the job limit")
        jobs = max(1, math.ceil(work_s / budget))
        wall_s = jobs * start_s + work_s
        last = start_s + work_s - (jobs - 1) * budget
        billed_s = ((jobs - 1) * _billed_s(platform.job_limit_s, platform.round_minutes)
                    + _billed_s(last, platform.round_minutes))
    machine_h = (n + platform.extra_machines) * billed_s / 3600
    gpu_h = a.gpus * wall_s / 3600 if load.served else 0.0
    return Estimate(
        platform=platform.name, policy=load.policy, machines=n, per_hour=per_hour, bottleneck=bottleneck,
        runner_up=runner_up, headroom=next_rate / per_hour, work_h=work_s / 3600, wall_h=wall_s / 3600, jobs=jobs,
        machine_h=machine_h, gpu_h=gpu_h, machine_usd=machine_h * platform.price_h, gpu_usd=gpu_h * a.gpu_price_h,
        tokens=load.tokens * a.procedures,
    )


def estimates(measured: Measured, a: Assumptions, machines: list[int]) -> list[Estimate]:
    out = []
    for platform in platforms(measured, a):
        policy_loads = loads(measured, platform.machine, a)
        for n in machines:
            for policy in POLICIES:
                out.append(estimate(platform, policy_loads[policy], a, n))
    return out


def saturation(load: Load, a: Assumptions, slots: int) -> tuple[float, str, float, str]:
    """(procedures an hour one machine does, what stops it, the lowest shared limit, its name)."""
    own = machine_limits(load, slots)
    shared = shared_limits(load, a)
    machine_name = min(own, key=own.get)
    shared_name = min(shared, key=shared.get)
    return own[machine_name], machine_name, shared[shared_name], shared_name


# ---------------------------------------------------------------------------------------
# the report


def _hours(h: float) -> str:
    return f"{h:,.1f} h" if h < 100 else f"{h:,.0f} h"


def _usd(x: float) -> str:
    return f"${x:,.2f}" if x < 100 else f"${x:,.0f}"


def _n(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def table(rows: list[Estimate], procedures: int) -> list[str]:
    lines = ["| machines | policy | procedures/h | wall | machine-h | GPU-h | machines $ | GPUs $ | total $ | "
             "$ per 1,000 | bottleneck; next limit, its headroom |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for e in rows:
        jobs = f" ({e.jobs} jobs)" if e.jobs > 1 else ""
        lines.append(
            f"| {e.machines} | {POLICY_TEXT[e.policy]} | {_n(e.per_hour)} | {_hours(e.wall_h)}{jobs} | "
            f"{_n(e.machine_h, 1)} | {_n(e.gpu_h, 1) if e.gpu_h else '—'} | {_usd(e.machine_usd)} | "
            f"{_usd(e.gpu_usd) if e.gpu_h else '—'} | **{_usd(e.usd)}** | {_usd(1000 * e.usd / procedures)} | "
            f"{e.bottleneck}; next: {e.runner_up} ×{e.headroom:.1f} |")
    return lines


def assumption_rows(a: Assumptions) -> list[str]:
    lines = ["| assumption | value | unit | option | source |", "|---|---:|---|---|---|"]
    for f in fields(a):
        value = getattr(a, f.name)
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        if f.name == "slots" and not value:
            shown = "0 (measured)"
        lines.append(f"| {f.name} | {shown} | {f.metadata['unit']} | `--{f.name.replace('_', '-')}` | "
                     f"{f.metadata['source']} |")
    return lines


def measured_rows(m: Measured) -> list[str]:
    lines = ["| measured input | value | source (results file: field) |", "|---|---:|---|"]
    for backend, machine in m.machines.items():
        lines.append(f"| {backend} machine, no provisioning | {machine.rate_none * 3600:,.0f} procedures/h, "
                     f"{machine.latency_none:.1f} s each | {machine.sources[0]} |")
        lines.append(f"| {backend} machine, Terraform | {machine.rate_provisioned * 3600:,.0f} procedures/h, "
                     f"{machine.latency_provisioned:.1f} s each | {machine.sources[1]} |")
    for name, value, unit in (
            ("literal_turns", m.literal_turns, "turns/procedure"),
            ("served_turns", m.served_turns, "turns/procedure"),
            ("served_literal_turns", m.served_literal_turns, "turns/procedure"),
            ("tokens_per_call", m.tokens_per_call, "tokens/call"),
            ("calls_per_turn", m.calls_per_turn, "calls/turn"),
            ("local_tokens_s", m.local_tokens_s, "tokens/s")):
        lines.append(f"| {name} | {value:,.2f} {unit} | {m.sources[name]} |")
    for name in ("drifted", "clean"):
        usage = getattr(m, name)
        lines.append(f"| hybrid on {name} docs | {usage['calls']:.2f} calls, {usage['tokens']:,.0f} tokens, "
                     f"{usage['model_turns']:.2f} model turns per procedure ({usage['procedures']:.0f} procedures) | "
                     f"{m.sources[name]} |")
    return lines


EQUATIONS = """\
One procedure of policy *π* asks of each resource (*p* = provisioned share, *d* = drift share):

- **CPU** of a machine, in seconds of a saturated 2-core machine:
  `c_lit = (1−p)/r_none + p/r_tf`, where `r_none`, `r_tf` are the procedures a second scale.md
  measured once up at the machine's best concurrency (its `proc/min once up`, the best row per
  backend and provisioning mode), so the browser, the console, Terraform and the sandbox
  sharing the 2 cores are all in it. A model policy adds its extra turns at `c_lit / T_lit`
  each (*T_lit*: the literal policy's turns per procedure); `hybrid, local model` adds its
  model's tokens ÷ the local model's measured tokens/s (llama.cpp takes the whole machine);
  `served model` scales `c_lit` by `T_served / T_lit` on the same tasks.
- **Latency** (how long it holds a slot and an account): `L_lit = (1−p)·L_none + p·L_tf`
  (scale.md's `s/procedure` at that concurrency), scaled the same way, plus model time
  (`calls × served_call_s`, or the local model's seconds), plus the audit log's delivery
  delay and the real cloud's provisioning wait (the checker polls while the browser session,
  the stack and the account lease are still held: `docverify/run/runner.py`).
- **Served tokens**: `served model`: `T_served × calls/turn × tokens/call`;
  `hybrid`: `d × tokens per drifted procedure + (1−d) × tokens per current one`.

The fleet's throughput (procedures an hour) is the smallest of

| resource | procedures/h |
|---|---|
| browser (CPU) | `N × 3600 / c` |
| browser slots (waiting) | `N × S × 3600 / L` (*S* procedures at once per machine) |
| account pool | `A × min(r_account, 3600 / L)` (one procedure per account at a time) |
| provisioning API | `Q × q_prov × 3600 / (p × k_hot)` (*Q* account-region quotas; *k_hot* calls to the most-called API) |
| audit-log API | `Q × q_audit × 3600 × events per call / (criteria × looks(delay))` |
| model serving (GPUs) | `G × tokens/s per GPU × 3600 / tokens per procedure` |

and the one that gives the minimum is the bottleneck. `looks(delay)` is the checker's own
schedule (`docverify_actiontrail.checker.POLL_FIRST_S`, doubling up to the aliyun console's
`audit_poll_cap_s`): one look when the event is already there.

Wall time = setup + docverify's start-up (scale.md's `start-up s`) + `procedures / throughput`.
On CI a shard longer than the job limit is resumed in chained jobs, each paying the setup
again; every job is billed per started minute. Every machine is paid for the whole run (a
shard whose machine waits on a shared limit still holds its runner); a Ray cluster adds its
head node. The GPU server is paid for the whole wall time when the policy uses it.
"""

LEFT_OUT = """\
- **The sandbox is not the cloud.** The machine figures come from the sandbox console running
  on the same 2 cores as the browser (it costs CPU a real console would not) and answering in
  milliseconds (a real console's pages and resource creation take longer: `--provision-wait-s`,
  `--audit-delay-s`). Real consoles' own page traffic also counts against the same per-API
  quotas as provisioning (Alibaba's throttling docs count console calls), which the model
  leaves out.
- **Queueing.** Each resource is a hard ceiling (`min`); near a ceiling, waits grow (a GPU
  server near saturation answers slower, a throttled API is retried), so real runs near a
  switch point are slower than the table.
- **Failures and retries.** ENV_ERRORs, retried procedures, a worker's death, and the
  provisioned resources' own cloud bill are not in the figures.
- **The models measured are small.** Tokens per call come from SmolLM2-135M's prompts
  (another tokenizer counts differently), the served model's turns from the oracle (a
  policy that reaches every goal: a served 32B model may need more), and the hybrid
  policy's hand-overs from a model that gave every one up (a model that resolves them
  goes on past the first drift, taking more turns).
"""


def report(measured: Measured, a: Assumptions, machines: list[int], results: Path) -> str:
    rows = estimates(measured, a, machines)
    scale = measured.context["scale"]
    ctx = measured.context
    lines = [f"# Auditing {a.procedures:,} procedures: wall time, cost and bottlenecks on N machines", "",
             f"`python benchmark/audit_model.py -o benchmark/results/audit-model.md` — a model, not a measurement: "
             f"per-procedure figures measured on one {scale.get('cpus', '?')}-core shared machine "
             f"(the results in `{_rel(results)}/`), multiplied out with the assumptions listed below (each an option). "
             f"Machines {', '.join(map(str, machines))}; policies literal, hybrid (literal + a model when stuck, "
             f"the model on each machine's CPU or on the shared GPU server) and a served model driving every "
             f"turn (a 32B model under vLLM on {a.gpus} GPU(s) shared by the fleet).", ""]

    headline = {(e.platform, e.policy, e.machines): e for e in rows}
    for platform in platforms(measured, a):
        lines += [f"## {platform.name}", ""]
        lines += table([e for e in rows if e.platform == platform.name], a.procedures)
        lines.append("")

    lines += ["## Where the bottleneck moves", ""]
    lines += bottleneck_prose(measured, a, headline, machines)
    lines += ["", "## Sensitivity", ""]
    lines += sensitivity(measured, a, machines)
    lines += ["", "## The model", "", EQUATIONS]
    lines += ["## Inputs", "",
              f"Measured (what it was measured on: scale.md, {scale.get('procedures', '?')} procedures of "
              f"{scale.get('docs', '?')}, {scale.get('rounds', '?')} round(s) on {scale.get('cpus', '?')} shared "
              f"CPUs, the literal policy, the sandbox console; bench/: task set 0.3's eval split, "
              f"{ctx['literal_tasks']} tasks for literal and the oracle, {ctx['llamacpp_tasks']} for "
              f"{ctx['llamacpp_label']}; models.json: {ctx['speed_procedures']} procedures for the speed, "
              f"{measured.drifted['procedures']:.0f} drifted and {measured.clean['procedures']:.0f} current docs for "
              f"the hybrid share, on {ctx['models_machine']}):", ""]
    lines += measured_rows(measured)
    tf_per_min = measured.machines["local"].rate_provisioned * 60
    lines += ["", f"Cross-check on more procedures: the benchmark's {ctx['literal_tasks']} literal tasks ran at "
                  f"{ctx['bench_literal_per_min']:.1f} tasks/min with `--jobs {ctx['bench_literal_jobs']}` "
                  f"({ctx['bench_literal_date']}, bench/literal.json started_at → finished_at; Terraform for what "
                  f"each task declares, on seeded accounts, start-up included), "
                  f"{ctx['bench_literal_per_min'] / tf_per_min:.2f}x the {tf_per_min:.1f}/min of scale.md's best "
                  f"local Terraform row, which provisions for every procedure.", "",
              "Assumptions (no results file holds them; override each with its option):", ""]
    lines += assumption_rows(a)
    lines += ["", f"With `--audit-delay-s {a.audit_delay_s:g}` the checker looks "
                  f"{a.delivery_looks} time(s) per expected event.", "", "## What the model leaves out", "", LEFT_OUT]
    return "\n".join(lines).rstrip() + "\n"


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def bottleneck_prose(measured: Measured, a: Assumptions, rows: dict, machines: list[int]) -> list[str]:
    lines = ["Per machine (what one machine sustains and what stops it) and the shared limits, which no number "
             "of machines raises; *N\\** is the fleet size at which the lowest shared limit takes over:", "",
             "| platform | policy | per machine /h | stopped by | lowest shared limit /h | which | N* | "
             f"{a.procedures:,} at that limit |",
             "|---|---|---:|---|---:|---|---:|---:|"]
    notes = []
    for platform in platforms(measured, a):
        slots = slots_of(platform.machine, a)
        policy_loads = loads(measured, platform.machine, a)
        for policy in POLICIES:
            own, own_name, shared, shared_name = saturation(policy_loads[policy], a, slots)
            star = shared / own
            lines.append(f"| {platform.name.split(' (')[0]} | {POLICY_TEXT[policy]} | {_n(own)} | {own_name} | "
                         f"{_n(shared)} | {shared_name} | {star:,.1f} | {_hours(a.procedures / shared)} |")
            if platform.machine.backend == "local":
                notes.append((policy, own, own_name, shared, shared_name, star, policy_loads[policy]))
    lines += ["", "On CI runners:", ""]
    ci = platforms(measured, a)[0].name
    for policy, own, own_name, shared, shared_name, star, load in notes:
        small = [n for n in machines if n < star]
        large = [n for n in machines if n >= star]
        text = (f"- **{POLICY_TEXT[policy]}** ({load.latency_s:.1f} s, {load.cpu_s:.2f} machine-s and "
                f"{_n(load.tokens)} served-model tokens a procedure): one machine does {_n(own)} an hour, stopped "
                f"by {own_name}; ")
        if small and large:
            first = rows[(ci, policy, large[0])]
            text += (f"up to {small[-1]} machine(s) the machines are the bottleneck, and from {large[0]} on the "
                     f"{shared_name} is ({_n(shared)} procedures/h: {a.procedures:,} take {_hours(first.wall_h)} "
                     f"whatever N, so more machines only add cost; next: {first.runner_up}, "
                     f"{first.headroom:.1f}x higher).")
        elif small:
            text += (f"the machines bind at every N here; the {shared_name} would take over from "
                     f"{star:,.0f} machines.")
        else:
            text += f"the {shared_name} binds already at one machine ({_n(shared)} procedures/h)."
        if load.served and load.tokens:
            per_gpu = a.gpu_tokens_s * 3600 / load.tokens
            text += (f" One GPU serves {_n(per_gpu)} of its procedures an hour: enough for "
                     f"{per_gpu / own:.1f} machine(s).")
        lines.append(text)
    bound = {e.bottleneck for e in rows.values()}
    if AUDIT in bound:
        page = audit_page_size()
        lines += ["", f"The audit-log API binds because the checker asks LookupEvents for each expected event of "
                      f"each procedure, at each look (`plugins/docverify_actiontrail/checker.py`). One page holds up "
                      f"to {page} events, so one look per account and time window for every procedure in flight "
                      f"would raise this limit up to {page}-fold; more accounts or regions with their own quota "
                      f"(`--tenants`) multiply it. With a real delivery delay the checker also holds the "
                      f"procedure's browser slot and account while it polls (`docverify/run/runner.py`), so the "
                      f"delay lands in every procedure's latency (see Sensitivity)."]
    return lines


def audit_page_size() -> int:
    """Events one LookupEvents page holds: the actiontrail checker's ``max_results`` bound."""
    from docverify_actiontrail.checker import ActionTrailChecker

    metadata = ActionTrailChecker.Options.model_fields["max_results"].metadata
    return int(next(m.le for m in metadata if hasattr(m, "le")))


def sensitivity(measured: Measured, a: Assumptions, machines: list[int]) -> list[str]:
    n = 64 if 64 in machines else machines[-1]
    ctx = measured.context
    variants = [
        ("as above", {}),
        ("ActionTrail delivers after 300 s (`--audit-delay-s 300`)", {"audit_delay_s": 300.0}),
        ("300 s, and look-ups batched 50 events a call (`--audit-events-per-call 50`)",
         {"audit_delay_s": 300.0, "audit_events_per_call": 50.0}),
        ("API quotas of 4 accounts or regions (`--tenants 4`)", {"tenants": 4}),
        (f"provisioned share as the benchmark's empty accounts measured ({ctx['empty_unready_share']:.1%}, "
         f"bench/empty-none.json scores.all.env_error_rate)", {"provisioned_share": ctx["empty_unready_share"]}),
        ("one GPU (`--gpus 1`)", {"gpus": 1}),
        ("twice the GPU tokens/s (FP8, prefix caching: `--gpu-tokens-s`)", {"gpu_tokens_s": 2 * a.gpu_tokens_s}),
        ("400 accounts, 120 procedures an account-hour", {"accounts": 400, "account_rate_h": 120.0}),
    ]
    lines = [f"{a.procedures:,} procedures on {n} CI runners, one assumption changed at a time:", "",
             "| change | literal | hybrid, served model | served model |", "|---|---|---|---|"]
    for label, change in variants:
        changed = replace(a, **change)
        platform = platforms(measured, changed)[0]
        policy_loads = loads(measured, platform.machine, changed)
        cells = []
        for policy in ("literal", "hybrid-served", "served"):
            e = estimate(platform, policy_loads[policy], changed, n)
            cells.append(f"{_hours(e.wall_h)}, {_usd(e.usd)}, {e.bottleneck}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


# ---------------------------------------------------------------------------------------
# command line


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawTextHelpFormatter)
    cli.add_argument("--results", type=Path, default=RESULTS, help="the committed results folder (default: %(default)s)")
    cli.add_argument("--machines", type=int, nargs="+", default=[1, 4, 16, 64, 256], help="fleet sizes N")
    cli.add_argument("-o", "--out", type=Path, default=None, help="write the Markdown here as well")
    group = cli.add_argument_group("assumptions (each printed with its source)")
    for f in fields(Assumptions):
        kind = int if f.type in ("int", int) else float
        group.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, type=kind, default=f.default,
                           help=f"{f.metadata['unit']} (default {f.default:g}): {f.metadata['source']}"
                           .replace("%", "%%"))
    return cli


def main(argv: list[str] | None = None) -> str:
    args = parser().parse_args(argv)
    a = Assumptions(**{f.name: getattr(args, f.name) for f in fields(Assumptions)})
    for name in ("provisioned_share", "drift_share"):
        if not 0 <= getattr(a, name) <= 1:
            sys.exit(f"--{name.replace('_', '-')} is a share: between 0 and 1")
    if min(args.machines) < 1:
        sys.exit("--machines: at least one machine")
    measured = read_measured(args.results)
    text = report(measured, a, args.machines, args.results)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return text


if __name__ == "__main__":
    main()
