"""Built-in plugin `reports`: the reporters ``console``, ``json``, ``junit``,
``github`` and ``html``.

Only the registration hook lives here; each reporter is a module of its own,
imported only when the reporter is used.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_reporters(register):
    for name, reference in (("console", "console:ConsoleReporter"), ("json", "json_report:JsonReporter"),
                            ("junit", "junit:JUnitReporter"), ("github", "github:GithubReporter"),
                            ("html", "html:HtmlReporter")):
        register(f"docverify_reports.{reference}", name=name)
