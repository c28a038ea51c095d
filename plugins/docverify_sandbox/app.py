"""The sandbox web application: RPC API at ``/`` and console pages under ``/console``.

Both end in :class:`docverify_sandbox.operations.Engine`, so a console action
and an API call share one implementation and one audit trail. Pages are
rendered by shared Jinja2 templates from the catalog; nothing here knows a
product by name. Pages speak the request's language (:mod:`docverify_sandbox.i18n`:
the ``aliyun_lang`` cookie, else ``Accept-Language``); the API and the audit
trail are language-neutral.
"""

from __future__ import annotations

import functools
import json
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from docverify_sandbox import audit, rpc, signature
from docverify_sandbox.catalog import REGIONS, Catalog, next_label, zones
from docverify_sandbox.errors import ApiError, ValidationErrors
from docverify_sandbox.i18n import LANG_COOKIE, LOCALES, Translator, choose_locale, console_time, gettext, translator
from docverify_sandbox.operations import Caller, Engine, create_field_names, truthy
from docverify_sandbox.seed import Resources, seed_resources, seeder
from docverify_sandbox.state import DEFAULT_ACCOUNTS, DefaultAccount, Store

HERE = Path(__file__).parent
SANDBOX_VERSION = "sandbox"  #: Version of the sandbox's own actions (ResetAccount)
SESSION_COOKIE = "dv_session"
REGION_COOKIE = "dv_region"


@dataclass
class Sandbox:
    """Everything one server holds: catalog, store, engine, templates, and the
    translators of the catalog (one per locale, prepared once)."""

    catalog: Catalog
    store: Store
    engine: Engine
    env: Environment
    translators: dict[str, Translator]
    seeder: Callable[[DefaultAccount], list[dict[str, Any]]] = seed_resources  #: what a reset account holds

    def reset(self, account_id: str) -> None:
        self.store.reset(account_id, self.seeder)

    def translator(self, request: Request) -> Translator:
        """The translator of the request's language."""
        locale = choose_locale(request.cookies.get(LANG_COOKIE), request.headers.get("accept-language"))
        return self.translators[locale]


def templates() -> Environment:
    """The pages' Jinja2 templates, with the globals they use (``_`` translates)."""
    env = Environment(loader=FileSystemLoader(str(HERE / "templates")),
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)
    env.globals.update(REGIONS=REGIONS, LOCALES=LOCALES, next_label=next_label, json=json, _=gettext, when=console_time)
    return env


