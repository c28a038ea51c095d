"""``docverify bench report``: results of several policies as Markdown, with plots.

The Markdown needs nothing more; the plots (PNG, matplotlib, the ``bench`` extra)
are success by category and by product per policy, cost against success, and
readiness per environment (what the accounts started with, the provisioner).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from docverify.errors import ConfigError
from docverify_bench.run import environment
from docverify_bench.score import UNREADY, estimate, score
from docverify_bench.stats import Estimate

#: The ENV_ERROR causes the readiness table has a column for; the rest are "other".
NAMED_CAUSES = (*UNREADY, "teardown failed")


def label(results: Mapping[str, Any]) -> str:
    """A results file's name in the report: its ``--label``, else its policy and its
    engine's model when it has one."""
    if results.get("label"):
        return str(results["label"])
    settings = results.get("config", {}).get("policy", {})
    model = settings.get(results["policy"], {}).get("model") if isinstance(settings, dict) else None
    return f"{results['policy']} ({model})" if model else results["policy"]


def _scored(named: Sequence[tuple[str, Mapping[str, Any]]]) -> list[tuple[str, Mapping[str, Any]]]:
    """Each results file's scores: those it holds, or computed from its attempts (an interrupted run)."""
    return [(name, results.get("scores") or score(results["tasks"], results["attempts"])) for name, results in named]


def _cell(data: Mapping[str, Any] | None) -> str:
    return estimate(data["pass@1"]).describe() if data and data["scored"] else "—"


