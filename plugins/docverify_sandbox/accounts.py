"""The sandbox console's side of the account pool: its seeded tenants as the
zero-config pool, and its RAM API for AccessKey rotation. `SandboxConsole`
offers both through the console plugin interface (``default_accounts`` and
``access_key_api``), so the core accounts package knows no console by name.
"""

from __future__ import annotations

from datetime import datetime

from docverify.lease.account import AccountSpec
from docverify.lease.rotation import RAM_VERSION, RamCallError, authenticated
from docverify.lease.secret import SecretRef
from docverify.lease.state import parse_time


def sandbox_accounts() -> list[AccountSpec]:
    """The sandbox's seeded tenants, each signed in as its administrator (the
    pool a new user gets: no file, nothing to set up)."""
    from docverify_sandbox.state import DEFAULT_ACCOUNTS

    specs = []
    for tenant in DEFAULT_ACCOUNTS:
        label = tenant.alias
        specs.append(AccountSpec.built_in(
            "built-in (sandbox tenants)",
            fixed={"password": SecretRef.fixed(f"{label}/{tenant.admin_user}-password", tenant.admin_password),
                   "access_key_id": SecretRef.fixed(f"{label}/{tenant.admin_user}-key-id", tenant.admin_access_key_id),
                   "access_key_secret": SecretRef.fixed(f"{label}/{tenant.admin_user}-key-secret",
                                                        tenant.admin_access_key_secret)},
            extra={"root_access_key_id": SecretRef.fixed(f"{label}/root-key-id", tenant.access_key_id),
                   "root_access_key_secret": SecretRef.fixed(f"{label}/root-key-secret", tenant.access_key_secret)},
            name=tenant.alias, console="sandbox", account_id=tenant.account_id, alias=tenant.alias,
            login_user=f"{tenant.admin_user}@{tenant.alias}.onaliyun.com", access_key_user=tenant.admin_user,
            region="cn-hangzhou",
        ))
    return specs


class SandboxAccessKeys:
    """:class:`~docverify.lease.rotation.AccessKeyApi` on a sandbox, with its
    ``SandboxClient``.

    The sandbox resolves the caller from the AccessKey: a RAM user's key acts as
    that user (its policies apply), the account's root key as the owner. Its
    ``CreateAccessKey`` needs ``UserName`` (the real API defaults to the caller),
    and an account's root key cannot be replaced through the API.
    """

    def __init__(self, url: str, key_id: str, secret: str) -> None:
        from docverify_sandbox.client import SandboxClient

        self.url = url
        self.key_id = key_id
        self.client = SandboxClient(url, key_id, secret)

    def _call(self, action: str, params: dict[str, str] | None = None, client=None) -> dict:
        from docverify_sandbox.client import SandboxApiError

        try:
            return (client or self.client).call(action, RAM_VERSION, params)
        except SandboxApiError as error:
            raise RamCallError(action, error.code or f"HTTP{error.status}",
                               str(error.body.get("Message") or error)) from None

    def _keys(self, user: str | None) -> list[dict]:
        response = self._call("ListAccessKeys", {"UserName": user} if user else None)
        return list(response.get("AccessKeys", {}).get("AccessKey", []))

    def owner(self) -> str | None:
        for key in self._keys(None):  # the sandbox lists every user's keys of the account, with UserName
            if key.get("AccessKeyId") == self.key_id:
                return key.get("UserName")
        return None

    def created(self, user: str | None) -> datetime | None:
        for key in self._keys(user):
            if key.get("AccessKeyId") == self.key_id:
                return parse_time(key.get("CreateDate") or key.get("CreationTime"))
        return None

    def create(self, user: str | None) -> tuple[str, str]:
        if user is None:
            raise RamCallError("CreateAccessKey", "NotSupported",
                               "this AccessKey is the account's root key, which the sandbox cannot replace; "
                               "give the account a RAM user's key (e.g. its administrator's)")
        key = self._call("CreateAccessKey", {"UserName": user})["AccessKey"]
        return key["AccessKeyId"], key["AccessKeySecret"]

    def check(self, key_id: str, secret: str, user: str | None) -> None:
        from docverify_sandbox.client import SandboxClient

        with authenticated("ListAccessKeys"):
            self._call("ListAccessKeys", {"UserName": user} if user else None,
                       client=SandboxClient(self.url, key_id, secret))

    def delete(self, key_id: str, user: str | None) -> None:
        params = {"UserAccessKeyId": key_id}
        if user:
            params["UserName"] = user
        self._call("DeleteAccessKey", params)
