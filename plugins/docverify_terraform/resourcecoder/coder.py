"""ResourceCoder: a model writes the Terraform template for Resource META no template covers.

:meth:`ResourceCoder.write_template` asks a model (any OpenAI-protocol endpoint, through
the ``openai`` engine, :mod:`docverify.engines`) for a Jinja2 template that follows the
template contract (:mod:`docverify_terraform.stack`): one resource block, ``ref()`` for its
dependencies, ``<address>_id``/``_name`` outputs. The model sees the provider's real
schema (``terraform providers schema -json``, only the resource types that matter), the
dependencies' addresses and attributes, and one of the provider's templates as an example.

Each answer is checked, cheapest first, and every problem goes back to the model with
its file and line, for at most ``max_rounds`` answers:

1. the resource type exists in the provider's schema;
2. the template is safe to render (a sandboxed Jinja2 render first: a model's template
   must not reach Python internals);
3. it renders with the real renderer, in a stack with its dependencies (their real
   templates, or kept candidates), and declares the contract's outputs;
4. the HCL uses only the provider's resource and data types, and no provider,
   terraform, module, provisioner or connection blocks and no local-file functions
   (plan runs data sources: nothing the model writes may run a program or read a file);
5. ``terraform validate`` (diagnostics with ``main.tf:LINE``);
6. ``terraform plan`` against the account (nothing is created).

A template that passes is kept (:class:`~docverify_terraform.resourcecoder.candidates.CandidateStore`)
with a record of the model, the rounds, the validation output and the tokens; one that
never passes is a :class:`TemplateWriteFailed` naming the last problems.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2

from docverify import engines
from docverify.cost import CostMeter, Usage
from docverify.errors import EnvironmentProblem, Undecided, UsageError
from docverify.provision.meta import DEPENDENCIES, META_TYPES, UNNAMED, Requirement, close, default_name
from docverify.scrub import scrub
from docverify.task import new_suffix
from docverify_terraform.resourcecoder.candidates import DEFAULT_CANDIDATES_DIR, Candidate, CandidateStore, compose
from docverify_terraform.resourcecoder.schema import ProviderSchema
from docverify_terraform.stack import (
    DEFAULT_REGION,
    StackResource,
    TemplateError,
    TemplateSet,
    UncoveredMetaError,
    hcl,
    providers,
    render_stack,
)

log = logging.getLogger(__name__)

PROMPTS = Path(__file__).parent / "prompts"

#: What the model answers.
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A Terraform template (Jinja2) for docverify",
    "properties": {
        "resource_type": {"type": "string", "description": "the provider's Terraform resource type"},
        "template": {"type": "string", "description": "the whole Jinja2 template"},
    },
    "required": ["resource_type", "template"],
    "additionalProperties": False,
}

#: Provider schemas by (provider, Terraform cache): fetching one starts every provider (seconds).
_SCHEMAS: dict[tuple[str, str], ProviderSchema] = {}

#: Variables and functions a template may use (the renderer's, and Jinja's harmless ones).
ALLOWED_NAMES = frozenset({"r", "ref", "refs", "has", "region", "suffix", "provider", "range", "dict", "loop"})

_BLOCK = re.compile(r'^\s*(?P<kind>resource|data)\s+"(?P<type>[^"]+)"', re.M)
_FORBIDDEN_BLOCK = re.compile(r'^\s*(?P<kind>provider|terraform|module|import|moved|removed|check)\s*(?:"|\{)', re.M)
_PREVENT_DESTROY = re.compile(r"\bprevent_destroy\s*=\s*true\b")
_FORBIDDEN_NESTED = re.compile(r'^\s*(?P<kind>provisioner\s+"|connection\s*\{)', re.M)
_FILE_FUNCTIONS = re.compile(r"\b(?P<name>file|filebase64|filesha1|filesha256|filesha512|filemd5|fileexists|fileset|"
                             r"templatefile|pathexpand|abspath)\s*\(")


class TemplateWriteFailed(EnvironmentProblem):
    """The model's template did not pass in ``max_rounds`` answers; ``problems`` are the last round's."""

    def __init__(self, meta_type: str, provider: str, rounds: int, problems: list[str], workdir: Path | None) -> None:
        shown = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
        super().__init__(
            f"ResourceCoder could not write a '{provider}' template for {meta_type} in {rounds} "
            f"round{'s' if rounds != 1 else ''}: {shown}",
            hint=(f"the last attempt is in {workdir}; " if workdir else "")
            + f"write terraform_templates/{provider}/{meta_type}.tf.j2 by hand, or raise max_rounds")
        self.meta_type, self.provider, self.rounds, self.problems = meta_type, provider, rounds, problems


@dataclass
class Attempt:
    """One answer of the model and what the checks said about it."""

    round: int
    resource_type: str = ""
    template: str = ""
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rendered: str = ""  #: main.tf, when it rendered
    plan: dict[str, int] | None = None


def numbered(text: str) -> str:
    return "\n".join(f"{number:4d}  {line}" for number, line in enumerate(text.splitlines(), start=1))


def diagnostic_text(diagnostic: Any) -> str:
    """``main.tf:19: error: Unsupported argument: An argument named "x" is not expected here.``"""
    detail = " ".join(str(diagnostic.detail or "").split())
    where = f"{diagnostic.file}:{diagnostic.line}: " if diagnostic.file and diagnostic.line else ""
    return f"{where}{diagnostic.severity}: {diagnostic.summary}" + (f": {detail[:300]}" if detail else "")


def prompt_environment(folder: str | Path | None = None) -> jinja2.Environment:
    """ResourceCoder's prompts, ``folder`` overriding them file by file."""
    return engines.prompt_environment(folder, PROMPTS)


