"""The results store: round trips, several writers, resuming, bad files."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from docverify.check.verdict import Finding, FindingKind, Verdict
from docverify.errors import ConfigError
from docverify.parse.parser import parse_file
from docverify.report.trajectory import CheckResult, ProcedureResult, StepOutcome, StepStatus, Turn
from docverify.run.store import (
    SCHEMA_VERSION,
    ResultStore,
    default_store_path,
    fingerprint,
    new_run_id,
)

DOC = """\
---
docverify:
  region: cn-hangzhou
---
# Buckets

Intro text.

## Create a bucket

1. Log on to the OSS console.
2. Click **Create Bucket**.

## Delete a bucket

1. Log on to the OSS console.
2. Click **Delete**.
"""


def result(procedure_id: str = "a#create-a-bucket", verdict: Verdict = Verdict.PASS) -> ProcedureResult:
    finding = Finding(FindingKind.LABEL_CHANGED, "docs/a.md", 12, "2", "Create Bucket", "New Bucket", ["New Bucket"])
    return ProcedureResult(
        id=procedure_id,
        title="Create a bucket",
        path="docs/a.md",
        line=9,
        verdict=verdict,
        reason="step 2: label changed",
        findings=[finding],
        steps=[StepOutcome("2", 12, "Click **Create Bucket**.", StepStatus.DRIFTED, [finding])],
        turns=[Turn(0, "2", {"kind": "click", "ref": "e3"}, "click New Bucket", url="http://console/", browser_s=0.25)],
        check=CheckResult("actiontrail", True, "PutBucket found", [{"EventName": "PutBucket"}]),
        goal_reached=True,
        started_at="2026-03-14T10:15:02+00:00",
        duration_s=3.5,
        artifacts={"trace": "trace.zip"},
    )


@pytest.fixture
def store(tmp_path: Path):
    with ResultStore(tmp_path / ".docverify" / "results.db") as opened:
        yield opened


def test_default_location_is_under_dot_docverify(tmp_path: Path) -> None:
    path = default_store_path(tmp_path)
    assert path == tmp_path / ".docverify" / "results.db"
    ResultStore(path).close()
    assert path.is_file()
    assert (tmp_path / ".docverify" / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"


def test_save_and_reload_round_trip(store: ResultStore) -> None:
    run_id = new_run_id()
    store.start_run(run_id, options={"jobs": 2, "paths": ["docs"]}, console="sandbox 2026-03", policy="literal")
    saved = result()
    store.save(run_id, "f1", saved)
    loaded = store.results(run_id)
    assert list(loaded) == [saved.id]
    stored_fingerprint, back = loaded[saved.id]
    assert stored_fingerprint == "f1"
    assert back.to_dict() == saved.to_dict()
    assert back.verdict is Verdict.PASS and back.findings[0].kind is FindingKind.LABEL_CHANGED


def test_saving_again_replaces_the_result(store: ResultStore) -> None:
    store.start_run("r", options={}, console="c", policy="p")
    store.save("r", "f1", result(verdict=Verdict.ENV_ERROR))
    store.save("r", "f2", result(verdict=Verdict.PASS))
    [(stored_fingerprint, back)] = store.results("r").values()
    assert (stored_fingerprint, back.verdict) == ("f2", Verdict.PASS)


def test_a_second_store_on_the_same_file_sees_saved_rows_at_once(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with ResultStore(path) as writer, ResultStore(path) as reader:
        writer.start_run("r1", options={}, console="c", policy="p")
        writer.save("r1", "f", result())
        assert list(reader.results("r1")) == ["a#create-a-bucket"]
        assert reader.latest_run().run_id == "r1"


def test_latest_run_and_interrupted_flag(store: ResultStore) -> None:
    assert store.latest_run() is None
    first, second = new_run_id(), new_run_id()
    assert first < second
    store.start_run(first, options={"k": "bucket"}, console="sandbox", policy="literal")
    store.finish_run(first, interrupted=False)
    store.start_run(second, options={"resume": True}, console="sandbox", policy="openai")
    running = store.latest_run()
    assert running.run_id == second and running.finished_at is None and not running.complete
    store.finish_run(second, interrupted=True)
    latest = store.latest_run()
    assert (latest.run_id, latest.interrupted, latest.options) == (second, True, {"resume": True})
    assert latest.policy == "openai"
    assert latest.finished_at is not None and not latest.complete
    assert store.run(first).complete
    with pytest.raises(KeyError):
        store.finish_run("nope", interrupted=False)


def test_saving_to_an_unknown_run_is_refused(store: ResultStore) -> None:
    with pytest.raises(KeyError, match="start_run"):
        store.save("nope", "f", result())


def test_resumable_skips_changed_fingerprints_and_verdicts_to_rerun(store: ResultStore) -> None:
    store.start_run("r", options={}, console="c", policy="p")
    store.save("r", "same", result("a#one"))
    store.save("r", "old", result("a#two"))
    store.save("r", "same", result("a#gone"))
    store.save("r", "same", result("a#flaky", Verdict.ENV_ERROR))
    now = {"a#one": "same", "a#two": "new", "a#flaky": "same", "a#never-ran": "x"}
    assert set(store.resumable("r", now)) == {"a#one", "a#flaky"}
    assert set(store.resumable("r", now, rerun={Verdict.ENV_ERROR})) == {"a#one"}
    assert store.resumable("other", now) == {}


def test_starting_a_known_run_again_continues_it(store: ResultStore) -> None:
    store.start_run("r", options={}, console="c", policy="p")
    store.save("r", "f", result())
    store.finish_run("r", interrupted=True)
    store.start_run("r", options={"resume": True}, console="c", policy="p")
    record = store.run("r")
    assert record.finished_at is None and not record.interrupted and record.options == {"resume": True}
    assert list(store.results("r")) == ["a#create-a-bucket"]


def test_close_is_idempotent(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "r.db")
    store.close()
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.latest_run()


def test_a_file_that_is_not_sqlite_is_named_in_the_error(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    path.write_bytes(b"this is not a database, just some text that is long enough" * 20)
    with pytest.raises(ConfigError) as caught:
        ResultStore(path)
    assert str(path) in caught.value.message and "not a readable docverify results store" in caught.value.message
    assert "delete it" in caught.value.hint


def test_a_newer_schema_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    ResultStore(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(ConfigError) as caught:
        ResultStore(path)
    assert str(path) in caught.value.message and f"version {SCHEMA_VERSION + 1}" in caught.value.message
    assert "delete it" in caught.value.hint and "upgrade docverify" in caught.value.hint


def test_another_applications_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (name TEXT)")
    connection.close()
    with pytest.raises(ConfigError, match="not a docverify results store"):
        ResultStore(path)


def test_a_folder_in_the_way_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot create the results store folder"):
        ResultStore(tmp_path / "file" / "results.db")


def test_concurrent_writers_lose_no_rows(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with ResultStore(path) as store:
        store.start_run("r", options={}, console="c", policy="p")
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def write(worker: int) -> None:
        try:
            with ResultStore(path) as own:
                barrier.wait()
                for index in range(40):
                    own.save("r", f"f{worker}", result(f"doc#w{worker}-{index}"))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with ResultStore(path) as store:
        assert len(store.results("r")) == 160


@pytest.mark.parametrize("attempt", range(8))  # the race (switching a new file to WAL) is rare
def test_concurrent_first_opens_create_the_schema_once(tmp_path: Path, attempt: int) -> None:
    path = tmp_path / f"fresh{attempt}.db"
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def open_and_write(worker: int) -> None:
        try:
            barrier.wait()
            with ResultStore(path) as own:
                own.start_run(f"r{worker}", options={}, console="c", policy="p")
                own.save(f"r{worker}", "f", result())
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=open_and_write, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with ResultStore(path) as store:
        assert all(len(store.results(f"r{worker}")) == 1 for worker in range(4))


def test_fingerprint_changes_with_the_procedure_not_with_the_rest_of_the_file(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text(DOC, encoding="utf-8")

    def fingerprints() -> dict[str, str]:
        return {procedure.id: fingerprint(procedure) for procedure in parse_file(doc).procedures}

    before = fingerprints()
    assert set(before) == {"a#create-a-bucket", "a#delete-a-bucket"}

    doc.write_text(DOC.replace("Intro text.", "Intro text, edited.\n\nAnd longer."), encoding="utf-8")
    assert fingerprints() == before  # moved down, unchanged

    doc.write_text(DOC.replace("**Delete**", "**Delete Bucket**"), encoding="utf-8")
    after = fingerprints()
    assert after["a#create-a-bucket"] == before["a#create-a-bucket"]
    assert after["a#delete-a-bucket"] != before["a#delete-a-bucket"]

    doc.write_text(DOC.replace("cn-hangzhou", "cn-beijing"), encoding="utf-8")
    assert all(fingerprints()[key] != before[key] for key in before)  # inherited defaults count


def test_fingerprint_accepts_the_lines_and_ignores_line_endings(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_bytes(DOC.replace("\n", "\r\n").encode("utf-8"))
    [procedure, _] = parse_file(doc).procedures
    assert fingerprint(procedure) == fingerprint(procedure, DOC.split("\n"))
