"""Alibaba Cloud request signatures, verified the way the official SDK signs.

- v2 RPC (HMAC-SHA1): ``Signature`` over ``METHOD&%2F&`` + the percent-encoded,
  sorted query string of every parameter (query and form) except ``Signature``;
  key ``secret + "&"`` (``alibabacloud_tea_openapi.utils.Utils.get_rpcsignature``).
- ACS3-HMAC-SHA256: ``Authorization: ACS3-HMAC-SHA256 Credential=AK,
  SignedHeaders=a;b,Signature=hex`` over the canonical request
  ``METHOD\\n/path\\ncanonical-query\\ncanonical-headers\\nsigned-headers\\nhex(sha256(body))``
  (``Utils.get_authorization``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from datetime import datetime, timezone
from urllib.parse import quote, quote_plus

from docverify_sandbox.errors import ApiError, missing

MAX_SKEW_S = 15 * 60


def percent(value: str) -> str:
    return quote(value, safe="~", encoding="utf-8")


def rpc_signature(params: dict[str, str], method: str, secret: str) -> str:
    """The v2 RPC signature of ``params`` (without ``Signature``)."""
    canonical = "&".join(f"{percent(k)}={percent(params[k])}" for k in sorted(params) if params[k] is not None)
    string_to_sign = f"{method}&%2F&{quote_plus(canonical, safe='~', encoding='utf-8')}"
    digest = hmac.new((secret + "&").encode(), string_to_sign.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def acs3_signature(method: str, path: str, query: dict[str, str], headers: dict[str, str],
                   signed_headers: list[str], payload_hash: str, secret: str) -> str:
    canon_query = "&".join(f"{k}={percent(query[k])}" for k in sorted(query))
    canon_headers = "".join(f"{h}:{headers.get(h, '').strip()}\n" for h in signed_headers)
    canonical_request = (f"{method}\n{path or '/'}\n{canon_query}\n{canon_headers}\n"
                         f"{';'.join(signed_headers)}\n{payload_hash}")
    string_to_sign = "ACS3-HMAC-SHA256\n" + hashlib.sha256(canonical_request.encode()).hexdigest()
    return hmac.new(secret.encode(), string_to_sign.encode(), hashlib.sha256).hexdigest()


def _check_time(text: str | None, name: str) -> None:
    if not text:
        raise missing(name)
    try:
        t = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        raise ApiError("InvalidTimeStamp.Format", "Specified time stamp or date value is not well formatted.",
                       400) from None
    if abs(time.time() - t) > MAX_SKEW_S:
        raise ApiError("InvalidTimeStamp.Expired", "Specified time stamp or date value is expired.", 400)


def verify(store, *, method: str, path: str, query: dict[str, str], form: dict[str, str],
           headers: dict[str, str], body: bytes) -> tuple[str, dict]:
    """Check a request's signature; return (AccessKeyId, key owner). Raises ApiError."""
    auth = headers.get("authorization", "")
    if auth.startswith("ACS3-"):
        algo, _, rest = auth.partition(" ")
        if algo != "ACS3-HMAC-SHA256":
            raise ApiError("InvalidSignatureMethod", f"The signature method {algo} is not supported.", 400)
        parts = dict(p.strip().split("=", 1) for p in rest.split(",") if "=" in p)
        ak, signed, sig = parts.get("Credential"), parts.get("SignedHeaders"), parts.get("Signature")
        if not (ak and signed and sig):
            raise ApiError("IncompleteSignature", "The request signature does not conform to Aliyun standards.", 400)
        owner = _owner(store, ak)
        _check_time(headers.get("x-acs-date"), "x-acs-date")
        payload_hash = headers.get("x-acs-content-sha256")
        if not payload_hash:
            raise missing("x-acs-content-sha256")
        if payload_hash != hashlib.sha256(body).hexdigest():
            raise ApiError("SignatureDoesNotMatch", "The request body does not match x-acs-content-sha256.", 400)
        expected = acs3_signature(method, path, query, headers, signed.split(";"), payload_hash, owner["secret"])
        _accept(store, expected, sig, headers.get("x-acs-signature-nonce"), "x-acs-signature-nonce")
        return ak, owner
    params = {**query, **form}
    sig = params.pop("Signature", None)
    if sig is None:
        raise missing("Signature")
    ak = params.get("AccessKeyId")
    if not ak:
        raise missing("AccessKeyId")
    if params.get("SignatureMethod", "HMAC-SHA1") != "HMAC-SHA1":
        raise ApiError("InvalidSignatureMethod", "Specified signature method is not supported.", 400)
    owner = _owner(store, ak)
    _check_time(params.get("Timestamp"), "Timestamp")
    expected = rpc_signature(params, method, owner["secret"])
    _accept(store, expected, sig, params.get("SignatureNonce"), "SignatureNonce")
    return ak, owner


def _accept(store, expected: str, given: str, nonce: str | None, nonce_name: str) -> None:
    """The signature matches and its nonce is fresh (both signing methods).

    Compared as bytes: ``compare_digest`` refuses str with non-ASCII characters, and a
    signature is whatever the client sent."""
    if not hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace")):
        raise ApiError("SignatureDoesNotMatch", "Specified signature is not matched with our calculation.", 400)
    if not nonce:
        raise missing(nonce_name)
    if not store.use_nonce(nonce):
        raise ApiError("SignatureNonceUsed", "Specified signature nonce was used already.", 400)


def _owner(store, ak: str) -> dict:
    owner = store.access_key(ak)
    if owner is None:
        raise ApiError("InvalidAccessKeyId.NotFound", "Specified access key is not found.", 404)
    if not owner["active"]:
        raise ApiError("InvalidAccessKeyId.Inactive", "Specified access key is disabled.", 400)
    return owner
