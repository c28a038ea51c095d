"""Recorded Alibaba Cloud traffic, served on loopback for the aliyun console's tests.

No cloud is reachable here, so the real services are stood in for by small servers
whose requests and answers have the real ones' shape:

- :class:`LogonSite` — the RAM user logon pages, the console home and product
  consoles, the STS sign-in API (``/federation``). **The pages are reconstructed from
  Alibaba Cloud's documentation, not captured live** (RAM "Log on to the Alibaba Cloud
  Management Console as a RAM user": logon name, **Next**, password, **Log On**; the
  MFA step; RAM's password policy: expiry, lockout; the "nc" slider captcha's element
  ids; STS "GetSigninToken"/"Login": parameters, answers and error codes). Their labels
  are the documented ones, in English (international site) or Chinese (China site).
- :class:`StsFake` — STS ``AssumeRole`` (RPC, signed: the official client's requests
  are verified as the real service verifies them), answering the documented response.
- :class:`ActionTrailFake` — ActionTrail ``LookupEvents`` answering the real events of
  ``tests/corpus/actiontrail/events`` (their time moved into the query's window): none
  for the first calls, as a log that has not delivered them yet, then all of them.
"""

from __future__ import annotations

import calendar
import html
import json
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from docverify_aliyun.console import AliyunConsole
from docverify_aliyun.console_map import console_map
from docverify_sandbox.errors import ApiError
from docverify_sandbox.rpc import body_params, url_params
from docverify_sandbox.server import listening_socket
from docverify_sandbox.signature import verify

EVENTS = Path(__file__).resolve().parents[1] / "corpus" / "actiontrail" / "events"
TICKET = "login_aliyunid_ticket"

# the recorded account
ACCOUNT_ID = "43274"  #: the account of the corpus's RAM events (tests/corpus/actiontrail/events/02, 03)
USER = f"docs-ci@{ACCOUNT_ID}.onaliyun.com"
PASSWORD = "Docverify-test-pw-1"
KEY_ID, KEY_SECRET = "LTAI5tDocverifyTestKey", "docverify-test-access-key-secret-0001"
ROLE = f"acs:ram::{ACCOUNT_ID}:role/docverify-console"



LABELS = {
    "international": {"title": "RAM User Logon", "user": "Username", "next": "Next", "password": "Password",
                      "log_on": "Log On", "wrong": "The username or password is incorrect.",
                      "locked": "The account has been locked because of too many failed logon attempts. "
                                "Try again in 1 hour.",
                      "slide": "Please slide to verify", "home": "Alibaba Cloud Management Console"},
    "china": {"title": "RAM用户登录", "user": "用户名", "next": "下一步", "password": "登录密码", "log_on": "登录",
              "wrong": "用户名或密码错误", "locked": "登录失败次数过多，账号已被锁定，请1小时后再试",
              "slide": "请按住滑块，拖动到最右边", "home": "阿里云管理控制台"},
}


@dataclass
class RamUser:
    logon_name: str
    password: str
    mfa: bool = False
    expired: bool = False
    failures: int = 0


@dataclass
class Keys:
    """AccessKeys the fakes accept (the sandbox's signature check reads them from here)."""

    secrets: dict[str, str] = field(default_factory=dict)  #: AccessKey ID -> secret
    nonces: set[str] = field(default_factory=set)
    #: temporary keys STS issued: id -> (secret, token, role ARN)
    temporary: dict[str, tuple[str, str, str]] = field(default_factory=dict)

    def access_key(self, key_id: str) -> dict[str, Any] | None:
        secret = self.secrets.get(key_id)
        return {"secret": secret, "active": True} if secret is not None else None

    def use_nonce(self, nonce: str) -> bool:
        if nonce in self.nonces:
            return False
        self.nonces.add(nonce)
        return True


def page(title: str, body: str, lang: str = "en") -> HTMLResponse:
    return HTMLResponse(f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)}'
                        f"</title></head><body><main>{body}</main></body></html>")


