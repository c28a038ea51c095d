"""``docverify resourcecoder``: write Terraform templates with a model, and list the kept ones."""

from __future__ import annotations

import json
from pathlib import Path

import click

from docverify.errors import ExitCode

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=CONTEXT_SETTINGS)
def resourcecoder() -> None:
    """Terraform templates written by a model (ResourceCoder).

    Options come from [provisioner.resourcecoder] in docverify.toml (base_url, model,
    api_key_env, max_rounds, candidates_dir, templates); the command line overrides them.

    \b
    Examples:
      docverify resourcecoder write key_pair --provider sandbox --base-url http://127.0.0.1:8000/v1 --model qwen2.5
      docverify resourcecoder list
      docverify plan docs --templates .docverify/template-candidates
    """


@resourcecoder.command(context_settings=CONTEXT_SETTINGS)
@click.argument("meta_type", metavar="TYPE")
@click.option("--provider", type=click.Choice(["sandbox", "alicloud"]), default="sandbox", show_default=True,
              envvar="DOCVERIFY_PROVIDER",
              help="Templates for: sandbox (the embedded console) or alicloud. Env: DOCVERIFY_PROVIDER.")
@click.option("--base-url", envvar="OPENAI_BASE_URL", help="The model endpoint (OpenAI protocol). Env: OPENAI_BASE_URL.")
@click.option("--model", help="The model name as the endpoint knows it.")
@click.option("--api-key-env", help="The environment variable holding the API key (default OPENAI_API_KEY).")
@click.option("--max-rounds", type=click.IntRange(1, 10), help="Model answers before giving up (default 3).")
@click.option("--candidates-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where the template is kept (default .docverify/template-candidates).")
@click.option("--templates", type=click.Path(file_okay=False, path_type=Path), envvar="DOCVERIFY_TEMPLATES",
              help="A folder of <provider>/*.tf.j2 searched before the built-in ones. Env: DOCVERIFY_TEMPLATES.")
@click.option("--region", help="Region to plan in (default: the console's).")
@click.option("--force", is_flag=True, help="Write it again even when a candidate is kept.")
@click.option("--json", "as_json", is_flag=True, help="Print the candidate as JSON.")
@click.pass_context
def write(ctx: click.Context, meta_type: str, provider: str, base_url: str | None, model: str | None,
          api_key_env: str | None, max_rounds: int | None, candidates_dir: Path | None, templates: Path | None,
          region: str | None, force: bool, as_json: bool) -> int:
    """Have the model write the Terraform template of META type TYPE.

    The template is validated with terraform validate and plan against the configured
    console's account (the embedded sandbox by default; nothing is created), repaired
    from the errors for at most --max-rounds answers, and kept as
    CANDIDATES_DIR/<provider>/TYPE.tf.j2 with a record (model, rounds, validation
    output, tokens) beside it.

    \b
    Exit codes: 0 written (or kept already); 2 a bad TYPE or option; 3 no answer passed,
    or the console or model endpoint is unusable.
    """
    from docverify.cli import get_app
    from docverify.errors import UsageError
    from docverify.provision.meta import META_TYPES
    from docverify.run.check import instances
    from docverify_terraform.resourcecoder.candidates import candidate_dict
    from docverify_terraform.resourcecoder.provisioner import ResourceCoderProvisioner

    if meta_type not in META_TYPES:
        raise UsageError(f"unknown META type '{meta_type}'", hint=f"valid types: {', '.join(META_TYPES)}")
    app = get_app(ctx)
    config = app.config()
    options = config.plugin_options("provisioner", "resourcecoder", ResourceCoderProvisioner)
    given = {"base_url": base_url, "model": model, "api_key_env": api_key_env, "max_rounds": max_rounds,
             "candidates_dir": str(candidates_dir) if candidates_dir else None,
             "templates": str(templates) if templates else None,
             "provider": provider}
    options = ResourceCoderProvisioner.Options.model_validate(
        {**options.model_dump(), **{k: v for k, v in given.items() if v is not None}})
    provisioner = ResourceCoderProvisioner(options)
    console = instances(config, app.plugins, "console", "consoles")[0]
    with console.start() as endpoint:
        coder = provisioner.coder(endpoint, region or endpoint.default_region, provider)
        candidate = coder.write_template(meta_type, provider, force=force)
    if as_json:
        click.echo(json.dumps(candidate_dict(candidate), indent=2))
    elif candidate.rounds:
        click.echo(f"wrote {candidate.path} ({candidate.resource_type}) in {candidate.rounds} round"
                   f"{'s' if candidate.rounds != 1 else ''}; {candidate.usage.describe()}")
    else:
        click.echo(f"kept already: {candidate.path} (--force writes it again)")
    return ExitCode.OK


@resourcecoder.command(name="list", context_settings=CONTEXT_SETTINGS)
@click.option("--candidates-dir", type=click.Path(file_okay=False, path_type=Path),
              help="The candidates folder (default .docverify/template-candidates).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def list_(ctx: click.Context, candidates_dir: Path | None, as_json: bool) -> int:
    """List the kept template candidates, by provider."""
    from docverify.cli import get_app
    from docverify_terraform.resourcecoder.candidates import CandidateStore
    from docverify_terraform.resourcecoder.provisioner import ResourceCoderProvisioner

    if candidates_dir is None:
        options = get_app(ctx).config().plugin_options("provisioner", "resourcecoder", ResourceCoderProvisioner)
        candidates_dir = Path(options.candidates_dir)  # type: ignore[attr-defined]
    store = CandidateStore(candidates_dir)
    rows = []
    for folder in sorted(p for p in store.root.iterdir() if p.is_dir()) if store.root.is_dir() else []:
        for meta_type in store.kept(folder.name):
            found = store.find(folder.name, meta_type)
            assert found is not None
            rows.append({"provider": folder.name, "meta_type": meta_type, "resource_type": found.resource_type,
                         "model": found.model, "written_at": found.written_at, "path": str(found.path),
                         "rounds": len(found.history)})
    if as_json:
        click.echo(json.dumps({"candidates": rows}, indent=2))
    elif not rows:
        click.echo(f"no kept candidates in {store.root}")
    else:
        for row in rows:
            click.echo(f"{row['provider']}/{row['meta_type']}: {row['resource_type']} by {row['model'] or '?'}, "
                       f"{row['rounds']} round(s), {row['written_at'] or '?'} — {row['path']}")
    return ExitCode.OK
