"""Built-in plugin ``models``: the model engines, model-driven policies and the judge ensemble.

Engines ``openai``, ``llamacpp`` and ``vllm`` (:mod:`docverify.engines`: any plugin asks
for one by name).

Policies ``openai`` (any OpenAI-protocol endpoint), ``llamacpp`` (a GGUF model in
process), ``vllm`` (GPU, in process) and ``hybrid`` (a following policy, ``literal``
by default, asked for by name, with a model as its delegate for the steps it cannot
follow); checker ``judges`` (two models that must agree). The model libraries are
imported only when one of them is used.
"""

from __future__ import annotations

from docverify.hookspecs import hookimpl


@hookimpl
def register_policies(register):
    for name, cls in (("openai", "OpenAIPolicy"), ("llamacpp", "LlamaCppPolicy"), ("vllm", "VLLMPolicy"),
                      ("hybrid", "HybridPolicy")):
        register(f"docverify_models.policies:{cls}", name=name)


@hookimpl
def register_engines(register):
    for name, cls in (("openai", "OpenAIBackend"), ("llamacpp", "LlamaCppBackend"), ("vllm", "VLLMBackend")):
        register(f"docverify_models.backends:{cls}", name=name)


@hookimpl
def register_checkers(register):
    register("docverify_models.judges:JudgesChecker", name="judges")
