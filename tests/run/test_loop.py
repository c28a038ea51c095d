"""The run's event loop on its own thread: results, errors, Ctrl-C, closing."""

from __future__ import annotations

import asyncio
import signal
import threading

import pytest
from fake_plugins import press_ctrl_c

from docverify.run.loop import RunLoop


def test_run_returns_the_result_computed_on_the_loop_thread():
    loop = RunLoop()
    try:
        async def where():
            await asyncio.sleep(0)
            return threading.current_thread().name

        assert loop.run(where()) == "docverify-run-loop"
        assert threading.current_thread() is threading.main_thread()
    finally:
        loop.close()


def test_work_submitted_early_is_done_by_the_time_the_run_needs_it():
    loop = RunLoop()
    try:
        started = loop.submit(asyncio.sleep(0.05, result="browser"))  # warming up
        assert loop.run(asyncio.sleep(0, result="parsed")) == "parsed"
        assert started.result(timeout=5) == "browser"
    finally:
        loop.close()


def test_an_error_in_the_run_reaches_the_caller():
    loop = RunLoop()
    try:
        async def fails():
            raise ValueError("no console")

        with pytest.raises(ValueError, match="no console"):
            loop.run(fails())
    finally:
        loop.close()


@pytest.mark.skipif(signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
                    reason="Ctrl-C is not Python's KeyboardInterrupt in this process")
def test_ctrl_c_cancels_the_run_waits_for_its_clean_up_then_propagates():
    loop = RunLoop()
    cleaned = []

    async def runs():
        try:
            await press_ctrl_c()  # a real Ctrl-C, once the run is under way
            await asyncio.Event().wait()  # until cancelled
        finally:
            await asyncio.sleep(0.1)  # closing the browser, saving results
            cleaned.append(threading.current_thread().name)

    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run(runs())
        assert cleaned == ["docverify-run-loop"] and loop.interrupted
    finally:
        loop.close()


def test_close_cancels_what_is_still_pending_and_stops_the_thread():
    loop = RunLoop()
    started, cancelled = threading.Event(), threading.Event()

    async def forever():
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    loop.submit(forever())
    assert started.wait(5)
    loop.close()
    assert cancelled.is_set() and loop.loop.is_closed()
    loop.close()  # twice is harmless
