"""Reading an RPC request strictly, and the shape of the API's error answer.

What the API cannot read is the client's mistake, answered 4xx with an
Alibaba-style error body (:func:`error_body`), never a 500: a body over
``MAX_BODY`` (413), a header the API reads given twice, a query or form with a
malformed percent-escape or bytes that are not UTF-8, a JSON body that is not a
JSON object (400).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any, Iterable
from urllib.parse import parse_qsl

from docverify_sandbox.errors import ApiError

MAX_BODY = 1024 * 1024
HOST_ID = "sandbox.aliyuncs.com"

_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def error_body(exc: ApiError, request_id: str | None = None) -> dict[str, Any]:
    """The body of an API error, as Alibaba Cloud answers one."""
    return {"RequestId": request_id or str(uuid.uuid4()).upper(), "HostId": HOST_ID, "Code": exc.code,
            "Message": exc.message, "Recommend": f"https://api.aliyun.com/troubleshoot?q={exc.code}"}


def too_large() -> ApiError:
    return ApiError("RequestEntityTooLarge", f"The request body is larger than {MAX_BODY} bytes.", 413)


async def read_body(request) -> bytes:
    """The body of a Starlette ``request``, refused once it is over ``MAX_BODY``: a declared
    length over it before anything is read. The server drops what the client still sends."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY:
        raise too_large()
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise too_large()
    return bytes(body)


def api_headers(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The request's headers by lower-case name; one the API reads (``authorization``,
    ``content-type``, ``x-acs-*``) given twice is refused: which one was signed?"""
    headers: dict[str, str] = {}
    for name, value in items:
        name = name.lower()
        if name in headers and (name in ("authorization", "content-type") or name.startswith("x-acs-")):
            raise ApiError("InvalidParameter", f"The request header {name} is given more than once.", 400)
        headers[name] = value
    return headers


def url_params(text: str, where: str) -> dict[str, str]:
    """The parameters of a query string or form body (``where`` names which for the error)."""
    if _BAD_ESCAPE.search(text):
        raise ApiError("InvalidParameter", f"The {where} has a malformed percent-escape.", 400)
    try:
        return dict(parse_qsl(text, keep_blank_values=True, encoding="utf-8", errors="strict"))
    except UnicodeDecodeError:
        raise ApiError("InvalidParameter", f"The {where} is not valid UTF-8 once percent-decoded.", 400) from None


def body_params(body: bytes, content_type: str) -> dict[str, str]:
    """The parameters a body carries: a form (``application/x-www-form-urlencoded``, or no
    content type) or a JSON object (``application/json``); another body carries none."""
    media = content_type.partition(";")[0].strip().lower()
    if not body or media not in ("", "application/x-www-form-urlencoded", "application/json"):
        return {}
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError("InvalidParameter", "The request body is not valid UTF-8.", 400) from None
    if media == "application/json":
        return json_params(text)
    return url_params(text, "request body")


def json_params(text: str) -> dict[str, str]:
    """The members of a JSON object body as parameters: strings as they are, other values
    as JSON text (``true``, ``3``, ``[...]``); ``null`` members left out."""
    try:
        value = json.loads(text)
        if not isinstance(value, dict):
            raise ApiError("InvalidParameter", "The request body is not a JSON object of parameters.", 400)
        params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in value.items() if v is not None}
    except (ValueError, RecursionError):
        raise ApiError("InvalidParameter", "The request body is not valid JSON.", 400) from None
    try:
        for k, v in params.items():
            (k + v).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate escape (\ud800)
        raise ApiError("InvalidParameter", "The request body is not valid UTF-8.", 400) from None
    return params
