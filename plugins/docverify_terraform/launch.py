"""``python -m docverify_terraform.launch MODULE ARGS...``: run a local Terraform
provider (:mod:`.local_providers`) for as long as the Terraform that started it lives.

Terraform gone (kill -9), nobody will ever call the provider again: it gets SIGTERM,
pyvider's "shut down" (it ignores SIGINT, as go-plugin does), and after 10 s it exits
anyway (:mod:`.lifeline`). Then ``MODULE`` runs as ``__main__`` with ``ARGS``.
"""

from __future__ import annotations

import runpy
import signal
import sys


def main() -> None:
    from docverify_terraform.lifeline import end_with_parent

    if len(sys.argv) < 2:
        sys.exit("usage: python -m docverify_terraform.launch MODULE [ARGS...]")
    module = sys.argv[1]
    end_with_parent(signal.SIGTERM, grace=10.0)
    sys.argv = [sys.argv[0], *sys.argv[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
