"""Stage 3, provision: make a task's Resource META exist, and tear it down.

:mod:`~docverify.provision.meta` reads what a procedure needs (its Resource META);
:mod:`~docverify.provision.plan` is the contract of what ``docverify plan`` shows of
it; the provisioner family (below) creates it.

A provisioner's ``provision()`` is a context manager: entering it creates what
the procedure needs and yields the outputs (IDs, names) that flow into the task
context; leaving it, even on error or Ctrl-C, destroys what it created.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from docverify.cost import Metered, Usage
from docverify.registry import Plugin

if TYPE_CHECKING:
    from docverify.lease.account import Account


@dataclass
class Provisioned:
    """What a provisioner made: outputs by resource, for the task context."""

    outputs: dict[str, Any] = field(default_factory=dict)
    resources: list[str] = field(default_factory=list)  #: human-readable, for reports
    usage: Usage = field(default_factory=Usage)  #: model calls spent preparing it (ResourceCoder), for the bill


class PaidCount:
    """The paid resources a run has created so far, counted against its limit (the cost
    guard's ``--max-paid-resources``). One per run: every procedure's provisioning claims
    from it, in threads. A backend whose workers are processes of their own shares one
    with all of them (:meth:`Provisioner.count_paid_with`; the Ray backend's is held by
    an actor), so the limit is the run's, not each worker's."""

    def __init__(self) -> None:
        self._made: list[str] = []
        self._lock = threading.Lock()

    @property
    def made(self) -> list[str]:
        """What was counted, one line per resource ("address (procedure)")."""
        with self._lock:
            return list(self._made)

    def claim(self, wanted: Sequence[str], limit: int | None) -> int | None:
        """Count ``wanted`` unless that would take the run past ``limit`` (None: no limit).
        None when they were counted; else how many the run had made already (and nothing
        is counted)."""
        with self._lock:
            if limit is not None and len(self._made) + len(wanted) > limit:
                return len(self._made)
            self._made.extend(wanted)
            return None


class Provisioner(Metered, Plugin):
    """Base class of provisioner plugins. :attr:`meter` prices model calls (ResourceCoder)."""

    def provision(self, task: Any, endpoint: Any) -> AbstractContextManager[Provisioned]:
        """Create ``task``'s Resource META in the account ``endpoint`` signs in to.

        Runs in a worker thread (Terraform takes seconds; the other procedures go on)."""
        raise NotImplementedError

    def join_run(self, run_id: str) -> None:
        """The run (its id in the results store) this provisioner creates resources for,
        told before the first procedure: a provisioner that labels what it makes (the
        terraform one's ``docverify-run`` tag) labels it with this. Nothing by default."""

    def count_paid_with(self, count: PaidCount) -> None:
        """Count the paid resources this provisioner makes in ``count``, the run's, shared
        with the run's other workers (told before the first procedure by a backend whose
        workers are processes of their own). Nothing by default: a provisioner without a
        cost guard counts nothing."""

    def reclaim(self, task_id: str, account: Account | None = None) -> list[str]:
        """Destroy what provisioning for procedure ``task_id`` left behind when the
        process running it died mid-procedure (a backend's worker crashed: the exit of
        :meth:`provision` never ran). Called on the machine the procedure ran on, in the
        same working folder; ``account``: the pool's account it ran as, when it had one
        (its keys destroy what it made). Returns what was done, one line per resource
        or stack. Nothing by default: a provisioner that keeps no record of what it
        made (or made nothing) has nothing to reclaim."""
        return []
