"""``docverify accounts``: the account pool — list, add, lease, rotate, quarantine."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Callable

import click

from docverify.cli import CONTEXT_SETTINGS, completion, get_app
from docverify.errors import DocverifyError, ExitCode, UsageError

TIMEOUT_HELP = ("Seconds to wait for a free account (0: fail at once when all are leased). "
                "Env: DOCVERIFY_LEASE_TIMEOUT.")


def _pool_options(command: Callable) -> Callable:
    """--accounts and --lease-dir, shared by every subcommand."""

    @click.option("--accounts", "accounts_file", type=click.Path(dir_okay=False), envvar="DOCVERIFY_ACCOUNTS",
                  help="Accounts file (default: docverify-accounts.toml next to docverify.toml). "
                       "Env: DOCVERIFY_ACCOUNTS.")
    @click.option("--lease-dir", type=click.Path(file_okay=False), envvar="DOCVERIFY_LEASE_DIR",
                  help="Folder of lease locks and account state, shared by every process using the pool "
                       "(default: .docverify/leases next to docverify.toml). Env: DOCVERIFY_LEASE_DIR.")
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return command(*args, **kwargs)

    return wrapper


def _open(ctx: click.Context, accounts_file: str | None, lease_dir: str | None):
    from docverify.lease import open_pool

    config = get_app(ctx).config()
    console = config.settings.console.use[0] if config.settings.console.use else None  # None: the default console
    pool = open_pool(console=console, accounts_file=accounts_file, config_file=config.file, lease_dir=lease_dir)
    return pool, config


@click.group(context_settings=CONTEXT_SETTINGS)
def accounts() -> None:
    """The account pool: test accounts that tasks lease one at a time.

    Accounts come from docverify-accounts.toml (next to docverify.toml; --accounts /
    DOCVERIFY_ACCOUNTS) and DOCVERIFY_ACCOUNT_<NAME>__<KEY> variables. Secrets are
    references: env:VAR, keyring:SERVICE/USER, file:PATH (mode 0600). With no
    accounts and the sandbox console, the pool holds the sandbox's seeded tenants.

    \b
    Examples:
      docverify accounts list
      docverify accounts add ci-1 --console aliyun --login-user docs@ci.onaliyun.com \\
          --password-ref env:CI_PASSWORD --access-key-id-ref file:secrets/ci-1.id \\
          --access-key-secret-ref file:secrets/ci-1.secret
      docverify accounts lease --lease-timeout 600 -- docverify check docs/
      docverify accounts rotate --max-age 90
    """


# --------------------------------------------------------------------- list
@accounts.command("list", context_settings=CONTEXT_SETTINGS)
@_pool_options
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def list_accounts(ctx: click.Context, accounts_file: str | None, lease_dir: str | None, as_json: bool) -> None:
    """Show every account: console, references (never secrets), lease holder,
    quarantine and AccessKey age.

    \b
    Examples:
      docverify accounts list
      docverify accounts list --json | jq '.accounts[] | select(.quarantine)'
    """
    pool, _ = _open(ctx, accounts_file, lease_dir)
    rows = [_status_json(status, pool) for status in pool.status()]
    if as_json:
        click.echo(json.dumps({"source": pool.source, "lease_dir": str(pool.lease_dir), "accounts": rows}, indent=2))
        return
    click.echo(f"# accounts: {pool.source}; leases: {pool.lease_dir}")
    if not rows:
        click.echo("(no accounts: docverify accounts add NAME --console ...)")
    for row in rows:
        ident = row["account_id"] or "-"
        if row["alias"]:
            ident += f" ({row['alias']})"
        tags = f" tags={','.join(row['tags'])}" if row["tags"] else ""
        click.echo(f"{row['name']}  {row['console']}  {ident}  {row['region']}{tags}")
        if row["quarantine"]:
            q = row["quarantine"]
            state = f"QUARANTINED since {q['since']}: {q['reason']}"
        elif row["leased"]:
            holder = row["holder"]
            state = "leased by " + (_describe_holder(holder) if holder else "an unknown process")
        else:
            state = "free"
        click.echo(f"    state: {state}")
        refs = row["references"]
        if row["login_user"]:
            click.echo(f"    login: {row['login_user']}, password {refs.get('password', '-')}")
        if "access_key_id" in refs:
            key = row["key"]
            if refs["access_key_id"].startswith("builtin:"):
                age = "built-in, not rotated"
            elif key["age_days"] is None:
                age = "age unknown (rotate --dry-run reads it from the API)"
            else:
                age = f"{key['age_days']:.0f} days old, rotated after {key['max_age_days']}"
                age += " (due)" if key["due"] else ""
            pending = f"; {row['pending_delete']} old key(s) to delete" if row["pending_delete"] else ""
            click.echo(f"    AccessKey: {refs['access_key_id']} / {refs['access_key_secret']}; {age}{pending}")


def _describe_holder(holder: dict) -> str:
    text = f"pid {holder['pid']}"
    if holder.get("host"):
        text += f" on {holder['host']}"
    if holder.get("label"):
        text += f" ({holder['label']})"
    return text + (f" since {holder['since']}" if holder.get("since") else "")


def _status_json(status, pool) -> dict[str, Any]:
    spec = status.spec
    max_age = spec.max_key_age_days or pool.max_key_age_days
    age = status.key_age_days()
    return {
        "name": spec.name, "console": spec.console, "account_id": spec.account_id, "alias": spec.alias,
        "login_user": spec.login_user, "role_arn": spec.role_arn, "region": spec.region, "tags": list(spec.tags),
        "references": spec.references(), "origin": spec.origin,
        "leased": status.leased,
        "holder": None if status.holder is None else {
            "pid": status.holder.pid, "host": status.holder.host, "since": status.holder.since,
            "label": status.holder.label},
        "quarantine": None if status.quarantine is None else {
            "reason": status.quarantine.reason, "since": status.quarantine.since, "by": status.quarantine.by},
        "key": {"created": status.key.created if status.key else None,
                "age_days": None if age is None else round(age, 2), "max_age_days": max_age,
                "due": age is not None and age >= max_age},
        "pending_delete": status.pending_delete,
    }


# ---------------------------------------------------------------------- add
@accounts.command("add", context_settings=CONTEXT_SETTINGS)
@_pool_options
@click.argument("name")
@click.option("--console", "console_kind", required=True, shell_complete=completion.plugin_name("consoles"), help="Console plugin of the account: sandbox, aliyun, ...")
@click.option("--account-id", help="The cloud account's ID (UID).")
@click.option("--alias", help="The account alias.")
@click.option("--login-user", help="Console logon name, e.g. docs@example.onaliyun.com.")
@click.option("--password-ref", metavar="REF", help="Where the console password is: env:VAR, keyring:S/U, file:PATH.")
@click.option("--access-key-id-ref", metavar="REF", help="Where the AccessKey ID is.")
@click.option("--access-key-secret-ref", metavar="REF", help="Where the AccessKey secret is.")
@click.option("--access-key-user", help="RAM user owning the AccessKey (rotation finds it when unset).")
@click.option("--role-arn", help="A RAM role the AccessKey may assume: the aliyun console signs the account in "
                                 "federated through it, no password needed (acs:ram::UID:role/NAME).")
@click.option("--region", help="Default region (cn-hangzhou).")
@click.option("--tag", "tags", multiple=True, help="A label tasks can ask for (repeatable).")
@click.option("--api-url", help="API for rotation: a served sandbox's URL, or a RAM endpoint.")
@click.option("--max-key-age-days", type=click.IntRange(1, 3650), help="Rotation schedule of this account.")
@click.pass_context
def add(ctx: click.Context, accounts_file: str | None, lease_dir: str | None, name: str, console_kind: str,
        account_id: str | None, alias: str | None, login_user: str | None, password_ref: str | None,
        access_key_id_ref: str | None, access_key_secret_ref: str | None, access_key_user: str | None,
        role_arn: str | None, region: str | None, tags: tuple[str, ...], api_url: str | None, max_key_age_days: int | None) -> None:
    """Add an account to the accounts file (created when missing; comments kept).

    Secrets are given as references, never values; a value is refused.

    \b
    Examples:
      docverify accounts add ci-1 --console aliyun --account-id 1234567890123456 \\
          --login-user docs@ci.onaliyun.com --password-ref env:CI_PASSWORD \\
          --access-key-id-ref keyring:docverify/ci-1-id --access-key-secret-ref keyring:docverify/ci-1 \\
          --tag ecs --tag nightly
      docverify accounts add ci-2 --console aliyun --access-key-id-ref env:CI2_KEY_ID \\
          --access-key-secret-ref env:CI2_KEY_SECRET --role-arn acs:ram::1234567890123456:role/docverify
    """
    from docverify.lease.file import accounts_file_path, add_account

    config = get_app(ctx).config()
    path = accounts_file_path(accounts_file, config_file=config.file)
    spec = add_account(path, {
        "name": name, "console": console_kind, "account_id": account_id, "alias": alias, "login_user": login_user,
        "password": password_ref, "access_key_id": access_key_id_ref, "access_key_secret": access_key_secret_ref,
        "access_key_user": access_key_user, "role_arn": role_arn, "region": region, "tags": list(tags), "api_url": api_url,
        "max_key_age_days": max_key_age_days,
    })
    click.echo(f"added account {name} to {path}")
    try:
        spec.resolve()
    except DocverifyError as problem:  # a secret that exists only in CI is fine: say so, do not fail
        click.echo(f"note: {problem}", err=True)


# -------------------------------------------------------------------- lease
class _LeaseCommand(click.Command):
    """Everything after ``--`` is the command to run, kept out of click's parsing."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta["lease_command"] = args[at + 1:]
            args = args[:at]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [*super().collect_usage_pieces(ctx), "[-- COMMAND [ARGS]...]"]


