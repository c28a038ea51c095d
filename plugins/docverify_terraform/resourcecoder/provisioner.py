"""The ``resourcecoder`` provisioner: the ``terraform`` provisioner, plus a model that
writes the Terraform no template covers and creates what a blocked agent lacks.

Before a task runs, its Resource META is rendered as the ``terraform`` provisioner
renders it; a META type without a template is given a kept candidate
(``candidates_dir``), else one :class:`~docverify_terraform.resourcecoder.coder.ResourceCoder`
writes and validates now (and keeps for the next run); then everything is applied,
and destroyed when the task's provisioning context exits.

While the task runs, :meth:`ResourceCoderProvisioner.on_blocked` creates what the
agent reports missing, in a stack of its own that is recorded in the ledger and
destroyed when the same context exits (before the task's main stack).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from docverify.console import ConsoleEndpoint
from docverify.cost import Usage
from docverify.engines import EndpointOptions, EngineName
from docverify.errors import EnvironmentProblem, Undecided
from docverify.execute.executor import artifact_name
from docverify.provision import Provisioned
from docverify.scrub import scrub
from docverify_terraform.provisioner import TerraformProvisioner
from docverify_terraform.resourcecoder.candidates import DEFAULT_CANDIDATES_DIR
from docverify_terraform.resourcecoder.coder import (
    ResourceCoder,
    backend_from_options,
    close_backend,
    prompt_environment,
)
from docverify_terraform.resourcecoder.ondemand import (
    BLOCKED_SCHEMA,
    MAX_COUNT,
    BlockedRequest,
    CreatedResource,
    ProvisionReport,
    parse_request,
    vocabulary,
)

log = logging.getLogger(__name__)


@dataclass
class _OnDemandStack:
    stack: Any  #: docverify_terraform.engine.Stack
    workdir: Path
    applied: threading.Event = field(default_factory=threading.Event)  #: apply finished (or failed)


@dataclass
class _Scope:
    """One task's on-demand stacks, while its provisioning context is open."""

    task: Any
    endpoint: ConsoleEndpoint
    stacks: list[_OnDemandStack] = field(default_factory=list)
    reports: list[ProvisionReport] = field(default_factory=list)
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


