"""The backend family (docverify/run/backend.py): ``local`` is the default and what every
check runs through; the ``ray`` backend's checks that need no cluster (Ray missing, a
cluster that does not answer, its options without it), its fault-injection switch, and
what the terraform provisioner reclaims for a worker that died.

The ray backend on a real (local) Ray cluster, with the browser: tests/ray/."""

from __future__ import annotations

import json
import socket
import sys
import textwrap
from pathlib import Path

import fake_plugins
import pytest
from click.testing import CliRunner

from docverify.cli import cli
from docverify.cli.app import App
from docverify.errors import ExitCode
from docverify.plugins import load_plugins
from docverify_ray.backend import RayBackend, describe
from docverify_ray.worker import crashes

DOC = """\
    # Open the buckets

    <!-- docverify:
    id: buckets
    -->

    1. In the left-side navigation pane, click **Buckets**.
"""
FAKES = ["-O", "console.use=fake-console", "-O", "executor.use=fake-browser", "-O", "checker.use=fake-goal"]
CLEAN_ENV = {name: None for name in ("DOCVERIFY_CONSOLE", "DOCVERIFY_POLICY", "DOCVERIFY_EXECUTOR", "DOCVERIFY_CHECKER",
                                     "DOCVERIFY_CONFIG", "DOCVERIFY_JOBS", "DOCVERIFY_BACKEND", "RAY_ADDRESS")}


@pytest.fixture(autouse=True)
def site(monkeypatch):
    monkeypatch.setattr(fake_plugins, "SITE", {
        "/": ("Overview", [("link", "Buckets", "/done")]),
        "/done": ("Buckets", []),
    })


@pytest.fixture
def docs(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "buckets.md").write_text(textwrap.dedent(DOC), encoding="utf-8")
    return tmp_path / "docs"


def check(*args: str, env: dict[str, str | None] | None = None):
    plugins = load_plugins(extra=[fake_plugins])
    return CliRunner().invoke(cli, ["check", *args, *FAKES], obj=App(plugins=plugins), env={**CLEAN_ENV, **(env or {})})


def free_port() -> int:
    """A port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_local_is_the_default_backend_and_ray_is_installed():
    rows = json.loads(CliRunner().invoke(cli, ["plugins", "--json"]).stdout)
    backends = {row["name"]: row for row in rows if row["family"] == "backends"}
    assert set(backends) == {"local", "ray"}
    assert backends["local"]["default"] and not backends["ray"]["default"]
    assert backends["ray"]["config_table"] == "backend.ray"
    assert {option["name"] for option in backends["ray"]["options"]} >= {"address", "workers"}


def test_the_local_backend_runs_a_check(docs):
    result = check("docs", "--no-store", "--backend", "local")
    assert result.exit_code == ExitCode.OK, result.output
    assert "PASS" in result.output


def test_an_unknown_backend_lists_the_installed_ones(docs):
    result = check("docs", "--no-store", "--backend", "rayy")
    assert result.exit_code == ExitCode.PLUGIN
    assert "unknown backend 'rayy'" in result.output and "local, ray" in result.output


def test_ray_options_need_the_ray_backend(docs):
    result = check("docs", "--no-store", "--ray-workers", "2")
    assert result.exit_code == ExitCode.USAGE
    assert "--ray-workers: only with --backend ray" in result.output


def test_without_ray_the_ray_backend_says_what_to_install(docs, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where it is not installed
    result = check("docs", "--no-store", "--backend", "ray")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "the ray backend needs Ray" in result.output
    assert "pip install 'docverify[ray]'" in result.output
    assert "Traceback" not in result.output and "PASS" not in result.output  # nothing ran


def test_a_run_that_cannot_prepare_is_one_line_with_the_results_store_too(docs, monkeypatch):
    """Preparing fails before the run is in the store: the store is closed, not asked to
    finish a run it never started (that was an internal error, exit 70)."""
    monkeypatch.setitem(sys.modules, "ray", None)
    result = check("docs", "--backend", "ray")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "pip install 'docverify[ray]'" in result.output and "internal error" not in result.output
    again = check("docs", "--resume")  # the store is usable: the next run goes on as usual
    assert again.exit_code == ExitCode.OK, again.output


def test_a_cluster_that_does_not_answer_is_one_line_before_anything_runs(docs):
    pytest.importorskip("ray", reason="the address is checked once Ray imports: pip install 'docverify[ray]'")
    address = f"127.0.0.1:{free_port()}"
    result = check("docs", "--no-store", "--backend", "ray", "--ray-address", address)
    assert result.exit_code == ExitCode.ENVIRONMENT, result.output
    assert f"cannot reach the Ray cluster at {address} (--ray-address)" in result.output
    assert "Traceback" not in result.output and "PASS" not in result.output
    from_env = check("docs", "--no-store", "--backend", "ray", env={"RAY_ADDRESS": address})
    assert from_env.exit_code == ExitCode.ENVIRONMENT
    assert f"cannot reach the Ray cluster at {address} (RAY_ADDRESS)" in from_env.output
    nonsense = check("docs", "--no-store", "--backend", "ray", "--ray-address", "nowhere")
    assert nonsense.exit_code == ExitCode.USAGE and "not a Ray address" in nonsense.output


def test_the_ray_backend_defaults_to_jobs_workers_and_reads_ray_address(monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert RayBackend().address() == "10.0.0.1:6379"
    assert RayBackend(RayBackend.Options(address="head:6379")).address() == "head:6379"
    monkeypatch.delenv("RAY_ADDRESS")
    assert RayBackend().address() is None  # a local Ray for the run
    assert RayBackend().options.workers is None  # --jobs


@pytest.mark.parametrize("spec, task, attempt, expected", [
    ("kms", "kms", 1, True), ("kms", "kms", 2, True), ("kms@1", "kms", 1, True), ("kms@1", "kms", 2, False),
    ("vpc, kms@2", "kms", 2, True), ("vpc", "kms", 1, False), (None, "kms", 1, False), ("kms@x", "kms", 1, False),
])
def test_the_crash_switch_names_procedures_and_attempts(spec, task, attempt, expected):
    assert crashes(spec, task, attempt) is expected


def test_a_dead_worker_is_said_in_one_line():
    ray_says = ("The actor died unexpectedly before finishing this task.\n\tclass_name: ProcedureWorker\n"
                "\tpid: 4242\nThe actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR "
                "Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. Some "
                "common causes include: (1) the process was killed by the OOM killer")
    assert describe(RuntimeError(ray_says)) == "Worker unexpectedly exits with a connection error code 2"
    assert describe(RuntimeError("one line\nmore")) == "one line"


def test_terraform_reclaims_only_the_dead_procedures_stacks(tmp_path, monkeypatch):
    """A worker that died took its embedded sandbox with it: the stacks it applied there
    are forgotten (their folders removed); another procedure's stack stays."""
    from docverify_terraform.engine import SANDBOX_URL_ENV, Ledger
    from docverify_terraform.provisioner import TerraformProvisioner

    monkeypatch.chdir(tmp_path)
    provisioner = TerraformProvisioner()
    ledger = Ledger(provisioner.options.state_dir)
    gone = f"http://127.0.0.1:{free_port()}/"
    for task in ("kms-create-key", "vpc-create-vswitch"):
        workdir = Path(provisioner.options.work_dir) / f"{task}-abc123"
        workdir.mkdir(parents=True)
        (workdir / "main.tf").write_text("# rendered\n")
        (ledger.dir / f"{task}-abc123.json").parent.mkdir(parents=True, exist_ok=True)
        (ledger.dir / f"{task}-abc123.json").write_text(json.dumps({
            "id": f"{task}-abc123", "workdir": str(workdir), "recorded": "2026-01-01T00:00:00Z", "binary": "terraform",
            "env": {SANDBOX_URL_ENV: gone}, "labels": {"task": task, "provider": "sandbox", "access_key_id": "LTAI"}}))
    done = provisioner.reclaim("kms-create-key")
    assert done == [f"stack kms-create-key-abc123 forgotten: the sandbox that held it ({gone}) is gone"]
    assert [entry.id for entry in ledger.entries()] == ["vpc-create-vswitch-abc123"]
    assert not (tmp_path / provisioner.options.work_dir / "kms-create-key-abc123").exists()
    assert (tmp_path / provisioner.options.work_dir / "vpc-create-vswitch-abc123").is_dir()
    assert provisioner.reclaim("ram-create-user") == []


