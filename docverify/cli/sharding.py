"""``--shard INDEX/COUNT`` and ``--shard-balance``, as ``docverify check`` and
``docverify bench run`` take them (the split itself: :mod:`docverify.run.shard`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from docverify.run.shard import BALANCES, ShardSpec

if TYPE_CHECKING:
    from docverify.report.trajectory import ShardInfo
    from docverify.task import Task


class ShardType(click.ParamType):
    """``INDEX/COUNT`` -> :class:`~docverify.run.shard.ShardSpec`; anything else is a
    usage error naming the option."""

    name = "INDEX/COUNT"

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
        if isinstance(value, ShardSpec):
            return value
        spec = ShardSpec.read(str(value))
        if isinstance(spec, str):
            self.fail(f"{value!r}: {spec}", param, ctx)
        return spec


def shard_option(what: str = "procedures"):
    return click.option(
        "--shard", type=ShardType(), default=None, envvar="DOCVERIFY_SHARD",
        help=f"Run only part INDEX of COUNT disjoint parts of the selected {what}, e.g. --shard 2/4 on the "
             f"second of four machines; every one of them is in exactly one part. Env: DOCVERIFY_SHARD.")


def shard_balance_option():
    return click.option(
        "--shard-balance", type=click.Choice(BALANCES), default="hash", show_default=True,
        envvar="DOCVERIFY_SHARD_BALANCE",
        help="How --shard splits: hash (a procedure's part depends on its PATH#ID alone) or store (parts of "
             "about equal time, from the durations in the results store; every shard must read the same "
             "store). Env: DOCVERIFY_SHARD_BALANCE.")


def check_balance(balance: str, store_path: Path | None) -> None:
    """Before any work: ``--shard-balance store`` needs the results store."""
    from docverify.run.shard import check_balance as check

    check(balance, store_path)


def take(tasks: list[Task], spec: ShardSpec, balance: str, store_path: Path | None) -> tuple[list[Task], ShardInfo]:
    """Shard ``spec``'s part of the selected tasks, and what its results record; says
    on stderr what it took."""
    from docverify.run.shard import git_commit, procedure_key, store_costs, take_shard

    root = Path.cwd()
    ids = {procedure_key(task.procedure.path, task.id, root): task.id for task in tasks}
    costs = store_costs(store_path, ids) if balance == "store" else None
    if balance == "store" and costs is None:
        click.echo(f"--shard-balance store: the results store ({store_path}) has no durations for these "
                   "procedures yet: split by hash", err=True)
    sharded = take_shard(tasks, spec, lambda task: procedure_key(task.procedure.path, task.id, root), root=root,
                         costs=costs, commit=git_commit(root))
    how = "by expected time" if sharded.info.balance == "store" else "by hash"
    click.echo(f"shard {spec}: {len(sharded.items)} of {len(tasks)} procedures ({how})", err=True)
    return sharded.items, sharded.info
