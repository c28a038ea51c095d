"""The ``sandbox`` console plugin: a local Alibaba-Cloud-like console."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Literal

from pydantic import Field

from docverify.console import Console, ConsoleEndpoint, LoginForm
from docverify.scrub import register as register_secret
from docverify_sandbox.seed import Resources
from docverify_sandbox.state import DEFAULT_ACCOUNTS, DefaultAccount

if TYPE_CHECKING:
    from docverify_sandbox.app import Sandbox


class SandboxConsole(Console):
    """Local sandbox console (Alibaba Cloud style) with RPC API, ActionTrail and UI releases."""

    name = "sandbox"
    cloud = "alibaba"

    class Options(Console.Options):
        release: str | None = Field(None, description="UI release date (YYYY-MM[-DD]); newest when unset")
        port: int = Field(0, ge=0, le=65535, description="TCP port on 127.0.0.1; 0 picks a free one")
        data_dir: str | None = Field(None, description="directory for the SQLite state; in memory when unset")
        latency_ms: int = Field(300, ge=0, le=60_000, description="time async states take (Pending -> Running)")
        seed: int = Field(0, description="seed of generated ids")
        resources: Resources = Field(
            "seeded", description="what each account holds when it starts: 'seeded' (a default VPC, vSwitch, "
                                  "security group, a running instance, RAM users) or 'empty' (a new account: only "
                                  "the RAM users it signs in with; provisioning must create every prerequisite)")
        accounts: Literal["per-task", "shared"] = Field(
            "per-task", description="'per-task': each procedure runs in a new account of its own, holding what "
                                    "'resources' says and removed when the procedure ends, so no procedure sees "
                                    "another's resources, in parallel (--jobs) or one after another; 'shared': "
                                    "every procedure uses the first tenant (alice@sandbox), as it always does on "
                                    "a sandbox served elsewhere (url)")
        url: str | None = Field(
            None, pattern=r"^https?://[^/\s]+/?$",
            description="use a sandbox already running there (docverify sandbox serve) instead of starting one")
        protect_unowned: bool = Field(
            False, description="refuse a destructive action (delete, release, stop, unbind, disable, ...) on a "
                               "resource the procedure neither had provisioned nor made in its earlier steps, as "
                               "on the real console (off here: the benchmark's tasks delete seeded resources)")

    @contextmanager
    def start(self) -> Iterator[ConsoleEndpoint]:
        opts = self.options
        if opts.url:  # served elsewhere: connect, start nothing
            yield self.endpoint(opts.url.rstrip("/"), opts.release, protect_unowned=opts.protect_unowned)
            return
        from docverify_sandbox.server import build_app, running

        app = build_app(opts.release, opts.data_dir, opts.latency_ms, opts.seed, opts.resources)
        with running(app, opts.port) as url:
            self._sandbox = app.state.sandbox if opts.accounts == "per-task" else None
            try:
                yield self.endpoint(url, app.state.sandbox.catalog.release.name, protect_unowned=opts.protect_unowned)
            finally:
                self._sandbox = None

    _sandbox: Sandbox | None = None  #: the embedded sandbox, while it runs, when procedures get accounts of their own

    @contextmanager
    def task_account(self, endpoint: ConsoleEndpoint, task_id: str) -> Iterator[ConsoleEndpoint]:
        """A new account for one procedure on the embedded sandbox (``accounts =
        "per-task"``), removed when it ends; the shared first tenant otherwise."""
        sandbox = self._sandbox
        if sandbox is None:
            yield endpoint
            return
        acct = sandbox.store.new_account(sandbox.seeder)
        try:
            yield self.endpoint(endpoint.url, endpoint.release, acct, protect_unowned=endpoint.protect_unowned)
        finally:
            sandbox.store.remove_account(acct.account_id)

    @classmethod
    def default_accounts(cls) -> list:
        """The seeded tenants, each signed in as its administrator: the pool a new
        user gets with nothing to set up."""
        from docverify_sandbox.accounts import sandbox_accounts

        return sandbox_accounts()

    @classmethod
    def access_key_api(cls, account, url: str | None, key_id: str, secret: str):
        """The sandbox's RAM API; rotation needs a sandbox that keeps its state."""
        from docverify.errors import UsageError
        from docverify_sandbox.accounts import SandboxAccessKeys

        url = account.api_url or url
        if not url:
            raise UsageError(
                f"account {account.name}: rotating a sandbox key needs a sandbox that keeps its state",
                hint="serve one (docverify sandbox serve --data DIR) and set the account's api_url "
                     "or [console.sandbox] url")
        return SandboxAccessKeys(url, key_id, secret)

    @staticmethod
    def endpoint(url: str, release: str | None, acct: DefaultAccount = DEFAULT_ACCOUNTS[0], *,
                 protect_unowned: bool = False) -> ConsoleEndpoint:
        """The console at ``url`` as ``acct``'s administrator (``alice``) uses it;
        ``protect_unowned``: the option of that name."""
        host = url.split("://", 1)[1]
        # sandbox-only values, but secrets all the same: no report or prompt shows them
        register_secret(acct.admin_password, acct.admin_access_key_secret, acct.access_key_secret, acct.root_password)
        return ConsoleEndpoint(
            url=url, api_url=url + "/", audit_url=host, origins=(url,),
            release=release, default_region="cn-hangzhou",
            home=url + "/console",
            links=console_links(url), protect_unowned=protect_unowned,
            login=LoginForm(url + "/signin", f"{acct.admin_user}@{acct.alias}.onaliyun.com", acct.admin_password,
                            form_fields=("user_name", "password")),
            extra={
                "account_id": acct.account_id,
                "account_alias": acct.alias,
                "login_user": f"{acct.admin_user}@{acct.alias}.onaliyun.com",
                "login_password": acct.admin_password,
                "access_key_id": acct.admin_access_key_id,
                "access_key_secret": acct.admin_access_key_secret,
                "root_access_key_id": acct.access_key_id,
                "root_access_key_secret": acct.access_key_secret,
                "signin_url": url + "/signin",
                "audit_delay_s": "0",  # events are written with the operation: nothing to wait for
                "terraform_provider": "sandbox",  # the provisioner's templates for this console
            },
        )


#: The real console's home, which the sandbox's home stands for.
HOME_ADDRESSES = ("home.console.aliyun.com", "homenew.console.aliyun.com", "console.aliyun.com",
                  "home.console.alibabacloud.com", "console.alibabacloud.com")


def console_links(url: str) -> tuple[tuple[str, str], ...]:
    """The real console's addresses and the sandbox pages that stand for them (the
    catalog's ``addresses``): a doc's link to ``https://vpc.console.aliyun.com/eip``
    opens the sandbox's EIP console."""
    from docverify_sandbox.catalog import base_products

    links = [(address, f"{url}/console") for address in HOME_ADDRESSES]
    for key, product in base_products().items():
        for address, path in (product.get("addresses") or {}).items():
            links.append((address, f"{url}/console/{key}" + (f"/{path}" if path else "")))
    return tuple(links)
