"""The ``aliyun`` console plugin: the real Alibaba Cloud console, signed in as a RAM user.

``docverify check docs/ --console aliyun`` verifies docs against the live console of
the configured site (``international``: alibabacloud.com, ``china``: aliyun.com):

- **accounts**: leased from the account pool (``console = "aliyun"``, a RAM user's
  ``login_user`` and ``password``); without a pool, the console's own account from
  the environment: ``DOCVERIFY_ALIYUN_LOGIN_USER``/``_PASSWORD`` (RAM user logon) and/or
  ``DOCVERIFY_ALIYUN_ACCESS_KEY_ID``/``_SECRET`` (the audit log, and federated sign-in
  with ``role_arn``), ``DOCVERIFY_ALIYUN_ACCOUNT_ID``;
- **sign-in**: :mod:`docverify_aliyun.signin` (logon pages or STS federation), sessions
  reused from a private folder (:mod:`docverify_aliyun.sessions`);
- **consoles**: each procedure starts on a page of links to the consoles of the map
  (:mod:`docverify_aliyun.console_map`, :mod:`docverify_aliyun.launcher`), in the region;
- **audit log**: ActionTrail at ``actiontrail.<region>.aliyuncs.com`` with the
  account's AccessKey, given ``audit_deadline_s`` to deliver (backing off to
  ``audit_poll_cap_s`` between looks); an event still missing then is INCONCLUSIVE.

- **provisioning**: the ``terraform`` provisioner with the ``alicloud`` templates and the
  real aliyun/alicloud provider (registry or ``provider_mirror``), every taggable resource
  tagged ``docverify-run``/``docverify-task``, held by the cost guard
  (:mod:`docverify_terraform.cost_guard`); what a run left is found by those tags
  (:meth:`AliyunConsole.leftovers`, ``docverify cleanup --console aliyun``);
- **AccessKey rotation**: ``docverify accounts rotate`` through RAM at
  :attr:`AliyunConsole.ram_endpoint` (:mod:`docverify.lease.rotation`);
- **safety**: ``protect_unowned`` (on by default) refuses a destructive action on a
  resource the procedure did not have provisioned nor made itself, and
  ``check --dry-run=browse`` signs in and follows the steps up to the first action that
  changes state (:mod:`docverify.execute.guard`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from pydantic import Field

from docverify.console import Console, ConsoleEndpoint, origin
from docverify.errors import ConfigError, EnvironmentProblem
from docverify.lease.account import ROLE_ARN as ACCOUNT_ROLE_ARN
from docverify.lease.account import Account, AccountSpec
from docverify_aliyun.console_map import REGION, ConsoleMap, console_map
from docverify_aliyun.federation import STS_ENDPOINT, Federation
from docverify_aliyun.launcher import launcher_page
from docverify_aliyun.sessions import private_folder
from docverify_aliyun.signin import LOGON_NAME_HELP, AliyunLogin, check_logon_name

if TYPE_CHECKING:
    from docverify_aliyun.leftovers import TaggedLeftovers

ENV = "DOCVERIFY_ALIYUN_"
#: the console's own account, from the environment (a CI's secrets): variable -> AccountSpec field
OWN_ACCOUNT = {"LOGIN_USER": "login_user", "PASSWORD": "password", "ACCESS_KEY_ID": "access_key_id",
               "ACCESS_KEY_SECRET": "access_key_secret", "ACCOUNT_ID": "account_id"}
ROLE_ARN = rf"^{ACCOUNT_ROLE_ARN.pattern}$"  #: the pool's own check of a role ARN, anchored


class AliyunConsole(Console):
    """The real Alibaba Cloud console (international or China site), signed in as a RAM user."""

    name = "aliyun"
    cloud = "alibaba"
    ram_endpoint = "https://ram.aliyuncs.com"  #: AccessKey rotation (docverify accounts rotate)

    class Options(Console.Options):
        site: Literal["international", "china"] = Field(
            "international", description="which site: 'international' (alibabacloud.com) or 'china' (aliyun.com) "
                                         "(env DOCVERIFY_CONSOLE__ALIYUN__SITE)")
        region: str = Field("cn-hangzhou", pattern=REGION.pattern,
                            description="the default region: consoles open in it, the audit log is read there")
        sign_in: Literal["auto", "password", "federated"] = Field(
            "auto", description="how the console's own account signs in: 'password' (the RAM user logon page), "
                                "'federated' (STS AssumeRole of role_arn with the account's AccessKey: no MFA, no "
                                "captcha), 'auto' (password when one is set, else federated)")
        role_arn: str | None = Field(
            None, pattern=ROLE_ARN, description="the RAM role federated sign-in assumes, acs:ram::<uid>:role/<name> "
                                                "(env DOCVERIFY_ALIYUN_ROLE_ARN)")
        role_session_name: str = Field("docverify", pattern=r"^[\w.@-]{2,64}$",
                                       description="the federated session's name, as ActionTrail shows who acted")
        session_duration_s: int = Field(3600, ge=900, le=43200,
                                        description="how long a federated console session lasts (STS DurationSeconds)")
        session_reuse: bool = Field(
            True, description="keep each account's signed-in session (Playwright storage state) in a private folder "
                              "and reuse it while it is valid: fewer logons, fewer captchas")
        session_dir: str | None = Field(
            None, description="keep the sessions in this folder between runs (created mode 0700; never inside the "
                              "report output); default: a private folder of the run, removed when it ends")
        audit_deadline_s: float = Field(
            600, ge=0, le=3600, description="how long to wait for ActionTrail to deliver a procedure's events (it "
                                            "takes minutes); an event still missing then is INCONCLUSIVE, not FAIL")
        audit_poll_cap_s: float = Field(30, gt=0, le=600,
                                        description="the longest pause between two looks at the audit log while waiting")
        console_map: str | None = Field(
            None, description="a YAML file of further consoles (the schema of docverify_aliyun/consoles.yaml)")
        extra_origins: list[str] = Field(
            default_factory=list, description="further origins the browser may reach (https://*.example.com: any "
                                              "host under it)")
        # where the site is, for tests and recordings: every default is the site's own
        signin_url: str | None = Field(None, pattern=r"^https?://\S+$",
                                       description="the RAM user logon page (default: the site's login.htm)")
        federation_url: str | None = Field(None, pattern=r"^https?://\S+$",
                                           description="the STS sign-in API (default: the site's /federation)")
        sts_endpoint: str | None = Field(None, description=f"the STS API, host[:port] or a URL (default {STS_ENDPOINT})")
        console_url: str | None = Field(
            None, pattern=r"^https?://[^/\s]+(?:/\S*)?$",
            description="a server standing in for every console (a recording): its home <url>/home, product X's "
                        "console <url>/<x>/...")
        audit_url: str | None = Field(
            None, description="the ActionTrail API, host[:port] or a URL (default actiontrail.{region}.aliyuncs.com)")
        openapi_url: str | None = Field(
            None, pattern=r"^https?://[^/\s]+/?$",
            description="a server standing in for every product API docverify cleanup calls (ECS, VPC, SLB, ALB, "
                        "RDS, MongoDB: a recording); default: each product's regional endpoint")
        cleanup_passes: int = Field(
            4, ge=1, le=20, description="docverify cleanup --console aliyun: rounds of deletions (what depends on "
                                        "something still being released is tried again the next round)")
        cleanup_pause_s: float = Field(20, ge=0, le=600, description="the pause between two rounds of deletions")
        protect_unowned: bool = Field(
            True, description="refuse a destructive action (delete, release, stop, unbind, disable, ...) on a "
                              "resource the procedure neither had provisioned (requires:) nor made in its earlier "
                              "steps: docverify never releases what it did not create; false lets a doc act on the "
                              "account's own resources")

    @contextmanager
    def start(self) -> Iterator[ConsoleEndpoint]:
        opts = self.options
        consoles = console_map(opts.console_map)
        temporary = None
        if opts.session_reuse and not opts.session_dir:
            temporary = tempfile.mkdtemp(prefix="docverify-aliyun-sessions-")  # mode 0700
        try:
            folder = str(private_folder(opts.session_dir)) if opts.session_reuse and opts.session_dir else temporary
            yield self.endpoint(consoles, folder)
        finally:
            if temporary is not None:
                shutil.rmtree(temporary, ignore_errors=True)

    def endpoint(self, consoles: ConsoleMap, sessions: str | None,
                 environ: Mapping[str, str] | None = None) -> ConsoleEndpoint:
        """The console as its own account (from ``environ``) uses it; no account when
        none is set (each procedure then signs in as the account it leases)."""
        opts = self.options
        environ = os.environ if environ is None else environ
        site = consoles.site(opts.site)
        base = opts.console_url.rstrip("/") if opts.console_url else None
        home = f"{base}/home" if base else site.home
        signin = opts.signin_url or site.signin
        federation_url = opts.federation_url or site.federation
        region = opts.region
        links: tuple[tuple[str, str], ...] = ()
        if base:  # a stand-in: a doc's link to a console opens the stand-in's page for it
            links = tuple((address, product.url(site, region, base))
                          for product in consoles.products.values() for address in product.own_addresses())
        origins = (*consoles.origins, *opts.extra_origins, *(origin(url) for url in (home, signin, federation_url)))
        endpoint = ConsoleEndpoint(
            url=home.rstrip("/"),
            api_url=_url(opts.sts_endpoint or STS_ENDPOINT),
            audit_url=opts.audit_url or "https://actiontrail.{region}.aliyuncs.com",
            origins=tuple(dict.fromkeys(origins)),
            default_region=region,
            home=launcher_page(consoles, site, region, base),
            login=AliyunLogin(signin, "", "", home=home, site=site.name, console_domain=site.domain,
                              sessions=sessions),
            links=links,
            protect_unowned=opts.protect_unowned,
            extra={
                "aliyun_site": site.name,
                "signin_url": signin,
                "audit_delay_s": f"{opts.audit_deadline_s:g}",  # the actiontrail checker's wait
                "audit_poll_cap_s": f"{opts.audit_poll_cap_s:g}",
                "audit_undelivered": "inconclusive",  # a missing event may simply not be delivered yet
                "terraform_provider": "alicloud",  # the provisioner's templates and the real provider
            },
        )
        return self.signed_in_as_own(endpoint, environ, federation_url)

    def signed_in_as_own(self, endpoint: ConsoleEndpoint, environ: Mapping[str, str],
                         federation_url: str) -> ConsoleEndpoint:
        """``endpoint`` as the console's own account (``DOCVERIFY_ALIYUN_*``), if one is set;
        either way with the console's federation settings, which the pool's accounts sign in
        with when they have an AccessKey and a role but no password (``AliyunLogin.as_account``)."""
        opts = self.options
        role = opts.role_arn or environ.get(f"{ENV}ROLE_ARN") or None
        if role is not None and not re.match(ROLE_ARN, role):
            raise ConfigError(f"{ENV}ROLE_ARN: {role!r} is not a role ARN",
                              hint="acs:ram::<account id>:role/<role name> (RAM console > Roles > the role)")
        settings = Federation("", "", role or "", url=federation_url, session_name=opts.role_session_name,
                              duration_s=opts.session_duration_s, sts_endpoint=opts.sts_endpoint or STS_ENDPOINT)
        login = replace(endpoint.login, prefer=opts.sign_in, federation_settings=settings)
        endpoint = replace(endpoint, login=login)
        account = own_account(environ, opts.region)
        if account is None:
            return endpoint
        has_password = bool(account.login_user and account.password is not None)
        has_key = account.access_key_id is not None and account.access_key_secret is not None
        method = opts.sign_in
        if method == "auto":
            method = "password" if has_password else "federated" if has_key and role else "password"
        if method == "password" and account.login_user and account.password is None:
            raise ConfigError(f"{ENV}LOGIN_USER is set but {ENV}PASSWORD is not",
                              hint=f"set {ENV}PASSWORD, or sign in federated: {ENV}ACCESS_KEY_ID/_SECRET and "
                                   "[console.aliyun] role_arn")
        if account.login_user:
            try:
                check_logon_name(account.login_user, f"{ENV}LOGIN_USER")
            except EnvironmentProblem as problem:
                raise ConfigError(problem.message, hint=problem.hint) from None
        if method == "federated" and (not has_key or not role):
            missing = [name for name, ok in ((f"{ENV}ACCESS_KEY_ID/_SECRET", has_key),
                                             (f"[console.aliyun] role_arn (or {ENV}ROLE_ARN)", role)) if not ok]
            raise ConfigError(f"federated sign-in needs {' and '.join(missing)}",
                              hint="the key's RAM user may call sts:AssumeRole on the role "
                                   "(docs/aliyun-ram-policy.json)")
        if method == "password" and not has_password:
            # keys alone (for the audit log): nobody signs in at the start, each procedure
            # says what to set (task_account)
            return replace(account.on(replace(endpoint, login=None)), login=login)
        return account.on(replace(endpoint, login=replace(login, prefer=method)))

    def task_account(self, endpoint: ConsoleEndpoint, task_id: str):
        """Without an account pool, every procedure uses the console's own account; with
        none set, it cannot run (said once per procedure, with what to set)."""
        login = endpoint.login
        if isinstance(login, AliyunLogin) and login.method is None:
            raise EnvironmentProblem(
                "the aliyun console has no account to sign in with",
                hint=f"set {ENV}LOGIN_USER and {ENV}PASSWORD (a RAM user: {LOGON_NAME_HELP}), or "
                     f"{ENV}ACCESS_KEY_ID/_SECRET with [console.aliyun] role_arn, or add accounts with "
                     "console = \"aliyun\" to the account pool (docverify accounts add)")
        return super().task_account(endpoint, task_id)


    def leftovers(self, environ: Mapping[str, str] | None = None, config_file: Path | None = None) -> TaggedLeftovers:
        """What runs provisioned and left in the accounts this console signs in to, found by
        the ``docverify-run`` tag (``docverify cleanup --console aliyun``): the console's own
        account (``DOCVERIFY_ALIYUN_ACCESS_KEY_ID``/``_SECRET``, else
        ``ALIBABA_CLOUD_ACCESS_KEY_ID``/``_SECRET``) and the pool's ``console = "aliyun"``
        accounts with an AccessKey. Raises :class:`EnvironmentProblem` when there is none."""
        from docverify_aliyun.leftovers import TaggedLeftovers, cleanup_accounts

        opts = self.options
        environ = os.environ if environ is None else environ
        accounts = cleanup_accounts(own_account(environ, opts.region), environ, config_file)
        return TaggedLeftovers(accounts, default_region=opts.region, api_url=opts.openapi_url,
                               passes=opts.cleanup_passes, pause_s=opts.cleanup_pause_s)


def own_account(environ: Mapping[str, str], region: str) -> Account | None:
    """The account ``DOCVERIFY_ALIYUN_*`` describes (secrets read through ``env:``
    references, so they are masked and scrubbed as the pool's are); None when none is set."""
    values: dict[str, str] = {}
    for variable, key in OWN_ACCOUNT.items():
        if environ.get(ENV + variable):
            values[key] = f"env:{ENV}{variable}" if key in ("password", "access_key_id", "access_key_secret") \
                else environ[ENV + variable]
    if not values:
        return None
    spec = AccountSpec(name="aliyun-own", console="aliyun", region=region, **values)
    return spec.resolve(environ)


def _url(endpoint: str) -> str:
    """``host[:port]`` or a URL -> a URL (``https`` unless it names its scheme)."""
    return endpoint if urlsplit(endpoint).scheme in ("http", "https") else f"https://{endpoint}"