async def close_backend(backend: Any) -> None:
    """Close a backend's connections inside the loop that opened them."""
    client = getattr(backend, "client", None)
    if client is not None and hasattr(client, "close"):
        try:
            await client.close()
        except Exception:  # closing is best effort
            pass
    else:
        backend.close()


class ResourceCoder:
    """Writes, validates, repairs and keeps Terraform templates with a model.

    ``terraform``: a :class:`docverify_terraform.engine.Terraform` with the account's
    credentials (``plan`` reads the account); ``backend``: makes the model backend (one
    per :meth:`write`, closed after); ``templates``: the user's templates folder,
    searched before the built-in ones."""

    def __init__(self, terraform: Any, backend: Callable[[], Any], *, templates: str | Path | None = None,
                 candidates_dir: str | Path = DEFAULT_CANDIDATES_DIR, work_dir: str | Path = ".docverify/terraform",
                 max_rounds: int = 3, region: str | None = None, prompts_dir: str | Path | None = None,
                 temperature: float = 0.0, max_answer_tokens: int = 3000, meter: CostMeter | None = None) -> None:
        self.terraform = terraform
        self.backend_factory = backend
        self.templates = Path(templates) if templates else None
        self.store = CandidateStore(candidates_dir)
        self.work_dir = Path(work_dir) / "resourcecoder"
        self.max_rounds = max_rounds
        self.region = region or getattr(getattr(terraform, "credentials", None), "region", None) or DEFAULT_REGION
        self.prompts = prompt_environment(prompts_dir)
        self.temperature = temperature
        self.max_answer_tokens = max_answer_tokens
        self.meter = meter or CostMeter()

    # -- what exists -------------------------------------------------------------------------

    def base(self, provider: str) -> TemplateSet | None:
        """The user's and the built-in templates of ``provider`` (None: it has none). A missing
        templates folder or a broken ``types.yaml`` is a :class:`TemplateError`: better said
        than every type written anew."""
        import docverify_terraform.stack

        if provider not in providers(docverify_terraform.stack.template_dirs(self.templates)):
            return None
        return TemplateSet.load(provider, self.templates)

    def covered(self, provider: str, meta_type: str) -> bool:
        """Whether a template (the user's, a built-in one) covers ``meta_type``."""
        base = self.base(provider)
        return base is not None and base.covers(meta_type)

    def compose(self, dest: Path, provider: str, extra: dict[str, tuple[str, str]] | None = None) -> Path:
        """The user's templates, then kept candidates for what they leave uncovered, in one folder."""
        kept = {t for t in self.store.kept(provider) if not self.covered(provider, t)}
        return compose(dest, provider, [(self.templates, None), (self.store.root, kept)], extra)

    # -- writing -----------------------------------------------------------------------------

    def write_template(self, meta_type: str, provider: str, *, attributes: dict[str, Any] | None = None,
                       dependencies: list[str] | None = None, force: bool = False) -> Candidate:
        """The kept candidate for ``meta_type``, else a new one written, validated and kept.

        Blocking (Terraform runs for seconds); in async code use :meth:`write` instead.
        ``dependencies``: the META types it is made in (default
        :data:`docverify.provision.meta.DEPENDENCIES`); ``force``: write even when one is kept.
        Raises :class:`TemplateWriteFailed` when no answer passes in ``max_rounds``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.write(meta_type, provider, attributes=attributes, dependencies=dependencies,
                                          force=force))
        raise RuntimeError("ResourceCoder.write_template() blocks; in async code await ResourceCoder.write()")

    async def write(self, meta_type: str, provider: str, *, attributes: dict[str, Any] | None = None,
                    dependencies: list[str] | None = None, force: bool = False, _backend: Any = None) -> Candidate:
        """:meth:`write_template` for async callers (Terraform runs in worker threads)."""
        if meta_type not in META_TYPES:
            raise UsageError(f"unknown META type '{meta_type}'", hint=f"valid types: {', '.join(META_TYPES)}")
        lock = self.store.lock(provider, meta_type)
        await asyncio.to_thread(lock.__enter__)  # one writer per type, across processes
        try:
            if not force:
                kept = self.store.find(provider, meta_type)
                if kept is not None:
                    return kept
            backend = _backend or self.backend_factory()
            try:
                return await self._write(meta_type, provider, dict(attributes or {}), dependencies, backend)
            finally:
                if _backend is None:
                    await close_backend(backend)
        finally:
            lock.__exit__(None, None, None)

    async def _write(self, meta_type: str, provider: str, attributes: dict[str, Any], dependencies: list[str] | None,
                     backend: Any) -> Candidate:
        deps = list(DEPENDENCIES[meta_type]) if dependencies is None else list(dependencies)
        unknown = [d for d in deps if d not in META_TYPES]
        if unknown:
            raise UsageError(f"unknown dependency '{unknown[0]}' of {meta_type}", hint=f"valid types: {', '.join(META_TYPES)}")
        stack_requirements = close([Requirement(type=d) for d in deps])
        for requirement in stack_requirements:  # what it is made in must render first
            if not self.covered(provider, requirement.type) and self.store.find(provider, requirement.type) is None:
                log.info("ResourceCoder: %s needs %s, which has no template: writing it first", meta_type, requirement.type)
                await self.write(requirement.type, provider, _backend=backend)
        target = Requirement(type=meta_type, attributes=attributes, dependencies=deps, source="resourcecoder")
        requirements = [*stack_requirements, target]

        workdir = self.work_dir / f"{provider}-{meta_type}-{uuid.uuid4().hex[:8]}"
        suffix = new_suffix()
        composed = self.compose(workdir / "templates-0", provider)
        template_set = TemplateSet.load(provider, composed)
        stack = self.terraform.stack(workdir / "stack")  # no ledger: nothing is ever applied here
        schema = await asyncio.to_thread(self._prepare, stack, provider, suffix, composed)

        mapped = template_set.types.get(meta_type)
        resource_type = mapped if mapped in schema.resources else None
        choices = [] if resource_type else schema.similar(meta_type)
        system = self.prompts.get_template("write_system.j2").render()
        user = self.prompts.get_template("write_user.j2").render(
            meta_type=meta_type, provider=provider, resource_type=resource_type, choices=choices,
            all_types=sorted(schema.resources) if not resource_type and len(schema.resources) <= 150 else [],
            named=meta_type not in UNNAMED,
            schemas=[schema.describe(t) for t in ([resource_type] if resource_type else choices)],
            dependencies=[{"meta_type": r.type, "address": f"{template_set.types.get(r.type, '?')}.{r.type}_1",
                           "schema": schema.describe(template_set.types.get(r.type, "?"), brief=True)}
                          for r in stack_requirements],
            attributes=attributes, example=self._example(template_set, deps))
        messages = [{"role": "system", "content": scrub(system)}, {"role": "user", "content": scrub(user)}]

        usage = Usage()
        history: list[dict[str, Any]] = []
        attempt = Attempt(0)
        for number in range(1, self.max_rounds + 1):
            completion = await self._complete(backend, messages, usage, meta_type)
            attempt = Attempt(number)
            try:
                attempt.resource_type, attempt.template = parse_answer(completion.text)
            except ValueError as error:
                usage.invalid_outputs += 1
                attempt.problems = [f"the answer is not usable: {error}; answer with one JSON object "
                                    '{"resource_type": "...", "template": "..."}']
            else:
                await asyncio.to_thread(self._check, attempt, meta_type, provider, requirements, suffix, stack,
                                        schema, workdir)
            history.append({"round": number, "resource_type": attempt.resource_type, "problems": attempt.problems})
            if not attempt.problems:
                candidate = Candidate(
                    meta_type=meta_type, provider=provider, resource_type=attempt.resource_type,
                    template=attempt.template, model=getattr(backend, "model", ""), rounds=number,
                    validation={"validate": "valid", "warnings": attempt.warnings, "plan": attempt.plan,
                                "region": self.region, "main_tf": attempt.rendered},
                    history=history, usage=usage,
                    written_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
                self.store.keep(candidate)
                shutil.rmtree(workdir, ignore_errors=True)
                log.info("ResourceCoder kept %s (%d round%s)", candidate.path, number, "s" if number != 1 else "")
                return candidate
            log.info("ResourceCoder round %d for %s: %s", number, meta_type, "; ".join(attempt.problems))
            repair = self.prompts.get_template("repair.j2").render(
                round=number, max_rounds=self.max_rounds, problems=attempt.problems,
                rendered=numbered(attempt.rendered or attempt.template),
                rendered_name="main.tf" if attempt.rendered else f"your template {meta_type}.tf.j2")
            messages = [*messages[:2], {"role": "assistant", "content": completion.text[:20000]},
                        {"role": "user", "content": scrub(repair)}]
        raise TemplateWriteFailed(meta_type, provider, self.max_rounds, attempt.problems, workdir)

    # -- the model ---------------------------------------------------------------------------

    async def _complete(self, backend: Any, messages: list[dict[str, Any]], usage: Usage, meta_type: str) -> Any:
        model = getattr(backend, "model", "")
        local = bool(getattr(backend, "local", False))
        try:
            with self.meter.spending(model, backend.count_tokens(messages), self.max_answer_tokens,
                                     local=local) as bill:
                completion = await backend.complete(messages, ANSWER_SCHEMA, name="terraform_template",
                                                    max_tokens=self.max_answer_tokens, temperature=self.temperature)
                bill(usage, completion.tokens_in, completion.tokens_out)
        except Undecided as why:
            raise EnvironmentProblem(f"ResourceCoder stopped writing {meta_type}: {why}") from None
        usage.retries += getattr(completion, "retries", 0)
        return completion

    # -- the checks --------------------------------------------------------------------------

    def _prepare(self, stack: Any, provider: str, suffix: str, composed: Path) -> ProviderSchema:
        """Initialise the scratch stack with the provider block alone; the provider's schema."""
        files = render_stack([], provider, suffix=suffix, region=self.region, templates=composed).files
        stack.write({"provider.tf": files["provider.tf"]})
        stack.init()
        key = (provider, str(getattr(self.terraform, "cache_dir", "")))
        if key not in _SCHEMAS:
            _SCHEMAS[key] = ProviderSchema.fetch(stack)
        return _SCHEMAS[key]

    def _check(self, attempt: Attempt, meta_type: str, provider: str, requirements: list[Requirement], suffix: str,
               stack: Any, schema: ProviderSchema, workdir: Path) -> None:
        from docverify_terraform.engine import TerraformError

        problems = attempt.problems
        name = f"{meta_type}.tf.j2"
        if attempt.resource_type not in schema.resources:
            close_ones = schema.similar(meta_type) or sorted(schema.resources)[:10]
            problems.append(f"resource type '{attempt.resource_type}' is not in the {provider} provider's schema; "
                            f"use one of: {', '.join(close_ones)}")
            return
        problems.extend(safety_problems(attempt.template, name, meta_type, attempt.resource_type, requirements,
                                        suffix, self.region))
        if problems:
            return
        folder = self.compose(workdir / f"templates-{attempt.round}", provider,
                              extra={meta_type: (attempt.resource_type, attempt.template)})
        try:
            spec = render_stack(requirements, provider, suffix=suffix, region=self.region, templates=folder)
        except (TemplateError, UncoveredMetaError) as error:
            text = str(error).replace(str((folder / provider / name).resolve()), name).replace(str(folder / provider / name), name)
            problems.append(text)
            return
        attempt.rendered = spec.files["main.tf"]
        problems.extend(hcl_problems(attempt.rendered, "main.tf", schema, provider))
        if problems:
            return
        stack.write(spec.files)
        try:
            validation = stack.validate()
        except TerraformError as error:
            problems.append(error.summary)
            return
        attempt.warnings = [diagnostic_text(d) for d in validation.diagnostics if d.severity != "error"]
        if not validation.valid:
            problems.extend(diagnostic_text(d) for d in validation.errors)
            problems.extend([] if validation.errors else ["terraform validate: not valid (no diagnostics)"])
            return
        try:
            plan = stack.plan()
        except TerraformError as error:
            errors = [d for d in error.diagnostics if d.severity == "error"]
            problems.extend(["terraform plan: " + diagnostic_text(d) for d in errors] or [f"terraform plan: {error.summary}"])
            return
        attempt.plan = {"add": plan.add, "change": plan.change, "destroy": plan.remove}

    def _example(self, template_set: TemplateSet, deps: list[str]) -> dict[str, str] | None:
        """One of the provider's templates, for the form: a dependency's, else the VPC's, else any."""
        for meta_type in [*deps, "vpc", *META_TYPES]:
            path = template_set.template_path(f"{meta_type}.tf.j2") if meta_type in template_set.types else None
            if path is not None:
                return {"meta_type": meta_type, "text": path.read_text(encoding="utf-8").strip()}
        return None


