"""Built-in plugin `reports`: the reporters ``console``, ``json``, ``junit``,
``github`` and ``html``.

Only the registration hook lives here; each reporter is a module of its own,
imported when the hook runs, and the heavy libraries (rich, jinja2) only when a
reporter is used.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_reporters(register):
    from docverify_reports.console import ConsoleReporter
    from docverify_reports.github import GithubReporter
    from docverify_reports.html import HtmlReporter
    from docverify_reports.json_report import JsonReporter
    from docverify_reports.junit import JUnitReporter

    for reporter in (ConsoleReporter, JsonReporter, JUnitReporter, GithubReporter, HtmlReporter):
        register(reporter)