def markdown(named: Sequence[tuple[str, Mapping[str, Any]]], plots: Sequence[Path] = ()) -> str:
    """The report's Markdown: one row per policy and split, then pass@1 by category and product."""
    scored = _scored(named)
    versions = sorted({results["task_set"]["version"] for _, results in named})
    lines = [f"# Benchmark: {', '.join(name for name, _ in named)}", "",
             f"Task set {', '.join(versions)}; success decided by the audit log only; "
             "pass@1 with its bootstrap 95% interval over tasks.", ""]
    lines += ["| policy | split | tasks | pass@1 | pass@k | pass^k | ENV_ERROR | cost/task | wall/task |",
              "|---|---|---:|---|---|---|---:|---:|---:|"]
    for name, scores in scored:
        for split, data in [("all", scores["all"]), *sorted(scores["split"].items())]:
            k = max((int(key[5:]) for key in data if key.startswith("pass@")), default=1)
            at_k = f"{100 * data[f'pass@{k}']['value']:.1f}% (k={k})" if k > 1 else "—"
            hat_k = f"{100 * data[f'pass^{k}']['value']:.1f}%" if k > 1 else "—"
            cost = data.get("cost_usd_per_task")
            lines.append(f"| {name} | {split} | {data['scored']} | {_cell(data)} | {at_k} | {hat_k} | "
                         f"{100 * data['env_error_rate']:.1f}% | {'$%.4f' % cost if cost else '$0'} | "
                         f"{data['duration_s_per_task'] or 0:.1f} s |")
    for group in ("category", "product"):
        values = sorted({value for _, scores in scored for value in scores[group]})
        lines += ["", f"## pass@1 by {group}", "", "| policy | " + " | ".join(values) + " |",
                  "|---|" + "---|" * len(values)]
        for name, scores in scored:
            lines.append(f"| {name} | " + " | ".join(_cell(scores[group].get(value)) for value in values) + " |")
    lines += ["", "## Readiness", "",
              "Attempts whose prerequisites existed when they ran, per environment: what the sandbox's accounts "
              "started with (`seeded`, or `empty` as a new account) and the provisioner.", "",
              "| run | accounts | provisioner | attempts | readiness | prerequisite missing | provisioning failed "
              "| teardown failed | other ENV_ERROR | setup/task |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (name, results), (_, scores) in zip(named, scored):
        env = _environment(results)
        causes = Counter(a.get("env_cause") for a in results["attempts"] if a.get("env_error"))
        data = scores["all"]
        ready = data.get("readiness")
        lines.append(f"| {name} | {env['resources']} | {env['provisioner']} | {data['attempts']} | "
                     + (f"{100 * ready:.1f}%" if ready is not None else "—")
                     + "".join(f" | {causes.get(cause, 0)}" for cause in NAMED_CAUSES)
                     + f" | {sum(n for cause, n in causes.items() if cause not in NAMED_CAUSES)}"
                     + f" | {data.get('setup_s_per_task') or 0:.1f} s |")
    lines += handover_lines(scored)
    if plots:
        lines += ["", "## Plots", ""] + [f"![{path.stem}]({path.name})" for path in plots]
    return "\n".join(lines) + "\n"


def handover_lines(scored: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """The hybrid hand-overs section (none when no run records hand-overs)."""
    rows = [(name, scores["all"]["handovers"]) for name, scores in scored if "handovers" in scores["all"]]
    if not any(data["attempts"] for _, data in rows):
        return []

    def share(n: int, rate: float | None) -> str:
        return f"{n} ({100 * rate:.1f}%)" if rate is not None else "—"

    lines = ["", "## Hand-overs", "",
             "Steps a hybrid policy's literal follower could not do and handed to its model: how many the model "
             "said it finished, and how many of the attempts with a hand-over reached the goal (audit log).", "",
             "| run | attempts with a hand-over | hand-overs | finished by the model | goal reached |",
             "|---|---:|---:|---:|---:|"]
    for name, data in rows:
        lines.append(f"| {name} | {data['attempts']} | {data['handovers']} | {share(data['done'], data['done_rate'])} "
                     f"| {share(data['goal_reached'], data['goal_rate'])} |")
    return lines


def pyplot() -> Any:
    """matplotlib's pyplot, drawing to files (the ``bench`` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError("plots need matplotlib", hint="pip install 'docverify[bench]', or give --no-plots") from None
    return plt


def plot(named: Sequence[tuple[str, Mapping[str, Any]]], folder: Path) -> list[Path]:
    """PNG plots into ``folder``: pass@1 by category and by product per policy (with
    intervals), and cost per task against pass@1."""
    plt = pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    scored = _scored(named)
    written = []
    for group in ("category", "product"):
        values = sorted({value for _, scores in scored for value in scores[group]})
        figure, axes = plt.subplots(figsize=(max(6.0, 0.9 * len(values) * max(1, len(scored))), 4))
        width = 0.8 / max(1, len(scored))
        for index, (name, scores) in enumerate(scored):
            estimates = [_estimate(scores[group].get(value)) for value in values]
            xs = [i + index * width for i in range(len(values))]
            heights = [100 * e.value for e in estimates]
            errors = [[100 * (e.value - e.low) for e in estimates], [100 * (e.high - e.value) for e in estimates]]
            axes.bar(xs, heights, width, yerr=errors, capsize=3, label=name)
        axes.set_xticks([i + width * (len(scored) - 1) / 2 for i in range(len(values))], values, rotation=30, ha="right")
        axes.set_ylabel("pass@1 (%)")
        axes.set_ylim(0, 105)
        axes.set_title(f"Success by {group}")
        axes.legend()
        figure.tight_layout()
        path = folder / f"success-by-{group}.png"
        figure.savefig(path, dpi=110)
        plt.close(figure)
        written.append(path)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.2 * len(named)), 4))
    environments = [_environment(results) for _, results in named]
    names = [f"{name}\n{env['resources']}, {env['provisioner']}" for (name, _), env in zip(named, environments)]
    axes.bar(range(len(named)), [100 * (scores["all"].get("readiness") or 0.0) for _, scores in scored])
    axes.set_xticks(range(len(named)), names, fontsize=8)
    axes.set_ylabel("readiness (%)")
    axes.set_ylim(0, 105)
    axes.set_title("Readiness by environment (accounts, provisioner)")
    figure.tight_layout()
    path = folder / "readiness.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    written.append(path)
    figure, axes = plt.subplots(figsize=(6, 4))
    for name, scores in scored:
        data = scores["all"]
        axes.scatter([data.get("cost_usd_per_task") or 0.0], [100 * data["pass@1"]["value"]], label=name)
    axes.set_xlabel("cost per task (USD)")
    axes.set_ylabel("pass@1 (%)")
    axes.set_ylim(0, 105)
    axes.set_title("Cost against success")
    axes.legend()
    figure.tight_layout()
    path = folder / "cost-vs-success.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    written.append(path)
    return written


def _environment(results: Mapping[str, Any]) -> dict[str, str]:
    """A results file's environment; files written before it was recorded read it from their configuration."""
    return results.get("environment") or environment(results.get("config", {}))


def _estimate(data: Mapping[str, Any] | None) -> Estimate:
    return estimate(data["pass@1"]) if data and data["scored"] else Estimate(0.0, 0.0, 0.0, 0)
