"""``docverify explore``: write self-exploration tasks from the console's catalog, then roll them out."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import click

from docverify.cli import CONTEXT_SETTINGS
from docverify.errors import UsageError

#: The file of kept trajectories inside --out (``.stats.json`` and ``.results.json`` beside it).
TRAJECTORIES = "trajectories.jsonl"


def parse_kinds(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--operations create,update`` (repeatable, comma-separated) as operation kinds, in
    :data:`~docverify_training.explore.KINDS` order; an unknown one names the valid ones."""
    from docverify_training.explore import KINDS

    asked = {part.strip() for value in values for part in value.split(",") if part.strip()}
    unknown = sorted(asked - set(KINDS))
    if unknown:
        raise UsageError(f"--operations {', '.join(unknown)}: not an operation kind", hint=f"use {', '.join(KINDS)}")
    return tuple(kind for kind in KINDS if kind in asked) or KINDS


def check_products(products: tuple[str, ...], catalog) -> tuple[str, ...]:
    """The --product keys, each a product of the catalog; an unknown one names the valid ones."""
    unknown = [product for product in products if product not in catalog.products]
    if unknown:
        raise UsageError(f"--product {', '.join(unknown)}: no such product in the sandbox console",
                         hint=f"products: {', '.join(catalog.products)}")
    return products


def kept_by_kind(out: Path, tasks) -> tuple[Counter, Counter]:
    """Attempts and kept trajectories by operation kind, read from the rollout's results and trajectories."""
    kind_of = {task.id: task.operation.kind for task in tasks}
    attempts, kept = Counter(), Counter()
    results = out.with_name(f"{out.name}.results.json")
    if results.is_file():
        for attempt in json.loads(results.read_text(encoding="utf-8")).get("attempts", []):
            attempts[kind_of.get(attempt["task"], "?")] += 1
    if out.is_file():
        for line in out.read_text(encoding="utf-8").splitlines():
            try:
                kept[kind_of.get(json.loads(line)["task"]["id"], "?")] += 1
            except (ValueError, KeyError, TypeError):
                continue
    return attempts, kept


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--console", type=click.Choice(["sandbox"]), default="sandbox", show_default=True,
              help="The console whose catalog the tasks are written from (the sandbox's, the newest release).")
@click.option("--out", "folder", type=click.Path(file_okay=False, path_type=Path), required=True,
              help=f"The folder: the task set (manifest.json, <product>/<resource>/<id>.md) and {TRAJECTORIES}.")
@click.option("--product", "products", multiple=True, help="Only these products, e.g. vpc (repeatable; default all).")
@click.option("--operations", "kinds", multiple=True, metavar="KINDS",
              help="Operation kinds, comma-separated: create, update, transition, delete (default all).")
@click.option("--generate-only", is_flag=True, help="Write the tasks and stop (no rollout).")
@click.option("--policy", default="literal", show_default=True, help="The teacher (literal, oracle, openai, ...).")
@click.option("-n", "--runs", type=click.IntRange(1, 100), default=1, show_default=True, help="Attempts per task.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=1, show_default=True, help="Tasks at once.")
@click.option("--student", default="llamacpp", show_default=True,
              help="The model policy whose prompt format the trajectories are in ([policy.NAME] options apply).")
@click.option("--resume", is_flag=True, help="Continue the interrupted rollout in --out.")
@click.option("--max-steps", type=click.IntRange(1), default=80, show_default=True, help="Turns per task.")
@click.option("--timeout", type=click.FloatRange(1), default=300.0, show_default=True, help="Seconds per task.")
@click.option("--set", "-O", "settings", multiple=True, metavar="KEY=VALUE", help="Any configuration key (repeatable).")
@click.pass_context
def explore(ctx: click.Context, console: str, folder: Path, products: tuple[str, ...], kinds: tuple[str, ...],
            generate_only: bool, policy: str, runs: int, jobs: int, student: str, resume: bool, max_steps: int,
            timeout: float, settings: tuple[str, ...]) -> int:
    """Self-exploration: write a create, update, state change and delete task for
    every resource type of the console's catalog (its labels, fields, menus and
    dialogs as they are now), each with its audit event as success criterion and
    what it acts on as Resource META; then run a teacher over them as `docverify
    rollout` does and keep its verified successful attempts as trajectories.

    Reads are not written: the console's pages leave no audit event to decide them.
    An operation the catalog does not give enough to write is skipped with its reason.

    \b
      docverify explore --out /tmp/explore --jobs 2
      docverify explore --out /tmp/explore --product vpc --operations create,delete --generate-only
    """
    from docverify_sandbox.catalog import load
    from docverify_training.cli import rollout
    from docverify_training.explore import count_table, skipped_summary, write_task_set
    from docverify_training.explore import explore as write_tasks

    catalog = load()
    chosen_kinds = parse_kinds(kinds)
    exploration = write_tasks(catalog, check_products(products, catalog), chosen_kinds)
    if not exploration.tasks:
        raise UsageError("no task could be written for these products and operations",
                         hint="; ".join(skipped_summary(exploration.skipped)[:3]) or "choose other --operations")
    out = folder / TRAJECTORIES
    if not resume and not generate_only and (out.exists() or out.with_name(f"{out.name}.results.json").exists()):
        raise UsageError(f"{out} exists", hint="give --resume to continue it, or another --out")
    write_task_set(exploration, folder)
    click.echo(f"{len(exploration.tasks)} tasks from the {console} console's catalog (release "
               f"{exploration.release}) in {folder}; {len(exploration.skipped)} operations skipped")
    click.echo("\n".join(count_table(exploration)))
    for line in skipped_summary(exploration.skipped):
        click.echo(f"  skipped {line}", err=True)
    if generate_only:
        return 0
    ctx.invoke(rollout, policy=policy, tasks_dir=folder, split="train", categories=(), families=(), runs=runs,
               jobs=jobs, out=out, student=student, resume=resume, max_steps=max_steps, timeout=timeout,
               settings=settings)
    attempts, kept = kept_by_kind(out, exploration.tasks)
    click.echo("by operation: " + ", ".join(f"{kind} kept {kept[kind]} of {attempts[kind]}"
                                            for kind in chosen_kinds if attempts[kind]))
    return 0
