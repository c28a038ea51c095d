"""Built-in plugin ``ray``: the backend that runs a check's procedures on Ray workers
(``--backend ray``), one browser and one console per worker, across processes or machines.

Only the hook lives here; Ray is imported when a run uses the backend
(``pip install 'docverify[ray]'``).
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_backends(register):
    register("docverify_ray.backend:RayBackend", name="ray")