class ResourceCoderProvisioner(TerraformProvisioner):
    """Like terraform; a model writes the Terraform no template covers, and creates what a blocked agent lacks."""

    name = "resourcecoder"

    class Options(TerraformProvisioner.Options, EndpointOptions):
        engine: EngineName = Field("openai", description="the model engine that writes templates, by name: openai "
                                                         "(any endpoint) or a plugin's")
        timeout_s: float = Field(120.0, gt=0, description="per model call")
        temperature: float = Field(0.0, ge=0, le=2, description="sampling temperature")
        max_answer_tokens: int = Field(3000, ge=256, le=32768, description="longest template answer")
        max_rounds: int = Field(3, ge=1, le=10, description="model answers per template before giving up "
                                                            "(each failed one is shown its validate/plan errors)")
        candidates_dir: str = Field(DEFAULT_CANDIDATES_DIR, description="where written templates are kept, as "
                                                                         "<provider>/<type>.tf.j2 (a --templates folder)")
        write: bool = Field(True, description="write templates that are missing; false: only kept candidates are used")
        prompts_dir: str | None = Field(None, description="folder with prompt templates overriding the built-in ones")
        on_demand: bool = Field(True, description="create what a blocked agent reports missing (on_blocked)")
        max_on_demand: int = Field(2, ge=0, le=10, description="on-demand creations per procedure")
        max_invalid: int = Field(2, ge=0, le=10, description="retries of an on-demand answer that fails its schema")
        observation_tokens: int = Field(3000, ge=200, description="page snapshot budget of an on-demand decision")

    def __init__(self, options: "ResourceCoderProvisioner.Options | None" = None) -> None:
        super().__init__(options)
        self._scopes: dict[str, _Scope] = {}
        self._lock = threading.Lock()

    # -- templates ---------------------------------------------------------------------------

    def coder(self, endpoint: ConsoleEndpoint, region: str, provider: str) -> ResourceCoder:
        """A ResourceCoder that validates against the account ``endpoint`` signs in to."""
        o = self.options
        return ResourceCoder(self.terraform(endpoint, region, provider), backend_from_options(o),
                             templates=o.templates, candidates_dir=o.candidates_dir, work_dir=o.work_dir,
                             max_rounds=o.max_rounds, region=region, prompts_dir=o.prompts_dir,
                             temperature=o.temperature, max_answer_tokens=o.max_answer_tokens, meter=self.meter)

    def templates_for(self, requirements: list[Any], endpoint: ConsoleEndpoint, region: str, dest: Path,
                      written: list[str] | None = None, usage: Usage | None = None) -> Path | None:
        """A templates folder covering ``requirements``: the configured one, with kept or newly
        written candidates for what no template covers; None when nothing is missing. What
        writing them cost is added to ``usage``."""
        provider = self.provider_for(endpoint)
        coder = self.coder(endpoint, region, provider)
        missing = [r for r in requirements if not coder.covered(provider, r.type)]
        if not missing:
            return None
        for requirement in missing:  # in dependency order: what it is made in is written first
            if coder.store.find(provider, requirement.type) is not None:
                continue
            if not self.options.write:
                raise EnvironmentProblem(
                    f"no '{provider}' template for {requirement.type} and no kept candidate in {coder.store.root}",
                    hint="let ResourceCoder write it (provisioner.resourcecoder.write = true), or "
                         f"docverify resourcecoder write {requirement.type} --provider {provider}")
            candidate = coder.write_template(requirement.type, provider, attributes=requirement.attributes,
                                             dependencies=requirement.dependencies)
            if written is not None:
                written.append(requirement.type)
            if usage is not None:
                usage.add(candidate.usage)
            log.info("ResourceCoder wrote %s in %d round(s): %s", requirement.type, candidate.rounds, candidate.path)
        return coder.compose(dest, provider)

    # -- before and after a task -------------------------------------------------------------

    @contextmanager
    def provision(self, task: Any, endpoint: ConsoleEndpoint) -> Iterator[Provisioned]:
        from docverify.provision.meta import MetaError, resolve_meta

        suffix = task.context.get("suffix", "")
        folder = Path(self.options.work_dir) / f"{artifact_name(task.id)}-{suffix}.templates"
        try:
            try:
                requirements = resolve_meta(task)
            except MetaError:
                requirements = []  # the terraform provisioner says what is wrong with the annotation
            region = task.region or endpoint.default_region
            usage = Usage()
            templates = self.templates_for(requirements, endpoint, region, folder, usage=usage) if requirements else None
            options = self.options.model_copy(update={"templates": str(templates)}) if templates else self.options
            with ExitStack() as stack:
                made = stack.enter_context(self.sharing_run(options).provision(task, endpoint))
                made.usage.add(usage)  # the templates written for this procedure go on its bill
                stack.enter_context(self._on_demand_scope(task, endpoint))
                shutil.rmtree(folder, ignore_errors=True)  # rendered: the stack no longer reads templates
                yield made
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @staticmethod
    def _key(task: Any) -> str:
        return f"{task.id}\0{task.context.get('suffix', '')}"

    @contextmanager
    def _on_demand_scope(self, task: Any, endpoint: ConsoleEndpoint) -> Iterator[_Scope]:
        scope = _Scope(task, endpoint)
        with self._lock:
            self._scopes[self._key(task)] = scope
        try:
            yield scope
        finally:
            with self._lock:
                self._scopes.pop(self._key(task), None)
            with scope.lock:
                scope.closed = True
            self._teardown(scope)

    def _teardown(self, scope: _Scope) -> None:
        """Destroy the task's on-demand stacks, newest first; every one is tried, the first failure raised."""
        failures: list[Exception] = []
        for entry in reversed(scope.stacks):
            entry.applied.wait(self.options.apply_timeout_s + 60)
            if self.options.keep:
                log.warning("kept on-demand stack %s for %s (docverify cleanup destroys it)", entry.stack.id, scope.task.id)
                continue
            try:
                entry.stack.destroy(attempts=self.options.destroy_attempts)
            except EnvironmentProblem as error:
                failures.append(error)
                log.error("on-demand stack %s of %s: %s", entry.stack.id, scope.task.id, error)
            else:
                shutil.rmtree(entry.workdir, ignore_errors=True)
        if failures:
            raise failures[0]

    # -- while a task runs -------------------------------------------------------------------

    async def on_blocked(self, task: Any, endpoint: ConsoleEndpoint, message: str, page: str) -> ProvisionReport | None:
        """Create what a blocked agent lacks; the report to give it, or None.

        Call it while ``provision(task, endpoint)`` is open (from the runner's event loop),
        when the episode ends a step as blocked by the environment (``Action.environment``:
        "prerequisite missing at step 3: 'Start' acts on an existing resource, but the list on
        Instances is empty"), with that message and the current page's snapshot text.

        A model, shown the procedure, the message, what exists for the task and the page
        (as untrusted data), names one META type from the vocabulary, a count and
        attributes, or "none". That is applied in a stack of its own (its dependencies
        included; names carry the task's suffix plus ``r<n>``), recorded in the ledger
        before apply, and destroyed when the task's ``provision()`` context exits.

        Returns a :class:`ProvisionReport` — ``resources`` (type, Terraform address, name,
        ID), ``context`` (task-context entries for the doc's placeholders: merge them with
        ``task.context.update``) and ``text`` (for ``Episode.provisioned``) — or None when
        on-demand provisioning is off (``on_demand``), this task already had
        ``max_on_demand`` creations or this type once, or the model says nothing in the
        vocabulary would help. Raises :class:`EnvironmentProblem` when it tried and failed
        (model unreachable or unusable, no template could be written, apply failed: what
        the failed apply made is destroyed first). Model usage is in ``report.usage``."""
        if not self.options.on_demand:
            return None
        scope = self._scopes.get(self._key(task))
        if scope is None or scope.closed:
            raise RuntimeError(f"on_blocked({task.id}) needs the task's provision() context to be open")
        if len(scope.reports) >= self.options.max_on_demand:
            log.info("%s: no more on-demand provisioning (max_on_demand = %d)", task.id, self.options.max_on_demand)
            return None
        started = time.perf_counter()
        usage = Usage()
        request = await self.decide(task, message, page, scope, usage)
        if request is None:
            return None
        if any(r.request.type == request.type for r in scope.reports):
            log.info("%s: %s was already created on demand; not again", task.id, request.type)
            return None
        report = await asyncio.to_thread(self._create, scope, request, message)
        report.usage.add(usage)
        report.seconds = time.perf_counter() - started
        with scope.lock:
            scope.reports.append(report)
        log.info("%s: created on demand: %s", task.id, ", ".join(report.describe()))
        return report

    async def decide(self, task: Any, message: str, page: str, scope: _Scope, usage: Usage) -> BlockedRequest | None:
        """Ask the model what to create (None: nothing would help)."""
        from docverify.execute.compact import compact_snapshot

        prompts = prompt_environment(self.options.prompts_dir)
        existing = [line for report in scope.reports for line in report.describe()]
        existing += [f"{key} = {value}" for key, value in task.context.items() if key.endswith(("_id", "_name"))]
        system = prompts.get_template("blocked_system.j2").render(vocabulary=vocabulary())
        user = prompts.get_template("blocked_user.j2").render(
            goal=task.goal, steps=[{"number": s.number, "text": task.resolve(s.text)} for s in task.procedure.all_steps()],
            message=message, existing=existing, page=compact_snapshot(page or "(no page)", self.options.observation_tokens, message))
        messages: list[dict[str, Any]] = [{"role": "system", "content": scrub(system)},
                                          {"role": "user", "content": scrub(user)}]
        backend = backend_from_options(self.options)()
        problem = ""
        try:
            for _ in range(self.options.max_invalid + 1):
                try:
                    with self.meter.spending(backend.model, backend.count_tokens(messages), 300,
                                             local=backend.local) as bill:
                        completion = await backend.complete(messages, BLOCKED_SCHEMA, name="provision_request",
                                                            max_tokens=300, temperature=self.options.temperature)
                        bill(usage, completion.tokens_in, completion.tokens_out)
                except Undecided as why:
                    raise EnvironmentProblem(f"on-demand provisioning for {task.id} stopped: {why}") from None
                usage.retries += completion.retries
                try:
                    return parse_request(completion.text, MAX_COUNT)
                except ValueError as error:
                    usage.invalid_outputs += 1
                    problem = str(error)
                    messages = [*messages[:2], {"role": "assistant", "content": completion.text[:2000]},
                                {"role": "user", "content": f"That answer cannot be used ({problem}). Answer with one "
                                 'JSON object: {"type": "<a type of the vocabulary, or none>", "count": 1, '
                                 '"attributes": {}, "why": "..."}'}]
        finally:
            await close_backend(backend)
        raise EnvironmentProblem(f"on-demand provisioning for {task.id}: the model gave no usable answer ({problem})",
                                 hint="check the model (provisioner.resourcecoder.model), or raise max_invalid")

    def _create(self, scope: _Scope, request: BlockedRequest, message: str) -> ProvisionReport:
        """Render, apply and report ``request`` in a stack of its own (blocking)."""
        from docverify.provision.meta import Requirement, close
        from docverify_terraform.engine import Ledger, TerraformError

        task, endpoint = scope.task, scope.endpoint
        provider = self.provider_for(endpoint)
        region = task.region or endpoint.default_region
        with scope.lock:
            if scope.closed:
                raise EnvironmentProblem(f"{task.id} finished before its on-demand resources were created")
            number = len(scope.stacks) + 1
        base = f"{artifact_name(task.id)}-{task.context.get('suffix', '')}"
        suffix = f"{task.context.get('suffix', '')}r{number}"
        requirements = close([Requirement(type=request.type, count=request.count, attributes=dict(request.attributes),
                                          source="on-demand")])
        workdir = Path(self.options.work_dir) / f"{base}-ondemand{number}"
        folder = workdir.with_name(workdir.name + ".templates")
        written: list[str] = []
        usage = Usage()
        try:
            templates = (self.templates_for(requirements, endpoint, region, folder, written, usage)
                         or self.options.templates)
            spec = self.render(task, requirements, provider, suffix=suffix, region=region, templates=templates)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        terraform = self.terraform(endpoint, region, provider)
        labels = {**self.labels(task, provider, endpoint, terraform), "on_demand": request.type}
        stack = terraform.stack(workdir, ledger=Ledger(self.options.state_dir), stack_id=f"{base}-ondemand{number}",
                                labels=labels)
        entry = _OnDemandStack(stack, workdir)
        with scope.lock:
            if scope.closed:
                raise EnvironmentProblem(f"{task.id} finished before its on-demand resources were created")
            scope.stacks.append(entry)  # from here on, the task's teardown destroys it
        try:
            stack.write(spec.files)
            self.init(stack, provider, terraform)
            outputs = stack.apply()
        except BaseException:
            entry.applied.set()
            try:
                stack.destroy(attempts=self.options.destroy_attempts)
            except TerraformError as error:  # it stays in the scope (and the ledger): the teardown tries again
                log.error("on-demand stack %s: %s", stack.id, error)
            else:
                with scope.lock:
                    scope.stacks.remove(entry)
                shutil.rmtree(workdir, ignore_errors=True)
            raise
        finally:
            entry.applied.set()
        report = self._report(request, message, spec, outputs, task, region, stack.id, written)
        report.usage.add(usage)  # writing its templates, next to deciding what to create
        return report

    @staticmethod
    def _report(request: BlockedRequest, message: str, spec: Any, outputs: dict[str, Any], task: Any, region: str,
                stack_id: str, written: list[str]) -> ProvisionReport:
        resources, context = [], {}
        for resource in spec.resources:
            value_id, value_name = outputs.get(f"{resource.address}_id"), outputs.get(f"{resource.address}_name")
            requested = resource.meta_type == request.type
            resources.append(CreatedResource(resource.meta_type, resource.tf_address,
                                             str(value_name) if value_name is not None else resource.name,
                                             str(value_id) if value_id is not None else None, requested))
            for output, value in ((f"{resource.address}_id", value_id), (f"{resource.address}_name", value_name)):
                if value is None:
                    continue
                for key in spec.outputs.get(output, []):
                    # what was asked for fills its placeholders; its dependencies, and the stack's own
                    # addresses (vpc_1_id: the main stack has a vpc_1 too), only empty ones
                    if key not in context and ((requested and key != output) or key not in task.context):
                        context[key] = str(value)
        return ProvisionReport(request=request, blocked=message, resources=resources, context=context, region=region,
                               stack_id=stack_id, written=written)
