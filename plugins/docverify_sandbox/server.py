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


#: How long an idle keep-alive connection stays open. uvicorn's 5 s default is about the
#: pause between two audit-log polls (up to 4 s), so under load a client reused a
#: connection the server was closing and got "connection reset by peer".
KEEP_ALIVE_S = 75


def listening_socket(port: int = 0) -> socket.socket:
    """A socket bound and listening on 127.0.0.1:``port`` (0: a free one), for uvicorn.

    Binding here, before the server starts, means the port is ours once this
    returns (no window for another process to take a "free" port), and clients
    that connect early wait in the backlog instead of being refused.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError as error:
        sock.close()
        raise EnvironmentProblem(f"the sandbox console cannot listen on 127.0.0.1:{port}: {error.strerror or error}",
                                 hint="is the port in use? choose another one, or 0 for a free one") from None
    return sock


def server_for(app) -> "uvicorn.Server":  # noqa: F821 - uvicorn is imported lazily
    """A uvicorn server for ``app`` whose connections answer even an unreadable request
    with the API's error (:mod:`docverify_sandbox.protocol`)."""
    import uvicorn

    from docverify_sandbox.protocol import SandboxH11Protocol

    return uvicorn.Server(uvicorn.Config(app, http=SandboxH11Protocol, log_level="warning", lifespan="off",
                                         access_log=False, timeout_keep_alive=KEEP_ALIVE_S))


def build_app(release: str | None = None, data_dir: str | Path | None = None, latency_ms: int = 300,
              seed: int = 0, resources: str = "seeded"):
    """The ASGI app for one release, with its own store; accounts start with
    ``resources`` (``seeded`` or ``empty``, :mod:`docverify_sandbox.seed`)."""
    from docverify_sandbox import catalog
    from docverify_sandbox.app import create_app
    from docverify_sandbox.state import Store

    cat = catalog.load(release)
    path = None
    if data_dir:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        path = Path(data_dir) / "sandbox.db"
    return create_app(cat, Store(path, seed=seed, latency_ms=latency_ms), resources)  # type: ignore[arg-type]


@contextmanager
def running(app, port: int = 0, *, timeout: float = 10.0) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 in a background thread; yield its base URL."""
    sock = listening_socket(port)
    port = sock.getsockname()[1]
    server = server_for(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"docverify-sandbox-{port}",
                              daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    try:
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                raise EnvironmentProblem(f"the sandbox console did not start on 127.0.0.1:{port}")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        app.state.sandbox.store.close()