def parse_answer(text: str) -> tuple[str, str]:
    """(resource type, template) from the model's answer; ValueError when unusable."""
    from docverify.engines import parse_json_object

    data = parse_json_object(text)
    resource_type, template = data.get("resource_type"), data.get("template")
    if not isinstance(resource_type, str) or not resource_type.strip():
        raise ValueError("'resource_type' is missing")
    if not isinstance(template, str) or not template.strip():
        raise ValueError("'template' is missing")
    template = re.sub(r"^```[a-z0-9]*\n|\n?```\s*$", "", template.strip())  # a fenced template
    return resource_type.strip(), template + "\n"


def safety_problems(template: str, name: str, meta_type: str, resource_type: str, requirements: list[Requirement],
                    suffix: str, region: str) -> list[str]:
    """A model's template must not reach beyond the renderer's variables: it is rendered in
    this process. Checked statically (the names it uses) and by a sandboxed render."""
    from jinja2 import meta as jinja_meta
    from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

    env = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                        trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["hcl"] = hcl
    env.globals = {"range": env.globals["range"], "dict": env.globals["dict"]}  # not lipsum, cycler, joiner...
    try:
        parsed = env.parse(template)
    except jinja2.TemplateSyntaxError as error:
        return [f"{name}:{error.lineno}: template syntax error: {error.message}"]
    problems = []
    names = jinja_meta.find_undeclared_variables(parsed) - ALLOWED_NAMES
    if names:
        problems.append(f"{name}: uses {', '.join(sorted(names))}; a template may use only r, ref(), refs(), has(), "
                        "region and suffix")
    if "__" in template or re.search(r"\|\s*attr\b", template):
        problems.append(f"{name}: reaches for Python internals (__ or |attr); write plain HCL with the variables")
    if problems:
        return problems
    addresses: dict[str, list[str]] = {}
    for requirement in requirements:
        addresses.setdefault(requirement.type, []).append(f"{requirement.type}.{requirement.type}_1")

    def refs(kind: str) -> list[str]:
        return addresses.get(kind, [])

    resource = StackResource(address=f"{meta_type}_1", meta_type=meta_type, tf_type=resource_type,
                             name=None if meta_type in UNNAMED else default_name(meta_type, suffix), suffix=suffix,
                             region=region, attributes=dict(requirements[-1].attributes), index=1, template=name)
    try:
        env.from_string(template).render(r=resource, ref=lambda kind: (refs(kind) or ["missing.dependency"])[0],
                                         refs=refs, has=lambda kind: bool(refs(kind)), region=region, suffix=suffix,
                                         provider="")
    except SecurityError as error:
        problems.append(f"{name}: unsafe template: {error}")
    except Exception:  # anything else the real renderer reports with its line
        pass
    return problems


