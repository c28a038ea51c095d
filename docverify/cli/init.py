"""``docverify init``: set a docs repository up for docverify.

Writes a commented docverify.toml (only keys the configuration model knows, plugin
names that are installed) and a GitHub Actions workflow that runs the docverify
action on pull requests (the docs they change) and nightly (every doc).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import click

from docverify.cli import CONTEXT_SETTINGS, get_app
from docverify.config import CONFIG_FILE_NAME, FAMILY_TABLES, Settings
from docverify.errors import UsageError

WORKFLOW_FILE = ".github/workflows/docverify.yml"
#: folders taken as the docs, in this order, when --docs is not given and they hold a document
DOCS_FOLDERS = ("docs", "doc", "content")
#: the docverify GitHub Action (action.yml at the root of docverify's repository)
ACTION = "<owner>/docverify@v1"
#: actions/checkout, pinned by commit SHA as the repository's own example workflow pins it
#: (.github/workflows/docs-check-example.yml; a test keeps the two equal)
CHECKOUT = "actions/checkout@de0fac2e4500dabe0009e67214ff5f5447ce83dd # v6.0.2"

#: family table -> what it picks, for the comment above it in docverify.toml
FAMILY_COMMENTS = {
    "console": ["Where procedures run; sandbox is the embedded console (no cloud account needed)."],
    "provisioner": ["What creates the resources a procedure needs before it runs (its Resource META)."],
    "executor": ["What drives the browser."],
    "policy": ["What chooses each browser action: literal follows the doc as written; a model policy",
               "reasons over the page (its options go in [policy.NAME]: see `docverify plugins`)."],
    "checker": ["What decides that a procedure reached its goal."],
    "reporter": ["The reports of every run; --report adds more (json, junit, github and html need --output)."],
    "backend": ["Where procedures run: local (this process, one browser) or ray (Ray workers, a browser each;",
                "pip install 'docverify[ray]'; [backend.ray] workers, address)."],
}
#: family tables written as settings; the others are written commented out, at their defaults
ACTIVE_TABLES = ("console", "policy")


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--docs", "docs", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The docs folder (default: the first of docs/, doc/, content/ that holds .md or .mdx files).")
@click.option("--force", is_flag=True, help="Overwrite docverify.toml and the workflow when they exist.")
@click.option("--no-workflow", is_flag=True, help=f"Write docverify.toml only, not {WORKFLOW_FILE}.")
@click.option("--action", "action", default=ACTION, show_default=True, metavar="OWNER/REPO@REF",
              help="The docverify GitHub Action the workflow uses (a fork, or a commit SHA to pin it).")
@click.pass_context
def init(ctx: click.Context, docs: Path | None, force: bool, no_workflow: bool, action: str) -> None:
    """Set this repository up for docverify: docverify.toml and a GitHub Actions workflow.

    Run it at the repository's root. The workflow checks the docs a pull request
    changes, and every doc nightly (the console changes even when the docs do not),
    with annotations on the doc lines at fault. Existing files are left alone unless
    --force is given.

    \b
    Examples:
      docverify init                      # finds docs/, doc/ or content/
      docverify init --docs website/content
      docverify init --no-workflow        # docverify.toml only
    """
    root = Path.cwd()
    folder = _docs_folder(root, docs)
    targets = {root / CONFIG_FILE_NAME: render_config(folder, _installed(ctx))}
    if not no_workflow:
        _check_repository_root(root)
        targets[root / WORKFLOW_FILE] = render_workflow(folder, action)
    existing = [path for path in targets if path.exists()]
    if existing and not force:
        names = " and ".join(str(path.relative_to(root)) for path in existing)
        raise UsageError(f"{names} already {'exists' if len(existing) == 1 else 'exist'}: nothing was written",
                         hint="pass --force to overwrite")
    for path, text in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        verb = "overwrote" if path in existing else "wrote"
        click.echo(f"{verb} {path.relative_to(root).as_posix()}")
    shown = shlex.quote(folder)
    steps = {
        f"docverify parse {shown}": "the procedures docverify finds, and problems in the docs",
        f"docverify check {shown} --dry-run": "what would run, with its success criteria",
        f"docverify check {shown}": "run them on the embedded sandbox console",
    }
    width = max(map(len, steps))
    click.echo("next:")
    for command, why in steps.items():
        click.echo(f"  {command.ljust(width)}   # {why}")
    if not no_workflow and "<owner>" in action:
        click.echo(f"then set `uses: {action}` in {WORKFLOW_FILE} to the docverify action, pinned by "
                   "commit SHA (or run init again with --force --action OWNER/REPO@SHA), and commit both files")
    elif not no_workflow:
        click.echo(f"then commit {CONFIG_FILE_NAME} and {WORKFLOW_FILE}")


def find_docs_folder(root: Path) -> Path | None:
    """The first of ``DOCS_FOLDERS`` under ``root`` that holds a document docverify
    would read (.md or .mdx, outside excluded folders such as node_modules)."""
    from docverify.parse.discovery import discover

    for name in DOCS_FOLDERS:
        folder = root / name
        if folder.is_dir() and discover([folder])[0]:
            return folder
    return None


def render_config(docs: str, installed: dict[str, list[str]]) -> str:
    """docverify.toml: the family tables with their defaults, commented; ``installed``
    maps a family table (``policy``) to the names of its installed plugins."""
    defaults = Settings()
    parse = defaults.parse
    lines = [
        "# docverify configuration, written by `docverify init`.",
        "#",
        "# Precedence, lowest first: defaults < this file < DOCVERIFY_* environment variables",
        "# < command-line options. `docverify config` shows the effective values and where each",
        "# came from; `docverify plugins` lists the installed plugins and their options.",
        "#",
        f"# The docs: {docs}  (`docverify parse {shlex.quote(docs)}`, `docverify check {shlex.quote(docs)}`)",
        "",
        "# Procedures run in parallel (browser contexts); default: CPU cores, at most 4. Env: DOCVERIFY_JOBS.",
        "# jobs = 4",
        "",
        "# Stop model calls before this is spent; needs the model's [prices.MODEL]. Env: DOCVERIFY_BUDGET.",
        '# budget = "2.50USD"',
        "",
        "# Which files are documents, and the file or folder names never entered.",
        "# [parse]",
        f"# include = {_toml(parse.include)}",
        f"# exclude = {_toml(parse.exclude)}",
        f"# max_file_bytes = {parse.max_file_bytes}   # larger files are reported and skipped",
    ]
    for table in FAMILY_TABLES:
        use = getattr(defaults, table).use
        names = ", ".join(installed.get(table, [])) or "(none)"
        settings = [f"[{table}]", f"use = {_toml(use[0] if len(use) == 1 else use)}"]
        if table not in ACTIVE_TABLES:
            settings = [f"# {line}" for line in settings]
        lines += ["", *(f"# {line}" for line in FAMILY_COMMENTS.get(table, [f"The {table} plugin(s)."])),
                  f"# Installed: {names}. Env: DOCVERIFY_{table.upper()}.", *settings]
        if table == "console" and "sandbox" in installed.get(table, []):
            lines += [
                "",
                "# [console.sandbox]",
                '# release = "2021-06"   # the sandbox console as of this UI release; the newest when unset',
            ]
    return "\n".join(lines) + "\n"


def render_workflow(docs: str, action: str) -> str:
    """.github/workflows/docverify.yml: the docverify action on pull requests that
    touch the docs (only the docs they change) and nightly (every doc)."""
    watched = ["**/*.md", "**/*.mdx"] if docs == "." else [f"{docs}/**"]
    watched += [CONFIG_FILE_NAME, WORKFLOW_FILE]
    paths = "\n".join(f"      - {json.dumps(path)}" for path in watched)
    return WORKFLOW % {
        "docs": docs,
        "paths": paths,
        "checkout": CHECKOUT,
        "action": action,
        "docs_input": json.dumps(shlex.quote(docs)),
    }


WORKFLOW = """\
# docverify: execute the how-to procedures in %(docs)s against the console and report
# drift on the doc's own lines. Written by `docverify init`.
#
# On a pull request, only the procedures of the docs it changes are checked (changed
# since its base branch); every night, all of them: the console changes even when the
# docs do not. Findings are annotations on the doc lines, with a job summary; the
# reports are uploaded as an artifact; a failing nightly run opens an issue (one:
# later failures comment on it until it is closed). Every input of the action
# (report, fail-on, args, docverify-spec for your plugins, ...) is in its action.yml.
name: docverify

