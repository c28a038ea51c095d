"""A run's event loop on a thread of its own, started before the run needs it.

``docverify check`` starts it first thing, with the executor warming up on it
(the browser launching), while the main thread goes on loading plugins, parsing
the docs and starting the console: on two cores the browser is up by the time the
procedures are. The run itself then goes onto the same loop (:meth:`RunLoop.run`),
where the browser lives.

Ctrl-C behaves as with :class:`asyncio.Runner`: the main thread's
KeyboardInterrupt cancels the running coroutine, waits until it has cleaned up
(browser closed, results saved), then propagates; a second Ctrl-C does not wait.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
ErrorHandler = Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]


class RunLoop:
    """An asyncio event loop running on a daemon thread until :meth:`close`."""

    def __init__(self, on_error: ErrorHandler | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        if on_error is not None:
            self.loop.set_exception_handler(on_error)
        self.interrupted = False  #: Ctrl-C cancelled what :meth:`run` ran
        self._thread = threading.Thread(target=self._serve, name="docverify-run-loop", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            try:
                pending = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
                self.loop.run_until_complete(self.loop.shutdown_default_executor())
            finally:
                self.loop.close()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``coroutine`` on the loop; its future (cancelling it cancels the coroutine)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and wait for its result, as ``asyncio.run``
        would in this thread (see the module's docstring for Ctrl-C)."""
        outcome: concurrent.futures.Future[T] = concurrent.futures.Future()
        started: list[asyncio.Task[T]] = []

        def start() -> None:
            task = self.loop.create_task(coroutine)
            started.append(task)
            task.add_done_callback(lambda done: _settle(done, outcome))

        self.loop.call_soon_threadsafe(start)
        try:
            return outcome.result()
        except KeyboardInterrupt:
            self.interrupted = True
            self.loop.call_soon_threadsafe(lambda: started[0].cancel())  # runs after start(): same queue
            concurrent.futures.wait([outcome])  # its clean-up; a second Ctrl-C stops waiting
            raise

    def close(self) -> None:
        """Stop the loop (tasks still pending are cancelled) and wait for its thread."""
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()


def _settle(task: asyncio.Task[T], outcome: concurrent.futures.Future[T]) -> None:
    if task.cancelled():
        outcome.set_exception(KeyboardInterrupt())
    elif task.exception() is not None:
        outcome.set_exception(task.exception())  # type: ignore[arg-type]
    else:
        outcome.set_result(task.result())
