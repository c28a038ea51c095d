"""Built-in plugin ``literal``: the policy that follows a doc's steps as written."""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_policies(register):
    register("docverify_literal.policy:LiteralPolicy", name="literal", default=True)