@accounts.command("lease", cls=_LeaseCommand, context_settings=CONTEXT_SETTINGS)
@_pool_options
@click.argument("name", required=False)
@click.option("--console", "console_kind", shell_complete=completion.plugin_name("consoles"), help="Only accounts of this console.")
@click.option("--tag", "tags", multiple=True, help="Only accounts with this tag (repeatable: all of them).")
@click.option("--lease-timeout", type=click.FloatRange(0), default=0, show_default=True,
              envvar="DOCVERIFY_LEASE_TIMEOUT", help=TIMEOUT_HELP)
@click.option("--label", help="Shown as the holder's label (default: the command).")
@click.option("--json", "as_json", is_flag=True, help="Print the leased account as JSON (no secrets).")
@click.pass_context
def lease(ctx: click.Context, accounts_file: str | None, lease_dir: str | None, name: str | None,
          console_kind: str | None, tags: tuple[str, ...], lease_timeout: float, label: str | None,
          as_json: bool) -> int:
    """Lease one account: run COMMAND with it, or print it and hold it until stopped.

    With `-- COMMAND ...`, COMMAND runs holding the lease; its exit code is this
    command's. It gets the account in its environment (never printed):
    DOCVERIFY_LEASED_ACCOUNT, DOCVERIFY_ACCOUNT_ID/_ALIAS/_CONSOLE/_REGION,
    DOCVERIFY_LOGIN_USER, DOCVERIFY_LOGIN_PASSWORD,
    ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET/_REGION_ID and
    ALICLOUD_ACCESS_KEY/ALICLOUD_SECRET_KEY/ALICLOUD_REGION (Terraform), plus
    DOCVERIFY_LEASE_FD: the lock, so the lease lasts while COMMAND runs even if
    this process is killed, and a `docverify` COMMAND uses this account without
    leasing it again.

    Without COMMAND, prints the account (name, console, IDs, references; never
    secrets) and holds it until Ctrl-C or SIGTERM.

    \b
    Exit codes: COMMAND's; 3 pool exhausted after --lease-timeout; 2 no such account.

    \b
    Examples:
      docverify accounts lease --lease-timeout 600 -- docverify check docs/
      docverify accounts lease --console aliyun --tag ecs -- terraform apply
      docverify accounts lease tenant2        # hold it while you work by hand
    """
    command = list(ctx.meta.get("lease_command") or [])
    pool, _ = _open(ctx, accounts_file, lease_dir)
    held = pool.acquire(name, console=console_kind, tags=tags, timeout=lease_timeout,
                        label=label or (" ".join(command)[:80] if command else "docverify accounts lease"))
    with held:
        if not command:
            return _hold(held, as_json)
        return _run(held, command)


