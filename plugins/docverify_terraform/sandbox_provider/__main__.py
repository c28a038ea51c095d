"""``python -m docverify_terraform.sandbox_provider``: serve the provider to Terraform (go-plugin over gRPC),
for as long as the Terraform that started it lives (:mod:`docverify_terraform.lifeline`)."""

from __future__ import annotations

import os
import sys


def main() -> None:
    import signal

    from docverify_terraform.lifeline import end_with_parent

    # Terraform gone (kill -9): nobody will ever call this provider again; SIGTERM is
    # pyvider's "shut down" (it ignores SIGINT, as go-plugin does), and after 10 s it exits anyway
    end_with_parent(signal.SIGTERM, grace=10.0)
    # pyvider logs every request at INFO; Terraform shows a plugin's stderr only with TF_LOG
    os.environ.setdefault("PYVIDER_LOG_LEVEL", "WARNING")
    os.environ.setdefault("PYVIDER_PROVIDER_NAME", "sandbox")
    os.environ.setdefault("SUPPORTED_PROTOCOL_VERSIONS", "6")
    from pyvider.cli.__main__ import main as pyvider_main
    from pyvider.hub import hub

    from docverify_terraform.sandbox_provider import register_components

    register_components(hub)
    # pyvider checks that Terraform started a binary named terraform-provider-*
    sys.argv = ["terraform-provider-sandbox", "provide", *sys.argv[1:]]
    pyvider_main()


if __name__ == "__main__":
    main()
