"""What the RAM user logon pages look like, and what each page that stops a logon means.

Reconstructed from Alibaba Cloud's documentation, not captured live: RAM "Log on to
the Alibaba Cloud Management Console as a RAM user" (the RAM User Logon page: enter the
logon name, click **Next**; enter the password, click **Log On** / 登录; then, where MFA
is on, a verification code), RAM's password policy (a password that expires, a user
locked for an hour after too many failed logons) and the slider captcha ("nc") that
Alibaba's risk control puts in front of a logon it distrusts. The labels are the
documented ones in both languages; field names are matched loosely (several names the
pages are known to have used), so a page that renames a field still signs in. When the
live test (tests/aliyun/test_live.py) finds the real pages otherwise, this module is
the one place to change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: the logon-name field: its accessible name, else its shape
LOGON_NAME_LABEL = re.compile(r"user\s*name|logon\s*name|login\s*name|用户名|登录名", re.IGNORECASE)
LOGON_NAME_FIELDS = ('input[name="loginName"], input[name="username"], input[name="user_principal_name"], '
                     'input[autocomplete="username"], input#loginName')
NEXT_BUTTON = re.compile(r"^\s*(?:next|下一步)\s*$", re.IGNORECASE)
PASSWORD_FIELD = 'input[type="password"]'
LOG_ON_BUTTON = re.compile(r"^\s*(?:log\s*on|log\s*in|sign\s*in|登录|登 录)\s*$", re.IGNORECASE)
#: an error the logon page shows next to its form (a wrong password, an unknown user)
ERROR_MESSAGE = '[role="alert"], .login-error, .error-message, .next-message-error'


@dataclass(frozen=True)
class Stop:
    """A page that stops an unattended logon: what it is, how to recognise it, what
    the account needs. ``rejects``: the account itself needs fixing (the pool
    quarantines it); otherwise the environment does (a captcha passes with time)."""

    kind: str
    what: str  #: how the message names the page
    selectors: tuple[str, ...]  #: any of these on the page...
    text: re.Pattern[str] | None  #: ...or its visible text matching this
    needs: str  #: what to do
    rejects: bool = True


STOPS: tuple[Stop, ...] = (
    Stop("captcha", "a slider captcha (risk control)",
         ("#nc_1_wrapper", "#nc_1_n1z", ".nc-container", ".nc_wrapper", '[id^="nc_"][id$="_n1z"]', "#baxia-dialog"),
         re.compile(r"slide to verify|drag the slider|请按住滑块|拖动到最右边|滑动验证", re.IGNORECASE),
         "the logon was challenged after too many logons from this address: reuse sessions ([console.aliyun] "
         "session_reuse = true, with a session_dir kept between runs), sign in less often, or use AccessKey-federated "
         "sign-in ([console.aliyun] sign_in = \"federated\"), which shows no captcha",
         rejects=False),
    Stop("locked", "a locked-account page",
         (".account-locked",),
         re.compile(r"(?:account|user)[^.]{0,40}\blocked\b|too many (?:failed )?(?:logon|login|sign-in) attempts|"
                    r"已被锁定|登录失败次数过多|账号已锁定", re.IGNORECASE),
         "wait until RAM unlocks the user (its password policy locks it for an hour after too many failed logons), "
         "then fix the password the account pool holds for it"),
    Stop("password_expired", "a password-expired page",
         (".password-expired", 'input[name="newPassword"]'),
         re.compile(r"password (?:has )?expired|expired password|reset your password|密码已过期|密码已失效|需要重置密码",
                    re.IGNORECASE),
         "set a new password for this RAM user and store it where the account's password reference points, or "
         "relax the RAM password policy's expiry (RAM console > Settings > Security Settings)"),
    Stop("mfa", "a multi-factor authentication (MFA) page",
         ('input[autocomplete="one-time-code"]', 'input[name="mfaCode"]', 'input[name="code"]', "#mfa-code"),
         re.compile(r"multi-factor authentication|\bMFA\b|verification code|security verification|多因素认证|"
                    r"虚拟MFA|安全验证", re.IGNORECASE),
         "disable MFA for this RAM user's console logon (RAM console > Users > the user > Authentication) or use "
         "AccessKey-federated sign-in ([console.aliyun] sign_in = \"federated\", a role the user may assume)"),
)
