"""The ``sandbox`` provider: where the sandbox API is, which region, whose AccessKey.

Credentials come only from the environment (``ALIBABA_CLOUD_ACCESS_KEY_ID`` /
``ALIBABA_CLOUD_ACCESS_KEY_SECRET``, the names the real alicloud provider reads),
so no ``.tf`` file ever holds one.
"""

from __future__ import annotations

import os
from typing import Any

from pyvider.common.utils.attrs_factory import create_attrs_class_from_schema
from pyvider.exceptions import ProviderConfigurationError
from pyvider.providers import BaseProvider, ProviderMetadata
from pyvider.schema import a_str, s_provider

from docverify_sandbox.terraform_provider import NAME, VERSION
from docverify_sandbox.terraform_provider.catalog_types import catalogue
from docverify_sandbox.terraform_provider.lifecycle import SandboxResources

API_URL_ENV = "DOCVERIFY_SANDBOX_API_URL"
ACCESS_KEY_ID_ENV = "ALIBABA_CLOUD_ACCESS_KEY_ID"
ACCESS_KEY_SECRET_ENV = "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
REGION_ENV = "ALIBABA_CLOUD_REGION"
DEFAULT_REGION = "cn-hangzhou"


def _problem(message: str) -> ProviderConfigurationError:
    err = ProviderConfigurationError(message)
    err.add_context("terraform.summary", message)
    return err


class SandboxProvider(BaseProvider):
    """Terraform provider for the docverify sandbox console."""

    def __init__(self) -> None:
        super().__init__(metadata=ProviderMetadata(name=NAME, version=VERSION))
        self.resources: SandboxResources | None = None

    async def setup(self) -> None:
        self._final_schema = s_provider(attributes={
            "endpoint": a_str(f"The sandbox RPC API URL; env {API_URL_ENV} when unset.", optional=True),
            "region": a_str(f"Default region of resources; env {REGION_ENV}, else {DEFAULT_REGION}.",
                            optional=True),
        })
        self.config_class = create_attrs_class_from_schema("SandboxProviderConfig",
                                                           self._final_schema.block.attributes)
        self.capabilities = {"provider": self}
        self._setup_done = True

    async def configure(self, config: Any) -> None:
        from docverify_sandbox.client import SandboxClient

        await super().configure(config)
        endpoint = getattr(config, "endpoint", None) or os.environ.get(API_URL_ENV)
        region = getattr(config, "region", None) or os.environ.get(REGION_ENV) or DEFAULT_REGION
        key_id = os.environ.get(ACCESS_KEY_ID_ENV)
        secret = os.environ.get(ACCESS_KEY_SECRET_ENV)
        if not endpoint:
            raise _problem(f"no sandbox endpoint: set endpoint in the provider block or {API_URL_ENV}")
        if not key_id or not secret:
            raise _problem(f"no sandbox AccessKey: set {ACCESS_KEY_ID_ENV} and {ACCESS_KEY_SECRET_ENV}")
        self.resources = SandboxResources(SandboxClient(endpoint, key_id, secret), region, types=catalogue().types)
