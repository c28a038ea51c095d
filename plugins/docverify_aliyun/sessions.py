"""Signed-in sessions kept for reuse: one Playwright storage state per account, in a private folder.

Every logon to the real console costs seconds and, repeated, brings the slider captcha,
so a session signed in once is reused: by every procedure of the run (the executor's
cache), and, through this folder, by the next run that uses the same folder. The
folder is the run's own (a new one, mode 0700, removed when the console stops) unless
``[console.aliyun] session_dir`` names one to keep between runs (a CI cache). A session
file is a credential: it is written 0600 into a folder only its owner can open, never
under the run's output (reports, artifacts), and its cookies are registered as secrets,
so no report, log or Playwright trace shows them (:mod:`docverify.scrub`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from docverify.errors import ConfigError
from docverify.lease.secret import write_private
from docverify.scrub import register

#: cookies that hold the session (tickets, tokens): registered as secrets wherever they are read
SESSION_COOKIE = re.compile(r"ticket|token|sess|sid|auth|csrf|secret|passport|login|sec_", re.IGNORECASE)


def private_folder(path: str | Path, *, setting: str = "[console.aliyun] session_dir") -> Path:
    """``path``, created mode 0700 if missing; refused when others can read it."""
    folder = Path(path).expanduser()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except OSError as error:
        raise ConfigError(f"{setting}: cannot create {folder}: {error.strerror or error}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{setting}: {folder} is not a folder")
    if info.st_mode & 0o077:
        raise ConfigError(f"{setting}: {folder} can be opened by others (mode {stat.S_IMODE(info.st_mode):04o}): "
                          "signed-in sessions are credentials", hint=f"chmod 700 {folder}")
    return folder


def remember_cookies(state: dict[str, Any]) -> None:
    """Register the session cookies of a storage state as secrets (scrubbed everywhere)."""
    register(*(str(cookie.get("value") or "") for cookie in state.get("cookies") or ()
               if cookie.get("httpOnly") or SESSION_COOKIE.search(str(cookie.get("name") or ""))))


class SessionStore:
    """Storage states by account, in a private folder (None: nothing is kept)."""

    def __init__(self, folder: str | Path | None) -> None:
        self.folder = Path(folder) if folder else None

    @staticmethod
    def key(*parts: str) -> str:
        """A file name for an account (its site and identity), revealing neither."""
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]

    def path(self, key: str) -> Path | None:
        return self.folder / f"{key}.json" if self.folder is not None else None

    def load(self, key: str) -> dict[str, Any] | None:
        path = self.path(key)
        if path is None or not path.is_file():
            return None
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # half written by a killed run: sign in again
            self.drop(key)
            return None
        if not isinstance(state, dict) or not isinstance(state.get("cookies"), list):
            self.drop(key)
            return None
        remember_cookies(state)
        return state

    def save(self, key: str, state: dict[str, Any]) -> None:
        remember_cookies(state)
        path = self.path(key)
        if path is not None:
            write_private(path, json.dumps(state))

    def drop(self, key: str) -> None:
        path = self.path(key)
        if path is not None:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
