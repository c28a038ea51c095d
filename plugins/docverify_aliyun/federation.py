"""AccessKey-federated console sign-in: no password, no MFA page, no captcha.

The documented flow (Alibaba Cloud STS, "GetSigninToken" and "Login",
help.aliyun.com/document_detail/91913 and /91914):

1. STS ``AssumeRole`` with the account's AccessKey (the official
   ``alibabacloud-sts20150401`` client): a temporary AccessKey and security token of
   a RAM role (the key's user needs ``sts:AssumeRole`` on it; the role trusts the account);
2. ``GET https://signin.aliyun.com/federation?Action=GetSigninToken&AccessKeyId=...
   &AccessKeySecret=...&SecurityToken=...&TicketType=mini`` -> ``{"SigninToken": ...}``
   (no signature; valid 30 seconds, once);
3. the browser opens ``https://signin.aliyun.com/federation?Action=Login&LoginUrl=...
   &Destination=...&SigninToken=...`` and is redirected, signed in, to Destination (an
   official Alibaba Cloud address, the console home).

Every secret involved (the AccessKey, the temporary key and token, the sign-in token)
is registered with :mod:`docverify.scrub` and never written to a log; errors quote
the service's code and message with them masked.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urlencode

from docverify.errors import CredentialsRejected, EnvironmentProblem
from docverify.scrub import ASCII_MASK, register, scrub_values

STS_ENDPOINT = "sts.aliyuncs.com"
#: codes that say the key, or what it may do, is the problem (not the network)
REFUSED = ("InvalidAccessKeyId", "SignatureDoesNotMatch", "NoPermission", "Forbidden", "EntityNotExist",
           "InvalidParameter.RoleArn", "AccessDenied", "InvalidSecurityToken", "InvalidCredential")


@dataclass(frozen=True)
class Federation:
    """What federated sign-in needs: an AccessKey allowed to assume ``role_arn``."""

    access_key_id: str = field(repr=False)
    access_key_secret: str = field(repr=False)
    role_arn: str  #: acs:ram::<account id>:role/<role name>
    url: str  #: the STS sign-in API, https://signin.aliyun.com/federation
    session_name: str = "docverify"  #: RoleSessionName: how ActionTrail names who acted
    duration_s: int = 3600  #: how long the temporary key (and so the console session) lives
    sts_endpoint: str = STS_ENDPOINT  #: host[:port], or a URL with its scheme (tests)


@dataclass(frozen=True)
class TemporaryKey:
    access_key_id: str = field(repr=False)
    access_key_secret: str = field(repr=False)
    security_token: str = field(repr=False)


def assume_role(federation: Federation, timeout_s: float) -> TemporaryKey:
    """STS AssumeRole through the official client; the role's temporary key."""
    try:
        from alibabacloud_sts20150401 import models
        from alibabacloud_sts20150401.client import Client
        from alibabacloud_tea_openapi import models as openapi_models
        from darabonba.runtime import RuntimeOptions
        from Tea.exceptions import TeaException
    except ImportError:
        raise EnvironmentProblem("federated sign-in needs the STS client (alibabacloud-sts20150401)",
                                 hint="pip install 'docverify[aliyun]'") from None
    scheme, _, host = federation.sts_endpoint.rpartition("://")
    timeout_ms = int(timeout_s * 1000)
    client = Client(openapi_models.Config(
        access_key_id=federation.access_key_id, access_key_secret=federation.access_key_secret,
        endpoint=host.strip("/"), protocol=scheme or "https", connect_timeout=timeout_ms, read_timeout=timeout_ms))
    request = models.AssumeRoleRequest(role_arn=federation.role_arn, role_session_name=federation.session_name,
                                       duration_seconds=federation.duration_s)
    secrets = (federation.access_key_id, federation.access_key_secret)
    try:
        body = client.assume_role_with_options(
            request, RuntimeOptions(autoretry=False, connect_timeout=timeout_ms, read_timeout=timeout_ms)).body
    except TeaException as error:
        code = str(error.code or "")
        message = scrub_values(str(error.message or error), secrets, ASCII_MASK)[:300]
        if not code:  # the client's wrapping of a network error
            raise EnvironmentProblem(f"cannot reach STS at {federation.sts_endpoint}: {message}") from None
        where = f"STS AssumeRole of {federation.role_arn} refused: {code}: {message}"
        status = getattr(error, "status_code", None) or getattr(error, "statusCode", None)
        if code.startswith(REFUSED) or status in (401, 403, 404):
            raise CredentialsRejected(where, hint="the AccessKey's RAM user needs sts:AssumeRole on this role "
                                                  "(docs/aliyun-ram-policy.json) and the role must trust the account "
                                                  "it belongs to") from None
        raise EnvironmentProblem(where) from None
    except OSError as error:
        raise EnvironmentProblem(f"cannot reach STS at {federation.sts_endpoint}: "
                                 f"{scrub_values(str(error), secrets, ASCII_MASK)[:200]}") from None
    credentials = body.credentials if body is not None else None
    if credentials is None or not (credentials.access_key_id and credentials.access_key_secret
                                   and credentials.security_token):
        raise EnvironmentProblem(f"STS AssumeRole of {federation.role_arn} answered without credentials")
    register(credentials.access_key_secret, credentials.security_token)
    return TemporaryKey(credentials.access_key_id, credentials.access_key_secret, credentials.security_token)


def signin_token(federation: Federation, key: TemporaryKey, timeout_s: float) -> str:
    """``Action=GetSigninToken`` for the temporary key: a token for one console logon."""
    query = urlencode({"Action": "GetSigninToken", "AccessKeyId": key.access_key_id,
                       "AccessKeySecret": key.access_key_secret, "SecurityToken": key.security_token,
                       "TicketType": "mini"})
    secrets = (key.access_key_id, key.access_key_secret, key.security_token)
    try:
        with urllib.request.urlopen(f"{federation.url}?{query}", timeout=timeout_s) as response:
            status, text = response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as answer:
        status, text = answer.code, answer.read().decode("utf-8", "replace")
        answer.close()
    except (OSError, http.client.HTTPException) as error:
        raise EnvironmentProblem(f"cannot reach the federated sign-in at {federation.url}: "
                                 f"{scrub_values(str(error), secrets, ASCII_MASK)[:200]}") from None
    try:
        body = json.loads(text)
    except ValueError:
        body = {}
    token = body.get("SigninToken") if isinstance(body, dict) else None
    if status == 200 and isinstance(token, str) and token:
        register(token)
        return token
    code = body.get("Code", "") if isinstance(body, dict) else ""
    message = scrub_values(str(body.get("Message", "") if isinstance(body, dict) else text), secrets, ASCII_MASK)
    where = f"GetSigninToken at {federation.url} refused: HTTP {status}" + (f": {code}: {message[:200]}" if code else "")
    if status in (400, 401, 403) and str(code).startswith(REFUSED):
        raise CredentialsRejected(where, hint="the role's temporary key was not accepted for console logon: check "
                                              "that the role may use the console and that the clock is right")
    raise EnvironmentProblem(where)


def login_url(federation: Federation, token: str, *, destination: str, login_page: str) -> str:
    """``Action=Login``: opened in the browser, it signs in and redirects to ``destination``."""
    return f"{federation.url}?" + urlencode({"Action": "Login", "LoginUrl": login_page,
                                             "Destination": destination, "SigninToken": token})
