"""Shell completion of the values only docverify knows: plugin names and procedures.

click completes commands, options and their fixed choices by itself once the shell
loads its script (``_DOCVERIFY_COMPLETE=bash_source docverify``, see
docs/shell-completion.md). The callbacks here are the ``shell_complete=`` of the
options whose values name an installed plugin or a procedure:

    --policy <TAB>            the installed policies (``plugin_name("policies")``)
    --report json,<TAB>       the reporters not named yet (``plugin_names("reporters")``)
    --fail-on drift,<TAB>     the verdict classes (``fail_on_names``)
    --set <TAB>               ``<family>.use=<plugin>`` for every installed plugin
    docs/a.md#<TAB>           the procedures of docs/a.md (``doc_paths``)

A completion never fails the shell: a plugin that cannot be loaded (``docverify
plugins`` says why) or a file that cannot be read completes to nothing.
"""

from __future__ import annotations

import os
from typing import Callable

import click
from click.shell_completion import CompletionItem

from docverify.errors import DocverifyError

Completer = Callable[[click.Context, click.Parameter, str], list[CompletionItem]]


def plugin_name(family: str) -> Completer:
    """Complete one plugin name of ``family`` (``--policy``, ``--console``)."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        return [CompletionItem(name, help=summary)
                for name, summary in _installed(ctx, family) if name.startswith(incomplete)]

    return complete


def plugin_names(family: str) -> Completer:
    """Complete the last of comma-separated plugin names of ``family``
    (``--report json,junit``), leaving out the names already given."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        return _comma_list(incomplete, _installed(ctx, family))

    return complete


def fail_on_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Complete ``--fail-on drift,fail,env``: the verdict classes of docverify.check.verdict.FAIL_ON."""
    from docverify.check.verdict import FAIL_ON

    return _comma_list(incomplete, [(name, ", ".join(sorted(FAIL_ON[name]))) for name in FAIL_ON])


def setting_assignments(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Complete ``--set KEY=VALUE`` with the plugin choices: ``policy.use=openai`` for
    every installed plugin of every family table of docverify.toml."""
    from docverify.config import FAMILY_TABLES

    items = []
    for table, family in FAMILY_TABLES.items():
        for name, summary in _installed(ctx, family):
            assignment = f"{table}.use={name}"
            if assignment.startswith(incomplete):
                items.append(CompletionItem(assignment, help=summary))
    return items


def doc_paths(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Complete ``PATH[#ID]`` arguments: files and folders, and after ``FILE#`` the
    procedures of that file (their id as ``docverify check FILE#ID`` takes it)."""
    if "#" not in incomplete:
        return [CompletionItem(incomplete, type="file")]
    from docverify.parse.parser import parse_file
    from docverify.run.select import split_selector

    try:
        path, _ = split_selector(incomplete)
    except DocverifyError:
        return []
    if not os.path.isfile(path):
        return []
    items = []
    for procedure in parse_file(path).procedures:
        selector = f"{path}#{procedure.id.split('#', 1)[-1]}"
        if selector.startswith(incomplete):
            items.append(CompletionItem(selector, help=procedure.title))
    return items


def _installed(ctx: click.Context, family: str) -> list[tuple[str, str]]:
    """(name, one-line summary) of every installed plugin of a class-based ``family``;
    none when the plugins cannot be loaded."""
    from docverify.cli import get_app

    try:
        registry = get_app(ctx).plugins.registry(family)
    except DocverifyError:
        return []
    return [(entry.name, entry.obj.summary()) for entry in registry]


def _comma_list(incomplete: str, choices: list[tuple[str, str]]) -> list[CompletionItem]:
    """``json,ju`` -> ``json,junit``: the last name completed, the ones before kept."""
    head, _, last = incomplete.rpartition(",")
    given = {name.strip() for name in head.split(",")} if head else set()
    prefix = f"{head}," if head else ""
    return [CompletionItem(prefix + name, help=summary)
            for name, summary in choices if name.startswith(last) and name not in given]