def create_app(catalog: Catalog, store: Store, resources: Resources = "seeded") -> Starlette:
    """The console's app; accounts start with ``resources`` (:mod:`docverify_sandbox.seed`)."""
    start = seeder(resources)
    store.seed_accounts(start)
    translators = {locale: translator(catalog, locale) for locale in LOCALES}
    sandbox = Sandbox(catalog, store, Engine(catalog, store), templates(), translators, start)
    pages = Pages(sandbox)
    routes = [
        Route("/", functools.partial(root, sandbox), methods=["GET", "POST"]),
        Route("/signin", pages.signin, methods=["GET", "POST"]),
        Route("/signout", pages.signout, methods=["GET", "POST"]),
        Route("/console", pages.home),
        Route("/console/region", pages.set_region, methods=["GET", "POST"]),
        Route("/console/lang", pages.set_language, methods=["GET", "POST"]),
        Route("/console/actiontrail/events", pages.events),
        Route("/console/{product}", pages.product_home),
        Route("/console/{product}/{rtype}", pages.list_page, methods=["GET"]),
        Route("/console/{product}/{rtype}/create", pages.create, methods=["GET", "POST"]),
        Route("/console/{product}/{rtype}/{rid}", pages.detail, methods=["GET"]),
        Route("/console/{product}/{rtype}/{rid}/do/{action}", pages.do_action, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes,
                    exception_handlers={Exception: internal_error, 404: not_found, 405: method_not_allowed})
    app.state.sandbox = sandbox
    return app


# ------------------------------------------------------------------ API


def error_response(exc: ApiError, request_id: str | None = None, headers: dict[str, str] | None = None
                   ) -> JSONResponse:
    return JSONResponse(rpc.error_body(exc, request_id), status_code=exc.status, headers=headers)


async def internal_error(request: Request, exc: Exception) -> Response:
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    if request.scope["path"] == "/" or "x-acs-action" in request.headers:
        return error_response(ApiError("InternalError", "The request processing has failed due to some unknown "
                                       "error, exception or failure.", 500))
    return error_page(request, 500, detail[:200])


async def not_found(request: Request, exc: Exception) -> Response:
    if request.scope["path"] == "/":
        return error_response(ApiError("InvalidAction.NotFound", "Specified api is not found.", 404))
    return page_not_found(request)


async def method_not_allowed(request: Request, exc: HTTPException) -> Response:
    message = f"The HTTP method {request.method} is not supported here."
    if request.scope["path"] == "/":
        return error_response(ApiError("UnsupportedHTTPMethod", message + " Use GET or POST.", 405),
                              headers=exc.headers)
    return error_page(request, 405, message)


def page_not_found(request: Request) -> Response:
    return error_page(request, 404)


def error_page(request: Request, status: int, detail: str = "") -> HTMLResponse:
    sandbox: Sandbox = request.app.state.sandbox
    page = sandbox.env.get_template("error.html.j2").render(status=status, detail=detail,
                                                             i18n=sandbox.translator(request))
    return HTMLResponse(page, status_code=status)


#: what only an API call carries: a GET of ``/`` with none of them is the console's home
API_QUERY = ("Action", "Version", "AccessKeyId", "Signature")
API_HEADERS = ("x-acs-action", "authorization")


def _is_api(request: Request) -> bool:
    return (request.method == "POST" or any(name in request.headers for name in API_HEADERS)
            or any(name in request.query_params for name in API_QUERY))


async def root(sandbox: Sandbox, request: Request) -> Response:
    if not _is_api(request):
        return RedirectResponse("/console", status_code=302)
    try:
        body = await rpc.read_body(request)
    except ApiError as exc:
        return error_response(exc)
    except ClientDisconnect:  # the client left (or sent what the server refused): nobody reads an answer
        return Response(status_code=400)
    return await run_in_threadpool(_api_call, sandbox, request, body)


def _api_call(sandbox: Sandbox, request: Request, body: bytes) -> Response:
    try:
        headers = rpc.api_headers(request.headers.items())
        query = rpc.url_params(request.scope["query_string"].decode("latin-1"), "query string")
        form = rpc.body_params(body, headers.get("content-type", ""))
        params = {**query, **form}
        action = params.get("Action") or headers.get("x-acs-action")
        version = params.get("Version") or headers.get("x-acs-version")
        if not action:
            raise signature.missing("Action")
        if not version:
            raise signature.missing("Version")
        ak, owner = signature.verify(sandbox.store, method=request.method, path=request.scope["path"], query=query,
                                     form=form, headers=headers, body=body)
        for k in ("Action", "Version", "Format", "Signature", "SignatureMethod", "SignatureVersion",
                  "SignatureNonce", "Timestamp", "AccessKeyId"):
            params.pop(k, None)
        caller = api_caller(sandbox, owner, ak, request)
        if version == SANDBOX_VERSION and action == "ResetAccount":
            if caller.identity["type"] != "root-account":
                raise ApiError("Forbidden.RAM", "Only the account owner can reset the sandbox account.", 403)
            sandbox.reset(caller.account_id)
            return JSONResponse({"RequestId": str(uuid.uuid4()).upper(), "AccountId": caller.account_id})
        result = sandbox.engine.call(caller, version, action, params)
        return JSONResponse(result)
    except ApiError as exc:
        return error_response(exc)


def api_caller(sandbox: Sandbox, owner: dict[str, Any], ak: str, request: Request) -> Caller:
    account_id = owner["account_id"]
    if owner["user"] is None:
        identity = {"type": "root-account", "principalId": account_id, "accountId": account_id,
                    "accessKeyId": ak, "userName": "root"}
    else:
        users = sandbox.store.find(account_id, "ram", "user", name=owner["user"])
        uid = users[0]["id"] if users else owner["user"]
        identity = {"type": "ram-user", "principalId": uid, "accountId": account_id, "accessKeyId": ak,
                    "userName": owner["user"]}
    ip = request.client.host if request.client else "127.0.0.1"
    return Caller(account_id, identity, "api", ip, request.headers.get("user-agent", ""))


# ---------------------------------------------------------------- pages


def create_op(create: dict[str, Any], values: dict[str, Any]) -> str:
    """The operation a create flow calls: ``op``, unless ``op_by`` picks another by a
    field's value (a security group rule's Direction egress -> AuthorizeSecurityGroupEgress)."""
    for field_name, ops in (create.get("op_by") or {}).items():
        chosen = ops.get(str(values.get(field_name)))
        if chosen:
            return chosen
    return create["op"]


def variant_calls(variant: dict[str, Any], values: dict[str, str], checked: dict[str, Any]) -> list[dict[str, str]]:
    """The parameters of each operation call a create variant's panel makes: the panel's
    values; with ``each: {field, params}``, one call per value checked in that field, its
    ``:``-separated parts as the named parameters (``tcp:22/22`` -> ``IpProtocol=tcp``,
    ``PortRange=22/22``), in the order the field lists them."""
    each = variant.get("each")
    if not each:
        return [dict(values)]
    name, params = each["field"], each["params"]
    common = {k: v for k, v in values.items() if k != name and k.rpartition(".")[0] != name}
    return [{**common, **dict(zip(params, value.split(":", len(params) - 1), strict=True))}
            for value in checked[name].split(",")]


class Pages:
    """The console pages, generic over the catalog."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sb = sandbox
        self.cat = sandbox.catalog

    # -------------------------------------------------------- plumbing
    def session(self, request: Request) -> dict[str, Any] | None:
        token = request.cookies.get(SESSION_COOKIE)
        return self.sb.store.session(token) if token else None

    def caller(self, request: Request, session: dict[str, Any], product: dict[str, Any] | None) -> Caller:
        return Caller(session["account_id"], session["principal"], "console",
                      request.client.host if request.client else "127.0.0.1",
                      product["user_agent"] if product else "AliyunConsole")

    def region(self, request: Request) -> str:
        region = request.query_params.get("region") or request.cookies.get(REGION_COOKIE) or "cn-hangzhou"
        return region if region in REGIONS else "cn-hangzhou"

    def render(self, request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        session = ctx.pop("session", None) or self.session(request)
        ctx.setdefault("product", None)
        ctx.setdefault("toast", request.query_params.get("toast"))
        if request.query_params.get("created") and ctx.get("res") and ctx["res"].get("create", {}).get("created"):
            ctx.setdefault("created", ctx["res"]["create"]["created"])
        page = self.sb.env.get_template(template).render(
            request=request, catalog=self.cat, session=session, region=self.region(request),
            release=self.cat.release, path=request.url.path, i18n=self.sb.translator(request), **ctx)
        resp = HTMLResponse(page, status_code=status)
        if request.query_params.get("region") in REGIONS:
            resp.set_cookie(REGION_COOKIE, request.query_params["region"], httponly=True, samesite="lax")
        return resp

    def login_redirect(self, request: Request) -> Response:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse("/signin?" + urlencode({"next": target}), status_code=303)

    def resource_page(self, request: Request):
        """(session, product, resource type) of a resource page, or the Response that
        answers instead: the sign-in redirect, or 404 for an unknown product/type."""
        session = self.session(request)
        if not session:
            return self.login_redirect(request)
        product, res = self.lookup(request.path_params["product"], request.path_params["rtype"])
        if product is None:
            return page_not_found(request)
        return session, product, res

    def lookup(self, product_key: str, rtype: str | None = None):
        product = self.cat.products.get(product_key)
        if product is None or (rtype is not None and rtype not in product.get("resources", {})):
            return None, None
        return product, (product["resources"][rtype] if rtype else None)

    # ---------------------------------------------------------- sign-in
    async def signin(self, request: Request) -> Response:
        nxt = request.query_params.get("next") or "/console"
        if not nxt.startswith("/"):
            nxt = "/console"
        if request.method == "GET":
            return self.render(request, "signin.html.j2", next=nxt, error=None, user_name="")
        form = await request.form()
        user_name = str(form.get("user_name", "")).strip()
        password = str(form.get("password", ""))
        return await run_in_threadpool(self._signin, request, user_name, password, nxt)

    def _signin(self, request: Request, user_name: str, password: str, nxt: str) -> Response:
        store = self.sb.store
        ip = request.client.host if request.client else "127.0.0.1"
        ua = request.headers.get("user-agent", "")
        name, _, alias = user_name.partition("@")
        alias = alias.removesuffix(".onaliyun.com")
        account = principal = None
        ok = False
        if not alias:
            account = store.account_by_alias(name)
            if account is not None:
                principal = {"type": "root-account", "principalId": account["account_id"],
                             "accountId": account["account_id"], "userName": "root"}
                ok = password == account["root_password"]
            else:
                alias = DEFAULT_ACCOUNTS[0].alias
        if account is None and alias:
            account = store.account_by_alias(alias)
            if account is not None:
                users = store.find(account["account_id"], "ram", "user", name=name)
                if users:
                    u = users[0]
                    principal = {"type": "ram-user", "principalId": u["id"], "accountId": account["account_id"],
                                 "userName": u["name"]}
                    ok = (truthy(u["attrs"].get("ConsoleAccess", "false")) and
                          bool(u["attrs"].get("Password")) and password == u["attrs"].get("Password"))
        if account is not None and principal is not None:
            event = audit.signin_event(account["account_id"], principal, ok=ok,
                                       url=str(request.url), ip=ip, user_agent=ua, login_account=user_name)
            store.add_event(account["account_id"], event, __import__("time").time())
        if not ok:
            return self.render(request, "signin.html.j2", status=401, next=nxt, user_name=user_name,
                               error=True)
        token = store.new_session(account["account_id"], principal)
        resp = RedirectResponse(nxt, status_code=303)
        resp.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="lax")
        return resp

    async def signout(self, request: Request) -> Response:
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            self.sb.store.end_session(token)
        resp = RedirectResponse("/signin", status_code=303)
        resp.delete_cookie(SESSION_COOKIE)
        return resp

    async def set_region(self, request: Request) -> Response:
        region = request.query_params.get("region", "cn-hangzhou")
        back = request.query_params.get("back") or "/console"
        resp = RedirectResponse(back if back.startswith("/") else "/console", status_code=303)
        if region in REGIONS:
            resp.set_cookie(REGION_COOKIE, region, httponly=True, samesite="lax")
        return resp

    async def set_language(self, request: Request) -> Response:
        """The top bar's language switch: keeps the choice in the ``aliyun_lang`` cookie
        (as the real console does) and goes back to the page."""
        locale = request.query_params.get("lang", "")
        back = request.query_params.get("back") or "/console"
        resp = RedirectResponse(back if back.startswith("/") and not back.startswith("//") else "/console",
                                status_code=303)
        if locale in LOCALES:
            resp.set_cookie(LANG_COOKIE, locale, max_age=365 * 24 * 3600, samesite="lax")
        return resp

    # -------------------------------------------------------------- home
    async def home(self, request: Request) -> Response:
        session = self.session(request)
        if not session:
            return self.login_redirect(request)
        return self.render(request, "home.html.j2", session=session)

    async def product_home(self, request: Request) -> Response:
        product, _ = self.lookup(request.path_params["product"])
        if product is None:
            return await not_found(request, None)
        first = next(iter(product["nav"].values()))
        if first.get("view") == "events":
            return RedirectResponse(f"/console/{product['key']}/events", status_code=302)
        return RedirectResponse(f"/console/{product['key']}/{first['resource']}", status_code=302)

    # -------------------------------------------------------------- list
    async def list_page(self, request: Request) -> Response:
        found = self.resource_page(request)
        if isinstance(found, Response):
            return found
        session, product, res = found
        return await run_in_threadpool(self._list, request, session, product, res)

    def _rows(self, caller: Caller, product: dict[str, Any], rtype: str, region: str,
              parent_id: str | None = None) -> list[dict[str, Any]]:
        regional = product.get("regional", True)
        res = product["resources"][rtype]
        if res.get("parent") and parent_id is None:
            rows = self.sb.store.find(caller.account_id, product["key"], rtype, region=region if regional else None)
        else:
            rows = self.sb.store.find(caller.account_id, product["key"], rtype,
                                      region=region if regional and not parent_id else None, parent_id=parent_id)
        return rows

    def _list(self, request: Request, session, product, res, status: int = 200, **extra) -> Response:
        rtype = request.path_params["rtype"]
        region = self.region(request)
        caller = self.caller(request, session, product)
        rows = self._rows(caller, product, rtype, region)
        query = request.query_params.get("q", "").strip()
        if query:
            rows = [r for r in rows if query.lower() in r["id"].lower() or query.lower() in (r["name"] or "").lower()]
        tab = request.query_params.get("tab")
        if res.get("tab_field") and tab:
            rows = [r for r in rows if r["attrs"].get(res["tab_field"]) == tab]
        try:
            page = max(1, int(request.query_params.get("page", "1")))
        except ValueError:
            page = 1
        size = 10
        pages = max(1, (len(rows) + size - 1) // size)
        page = min(page, pages)
        shown = rows[(page - 1) * size: page * size]
        dialog = extra.pop("dialog", None) or self._dialog_from_query(request, caller, product, rtype, region)
        return self.render(request, "list.html.j2", status=status, session=session, product=product, res=res,
                           rtype=rtype, rows=shown, total=len(rows), page=page, pages=pages, q=query,
                           dialog=dialog, ctx=self._ctx(caller, product, region), **extra)

    def _ctx(self, caller: Caller, product: dict[str, Any], region: str) -> dict[str, Any]:
        """What field widgets need: zones and referenceable resources."""
        return {"zones": zones(region), "refs": lambda spec: self._ref_options(caller, product, spec, region),
                "region": region}

    def _ref_options(self, caller: Caller, product: dict[str, Any], spec: dict[str, Any], region: str):
        pkey = spec.get("product", product["key"])
        regional = self.cat.product(pkey).get("regional", True)
        rows = self.sb.store.find(caller.account_id, pkey, spec["ref"], region=region if regional else None)
        by_name = spec.get("by") == "name"
        return [((r["name"] if by_name else r["id"]), (f"{r['name']} ({r['id']})" if r["name"] and r["name"] != r["id"] else r["id"]))
                for r in rows]

    # ----------------------------------------------------------- dialogs
    def _dialog_from_query(self, request, caller, product, rtype, region, rec=None):
        qp = request.query_params
        if qp.get("dialog") == "create":
            return self._create_dialog(product, rtype, qp.get("parent"), variant=qp.get("variant"))
        if qp.get("dialog") == "create_child" and qp.get("child") in product["resources"]:
            return self._create_dialog(product, qp["child"], rec["id"] if rec else qp.get("parent"),
                                       variant=qp.get("variant"))
        do = qp.get("do")
        if do:
            target_rtype = qp.get("rtype", rtype)
            res = product["resources"].get(target_rtype)
            if res is None or do not in res.get("actions", {}):
                return None
            ident = qp.get("id") or (rec["id"] if rec else None)
            action = res["actions"][do]
            values = {}
            if action.get("form") and ident:
                # an edit dialog opens with the resource's current values, as the console's do
                rows = self.sb.store.find(caller.account_id, product["key"], target_rtype, id=ident)
                if rows:
                    item = self.sb.engine.serialize(product["key"], target_rtype, rows[0])
                    values = {k: v for k, v in item.items() if isinstance(v, str)}
            return self._action_dialog(product, target_rtype, ident, do, action, values=values)
        return None

    def _create_dialog(self, product, rtype, parent_id, values=None, errors=None, error=None, variant=None):
        """The create panel, or the panel of one of its ``variants`` (None: no such variant)."""
        res = product["resources"][rtype]
        create = res.get("create")
        flow = create if variant is None else ((create or {}).get("variants") or {}).get(variant)
        if flow is None:
            return None
        return {"kind": "create", "title": flow["title"], "rtype": rtype, "res": res, "variant": variant,
                "fields": self._fields(product, rtype, flow.get("fields", list(res.get("fields", {})))),
                "ok": flow.get("submit", "OK"), "values": values or {}, "errors": errors or {},
                "error": error, "parent": parent_id,
                "url": f"/console/{product['key']}/{rtype}/create"}

    def _action_dialog(self, product, rtype, ident, name, action, values=None, errors=None, error=None,
                       confirm_step=False):
        form = action.get("form")
        confirm = action.get("confirm")
        url = f"/console/{product['key']}/{rtype}/{ident}/do/{name}"
        if form and not confirm_step:
            return {"kind": "form", "title": form["title"], "rtype": rtype, "id": ident, "url": url,
                    "fields": self._fields(product, rtype, form.get("fields", []), action.get("target")),
                    "ok": form.get("ok", "OK"), "values": values or {}, "errors": errors or {}, "error": error,
                    "two_step": bool(form.get("confirm_ok") or confirm)}
        if confirm_step and form:
            title = (confirm or {}).get("title", form["title"])
            text = (confirm or {}).get("text", f"Are you sure you want to continue? ({action['label']})")
            return {"kind": "confirm", "title": title, "text": text, "rtype": rtype, "id": ident, "url": url,
                    "ok": (confirm or {}).get("ok") or form.get("confirm_ok", "OK"), "values": values or {},
                    "error": error}
        if confirm:
            return {"kind": "confirm", "title": confirm["title"], "text": confirm.get("text", ""), "rtype": rtype,
                    "id": ident, "url": url, "ok": confirm.get("ok", "OK"), "values": {}, "error": error}
        return {"kind": "info", "title": action.get("title", action["label"]), "text": action.get("text", ""),
                "rtype": rtype, "id": ident, "url": url, "ok": "OK", "values": {}, "error": error,
                "buttons": action.get("buttons", [])}

    def _fields(self, product, rtype, names, target: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """The form's fields with their specs: the resource's, and those of the resource
        the action makes (``target``: an instance's Create Custom Image asks for the
        image's name)."""
        specs = self.sb.engine.fields_of(product["key"], rtype)
        if target:
            specs = {**self.sb.engine.fields_of(product["key"], target), **specs}
        if isinstance(names, dict):
            return list(names.items())
        return [(n, specs.get(n) or {"label": n, "type": "text"}) for n in names]

    # ------------------------------------------------------------ create
    async def create(self, request: Request) -> Response:
        found = self.resource_page(request)
        if isinstance(found, Response):
            return found
        session, product, res = found
        if not res.get("create"):
            return await not_found(request, None)
        form = dict((await request.form()).multi_items()) if request.method == "POST" else {}
        return await run_in_threadpool(self._create, request, session, product, res, form)

    def _values_from_form(self, form: dict[str, Any]) -> dict[str, str]:
        values = {k: str(v) for k, v in form.items() if not k.startswith("_")}
        for name in str(form.get("_checkboxes", "")).split(","):
            if name and name not in values:
                values[name] = "false"
        return values

    def _create(self, request, session, product, res, form) -> Response:
        rtype = request.path_params["rtype"]
        create = res["create"]
        region = self.region(request)
        caller = self.caller(request, session, product)
        style = create.get("style", "panel")
        values = self._values_from_form(form)
        if request.method == "POST" and form.get("_variant"):
            return self._create_variant(request, session, product, res, rtype, str(form["_variant"]), values,
                                        caller, region)
        if style == "wizard":
            return self._wizard(request, session, product, res, rtype, values, form, caller, region)
        if request.method == "GET":
            if style == "page":
                return self._render_create_page(request, session, product, res, rtype, {}, {}, None, caller, region)
            return RedirectResponse(f"/console/{product['key']}/{rtype}?dialog=create", status_code=303)
        if style == "direct" and create.get("confirm") and not form.get("_confirmed"):
            dialog = {"kind": "confirm", "title": create["confirm"]["title"], "text": create["confirm"].get("text", ""),
                      "url": request.url.path, "ok": create["confirm"].get("ok", "OK"), "values": values,
                      "error": None}
            return self._back_to_parent(request, session, product, res, values, dialog=dialog)
        if create.get("confirm_page") and not form.get("_confirmed"):
            try:
                self.sb.engine.validate(caller, product["key"], rtype, self.sb.engine.fields_of(product["key"], rtype),
                                        values, region, require=True, only=create_field_names(res))
            except ValidationErrors as exc:
                return self._create_failed(request, session, product, res, rtype, values, exc, caller, region)
            return self.render(request, "confirm_order.html.j2", session=session, product=product, res=res,
                               values=values, cp=create["confirm_page"], url=request.url.path,
                               fields=self._fields(product, rtype, create_field_names(res)))
        try:
            result = self.sb.engine.call(caller, product["api_version"], create_op(create, values),
                                         {**values, "RegionId": region})
        except ApiError as exc:
            return self._create_failed(request, session, product, res, rtype, values, exc, caller, region)
        done = create.get("confirm_page", {}).get("done") or f"{res['singular']} created successfully."
        if style == "direct":
            reveal = {k: self._dig(result, k) for k in create.get("reveal", [])}
            dialog = {"kind": "reveal", "title": create["title"], "reveal": reveal,
                      "buttons": create.get("reveal_buttons", []), "ok": create.get("close", "Close")}
            return self._back_to_parent(request, session, product, res, values, dialog=dialog)
        if res.get("parent"):
            return self._back_to_parent(request, session, product, res, values, toast=done)
        return RedirectResponse(f"/console/{product['key']}/{rtype}?" + urlencode({"toast": done}), status_code=303)

    def _create_variant(self, request, session, product, res, rtype, key, values, caller, region) -> Response:
        """A create variant's panel submitted: its fields are checked together, then its
        operation runs once for each set of parameters :func:`variant_calls` gives, through
        the engine like any create, so each call is validated and audited on its own. A call
        that fails stops the rest and is shown in the panel; the calls before it stay done."""
        create = res["create"]
        variant = (create.get("variants") or {}).get(key)
        if variant is None:
            return page_not_found(request)
        shown = list(variant.get("fields", []))
        each = (variant.get("each") or {}).get("field")
        specs = self.sb.engine.fields_of(product["key"], rtype)
        try:
            checked = self.sb.engine.validate(caller, product["key"], rtype, specs, values, region, require=True,
                                              only=shown, required_extra=(each,) if each else ())
            for params in variant_calls(variant, values, checked):
                self.sb.engine.call(caller, product["api_version"], variant.get("op", create_op(create, values)),
                                    {**params, "RegionId": region})
        except ApiError as exc:
            if isinstance(exc, ValidationErrors) and not set(exc.errors) & set(shown):
                exc = ApiError(exc.code, exc.message, exc.status, field=exc.field)  # no field of the panel: on top
            return self._create_failed(request, session, product, res, rtype, values, exc, caller, region,
                                       variant=key)
        done = f"{res['singular']} created successfully."
        if res.get("parent"):
            return self._back_to_parent(request, session, product, res, values, toast=done)
        return RedirectResponse(f"/console/{product['key']}/{rtype}?" + urlencode({"toast": done}), status_code=303)

    @staticmethod
    def _dig(obj: Any, key: str) -> Any:
        if isinstance(obj, dict):
            if key in obj:
                return obj[key]
            for v in obj.values():
                found = Pages._dig(v, key)
                if found is not None:
                    return found
        return None

    def _back_to_parent(self, request, session, product, res, values, *, toast=None, dialog=None):
        parent_res = product["resources"][res["parent"]]
        pparam = res.get("parent_param", parent_res["id_param"])
        pval = values.get(pparam, "")
        caller = self.caller(request, session, product)
        if res.get("parent_by_name"):
            rows = self.sb.store.find(caller.account_id, product["key"], res["parent"], name=pval)
            pid = rows[0]["id"] if rows else pval
        else:
            pid = pval
        url = f"/console/{product['key']}/{res['parent']}/{pid}"
        if dialog is None:
            return RedirectResponse(url + "?" + urlencode({"toast": toast or "Done"}), status_code=303)
        return self._detail(request, session, product, res["parent"], pid, dialog=dialog)

    def _create_failed(self, request, session, product, res, rtype, values, exc, caller, region, variant=None):
        errors = exc.errors if isinstance(exc, ValidationErrors) else {}
        error = None if errors else exc
        create = res["create"]
        if create.get("style") == "page" and variant is None:
            return self._render_create_page(request, session, product, res, rtype, values, errors, error, caller,
                                            region, status=exc.status)
        dialog = self._create_dialog(product, rtype, values.get("_parent"), values, errors, error, variant=variant)
        if res.get("parent"):
            parent_res = product["resources"][res["parent"]]
            pparam = res.get("parent_param", parent_res["id_param"])
            dialog["parent"] = values.get(pparam)
            pid = values.get(pparam, "")
            if res.get("parent_by_name"):
                rows = self.sb.store.find(caller.account_id, product["key"], res["parent"], name=pid)
                pid = rows[0]["id"] if rows else pid
            return self._detail(request, session, product, res["parent"], pid, dialog=dialog, status=exc.status)
        request.path_params["rtype"] = rtype
        return self._list(request, session, product, res, status=exc.status, dialog=dialog)

    def _render_create_page(self, request, session, product, res, rtype, values, errors, error, caller, region,
                            status=200):
        create = res["create"]
        sections = create.get("sections") or {create["title"]: create.get("fields", list(res.get("fields", {})))}
        return self.render(request, "create_page.html.j2", status=status, session=session, product=product,
                           res=res, rtype=rtype, create=create, values=values, errors=errors, error=error,
                           sections={k: self._fields(product, rtype, v) for k, v in sections.items()},
                           ctx=self._ctx(caller, product, region), url=request.url.path)

    def _wizard(self, request, session, product, res, rtype, values, form, caller, region) -> Response:
        create = res["create"]
        if res.get("parent") and request.method == "GET":
            # the parent's detail page opens the wizard with the parent id in the query
            pparam = res.get("parent_param") or product["resources"][res["parent"]]["id_param"]
            if request.query_params.get(pparam):
                values[pparam] = request.query_params[pparam]
        steps = list(create["steps"].items())
        keys = [k for k, _ in steps]
        current = form.get("_step") or request.query_params.get("step") or keys[0]
        if current not in keys:
            current = keys[0]
        idx = keys.index(current)
        errors: dict[str, ApiError] = {}
        error = None
        if request.method == "POST":
            go = form.get("_go", "next")
            step = dict(steps)[current]
            try:
                if go != "prev":
                    self.sb.engine.validate(caller, product["key"], rtype, self.sb.engine.fields_of(product["key"], rtype),
                                            values, region, require=True, only=list(step.get("fields", [])))
                if go == "next" and idx + 1 < len(keys):
                    idx += 1
                elif go == "prev" and idx > 0:
                    idx -= 1
                elif go == "submit":
                    if create.get("terms") and not truthy(values.get("_terms", form.get("_terms", "false"))):
                        raise ApiError("InvalidParameter", f"Select {create['terms']} to continue.", 400)
                    params = {k: v for k, v in values.items() if k != "_terms"}
                    self.sb.engine.call(caller, product["api_version"], create_op(create, params),
                                                 {**params, "RegionId": region})
                    done = f"{res['singular']} created successfully."
                    if res.get("parent"):
                        return self._back_to_parent(request, session, product, res, values, toast=done)
                    # the wizard's "Created" message (create.created), shown over the list it links to
                    shown = {"created": "1"} if create.get("created") else {}
                    return RedirectResponse(f"/console/{product['key']}/{rtype}?" + urlencode({"toast": done, **shown}),
                                            status_code=303)
            except ValidationErrors as exc:
                errors = exc.errors
                # jump to the step holding the first invalid field
                for j, (_, st) in enumerate(steps):
                    if set(st.get("fields", [])) & set(errors):
                        idx = j
                        break
            except ApiError as exc:
                error = exc
        key, step = steps[idx]
        nxt = steps[idx + 1][1] if idx + 1 < len(steps) else None
        return self.render(request, "wizard.html.j2", status=400 if (errors or error) else 200, session=session,
                           product=product, res=res, rtype=rtype, create=create, steps=steps, idx=idx, step=step,
                           step_key=key, nxt=nxt, values=values, errors=errors, error=error,
                           fields=self._fields(product, rtype, step.get("fields", [])),
                           all_fields=self._fields(product, rtype, [f for _, s in steps for f in s.get("fields", [])]),
                           ctx=self._ctx(caller, product, region), url=request.url.path,
                           parent=values.get(res.get("parent_param", "")))

    # ------------------------------------------------------------ detail
    async def detail(self, request: Request) -> Response:
        found = self.resource_page(request)
        if isinstance(found, Response):
            return found
        session, product, res = found
        return await run_in_threadpool(self._detail, request, session, product, request.path_params["rtype"],
                                       request.path_params["rid"])

    def _detail(self, request, session, product, rtype, rid, *, dialog=None, status=200, toast=None):
        res = product["resources"][rtype]
        caller = self.caller(request, session, product)
        region = self.region(request)
        rows = self.sb.store.find(caller.account_id, product["key"], rtype, id=rid)
        if not rows:
            return self.render(request, "list.html.j2", status=404, session=session, product=product, res=res,
                               rtype=rtype, rows=[], total=0, page=1, pages=1, q="", dialog=None,
                               ctx=self._ctx(caller, product, region),
                               error=ApiError(res.get("not_found", "NotFound"),
                                              f"The specified {res['singular']} '{rid}' does not exist.", 404))
        rec = rows[0]
        item = self.sb.engine.serialize(product["key"], rtype, rec)
        children = []
        for child in res.get("detail", {}).get("children", []):
            crows = self.sb.store.find(caller.account_id, product["key"], child, parent_id=rec["id"])
            children.append((child, product["resources"][child], crows))
        if dialog is None:
            dialog = self._dialog_from_query(request, caller, product, rtype, region, rec)
        return self.render(request, "detail.html.j2", status=status, session=session, product=product, res=res,
                           rtype=rtype, rec=rec, item=item, children=children, dialog=dialog,
                           ctx=self._ctx(caller, product, region), toast=toast or request.query_params.get("toast"))

    # ------------------------------------------------------------ action
    async def do_action(self, request: Request) -> Response:
        found = self.resource_page(request)
        if isinstance(found, Response):
            return found
        session, product, res = found
        if request.path_params["action"] not in res.get("actions", {}):
            return await not_found(request, None)
        form = dict((await request.form()).multi_items())
        return await run_in_threadpool(self._do_action, request, session, product, res, form)

    def _do_action(self, request, session, product, res, form) -> Response:
        rtype = request.path_params["rtype"]
        rid = request.path_params["rid"]
        name = request.path_params["action"]
        action = res["actions"][name]
        caller = self.caller(request, session, product)
        region = self.region(request)
        values = self._values_from_form(form)
        back = str(form.get("_back") or f"/console/{product['key']}/{rtype}")
        if not back.startswith("/"):
            back = "/console"
        rows = self.sb.store.find(caller.account_id, product["key"], rtype, id=rid)
        if not rows:
            return RedirectResponse(back + "?" + urlencode({"toast": f"{res['singular']} {rid} no longer exists."}),
                                    status_code=303)
        rec = rows[0]
        if action.get("kind") in ("link", "info") or not action.get("op"):
            return RedirectResponse(back, status_code=303)
        dialog_fields = self._fields(product, rtype, (action.get("form") or {}).get("fields", []))
        try:
            if dialog_fields:
                self.sb.engine.validate(caller, product["key"], rtype, dict(dialog_fields), values, region,
                                        require=True, only=[n for n, _ in dialog_fields])
            needs_confirm = action.get("form") and ((action["form"].get("confirm_ok")) or action.get("confirm"))
            if needs_confirm and not form.get("_confirmed"):
                dialog = self._action_dialog(product, rtype, rid, name, action, values=values, confirm_step=True)
                return self._redisplay(request, session, product, res, rtype, rec, back, dialog)
            params = dict(values)
            params.update(action.get("set", {}))
            params[res["id_param"]] = rec["id"] if not res.get("lookup_by_name") else rec["name"]
            if res.get("parent"):
                parent_res = product["resources"][res["parent"]]
                pparam = res.get("parent_param", parent_res["id_param"])
                params[pparam] = rec["attrs"].get(pparam) or rec["parent_id"]
            for attr in action.get("pass", []):
                if rec["attrs"].get(attr):
                    params[attr] = rec["attrs"][attr]
            if product.get("regional", True):
                params["RegionId"] = rec["region"] if rec["region"] != "global" else region
            found = self.cat.op_in_product(product["key"], action["op"])
            if found and found[0] != rtype:
                # an action creating another resource from this one (e.g. a custom image)
                params.pop(res["id_param"], None)
                params[res["id_param"]] = rec["id"]
            if action.get("name_as"):  # the other resource names this one by name (a grant's UserName)
                params[action["name_as"]] = rec["name"]
            self.sb.engine.call(caller, product["api_version"], action["op"], params)
        except ValidationErrors as exc:
            dialog = self._action_dialog(product, rtype, rid, name, action, values=values, errors=exc.errors)
            return self._redisplay(request, session, product, res, rtype, rec, back, dialog, status=exc.status)
        except ApiError as exc:
            dialog = self._action_dialog(product, rtype, rid, name, action, values=values, error=exc)
            if dialog["kind"] == "form" or dialog["kind"] == "confirm":
                return self._redisplay(request, session, product, res, rtype, rec, back, dialog, status=exc.status)
        toast = f"{action['label']}: the operation succeeded."
        sep = "&" if "?" in back else "?"
        if name in ("delete", "release") and back.endswith(f"/{rid}"):
            back = f"/console/{product['key']}/{rtype}"
            sep = "?"
        return RedirectResponse(back + sep + urlencode({"toast": toast}), status_code=303)

    def _redisplay(self, request, session, product, res, rtype, rec, back, dialog, status=200):
        path = back.split("?")[0]
        parts = path.strip("/").split("/")
        if len(parts) == 4:  # a detail page
            return self._detail(request, session, product, parts[2], parts[3], dialog=dialog, status=status)
        request.path_params["rtype"] = rtype
        return self._list(request, session, product, res, status=status, dialog=dialog)

    # ------------------------------------------------------------ events
    async def events(self, request: Request) -> Response:
        session = self.session(request)
        if not session:
            return self.login_redirect(request)
        product = self.cat.product("actiontrail")
        qp = request.query_params
        params = {"MaxResults": "50"}
        attr, value = qp.get("attr", "ServiceName"), qp.get("value", "").strip()
        if value:
            params["LookupAttribute.1.Key"] = attr
            params["LookupAttribute.1.Value"] = value
        if qp.get("token"):
            params["NextToken"] = qp["token"]
        error = None
        result: dict[str, Any] = {"Events": []}
        caller = self.caller(request, session, product)
        try:
            result = await run_in_threadpool(audit.lookup_events, self.sb.store, caller.account_id, params)
        except ApiError as exc:
            error = exc
        nav = product["nav"]["events"]
        return self.render(request, "events.html.j2", session=session, product=product, eq=product["event_query"],
                           events=result["Events"], next_token=result.get("NextToken"), attr=attr, value=value,
                           error=error, page_title=nav.get("title", nav["label"]))
