"""Alibaba Cloud's product APIs (RPC style), through the official generic client.

One :class:`OpenApi` per AccessKey: a call names the product, the action and the region;
the request goes to the product's endpoint for that region (or to ``url``, a server
standing in for every product: a recording), signed by ``alibabacloud_tea_openapi``'s
``call_api`` as the per-product SDKs sign it. Only the products docverify's cleanup
calls are listed (:data:`PRODUCTS`): their API versions and endpoints are Alibaba
Cloud's documented ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from docverify.errors import EnvironmentProblem
from docverify.scrub import ASCII_MASK, scrub_values


@dataclass(frozen=True)
class Product:
    """A product's RPC API: its code (as in RAM actions), version and endpoint."""

    code: str
    version: str
    endpoint: str  #: host; ``{region}`` is the call's region


PRODUCTS: dict[str, Product] = {p.code: p for p in (
    Product("ecs", "2014-05-26", "ecs.{region}.aliyuncs.com"),
    Product("vpc", "2016-04-28", "vpc.{region}.aliyuncs.com"),
    Product("slb", "2014-05-15", "slb.{region}.aliyuncs.com"),
    Product("alb", "2020-06-16", "alb.{region}.aliyuncs.com"),
    Product("rds", "2014-08-15", "rds.aliyuncs.com"),
    Product("dds", "2015-12-01", "mongodb.aliyuncs.com"),
)}


class ApiCallError(Exception):
    """A product API answered with an error code."""

    def __init__(self, product: str, action: str, code: str, message: str) -> None:
        super().__init__(f"{product} {action}: {code}: {message}")
        self.product, self.action, self.code, self.message = product, action, code, message


@dataclass
class OpenApi:
    """Signed RPC calls with one AccessKey."""

    access_key_id: str
    access_key_secret: str = field(repr=False)
    url: str | None = None  #: one server for every product (tests, recordings)
    timeout_s: float = 30.0
    _clients: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)

    def where(self, product: Product, region: str) -> tuple[str, str]:
        """(protocol, host) of ``product`` in ``region``."""
        if self.url:
            parts = urlsplit(self.url)
            return parts.scheme, parts.netloc
        return "https", product.endpoint.format(region=region)

    def call(self, product: str, action: str, region: str, params: dict[str, str] | None = None) -> dict[str, Any]:
        """``action`` of ``product`` in ``region`` with ``params`` (flat RPC parameters:
        ``Tag.1.Key``); the answer's body. Raises :class:`ApiCallError` for an error code,
        :class:`EnvironmentProblem` when the endpoint cannot be reached."""
        from alibabacloud_tea_openapi import utils_models
        from darabonba.runtime import RuntimeOptions

        api = PRODUCTS[product]
        protocol, host = self.where(api, region)
        query = {"RegionId": region, **(params or {})}
        request = utils_models.OpenApiRequest(query=query)
        call = utils_models.Params(action=action, version=api.version, protocol=protocol.upper(), pathname="/",
                                   method="POST", auth_type="AK", style="RPC", req_body_type="formData",
                                   body_type="json")
        timeout_ms = int(self.timeout_s * 1000)
        try:
            answer = self._client(protocol, host).call_api(
                call, request, RuntimeOptions(autoretry=False, connect_timeout=timeout_ms, read_timeout=timeout_ms))
        except Exception as error:  # the Tea client raises its own exception types
            code = str(getattr(error, "code", "") or "")
            message = scrub_values(str(getattr(error, "message", "") or error), [self.access_key_secret], ASCII_MASK)
            if not code:
                raise EnvironmentProblem(f"cannot reach {product} at {host}: {message[:200]}") from None
            raise ApiCallError(product, action, code, message[:300]) from None
        return dict(answer.get("body") or {})

    def _client(self, protocol: str, host: str) -> Any:
        client = self._clients.get((protocol, host))
        if client is None:
            try:
                from alibabacloud_tea_openapi import models as openapi_models
                from alibabacloud_tea_openapi.client import Client
            except ImportError:
                raise EnvironmentProblem("finding leftovers by tag needs the Alibaba Cloud OpenAPI client",
                                         hint="pip install 'docverify[aliyun]'") from None
            timeout_ms = int(self.timeout_s * 1000)
            client = Client(openapi_models.Config(
                access_key_id=self.access_key_id, access_key_secret=self.access_key_secret, endpoint=host,
                protocol=protocol, connect_timeout=timeout_ms, read_timeout=timeout_ms))
            self._clients[(protocol, host)] = client
        return client
