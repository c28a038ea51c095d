"""Built-in plugin `actiontrail`: the checker that reads the console's audit log."""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_checkers(register):
    register("docverify_actiontrail.checker:ActionTrailChecker", name="actiontrail", default=True)
