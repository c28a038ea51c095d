"""Built-in plugin ``playwright``: the browser executor (Chromium through Playwright).

Only the hook lives here; Playwright is imported when a run opens the browser.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_executors(register):
    register("docverify_playwright.executor:PlaywrightExecutor", name="playwright", default=True)
