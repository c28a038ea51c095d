"""``docverify parse``: show what docverify understands of a set of documents."""

from __future__ import annotations

import json
import sys

import click

from docverify.cli import CONTEXT_SETTINGS, get_app
from docverify.errors import ExitCode, NoProceduresError
from docverify.parse.model import Action, Procedure, Severity, Step


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print procedures and diagnostics as JSON.")
@click.option("--yaml", "as_yaml", is_flag=True, help="Print procedures and diagnostics as YAML.")
@click.option("--steps", is_flag=True, help="Table mode: also list every step with its line, intent and labels.")
@click.option(
    "--max-file-bytes",
    type=click.IntRange(min=1),
    help="Skip (and report) larger files. Env: DOCVERIFY_PARSE__MAX_FILE_BYTES.",
)
@click.option(
    "-j", "--jobs",
    type=click.IntRange(min=0, max=256),
    help="Processes for a large set of files; 0: one per core (the default), 1: no workers. Env: DOCVERIFY_PARSE__JOBS.",
)
@click.option("--allow-empty", is_flag=True,
              help="Exit 0, not 5, when the files hold no procedure: a linter (pre-commit) passes pages of prose too.")
@click.pass_context
def parse(ctx: click.Context, paths: tuple[str, ...], as_json: bool, as_yaml: bool, steps: bool, max_file_bytes: int | None,
          jobs: int | None, allow_empty: bool) -> int:
    """Parse Markdown documents (files or folders, recursive over .md/.mdx) into procedures.

    Problems in the input are reported as FILE:LINE: severity: message on stderr;
    one bad file never stops the others.

    \b
    Exit codes: 0 procedures found; 2 some file has an error; 5 no procedures
    (0 with --allow-empty).

    \b
    Examples:
      docverify parse docs/
      docverify parse "docs/Create buckets.md" --steps
      docverify parse docs/ --json | jq '.procedures[].id'
      docverify parse --allow-empty --jobs 1 docs/intro.md   # as the pre-commit hook runs it
    """
    from docverify.parse.parser import discover, parse_files

    if as_json and as_yaml:
        raise click.UsageError("choose one of --json and --yaml")
    settings = get_app(ctx).config(
        {"parse.max_file_bytes": max_file_bytes, "parse.jobs": jobs},
        {"parse.max_file_bytes": "--max-file-bytes", "parse.jobs": "--jobs"},
    ).settings.parse
    files, diagnostics = discover(paths, include=settings.include, exclude=settings.exclude)
    documents = parse_files(files, max_bytes=settings.max_file_bytes, jobs=settings.jobs)
    for document in documents:
        diagnostics.extend(document.diagnostics)
    procedures = [procedure for document in documents for procedure in document.procedures]

    if as_json or as_yaml:
        payload = {
            "files": len(files),
            "procedures": [procedure.to_dict() for procedure in procedures],
            "diagnostics": [diagnostic.to_dict() for diagnostic in diagnostics],
        }
        if as_json:
            click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        else:
            import yaml

            click.echo(yaml.safe_dump(payload, allow_unicode=True, sort_keys=False), nl=False)
    else:
        _print_table(procedures, steps)
    sys.stdout.flush()  # procedures first, then the problems, also when both go to one pipe
    for diagnostic in diagnostics:
        click.echo(str(diagnostic), err=True)
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    if not as_json and not as_yaml:
        warnings = len(diagnostics) - errors
        click.echo(
            f"{_count(len(procedures), 'procedure')} in {_count(len(files), 'file')}"
            f" ({errors} errors, {warnings} warnings)",
            err=True,
        )
    if errors:
        return ExitCode.USAGE
    if not procedures and not allow_empty:
        raise NoProceduresError(
            f"no procedures found in {', '.join(paths)}", hint="a procedure is an ordered list of steps"
        )
    return ExitCode.OK


def _print_table(procedures: list[Procedure], with_steps: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    if with_steps:  # one block per procedure: plain lines that grep and diff well
        for procedure in procedures:
            console.print(
                Text(f"{procedure.id}  {procedure.title}  ({procedure.path}:{procedure.line}-{procedure.end_line})", style="bold"),
                soft_wrap=True,
            )
            for line in _step_lines(procedure.steps, 1):
                console.print(Text(line), soft_wrap=True)
        return
    table = Table()
    table.add_column("procedure", overflow="fold")
    table.add_column("title", overflow="fold")
    table.add_column("product")
    table.add_column("lines", justify="right")
    table.add_column("steps", justify="right")
    for procedure in procedures:
        table.add_row(  # Text: labels like "[Optional]" are not rich markup
            Text(procedure.id),
            Text(procedure.title),
            Text(procedure.product or ""),
            f"{procedure.line}-{procedure.end_line}",
            str(len(procedure.all_steps())),
        )
    if procedures:
        console.print(table)


def _step_lines(steps: list[Step], depth: int = 0) -> list[str]:
    """``3. L25 click "Create Bucket"; fill "Bucket Name" = docs`` per step, indented by depth."""
    lines = []
    for step in steps:
        actions = "; ".join(_describe_action(action) for action in step.actions) or step.intent.value
        fields = f" [{len(step.fields)} fields]" if step.fields else ""
        lines.append(f"{'  ' * depth}{step.number}. L{step.line} {actions}{fields}")
        lines.extend(_step_lines(step.substeps, depth + 1))
        for alternative in step.alternatives:
            lines.append(f"{'  ' * (depth + 1)}- {alternative.title} (L{alternative.line})")
            lines.extend(_step_lines(alternative.steps, depth + 2))
    return lines


def _describe_action(action: Action) -> str:
    text = action.intent.value
    if action.path:
        text += " " + " > ".join(action.path)
    elif action.target:
        text += f' "{action.target}"'
    if action.value is not None:
        text += f" = {action.value}"
    if action.url:
        text += f" <{action.url}>"
    return text


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
