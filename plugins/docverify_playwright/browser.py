"""Which Chromium to drive, and how to launch it here.

Order: an explicit path (``--browser-path``), ``DOCVERIFY_BROWSER``, Playwright's own
browser if it is installed, then a system Chromium. Nothing found is an
:class:`~docverify.errors.EnvironmentProblem` that says how to install one.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from docverify.errors import EnvironmentProblem

#: Flags for a headless Chromium in a container with a closed network: no sandbox
#: (root), and none of the background connections that would be refused.
CHROMIUM_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

SYSTEM_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")

INSTALL_HINT = (
    "install one with `apt-get install chromium` (Debian/Ubuntu) or "
    "`python -m playwright install chromium`, or point DOCVERIFY_BROWSER / --browser-path at it"
)


@dataclass(frozen=True)
class BrowserBinary:
    """A Chromium executable and how it was found."""

    path: str
    found_by: str  #: "--browser-path", "DOCVERIFY_BROWSER", "playwright", "system"


def find_browser(
    explicit: str | None = None,
    *,
    playwright_path: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> BrowserBinary:
    """The Chromium to launch. ``playwright_path`` is where Playwright would keep its
    own browser (``playwright.chromium.executable_path``), if known."""
    environ = os.environ if environ is None else environ
    for path, found_by in ((explicit, "--browser-path"), (environ.get("DOCVERIFY_BROWSER"), "DOCVERIFY_BROWSER")):
        if path:
            if not _executable(path):
                raise EnvironmentProblem(f"{found_by} names {path}, which is not an executable file", hint=INSTALL_HINT)
            return BrowserBinary(path, found_by)
    if playwright_path and _executable(playwright_path):
        return BrowserBinary(playwright_path, "playwright")
    for name in SYSTEM_CHROMIUM_NAMES:
        found = shutil.which(name, path=environ.get("PATH", os.defpath))
        if found:
            return BrowserBinary(found, "system")
    raise EnvironmentProblem("no Chromium browser found", hint=INSTALL_HINT)


def _executable(path: str) -> bool:
    candidate = Path(path)
    return candidate.is_file() and os.access(candidate, os.X_OK)
