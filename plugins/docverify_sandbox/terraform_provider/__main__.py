"""``python -m docverify_sandbox.terraform_provider``: serve the provider to Terraform (go-plugin over gRPC).
Terraform starts it through the terraform plugin's launcher, which ends it when Terraform is gone."""

from __future__ import annotations

import os
import sys


def main() -> None:
    # pyvider logs every request at INFO; Terraform shows a plugin's stderr only with TF_LOG
    os.environ.setdefault("PYVIDER_LOG_LEVEL", "WARNING")
    os.environ.setdefault("PYVIDER_PROVIDER_NAME", "sandbox")
    os.environ.setdefault("SUPPORTED_PROTOCOL_VERSIONS", "6")
    from pyvider.cli.__main__ import main as pyvider_main
    from pyvider.hub import hub

    from docverify_sandbox.terraform_provider import register_components

    register_components(hub)
    # pyvider checks that Terraform started a binary named terraform-provider-*
    sys.argv = ["terraform-provider-sandbox", "provide", *sys.argv[1:]]
    pyvider_main()


if __name__ == "__main__":
    main()
