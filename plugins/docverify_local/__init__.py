"""Built-in plugin ``local``: the backend that runs a check's procedures in its own process
(one browser, ``--jobs`` contexts), the default. The class is the core's
(:class:`docverify.run.backend.LocalBackend`); it registers here as every backend does."""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_backends(register):
    register("docverify.run.backend:LocalBackend", name="local", default=True)