def _lease_json(held) -> dict[str, Any]:
    spec, account = held.spec, held.account
    return {"name": spec.name, "console": spec.console, "account_id": spec.account_id, "alias": spec.alias,
            "login_user": spec.login_user, "region": account.region, "tags": list(spec.tags),
            "references": spec.references(), "holder_pid": held.holder.pid, "lease_dir": str(held.pool.lease_dir)}


def _hold(held, as_json: bool) -> int:
    info = _lease_json(held)
    stop = {"now": False}

    def finish(signum, frame):  # noqa: ARG001
        stop["now"] = True

    # handlers first: a script may signal as soon as it reads the line below
    previous = {sig: signal.signal(sig, finish) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        if as_json:
            click.echo(json.dumps(info))
        else:
            click.echo(f"leased {info['name']} ({info['console']}, pid {info['holder_pid']}); "
                       "holding it until Ctrl-C or SIGTERM")
        sys.stdout.flush()
        while not stop["now"]:
            time.sleep(0.2)  # a signal ends the sleep and runs `finish`
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if not as_json:
        click.echo(f"released {info['name']}", err=True)
    return ExitCode.OK


def lease_environment(held) -> dict[str, str]:
    """The variables a leased COMMAND gets (secrets included: for the child only)."""
    account = held.account
    env = {"DOCVERIFY_LEASED_ACCOUNT": held.name, "DOCVERIFY_ACCOUNT_CONSOLE": account.console,
           "DOCVERIFY_ACCOUNT_REGION": account.region}
    if held.lock_fd is not None:
        env["DOCVERIFY_LEASE_FD"] = str(held.lock_fd)
    if account.account_id:
        env["DOCVERIFY_ACCOUNT_ID"] = account.account_id
    if account.alias:
        env["DOCVERIFY_ACCOUNT_ALIAS"] = account.alias
    if account.login_user and account.password is not None:
        env["DOCVERIFY_LOGIN_USER"] = account.login_user
        env["DOCVERIFY_LOGIN_PASSWORD"] = account.password.reveal()
    if account.access_key_id is not None and account.access_key_secret is not None:
        key_id, secret = account.access_key_id.reveal(), account.access_key_secret.reveal()
        env.update({"ALIBABA_CLOUD_ACCESS_KEY_ID": key_id, "ALIBABA_CLOUD_ACCESS_KEY_SECRET": secret,
                    "ALIBABA_CLOUD_REGION_ID": account.region,
                    "ALICLOUD_ACCESS_KEY": key_id, "ALICLOUD_SECRET_KEY": secret, "ALICLOUD_REGION": account.region})
    return env


def _run(held, command: list[str]) -> int:
    env = {**os.environ, **lease_environment(held)}
    fds = (held.lock_fd,) if held.lock_fd is not None else ()
    try:
        child = subprocess.Popen(command, env=env, pass_fds=fds)
    except OSError as error:
        raise UsageError(f"cannot run {command[0]!r}: {error.strerror or error}") from None

    def forward(signum, frame):  # noqa: ARG001
        child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        while True:
            try:
                code = child.wait()
                break
            except KeyboardInterrupt:  # the terminal sent it to COMMAND too: let it finish
                continue
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code if code >= 0 else 128 - code


# ------------------------------------------------------------------- rotate
@accounts.command("rotate", context_settings=CONTEXT_SETTINGS)
@_pool_options
@click.argument("name", required=False)
@click.option("--max-age", "max_age", type=click.FloatRange(0), envvar="DOCVERIFY_ROTATE_MAX_AGE",
              help="Rotate keys older than DAYS (default: the account's or the file's max_key_age_days, 90). "
                   "Env: DOCVERIFY_ROTATE_MAX_AGE.")
@click.option("--force", is_flag=True, help="Rotate whatever the key's age.")
@click.option("--dry-run", is_flag=True, help="Say which keys are due; change nothing.")
@click.option("--lease-timeout", type=click.FloatRange(0), default=300, show_default=True,
              envvar="DOCVERIFY_LEASE_TIMEOUT",
              help="Seconds to wait for a leased account to be free (its key is not changed under a task). "
                   "Env: DOCVERIFY_LEASE_TIMEOUT.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcomes as JSON.")
@click.pass_context
def rotate(ctx: click.Context, accounts_file: str | None, lease_dir: str | None, name: str | None,
           max_age: float | None, force: bool, dry_run: bool, lease_timeout: float, as_json: bool) -> int:
    """Rotate AccessKeys on schedule: create a new key (RAM CreateAccessKey), check
    it works, store it where the references point, delete the old key.

    Each account is leased first, so no task loses its key mid-run. On any failure
    the account keeps a working key and the message says what happened. A key
    behind an env: reference is refused: docverify cannot change a variable's
    source; use keyring: or file:. Sandbox accounts need a served sandbox (their
    api_url, or [console.sandbox] url).

    \b
    Exit codes: 0 rotated, not due or skipped; 2 refused (env:, built-in); 3 a rotation failed.

    \b
    Examples:
      docverify accounts rotate --dry-run
      docverify accounts rotate ci-1 --force
      docverify accounts rotate --max-age 30 --json
    """
    from docverify.lease import PoolExhausted
    from docverify.lease.rotation import RotationOutcome
    from docverify.lease.rotation import rotate as rotate_key

    pool, config = _open(ctx, accounts_file, lease_dir)
    # a console served apart from this run (a sandbox's `url`) is where its accounts' keys rotate
    served = {name: (table or {}).get("url") for name, table in config.settings.console.plugin_tables().items()}
    specs = [pool.get(name)] if name else [spec for spec in pool.specs if spec.ref("access_key_id") is not None]
    outcomes: list[RotationOutcome] = []
    for spec in specs:
        if not name and pool.state.read(spec.name).quarantine is not None:
            outcomes.append(RotationOutcome(spec.name, "skipped", "quarantined (name it to rotate it anyway)"))
            continue
        if not name and (ref := spec.ref("access_key_id")) is not None and ref.scheme == "builtin":
            outcomes.append(RotationOutcome(spec.name, "skipped", "built-in sandbox credentials are not rotated"))
            continue
        limit = spec.max_key_age_days or pool.max_key_age_days
        try:
            held = pool.acquire(spec.name, timeout=lease_timeout, label="docverify accounts rotate",
                                include_quarantined=bool(name))
        except PoolExhausted as busy:  # a task holds it: never change a key under a running task
            outcomes.append(RotationOutcome(spec.name, "failed", f"{busy}; nothing changed"))
            continue
        with held:
            outcomes.append(rotate_key(held, max_age_days=limit if max_age is None else max_age,
                                       api_url=served.get(spec.console),
                                       force=force, dry_run=dry_run))
    if as_json:
        click.echo(json.dumps([o.__dict__ for o in outcomes], indent=2))
    else:
        for outcome in outcomes:
            click.echo(f"{outcome.name}: {outcome.status}: {outcome.message}")
            for warning in outcome.warnings:
                click.echo(f"{outcome.name}: warning: {warning}", err=True)
    if any(o.status == "failed" for o in outcomes):
        return ExitCode.ENVIRONMENT
    if any(o.status == "refused" for o in outcomes):
        return ExitCode.USAGE
    return ExitCode.OK


# --------------------------------------------------------------- quarantine
@accounts.command("quarantine", context_settings=CONTEXT_SETTINGS)
@_pool_options
@click.argument("name")
@click.option("--reason", required=True, help="Why (shown by list and by leases that skip it).")
@click.pass_context
def quarantine(ctx: click.Context, accounts_file: str | None, lease_dir: str | None, name: str, reason: str) -> None:
    """Take an account out of the pool until release-quarantine.

    docverify quarantines an account itself when its login or keys are refused.

    \b
    Example:
      docverify accounts quarantine ci-2 --reason "MFA prompt since 2026-05-01"
    """
    pool, _ = _open(ctx, accounts_file, lease_dir)
    record = pool.quarantine(name, reason)
    click.echo(f"quarantined {name} since {record.since}: {record.reason}")


@accounts.command("release-quarantine", context_settings=CONTEXT_SETTINGS)
@_pool_options
@click.argument("name")
@click.pass_context
def release_quarantine(ctx: click.Context, accounts_file: str | None, lease_dir: str | None, name: str) -> None:
    """Bring a quarantined account back into the pool (after fixing it).

    \b
    Example:
      docverify accounts release-quarantine ci-2
    """
    pool, _ = _open(ctx, accounts_file, lease_dir)
    previous = pool.release_quarantine(name)
    if previous is None:
        click.echo(f"{name} was not quarantined")
    else:
        click.echo(f"released {name} (quarantined since {previous.since}: {previous.reason})")
