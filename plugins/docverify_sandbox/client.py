"""A small signed RPC client for the sandbox (v2 HMAC-SHA1), for the CLI, tests and provisioning."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timezone
from urllib.parse import urlencode

from docverify.errors import EnvironmentProblem
from docverify_sandbox.signature import rpc_signature


class SandboxApiError(Exception):
    def __init__(self, status: int, body: dict) -> None:
        super().__init__(f"{body.get('Code')}: {body.get('Message')}")
        self.status = status
        self.code = body.get("Code")
        self.body = body


class SandboxClient:
    """Signs and sends RPC calls (``Action``, ``Version``, params) to a sandbox."""

    def __init__(self, url: str, access_key_id: str, access_key_secret: str) -> None:
        self.url = url.rstrip("/") + "/"
        self.ak = access_key_id
        self.secret = access_key_secret

    def signed_params(self, action: str, version: str, params: dict[str, str] | None = None,
                      method: str = "POST") -> dict[str, str]:
        query = {"Action": action, "Version": version, "Format": "JSON", "AccessKeyId": self.ak,
                 "SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0",
                 "SignatureNonce": uuid.uuid4().hex,
                 "Timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **(params or {})}
        query["Signature"] = rpc_signature(query, method, self.secret)
        return query

    def call(self, action: str, version: str, params: dict[str, str] | None = None) -> dict:
        data = urlencode(self.signed_params(action, version, params)).encode()
        req = urllib.request.Request(self.url, data=data, method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise SandboxApiError(exc.code, json.loads(exc.read() or b"{}")) from None
        except urllib.error.URLError as exc:
            raise EnvironmentProblem(f"cannot reach the sandbox at {self.url}: {exc.reason}") from None