class LogonSite:
    """The logon pages (``/signin/login.htm``), the console (``/console/home``,
    ``/console/<product>/...``) and the STS sign-in API (``/federation``) of one site."""

    LOCK_AFTER = 5  #: failed logons before RAM locks the user (its password policy's default)

    def __init__(self, keys: Keys, site: str = "international") -> None:
        self.keys = keys
        self.site = site
        self.text = LABELS[site]
        self.lang = "en" if site == "international" else "zh-CN"
        self.users: dict[str, RamUser] = {}
        self.tickets: dict[str, str] = {}  #: session ticket -> who
        self.signin_tokens: dict[str, tuple[str, float]] = {}  #: token -> (role session, issued)
        self.captcha = False  #: risk control: the logon page shows the slider
        self.logons = 0  #: successful logons (password or federated)
        self.pages: dict[str, str] = {}  #: product -> HTML its console pages show besides their heading
        self.app = Starlette(routes=[
            Route("/signin/login.htm", self.logon_name, methods=["GET", "POST"]),
            Route("/signin/password.htm", self.password, methods=["POST"]),
            Route("/signin/mfa.htm", self.mfa),
            Route("/signin/password-expired.htm", self.expired),
            Route("/federation", self.federation, methods=["GET", "POST"]),
            Route("/console/home", self.home),
            Route("/console/{product}/{rest:path}", self.console),
            Route("/console/{product}", self.console),
        ])

    def add_user(self, logon_name: str, password: str, **flags: bool) -> RamUser:
        user = self.users[logon_name.lower()] = RamUser(logon_name, password, **flags)
        return user

    def expire_sessions(self) -> None:
        self.tickets.clear()

    # -- the logon pages -----------------------------------------------------------------

    def form_page(self, body: str) -> HTMLResponse:
        return page(self.text["title"], f"<h1>{self.text['title']}</h1>{body}", self.lang)

    async def logon_name(self, request: Request) -> Response:
        t = self.text
        if request.method == "POST":
            form = await request.form()
            name = str(form.get("loginName") or "").strip()
            if self.captcha or not name:  # the slider must be passed first; a person would drag it
                return RedirectResponse("/signin/login.htm", status_code=303)
            return self.password_page(name)
        prefill = html.escape(request.query_params.get("username", ""), quote=True)
        slider = (f'<div id="nc_1_wrapper" class="nc-container"><div id="nc_1__scale_text">'
                  f'<span class="nc-lang-cnt">{t["slide"]}</span></div>'
                  '<span id="nc_1_n1z" class="nc_iconfont btn_slide">&gt;</span></div>') if self.captcha else ""
        return self.form_page(
            '<form id="login-form" method="post" action="/signin/login.htm">'
            f'<label for="loginName">{t["user"]}</label>'
            f'<input id="loginName" name="loginName" type="text" autocomplete="username" value="{prefill}" '
            'placeholder="username@company-alias.onaliyun.com">'
            f'{slider}<button type="submit">{t["next"]}</button></form>')

    def password_page(self, name: str, error: str | None = None) -> HTMLResponse:
        t = self.text
        alert = f'<div role="alert" class="login-error">{html.escape(error)}</div>' if error else ""
        return self.form_page(
            f'<p class="login-name">{html.escape(name)}</p>{alert}'
            '<form method="post" action="/signin/password.htm">'
            f'<input type="hidden" name="loginName" value="{html.escape(name, quote=True)}">'
            f'<label for="password">{t["password"]}</label>'
            '<input id="password" name="password" type="password" autocomplete="current-password">'
            f'<button type="submit">{t["log_on"]}</button></form>')

    async def password(self, request: Request) -> Response:
        form = await request.form()
        name, password = str(form.get("loginName") or ""), str(form.get("password") or "")
        user = self.users.get(name.lower())
        if user is not None and user.failures >= self.LOCK_AFTER:
            return self.password_page(name, self.text["locked"])
        if user is None or password != user.password:
            if user is not None:
                user.failures += 1
            return self.password_page(name, self.text["wrong"])
        if user.expired:
            return RedirectResponse("/signin/password-expired.htm", status_code=302)
        if user.mfa:
            return RedirectResponse("/signin/mfa.htm", status_code=302)
        return self.signed_in(user.logon_name, "/console/home")

    async def mfa(self, request: Request) -> Response:
        return page("Security Verification",
                    "<h1>Security Verification</h1><p>Enter the 6-digit verification code generated by your virtual "
                    "MFA device.</p><form method=\"post\" action=\"/signin/mfa.htm\"><label for=\"mfaCode\">"
                    "Verification Code</label><input id=\"mfaCode\" name=\"mfaCode\" autocomplete=\"one-time-code\" "
                    "inputmode=\"numeric\"><button type=\"submit\">Submit</button></form>")

    async def expired(self, request: Request) -> Response:
        return page("Reset Password",
                    "<h1>Your password has expired</h1><p>Reset your password before you log on.</p><form>"
                    "<label>New Password <input type=\"password\" name=\"newPassword\"></label>"
                    "<label>Confirm Password <input type=\"password\" name=\"confirmPassword\"></label>"
                    "<button type=\"submit\">OK</button></form>")

    def signed_in(self, who: str, destination: str) -> Response:
        self.logons += 1
        ticket = secrets.token_hex(24)
        self.tickets[ticket] = who
        response = RedirectResponse(destination, status_code=302)
        response.set_cookie(TICKET, ticket, httponly=True, path="/")
        response.set_cookie("login_aliyunid", quote(who), path="/")
        response.set_cookie("aliyun_lang", "en" if self.site == "international" else "zh", path="/")
        return response

    def who(self, request: Request) -> str | None:
        return self.tickets.get(request.cookies.get(TICKET, ""))

    # -- the console -------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        who = self.who(request)
        if who is None:
            return RedirectResponse("/signin/login.htm", status_code=302)
        return page(self.text["home"], f"<h1>{self.text['home']}</h1><p>Signed in as {html.escape(who)}</p>", self.lang)

    async def console(self, request: Request) -> Response:
        who = self.who(request)
        if who is None:
            return RedirectResponse("/signin/login.htm", status_code=302)
        product, rest = request.path_params["product"], request.path_params.get("rest", "")
        return page(f"{product.upper()} console",
                    f"<h1>{html.escape(product.upper())} console</h1><p>Page: /{html.escape(rest)}</p>"
                    f"<p>Signed in as {html.escape(who)}</p>{self.pages.get(product, '')}", self.lang)

    # -- the STS sign-in API (help.aliyun.com/document_detail/91913, 91914) --------------

    async def federation(self, request: Request) -> Response:
        params = dict(request.query_params)
        action = params.get("Action")
        if action == "GetSigninToken":
            for name in ("AccessKeyId", "AccessKeySecret", "SecurityToken", "TicketType"):
                if not params.get(name):
                    return self.api_error(400, f"MissingParameter.{name}", f"The parameter {name} is missing.")
            issued = self.keys.temporary.get(params["AccessKeyId"])
            if issued is None or issued[:2] != (params["AccessKeySecret"], params["SecurityToken"]):
                return self.api_error(401, "InvalidCredential.AuthenticateFail", "The credential you provided is "
                                                                                 "invalid.")
            token = secrets.token_urlsafe(24)
            self.signin_tokens[token] = (issued[2], time.time())
            return JSONResponse({"RequestId": uuid.uuid4().hex.upper(), "SigninToken": token})
        if action == "Login":
            for name in ("LoginUrl", "Destination", "SigninToken"):
                if not params.get(name):
                    return self.api_error(400, f"MissingParameter.{name}", f"The parameter {name} is missing.")
            role, issued = self.signin_tokens.pop(params["SigninToken"], (None, 0.0))
            if role is None or time.time() - issued > 30:  # valid 30 seconds, once
                return self.api_error(401, "InvalidCredential.AuthenticateFail", "The credential you provided is "
                                                                                 "invalid.")
            return self.signed_in(role, params["Destination"])
        return self.api_error(400, "InvalidAction", f"The action {action} is invalid.")

    @staticmethod
    def api_error(status: int, code: str, message: str) -> JSONResponse:
        return JSONResponse({"RequestId": uuid.uuid4().hex.upper(), "Code": code, "Message": message},
                            status_code=status)


