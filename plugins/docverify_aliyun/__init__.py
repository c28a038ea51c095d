"""docverify's console of the real Alibaba Cloud (plugin ``aliyun``).

Only hook implementations live here; everything heavy is imported lazily.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_consoles(register):
    register("docverify_aliyun.console:AliyunConsole", name="aliyun")


@hookimpl
def register_commands(register):
    register("docverify_aliyun.cli:aliyun", name="aliyun")
