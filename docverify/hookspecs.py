"""Every hook docverify calls. Each is an empty typed function; its docstring is the contract.

A plugin is a module (named ``docverify_<name>``) listed in the ``docverify``
entry-point group. It implements some of these hooks with ``@hookimpl``::

    from docverify.hookspecs import hookimpl

    @hookimpl
    def register_policies(register):
        register(MyPolicy)

Each ``register_<family>`` hook receives a ``register`` callback
(:class:`docverify.registry.Register`); call it once per class the plugin
provides. The class must have a unique ``name`` within its family (see
:class:`docverify.registry.Plugin`). Register a reference rather than the class,
and its module is imported only when a run or command uses it::

    @hookimpl
    def register_policies(register):
        register("docverify_mine.policy:MyPolicy", name="mine")

``default=True`` makes the plugin its family's choice when ``<family>.use`` is not
configured (the core names no plugin; two plugins claiming one family's default is an
error when that default is needed). ``aliases=("old",)`` keeps a renamed plugin's former
names working, with a warning::

    register("docverify_reports.terminal:TerminalReporter", name="terminal", default=True,
             aliases=("console",))

Built-in plugins under ``plugins/`` register exactly like third-party ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from docverify.provision.plan import Planner, PlanRequest
    from docverify.registry import Register

PROJECT = "docverify"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_consoles(register: "Register") -> None:
    """Register console classes: where a console is, how to log in, its audit-log
    endpoint and its Terraform provider block (e.g. ``sandbox``; a console of the real
    cloud, such as ``aliyun``, sets ``Console.ram_endpoint``)."""


@hookspec
def register_provisioners(register: "Register") -> None:
    """Register provisioner classes: they make a task's Resource META exist before
    execution and tear it down afterwards (e.g. ``terraform``, ``none``)."""


@hookspec
def register_executors(register: "Register") -> None:
    """Register executor classes: browser lifecycle, observations, applying actions
    (e.g. ``playwright``)."""


@hookspec
def register_policies(register: "Register") -> None:
    """Register policy classes: given an observation, choose the next action
    (e.g. ``literal``, ``openai``, ``hybrid``)."""


@hookspec
def register_checkers(register: "Register") -> None:
    """Register checker classes: decide whether a procedure reached its goal
    (e.g. ``actiontrail``, ``judges``)."""


@hookspec
def register_reporters(register: "Register") -> None:
    """Register reporter classes: present results (e.g. ``terminal``, ``json``,
    ``junit``, ``github``, ``html``)."""


@hookspec
def register_engines(register: "Register") -> None:
    """Register model engine classes (:class:`docverify.engines.Engine`): what answers a
    model call, asked for by name by policies, judges and provisioners
    (:func:`docverify.engines.get_engine`; e.g. ``openai``, ``llamacpp``, ``vllm``)."""


@hookspec
def register_backends(register: "Register") -> None:
    """Register backend classes (:class:`docverify.run.backend.Backend`): where a run's
    procedures execute and how their results come back to it (e.g. ``local``, this
    process; ``ray``, workers of a Ray cluster)."""


@hookspec
def register_commands(register: "Register") -> None:
    """Register extra CLI commands (click commands or groups), e.g. ``cleanup`` or
    ``sandbox``. A command's name must not clash with a built-in command."""


@hookspec
def plan_provisioning(request: "PlanRequest") -> "Planner | None":
    """Add to ``docverify plan``: called once per run, after the procedures are
    selected and before any is analysed; return a :class:`~docverify.provision.plan.Planner`,
    whose ``plan(procedure, meta)`` is then called for each procedure with its
    Resource META and returns a :class:`~docverify.provision.plan.PlanSection`, or None
    when the plugin adds nothing. Nothing may be created. Raise a
    :class:`~docverify.errors.DocverifyError` for a bad request (an unknown
    ``--provider``): the run stops with that one error. Import heavy modules
    inside the planner, not in the plugin's top module."""