async def signed_params(request: Request, keys: Keys) -> tuple[str, dict[str, str]]:
    """The RPC request's AccessKey ID and parameters, its signature verified (v2 RPC,
    or ACS3-HMAC-SHA256 with the action and version in ``x-acs-*`` headers)."""
    body = await request.body()
    query = url_params(request.url.query, "query string")
    form = body_params(body, request.headers.get("content-type", ""))
    headers = {k.lower(): v for k, v in request.headers.items()}
    key_id, _ = verify(keys, method=request.method, path=request.url.path, query=query, form=form,
                       headers=headers, body=body)
    params = {**query, **form}
    params.setdefault("Action", headers.get("x-acs-action", ""))
    params.setdefault("Version", headers.get("x-acs-version", ""))
    return key_id, params


def rpc_error(error: ApiError) -> JSONResponse:
    return JSONResponse({"RequestId": uuid.uuid4().hex.upper(), "HostId": "sts.aliyuncs.com", "Code": error.code,
                         "Message": error.message}, status_code=error.status)


class StsFake:
    """STS AssumeRole (2015-04-01) for the keys in ``allowed`` (AccessKey ID -> the role
    ARNs it may assume, as its RAM policy's sts:AssumeRole says)."""

    def __init__(self, keys: Keys, allowed: dict[str, set[str]]) -> None:
        self.keys = keys
        self.allowed = allowed
        self.calls = 0
        self.app = Starlette(routes=[Route("/", self.rpc, methods=["GET", "POST"])])

    async def rpc(self, request: Request) -> Response:
        self.calls += 1
        try:
            key_id, params = await signed_params(request, self.keys)
        except ApiError as error:
            return rpc_error(error)
        if params.get("Action") != "AssumeRole":
            return rpc_error(ApiError("InvalidAction.NotFound", "Specified api is not found.", 404))
        role = params.get("RoleArn", "")
        if role not in self.allowed.get(key_id, set()):
            return rpc_error(ApiError("NoPermission", "You are not authorized to do this action. You should be "
                                                      "authorized by RAM.", 403))
        temporary = "STS." + secrets.token_hex(10)
        secret, token = secrets.token_urlsafe(24), "CAIS" + secrets.token_urlsafe(60)
        self.keys.temporary[temporary] = (secret, token, role)
        session = params.get("RoleSessionName", "")
        expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + int(params.get("DurationSeconds",
                                                                                              "3600"))))
        return JSONResponse({
            "RequestId": uuid.uuid4().hex.upper(),
            "AssumedRoleUser": {"Arn": f"{role}/{session}", "AssumedRoleId": f"3445843393649****:{session}"},
            "Credentials": {"SecurityToken": token, "AccessKeyId": temporary, "AccessKeySecret": secret,
                            "Expiration": expires},
        })


