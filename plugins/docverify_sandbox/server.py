"""Running the sandbox: a uvicorn server in a background thread, or in the foreground."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from docverify.errors import EnvironmentProblem


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_app(release: str | None = None, data_dir: str | Path | None = None, latency_ms: int = 300,
              seed: int = 0):
    """The ASGI app for one release, with its own store."""
    from docverify_sandbox import catalog
    from docverify_sandbox.app import create_app
    from docverify_sandbox.state import Store

    cat = catalog.load(release)
    path = None
    if data_dir:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        path = Path(data_dir) / "sandbox.db"
    return create_app(cat, Store(path, seed=seed, latency_ms=latency_ms))


@contextmanager
def running(app, port: int = 0, *, timeout: float = 10.0) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 in a background thread; yield its base URL."""
    import uvicorn

    port = port or free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off",
                            access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"docverify-sandbox-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise EnvironmentProblem(f"the sandbox console did not start on 127.0.0.1:{port}",
                                     hint="is the port in use? try --port 0")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        app.state.sandbox.store.close()
