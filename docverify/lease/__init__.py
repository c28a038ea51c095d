"""Stage 2, lease: the account pool, test accounts tasks lease one at a time.

- :mod:`~docverify.lease.file` — accounts from ``docverify-accounts.toml`` and
  ``DOCVERIFY_ACCOUNT_<NAME>__<KEY>`` variables; secrets are references;
- :mod:`~docverify.lease.secret` — references, masked values, scrubbing;
- :mod:`~docverify.lease.pool` — exclusive leases across processes (flock),
  quarantine;
- :mod:`~docverify.lease.state` — what is remembered per account (quarantine,
  key age);
- :mod:`~docverify.lease.rotation` — AccessKey rotation through RAM.

A console plugin may offer a zero-config pool and its own RAM API
(`Console.default_accounts`, `Console.access_key_api`): the sandbox offers its
seeded tenants and its API.

The runner's use::

    pool = open_pool(console="sandbox", config_file=config.file)
    async with pool.lease_async(console="sandbox", timeout=60, label=task.id) as lease:
        endpoint = lease.account.on(console_endpoint)   # login form and keys of this account
        ...
        # login refused / credentials invalid:  lease.quarantine("login failed: ...")
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from docverify.lease.account import Account, AccountSpec
from docverify.lease.file import AccountsFileError, accounts_file_path, load_accounts
from docverify.lease.pool import AccountPool, AccountQuarantined, Lease, NoSuchAccount, PoolExhausted, default_lease_dir
from docverify.lease.rotation import CREDENTIAL_ERROR_CODES, console_plugin
from docverify.lease.secret import ScrubFilter, Secret, SecretError, scrub, secret_values

__all__ = [
    "CREDENTIAL_ERROR_CODES", "Account", "AccountPool", "AccountQuarantined", "AccountSpec", "AccountsFileError", "Lease", "NoSuchAccount",
    "PoolExhausted", "ScrubFilter", "Secret", "SecretError", "default_accounts", "open_pool", "scrub",
    "secret_values",
]


def default_accounts(console: str) -> list[AccountSpec]:
    """The pool when nothing is configured: what the console plugin offers (the
    sandbox: its seeded tenants), nothing for an unknown console."""
    plugin = console_plugin(console)
    return plugin.default_accounts() if plugin is not None else []


def open_pool(*, console: str | None = None, accounts_file: str | Path | None = None,
              config_file: Path | None = None, lease_dir: str | Path | None = None, cwd: Path | None = None,
              environ: Mapping[str, str] | None = None, defaults: bool = True) -> AccountPool:
    """The pool as configured: the accounts file (``accounts_file``,
    ``DOCVERIFY_ACCOUNTS``, or ``docverify-accounts.toml`` next to ``config_file``)
    plus ``DOCVERIFY_ACCOUNT_*``; with neither, :func:`default_accounts` of ``console``
    (None: the installed plugin registered as the default console).

    Leases live in ``lease_dir`` (default: :func:`default_lease_dir`). ``defaults=False``:
    an unconfigured pool stays empty (``docverify check`` then uses the console's own account)."""
    environ = os.environ if environ is None else environ
    path = accounts_file_path(accounts_file, config_file=config_file, cwd=cwd, environ=environ)
    explicit = bool(accounts_file or environ.get("DOCVERIFY_ACCOUNTS"))
    source = load_accounts(path, environ=environ, required=explicit)
    specs, where = source.specs, (str(path) if source.exists else "")
    if not specs and defaults:
        if console is None:
            from docverify.plugins import installed_plugins

            console = installed_plugins().registry("consoles").default()
        specs = default_accounts(console)
        where = f"the {console} console's built-in accounts" if specs else f"{path} does not exist"
    elif not source.exists:
        where = "DOCVERIFY_ACCOUNT_* variables"
    folder = Path(lease_dir) if lease_dir else default_lease_dir(config_file=config_file, cwd=cwd, environ=environ)
    return AccountPool(specs, folder, environ=environ, max_key_age_days=source.max_key_age_days, source=where)