def corpus_event(name: str) -> dict[str, Any]:
    """A real event of the corpus, by its file name's start (``02_ApiCall_RAM_CreateGroup``)."""
    path = next(EVENTS.glob(f"{name}*.json"))
    return json.loads(path.read_text(encoding="utf-8"))


class ActionTrailFake:
    """LookupEvents (2020-07-06) over ``events``, each at the time given with it: the
    first ``undelivered`` calls find none (the log has not delivered them yet)."""

    def __init__(self, keys: Keys, undelivered: int = 0) -> None:
        self.keys = keys
        self.undelivered = undelivered
        self.events: list[tuple[float | None, dict[str, Any]]] = []
        self.calls = 0
        self.app = Starlette(routes=[Route("/", self.rpc, methods=["GET", "POST"])])

    def record(self, event: dict[str, Any], when: float | None = None) -> None:
        """Log ``event`` as of ``when`` (None: in the middle of the window each query asks about)."""
        self.events.append((when, event))

    async def rpc(self, request: Request) -> Response:
        try:
            _, params = await signed_params(request, self.keys)
        except ApiError as error:
            return rpc_error(error)
        if params.get("Action") != "LookupEvents" or params.get("Version") != "2020-07-06":
            return rpc_error(ApiError("InvalidAction.NotFound", "Specified api is not found.", 404))
        self.calls += 1
        start, end = _epoch(params.get("StartTime"), 0.0), _epoch(params.get("EndTime"), time.time())
        wanted = {params.get(f"LookupAttribute.{n}.Key"): params.get(f"LookupAttribute.{n}.Value") for n in (1, 2)}
        timed = [((start + end) / 2 if when is None else when, event) for when, event in self.events]
        found = [] if self.calls <= self.undelivered else [
            dict(event, eventTime=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)))
            for when, event in sorted(timed, key=lambda item: -item[0])
            if start <= when <= end and (wanted.get("EventName") in (None, event.get("eventName")))]
        size, offset = int(params.get("MaxResults") or 20), int(params.get("NextToken") or 0)
        more = offset + size < len(found)
        return JSONResponse({"RequestId": uuid.uuid4().hex.upper(), "StartTime": params.get("StartTime"),
                             "EndTime": params.get("EndTime"), "Events": found[offset:offset + size],
                             **({"NextToken": str(offset + size)} if more else {})})


def _epoch(text: str | None, default: float) -> float:
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")) if text else default


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """``app`` on 127.0.0.1 (a free port) in a thread; its base URL."""
    import uvicorn

    sock = listening_socket(0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"aliyun-fake-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    try:
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the fake did not start"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


# -- the aliyun console pointed at the fakes ----------------------------------------------

def own_env(**more: str) -> dict[str, str]:
    """The console's own account, as a CI's secrets give it."""
    return {"DOCVERIFY_ALIYUN_LOGIN_USER": USER, "DOCVERIFY_ALIYUN_PASSWORD": PASSWORD,
            "DOCVERIFY_ALIYUN_ACCESS_KEY_ID": KEY_ID, "DOCVERIFY_ALIYUN_ACCESS_KEY_SECRET": KEY_SECRET,
            "DOCVERIFY_ALIYUN_ACCOUNT_ID": ACCOUNT_ID, **more}


def recorded_console(site: LogonSite, *, sts: StsFake | None = None, trail: ActionTrailFake | None = None,
                     **options) -> AliyunConsole:
    """The aliyun console with every address pointed at the fakes."""
    where = {"signin_url": f"{site.url}/signin/login.htm", "federation_url": f"{site.url}/federation",
             "console_url": f"{site.url}/console", "site": site.site}
    if sts is not None:
        where["sts_endpoint"] = sts.url
    if trail is not None:
        where["audit_url"] = trail.url
    return AliyunConsole(AliyunConsole.Options(**{**where, **options}))


def endpoint_of(console: AliyunConsole, environ: dict[str, str], sessions: str | None = None):
    return console.endpoint(console_map(console.options.console_map), sessions, environ)
