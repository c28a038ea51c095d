"""What plugins add to ``docverify plan``: the contract of the ``plan_provisioning`` hook.

``docverify plan`` shows each procedure's Resource META (:mod:`docverify.provision.meta`).
How that META would be made to exist is a provisioner plugin's business (the
``terraform`` plugin renders its Terraform): the command asks each plugin once per
run for a :class:`Planner` (:func:`docverify.hookspecs.plan_provisioning`), then
asks that planner for a :class:`PlanSection` per procedure, and shows it:
a column of the requirements table, files under the table, a key of the JSON.
Nothing is created.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from docverify.config import Config
    from docverify.parse.model import Procedure
    from docverify.provision.meta import MetaPlan


@dataclass(frozen=True)
class PlanRequest:
    """What ``docverify plan`` was asked: its configuration and options."""

    config: "Config"
    provider: str | None = None  #: ``--provider``; None: the planner's default
    templates: Path | None = None  #: ``--templates``: searched before the built-in ones
    region: str | None = None  #: ``--region``; None: each procedure's own
    suffix: str = "xxxxxx"  #: ``--suffix``: the name suffix previewed


@dataclass
class PlanSection:
    """One plugin's part of one procedure's plan."""

    name: str  #: the requirements table's column and the procedure's key in ``--json`` ("terraform")
    data: dict[str, Any]  #: the JSON under that key
    #: META type -> the table cell for requirements of that type ("alicloud_vpc.vpc_1")
    cells: dict[str, str] = field(default_factory=dict)
    #: file name -> text, shown under the table unless ``--no-terraform`` ("main.tf")
    files: dict[str, str] = field(default_factory=dict)


class Planner(Protocol):
    """A plugin's part of one ``docverify plan`` run."""

    #: run-wide facts ({"provider": "alicloud"}): top-level keys of ``--json``, and said
    #: in the closing line ("provider alicloud, suffix xxxxxx")
    facts: dict[str, str]

    def plan(self, procedure: "Procedure", meta: "MetaPlan") -> PlanSection:
        """This plugin's section for one procedure (also one that needs nothing)."""
        ...