def test_ray_workers_tag_what_they_provision_with_the_drivers_run(tmp_path):
    from types import SimpleNamespace

    from docverify.config import load_config
    from docverify.run.check import CheckOptions, CheckRun, instances
    from docverify_ray.backend import worker_spec

    config = load_config(cwd=tmp_path, environ={}, overrides={"provisioner.use": "terraform"})
    run = CheckRun(config, load_plugins(), CheckOptions(output=tmp_path / "out"), [])
    work = SimpleNamespace(config=config, stages=run.stages, console=run.console, limits=run.options.limits,
                           artifacts=tmp_path / "artifacts", output=tmp_path / "out", run_id=run.run_id)
    spec = worker_spec(work)
    assert spec.run_id == run.run_id
    provisioner = instances(spec.config(), load_plugins(), "provisioner", "provisioners", [spec.provisioner])[0]
    assert provisioner.run_id != run.run_id  # what a worker builds: its own id, until it joins the run
    provisioner.join_run(spec.run_id)
    assert provisioner.run_id == run.run_id


def test_a_worker_elsewhere_writes_its_artifacts_apart_and_sends_them_back(tmp_path):
    """ArtifactsFolder: on the driver's node, the run's folders; on another node, a private
    folder laid out as the run's output, emptied into Finished.files after each procedure,
    which receive() writes where the reports look (nothing outside the run's folder)."""
    from docverify_ray.worker import ArtifactsFolder, WorkerSpec, receive

    out = tmp_path / "out"
    spec = WorkerSpec(settings={}, config_file=None, origins={}, cwd=str(tmp_path), console="sandbox",
                      provisioner="none", executor="playwright", policy="literal", checkers=[], limits=None,
                      artifacts=str(out / "artifacts"), output=str(out), driver_node="node-a")
    here = ArtifactsFolder(spec, "node-a")
    assert (here.artifacts, here.output, here.take("t")) == (out / "artifacts", out, {})

    away = ArtifactsFolder(spec, "node-b")
    try:
        assert away.artifacts.parent == away.output != out
        (away.artifacts / "t").mkdir(parents=True)
        (away.artifacts / "t" / "turn-000.jpg").write_bytes(b"jpeg")
        (away.artifacts / "t.trace.zip").write_bytes(b"zip")
        files = away.take("t")
        assert files == {"artifacts/t/turn-000.jpg": b"jpeg", "artifacts/t.trace.zip": b"zip"}
        assert not list(away.artifacts.rglob("*.jpg"))  # sent, not kept
        receive({**files, "../escape.txt": b"no"}, out)
        assert (out / "artifacts" / "t" / "turn-000.jpg").read_bytes() == b"jpeg"
        assert not (tmp_path / "escape.txt").exists()
    finally:
        away.close()
    assert not away.root.exists()
    forced = ArtifactsFolder(WorkerSpec(**{**spec.__dict__, "ship": True}), "node-a")
    assert forced.root is not None
    forced.close()
