"""The runner on the real sandbox and Chromium, where the browser is the subject: a
browser that crashes mid-procedure, and what the runner's screenshots, outlines and
traces take from the real executor. The runner's own logic (verdicts, budgets,
screenshots kept or dropped, findings outlined) is tested without a browser in
tests/run/test_fake_runner.py."""

from __future__ import annotations

import asyncio
import os
import signal
import textwrap
from pathlib import Path

import pytest
from fake_plugins import AnswerChecker, ScriptedPolicy, click

from docverify.check.criteria import ExpectedEvent
from docverify.check.verdict import Verdict
from docverify.execute.actions import Action, ActionKind
from docverify.parse.parser import parse_text
from docverify.run.runner import RunLimits, Runner, Stages
from docverify.task import make_task
from docverify_none import NoneProvisioner
from docverify_playwright.executor import PlaywrightExecutor
from docverify_sandbox.console import SandboxConsole

pytestmark = pytest.mark.browser

DOC = """\
    # {title}

    1. Log on to the OSS console.
    2. Click **Create Bucket**.
"""


def task(title: str):
    procedure = parse_text(textwrap.dedent(DOC.format(title=title)), "doc.md").procedures[0]
    made = make_task(procedure, suffix="t0")
    made.criteria = [ExpectedEvent("PutBucket", "Oss")]
    return made


def run(tasks, scripts, *, tmp_path: Path):
    executor = PlaywrightExecutor(PlaywrightExecutor.Options(trace="on-failure"))
    stages = Stages(NoneProvisioner(), executor, ScriptedPolicy(scripts), [AnswerChecker()])
    with SandboxConsole(SandboxConsole.Options(latency_ms=0)).start() as endpoint:
        runner = Runner(stages, endpoint, artifacts=tmp_path / "artifacts", limits=RunLimits(), output=tmp_path)
        results = asyncio.run(runner.run(tasks, 1))
    return {r.title: r for r in results}


def browser_pids() -> list[int]:
    """Chromium main processes (not renderers) among this process's descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            todo.append(child)
            try:
                cmd = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"chrom" in cmd[0] and not any(arg.startswith(b"--type=") for arg in cmd):
                found.append(child)
    return found


def test_a_browser_crash_is_that_procedures_env_error_and_the_run_goes_on(tmp_path, chromium):
    def crash(observation):
        for pid in browser_pids():
            os.kill(pid, signal.SIGKILL)
        return Action(ActionKind.CLICK, ref="e1", step="1")

    scripts = {"crashes": [crash, click("OSS console")], "after": [click("OSS console")]}
    results = run([task("crashes"), task("after")], scripts, tmp_path=tmp_path)
    assert results["crashes"].verdict is Verdict.ENV_ERROR
    assert "browser" in results["crashes"].reason
    assert results["after"].verdict is Verdict.PASS, results["after"].reason


# -- what the runner takes from the executor -----------------------------------------------


def test_the_executor_saves_png_or_jpeg_boxes_an_element_and_keeps_a_trace(tmp_path, chromium):
    """The runner names screenshots .png or .jpg, outlines a finding's element with
    ``bounding_box`` and keeps a failed procedure's trace: the real executor's side."""
    async def scenario(endpoint):
        executor = PlaywrightExecutor(PlaywrightExecutor.Options(trace="on-failure"))
        async with executor.open(endpoint, tmp_path / "artifacts") as xrun:
            async with xrun.session("shots") as session:
                await session.apply(click("OSS console")(await session.observe()))
                page = await session.observe()
                await session.screenshot(tmp_path / "shot.png")
                await session.screenshot(tmp_path / "shot.jpg")
                create = next(e.ref for e in page.elements if e.name == "Create Bucket" and e.ref)
                boxes = await session.bounding_box(create), await session.bounding_box("e99999")
                kept = session.keep_trace(tmp_path / "shots.trace.zip")
        return page, boxes, kept

    with SandboxConsole(SandboxConsole.Options(latency_ms=0)).start() as endpoint:
        page, (found, missing), kept = asyncio.run(scenario(endpoint))
    assert page.url.endswith("/console/oss/bucket")
    assert (tmp_path / "shot.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / "shot.png").stat().st_size > 1000
    assert (tmp_path / "shot.jpg").read_bytes()[:2] == b"\xff\xd8"  # JPEG
    # "Create Bucket": a button in the page's top part, as fractions of the viewport
    assert found is not None and 0 < found["width"] < 0.5 and 0 < found["height"] < 0.1
    assert 0 <= found["x"] and found["x"] + found["width"] <= 1 and 0 <= found["y"] < 0.5
    assert missing is None  # no such element: nothing to outline
    assert kept and (tmp_path / "shots.trace.zip").read_bytes()[:2] == b"PK"  # written when the session closed
