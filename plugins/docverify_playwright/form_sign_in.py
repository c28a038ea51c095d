"""Signing in without a browser, where the console's sign-in is a plain HTML form.

A console whose :class:`~docverify.console.LoginForm` names its form's fields
(``form_fields``) signs in with one HTTP POST: the session cookies it answers with
seed every browser context, as the cookies of a sign-in in the browser would. It
saves a browser context and two page loads per account (about a second of a
one-procedure check). A form that needs JavaScript has no ``form_fields``: it is
filled in the browser.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

from docverify.console import LoginForm
from docverify.errors import CredentialsRejected, EnvironmentProblem


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the redirect is the answer: it says whether the sign-in took


def sign_in_over_http(login: LoginForm, timeout: float) -> dict[str, Any]:
    """POST ``login``'s form; the browser storage state (cookies) of the session it
    opens. Raises :class:`CredentialsRejected` when the console sends the form back
    (or refuses with a 4xx), :class:`EnvironmentProblem` when it cannot be reached."""
    assert login.form_fields is not None
    user_field, password_field = login.form_fields
    body = urlencode({user_field: login.user, password_field: login.password}).encode()
    request = urllib.request.Request(login.url, data=body, method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as response:
            status, headers = response.status, response.headers
    except urllib.error.HTTPError as answer:  # 3xx (not followed) and 4xx/5xx alike
        status, headers = answer.code, answer.headers
        answer.close()
    except (OSError, http.client.HTTPException) as error:
        raise EnvironmentProblem(f"the console at {login.url} is unreachable: {error}",
                                 hint="is the console running? check [console] in docverify.toml") from None
    location = urljoin(login.url, headers.get("Location", "")) if 300 <= status < 400 else ""
    if not location or urlsplit(location).path == urlsplit(login.url).path:
        if 500 <= status:
            raise EnvironmentProblem(f"signing in at {login.url} failed: HTTP {status}")
        raise CredentialsRejected(f"signing in at {login.url} as {login.user} failed: the console answered "
                                  f"HTTP {status}" + (" and sent the form back" if status < 300 else ""),
                                  hint="check the account's user name and password")
    cookies = _cookies(headers.get_all("Set-Cookie") or [], urlsplit(login.url))
    if not cookies:
        raise EnvironmentProblem(f"signing in at {login.url} opened no session (no cookie in the answer)")
    return {"cookies": cookies, "origins": []}


def _cookies(lines: list[str], url: Any) -> list[dict[str, Any]]:
    """``Set-Cookie`` lines as Playwright's storage-state cookies for ``url``'s host."""
    cookies = []
    for line in lines:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(line)
        except CookieError:
            continue
        for name, morsel in jar.items():
            same_site = (morsel["samesite"] or "Lax").capitalize()
            cookies.append({
                "name": name, "value": morsel.value, "domain": morsel["domain"] or url.hostname,
                "path": morsel["path"] or "/", "expires": -1, "httpOnly": bool(morsel["httponly"]),
                "secure": bool(morsel["secure"]), "sameSite": same_site if same_site in ("Lax", "Strict", "None")
                else "Lax",
            })
    return cookies
