"""Built-in plugin `none`: the provisioner that provisions nothing."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from docverify.hookspecs import hookimpl
from docverify.provision import Provisioned, Provisioner


class NoneProvisioner(Provisioner):
    """Creates nothing: procedures run against whatever already exists."""

    name = "none"

    @contextmanager
    def provision(self, task: Any, endpoint: Any) -> Iterator[Provisioned]:
        yield Provisioned()


@hookimpl
def register_provisioners(register):
    register(NoneProvisioner, default=True)
