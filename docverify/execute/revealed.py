"""Secrets a console reveals while a procedure runs, recognised and registered.

A procedure that creates an AccessKey, a generated logon password or a key pair
makes the console show a secret once: in the response of the API call behind the
page (``{"AccessKey": {"AccessKeySecret": ...}}``) or on the page itself (a value
labelled *AccessKey Secret*, *Password*, *Private Key*, 密钥, 密码 in the dialog
that reveals it). docverify never needs that value, and must never write it: the
executor hands what the console sent and showed to the recognisers below, and
every value they find is registered with :mod:`docverify.scrub` before the next
observation or screenshot, so screenshots mask it and traces, reports, the
results store and logs are scrubbed of it.

Recognition is generic, by name and by shape, never by console:

- :func:`in_json`: a string under a key that names a secret (``AccessKeySecret``,
  ``SecretAccessKey``, ``Password``, ``PrivateKeyBody``, ``private_key``,
  ``SecurityToken``…; not ``NextToken`` or ``AccessKeyId``);
- :func:`in_labelled`: a value shown beside a label that names a secret (the
  label as a whole: *Password* and *Logon Password*, not *Password Reset*);
- either way the value must look like one (:func:`looks_like_secret`): a token
  of 8 or more characters without spaces, of three character classes (or two
  when 16 or more long), or a PEM private key. *Not set*, ``********`` or
  *Required* are labels' values, not secrets.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

from docverify.scrub import MIN_LENGTH, register

#: JSON keys whose string value is a secret, matched at the end of the key with
#: case and ``_``/``-`` ignored (``AccessKeySecret``, ``access_key_secret``).
SECRET_KEY = re.compile(
    r"(?:secret|secretaccesskey|secretkey|password|passwd|passphrase|privatekey|privatekeybody|"
    r"privatekeycontent|privatekeymaterial|privatekeypem|securitytoken|sessiontoken|accesstoken|"
    r"refreshtoken|idtoken|apikey)$")

#: Labels (a whole label, trailing ``:``/``*`` dropped) of a value that is a secret:
#: up to two words before the noun (*AccessKey Secret*, *New Logon Password*).
SECRET_LABEL = re.compile(
    r"^(?:(?:[\w-]+ ){0,2}(?:secret|secret key|secret access key|password|passphrase|private key|"
    r"private key body|security token|session token|access token|api key)"
    r"|accesskeysecret|secretaccesskey|privatekeybody|accountpassword"
    r"|\S{0,8}?(?:密钥|私钥|秘钥|密码|口令)(?:内容)?)$",
    re.IGNORECASE)

#: A PEM private key, whatever its kind (RSA, EC, OPENSSH, ENCRYPTED).
PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z0-9 ]*PRIVATE KEY-----")

#: What a masked or withheld value is made of (``********``, ``••••••``).
_MASKED = set("*•·●xX-._ ")


def is_secret_key(key: str) -> bool:
    """``key`` (a JSON field name) names a secret."""
    return bool(SECRET_KEY.search(re.sub(r"[^a-z0-9]", "", key.lower())))


def is_secret_label(label: str) -> bool:
    """``label`` (a field's or a term's text on the page) names a secret."""
    text = " ".join(label.split()).rstrip(":：*＊ ").strip()
    return bool(text) and len(text) <= 40 and bool(SECRET_LABEL.match(text))


def looks_like_secret(value: str) -> bool:
    """``value`` has the shape of a secret: a PEM private key, or a token of at least 8
    characters without spaces of three character classes (two when 16 or longer)."""
    text = value.strip()
    if PRIVATE_KEY.search(text):
        return True
    if len(text) < 8 or any(c.isspace() for c in text) or set(text) <= _MASKED:
        return False
    classes = (any(c.islower() for c in text) + any(c.isupper() for c in text) + any(c.isdigit() for c in text)
               + any(not c.isalnum() for c in text))
    return classes >= 3 or (classes >= 2 and len(text) >= 16)


def in_json(data: Any) -> list[str]:
    """The secrets in a JSON document (an API response): strings under secret keys
    that look like secrets, and PEM private keys anywhere."""
    found: list[str] = []

    def walk(node: Any, key: str | None) -> None:
        if isinstance(node, dict):
            for name, value in node.items():
                walk(value, str(name))
        elif isinstance(node, list):
            for value in node:
                walk(value, key)
        elif isinstance(node, str):
            if key is not None and is_secret_key(key) and looks_like_secret(node):
                found.append(node.strip())
            else:
                found.extend(PRIVATE_KEY.findall(node))

    walk(data, None)
    return list(dict.fromkeys(found))


def in_labelled(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The secrets among ``(label, value)`` pairs read from a page."""
    found = [value.strip() for label, value in pairs if is_secret_label(label) and looks_like_secret(value)]
    return list(dict.fromkeys(found))


def in_text(text: str) -> list[str]:
    """PEM private keys in free text (a page's text, a text area)."""
    return list(dict.fromkeys(PRIVATE_KEY.findall(text)))


def forms(value: str) -> list[str]:
    """``value`` and the forms it takes in what docverify writes: each line of a
    multi-line value (a PEM key is stored line by line in a DOM snapshot and as
    ``\\n``-escaped JSON in a trace), and its JSON-, HTML- and URL-escaped forms."""
    value = value.strip()
    lines = [line.strip() for line in value.splitlines()]
    escaped = [json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1], html.escape(value),
               html.escape(value, quote=False), quote(value, safe=""), quote_plus(value)]
    every = [value, *(line for line in lines if not line.startswith("-----")), *escaped]
    return [v for v in dict.fromkeys(every) if len(v) >= MIN_LENGTH]


def remember(values: Iterable[str]) -> list[str]:
    """Register every value (in all its :func:`forms`) as a secret; returns the values."""
    values = [v for v in values if v and v.strip()]
    for value in values:
        register(*forms(value))
    return values