def hcl_problems(text: str, name: str, schema: ProviderSchema, provider: str) -> list[str]:
    """What a written stack may not contain, with its lines (before Terraform sees it: plan runs data sources)."""

    def line(position: int) -> int:
        return text.count("\n", 0, position) + 1

    problems = []
    for match in _BLOCK.finditer(text):
        kind, tf_type = match["kind"], match["type"]
        known = schema.resources if kind == "resource" else schema.data_sources
        if tf_type not in known:
            problems.append(f"{name}:{line(match.start('type'))}: error: {kind} type \"{tf_type}\" is not one of the "
                            f"{provider} provider's; use only its {'resource' if kind == 'resource' else 'data source'} types")
        elif kind == "data" and tf_type.endswith("_external"):
            problems.append(f"{name}:{line(match.start('type'))}: error: data \"{tf_type}\" runs programs: not allowed")
    for match in _FORBIDDEN_BLOCK.finditer(text):
        why = {"provider": "provider.tf has it", "terraform": "provider.tf has it",
               "import": "it would adopt, and later destroy, a resource docverify did not create"}
        problems.append(f"{name}:{line(match.start('kind'))}: error: no {match['kind']} blocks in a template"
                        + (f" ({why[match['kind']]})" if match["kind"] in why else ""))
    for match in _PREVENT_DESTROY.finditer(text):
        problems.append(f"{name}:{line(match.start())}: error: prevent_destroy: what docverify creates it destroys")
    for match in _FORBIDDEN_NESTED.finditer(text):
        kind = match["kind"].split()[0].rstrip('"{')
        problems.append(f"{name}:{line(match.start('kind'))}: error: no {kind} blocks: templates create resources only")
    for match in _FILE_FUNCTIONS.finditer(text):
        problems.append(f"{name}:{line(match.start('name'))}: error: {match['name']}() reads local files: not allowed")
    return problems


def backend_from_options(options: Any) -> Callable[[], Any]:
    """A backend factory from options naming an ``engine`` (default ``openai``) and its
    fields (the OpenAI endpoint's ``base_url``, ``model``, ``api_key_env``…)."""
    return lambda: engines.get_engine(getattr(options, "engine", "openai")).from_options(options)