on:
  pull_request:
    paths:
%(paths)s
  schedule:
    - cron: "17 3 * * *"   # nightly, 03:17 UTC
  workflow_dispatch:

permissions: {}

concurrency:
  group: docverify-${{ github.event.pull_request.number || github.ref }}
  cancel-in-progress: true

jobs:
  docverify:
    name: docverify
    runs-on: ubuntu-latest
    timeout-minutes: 60
    permissions:
      contents: read  # check out the docs
      issues: write   # create-issue-on-fail: open or comment on the failure issue
    steps:
      - uses: %(checkout)s
        with:
          fetch-depth: 0               # --changed-since needs the base branch and the merge base
          persist-credentials: false   # nothing after the checkout pushes

      - name: docverify
        id: docverify
        uses: %(action)s
        with:
          paths: %(docs_input)s
          # On pull requests: only docs changed since the base branch. Nightly: everything.
          changed-since: ${{ github.event_name == 'pull_request' && format('origin/{0}', github.base_ref) || '' }}
          artifact-name: docverify-report-${{ github.event_name }}-${{ github.run_attempt }}
          # Nightly and manual runs open (or update) an issue when they fail.
          create-issue-on-fail: ${{ github.event_name != 'pull_request' }}
"""


def _docs_folder(root: Path, given: Path | None) -> str:
    """The docs folder as a path relative to ``root`` (posix), found or given."""
    folder = given if given is not None else find_docs_folder(root)
    if folder is None:
        raise UsageError(
            f"no docs folder found here ({', '.join(name + '/' for name in DOCS_FOLDERS)} with .md or .mdx files)",
            hint="name it with --docs DIR",
        )
    try:
        relative = folder.resolve().relative_to(root.resolve())
    except ValueError:
        raise UsageError(f"--docs {given}: the docs must be inside this folder ({root})",
                         hint="run docverify init at the repository's root") from None
    return relative.as_posix()


def _check_repository_root(root: Path) -> None:
    """A workflow only works at the root of its repository."""
    if (root / ".git").exists():
        return
    for folder in root.resolve().parents:
        if (folder / ".git").exists():
            raise UsageError(
                f"this folder is inside the git repository {folder}, and a workflow only works at the "
                "repository's root",
                hint=f"run docverify init in {folder} (--docs names the docs folder), or pass --no-workflow",
            )


def _installed(ctx: click.Context) -> dict[str, list[str]]:
    plugins = get_app(ctx).plugins
    return {table: plugins.registry(family).names() for table, family in FAMILY_TABLES.items()}


def _toml(value: object) -> str:
    """A TOML value for a string, number or list of strings (JSON writes them alike)."""
    return json.dumps(value, ensure_ascii=False)
