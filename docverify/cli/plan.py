"""``docverify plan``: each procedure's Resource META and the Terraform that would make it exist.

The META is the core's (:mod:`docverify.provision.meta`); how it would be made to exist comes from
the plugins that answer the ``plan_provisioning`` hook (:mod:`docverify.provision.plan`): the
``terraform`` plugin's stack for each procedure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from docverify.cli import CONTEXT_SETTINGS, completion, get_app
from docverify.errors import ExitCode, NoProceduresError
from docverify.parse.model import Diagnostic, Procedure, Severity

if TYPE_CHECKING:
    from docverify.provision.meta import MetaPlan
    from docverify.provision.plan import PlanSection

#: The suffix shown unless --suffix is given: a run draws a fresh random one.
PREVIEW_SUFFIX = "xxxxxx"


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("paths", nargs=-1, required=True, shell_complete=completion.doc_paths)
@click.option("-k", "keyword", metavar="EXPR",
              help="Only procedures whose id or title match, e.g. -k 'bucket and not delete'.")
@click.option("--changed-since", metavar="GIT_REF", envvar="DOCVERIFY_CHANGED_SINCE",
              help="Only documents changed since GIT_REF. Env: DOCVERIFY_CHANGED_SINCE.")
@click.option("--provider", envvar="DOCVERIFY_PROVIDER",
              help="Terraform templates to render: sandbox (the embedded console) or alicloud (real Alibaba Cloud); "
                   "default: the configured console's own templates when it has some (the sandbox's), else alicloud. "
                   "Env: DOCVERIFY_PROVIDER.")
@click.option("--templates", "templates", type=click.Path(file_okay=False, path_type=Path), envvar="DOCVERIFY_TEMPLATES",
              help="A folder of <provider>/*.tf.j2 templates searched before the built-in ones. Env: DOCVERIFY_TEMPLATES.")
@click.option("--region", help="Region for the stack (default: the procedure's, else cn-hangzhou).")
@click.option("--suffix", default=PREVIEW_SUFFIX, show_default=True,
              help="Name suffix to preview with; a real run draws a fresh random one.")
@click.option("--terraform/--no-terraform", "show_terraform", default=True,
              help="Also print the Terraform files (table mode).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.pass_context
def plan(ctx: click.Context, paths: tuple[str, ...], keyword: str | None, changed_since: str | None, provider: str | None,
         templates: Path | None, region: str | None, suffix: str, show_terraform: bool, as_json: bool) -> int:
    """Show what must exist before each procedure runs (its Resource META) and the
    Terraform that would create it.

    PATH is a Markdown file or a folder (recursive); PATH#ID picks one procedure.
    Each requirement shows its source: the procedure's `requires:` annotation, or
    inferred from the doc (prerequisites, the objects the steps act on, the audit
    event it proves), with the doc line. What a prerequisite asks to be absent ("the
    security group contains no instances") is listed as not made. Nothing is created.

    \b
    Exit codes: 0 planned; 2 a bad `requires:` annotation or input file; 3 a broken
    template; 5 no procedures.

    \b
    Examples:
      docverify plan examples/docs
      docverify plan "docs/Release an instance.md" --provider alicloud
      docverify plan docs -k instance --json | jq '.procedures[].requirements'
      docverify plan docs --templates my_templates/ --provider alicloud --no-terraform
    """
    from docverify.cli.check import nothing_changed
    from docverify.provision.meta import MetaError, analyze
    from docverify.provision.plan import PlanRequest
    from docverify.run.select import collect, runnable

    app = get_app(ctx)
    config = app.config({}, {})
    procedures, problems = collect(paths, config.settings.parse, keyword, changed_since)
    if nothing_changed(changed_since, procedures):
        return ExitCode.OK
    ready, skipped = runnable(procedures, parts=False)
    problems.extend(Diagnostic(skip.procedure.path, skip.procedure.line, Severity.WARNING,
                               f"{skip.procedure.id} {skip.reason}") for skip in skipped if skip.by_annotation)
    if not ready:
        _flush_problems(problems)
        raise NoProceduresError(f"no procedures to plan in {', '.join(paths)}",
                                hint="a procedure is an ordered list of steps; see `docverify parse PATH --steps`")
    request = PlanRequest(config, provider=provider, templates=templates, region=region, suffix=suffix)
    planners = [planner for planner in app.plugins.manager.hook.plan_provisioning(request=request)
                if planner is not None]
    facts = {key: value for planner in planners for key, value in planner.facts.items()}
    entries = []
    for procedure in ready:
        try:
            meta = analyze(procedure, suffix=suffix)
        except MetaError as error:
            problems.append(Diagnostic(error.path, error.line, Severity.ERROR, error.detail))
            continue
        entries.append((procedure, meta, [planner.plan(procedure, meta) for planner in planners]))

    if as_json:
        payload = {
            **facts,
            "suffix": suffix,
            "procedures": [_entry_json(procedure, meta, sections) for procedure, meta, sections in entries],
            "diagnostics": [p.to_dict() for p in problems],
        }
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        _print_plan(entries, show_terraform)
    _flush_problems(problems)
    if not as_json:
        needing = sum(1 for _, meta, _ in entries if meta.requirements)
        said = "".join(f"{key} {value}, " for key, value in facts.items())
        click.echo(f"{len(entries)} procedure(s) planned, {needing} need resources "
                   f"({said}suffix {suffix}; nothing was created)", err=True)
    if any(p.severity is Severity.ERROR for p in problems):
        return ExitCode.USAGE
    return ExitCode.OK


def _flush_problems(problems: list[Diagnostic]) -> None:
    sys.stdout.flush()
    for problem in problems:
        click.echo(str(problem), err=True)


def _entry_json(procedure: Procedure, meta: MetaPlan, sections: list[PlanSection]) -> dict:
    return {
        "id": procedure.id,
        "title": procedure.title,
        "path": procedure.path,
        "line": procedure.line,
        **meta.to_dict(),  # product, creates, requirements, absent
        **{section.name: section.data for section in sections},
    }


def _print_plan(entries: list[tuple[Procedure, MetaPlan, list[PlanSection]]], show_files: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    for procedure, meta, sections in entries:
        console.print(Text(f"{procedure.id}  {procedure.title}  ({procedure.path}:{procedure.line}-{procedure.end_line})",
                           style="bold"), soft_wrap=True)
        if meta.creates:
            console.print(Text(f"  creates: {', '.join(meta.creates)} (not provisioned: the procedure makes it)"),
                          soft_wrap=True)
        for meta_type, evidence in meta.absent.items():
            first = evidence[0]
            console.print(Text(f"  not made: {meta_type} (prerequisite L{first.line} asks for none: "
                               f"{_short(first.text, 90)})"), soft_wrap=True)
        if not meta.requirements:
            console.print(Text("  needs nothing to exist beforehand"), soft_wrap=True)
            console.print()
            continue
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("META type", no_wrap=True)
        table.add_column("n", justify="right", no_wrap=True)
        table.add_column("name", overflow="fold")
        table.add_column("depends on", overflow="fold")
        for section in sections:
            table.add_column(section.name, overflow="fold")
        why = []
        for requirement in meta.requirements:
            table.add_row(Text(requirement.type), str(requirement.count), Text(requirement.name or "—"),
                          Text(", ".join(requirement.dependencies) or "—"),
                          *(Text(section.cells.get(requirement.type, "")) for section in sections))
            evidence = requirement.evidence[0] if requirement.evidence else None
            shown = ""
            if evidence is not None:
                shown = f"{evidence.kind}{f' L{evidence.line}' if evidence.line else ''}: {_short(evidence.text, 90)}"
            more = f" (+{len(requirement.evidence) - 1} more)" if len(requirement.evidence) > 1 else ""
            why.append(f"  {requirement.type}: {requirement.source}, {shown}{more}")
        console.print(table)
        for line in why:
            console.print(Text(line), soft_wrap=True)
        if show_files:
            for section in sections:
                for name, text in section.files.items():
                    console.print(Text(f"  # {name}", style="dim"), soft_wrap=True)
                    console.print(Text(text.rstrip()), soft_wrap=True)
        console.print()


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
