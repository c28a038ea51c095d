"""Built-in plugin `reports`: the reporters ``terminal`` (the default; formerly
``console``), ``json``, ``junit``, ``github`` and ``html``.

Only the registration hook lives here; each reporter is a module of its own,
imported only when the reporter is used.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_reporters(register):
    register("docverify_reports.terminal:TerminalReporter", name="terminal", default=True, aliases=("console",))
    for name, reference in (("json", "json_report:JsonReporter"), ("junit", "junit:JUnitReporter"),
                            ("github", "github:GithubReporter"), ("html", "html:HtmlReporter")):
        register(f"docverify_reports.{reference}", name=name)
