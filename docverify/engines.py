"""Model engines: the contract every plugin that calls a model uses.

An engine answers a chat (a list of ``{"role", "content"}`` messages) with text that
should be JSON matching a schema, and says how many tokens it took (:class:`Engine`,
:class:`Completion`). Engines are a plugin family: the ``models`` plugin registers
``openai`` (any OpenAI-protocol endpoint), ``llamacpp`` and ``vllm``. A plugin asks
for one by name (:func:`get_engine`), never by importing another plugin, as the
policies, the judges and ResourceCoder do; :class:`EndpointOptions` are the options
of an OpenAI-protocol endpoint that every such plugin configures. The helpers below
are what model prompts share: the prompt templates (:func:`prompt_environment`), a
page shrunk to a token budget (:func:`compact_snapshot`), a screenshot attached
(:func:`with_image`) and JSON read back out of an answer (:func:`parse_json_object`).
"""

from __future__ import annotations

import base64
import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import jinja2
from pydantic import BaseModel
from pydantic import Field as Option

from docverify.errors import ConfigError
from docverify.registry import naming

#: How an engine can ask for structured output, most to least strict.
OUTPUT_MODES = ("json_schema", "tools", "json_object", "text")


@dataclass
class Completion:
    """One model answer."""

    text: str
    tokens_in: int
    tokens_out: int
    mode: str  #: how structure was enforced (one of OUTPUT_MODES, or "grammar")
    retries: int = 0  #: transport retries it took


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A conservative token estimate (about 3.5 characters a token, plus framing)."""
    chars = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(part.get("text", "")) + (1000 if part.get("type") == "image_url" else 0)
                         for part in content)
    return int(chars / 3.5) + 4 * len(messages) + 8


class Engine:
    """Base of the model engines (plugin family ``engines``): a chat in, JSON text out.

    Subclasses set ``name`` (``openai``, ``llamacpp``, ``vllm``) and build themselves
    from keyword arguments; :meth:`from_endpoint` builds one for an OpenAI-protocol
    endpoint where the engine can talk to one, :meth:`from_options` from a plugin's
    options that name the engine (the ``hybrid`` policy's ``engine``)."""

    name: ClassVar[str] = ""

    model: str = ""
    local: bool = False  #: runs on this machine (no per-token price unless configured)
    supports_images: bool = False
    #: longest free text the schema allows: grammar-constrained engines decode a long
    #: bound slowly (a 400-character bound made llama.cpp ~15x slower than 100)
    max_text: int = 400
    #: whether the schema is enforced while decoding (then refs and steps become enums)
    constrained: bool = False

    async def complete(self, messages: list[dict[str, Any]], schema: dict[str, Any], *, name: str,
                       max_tokens: int, temperature: float) -> Completion:
        raise NotImplementedError

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        return estimate_tokens(messages)

    def close(self) -> None:
        """Free what the engine holds (connections, model memory)."""

    @classmethod
    def from_endpoint(cls, options: "EndpointOptions") -> "Engine":
        """This engine for an OpenAI-protocol endpoint (``openai``); others cannot."""
        raise ConfigError(f"the {cls.name or cls.__name__} engine does not talk to an endpoint",
                          hint="use the openai engine for base_url/model options")

    @classmethod
    def from_options(cls, options: Any) -> "Engine":
        """This engine from a plugin's options: the fields of them it knows, by name
        (``model_path``, ``n_ctx``…); by default :meth:`from_endpoint`."""
        return cls.from_endpoint(options)

    @classmethod
    def summary(cls) -> str:
        """One line describing the engine: its docstring's first line."""
        doc = inspect.getdoc(cls) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""


class EndpointOptions(BaseModel):
    """An OpenAI-protocol endpoint: what every plugin that calls one configures."""

    base_url: str | None = Option(None, description="the endpoint, e.g. http://127.0.0.1:8000/v1; "
                                                      "default: OPENAI_BASE_URL, else api.openai.com")
    model: str = Option("gpt-4o-mini", description="model name as the endpoint knows it")
    api_key_env: str = Option("OPENAI_API_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                              description="the environment variable holding the API key (never the key itself)")
    output_mode: Literal["auto", "json_schema", "tools", "json_object", "text"] = Option(
        "auto", description="how to ask for JSON; auto falls back from json_schema to tools, json_object, text")
    timeout_s: float = Option(60.0, gt=0, description="per call")
    max_retries: int = Option(4, ge=0, le=20, description="retries on 429, 5xx, timeouts, connection errors")
    backoff_s: float = Option(1.0, ge=0, description="first retry delay (doubles each retry)")
    local: bool = Option(False, description="a server on this machine (no per-token price unless configured)")


def with_image(messages: list[dict[str, Any]], png: bytes) -> list[dict[str, Any]]:
    """``messages`` with a screenshot attached to the last user message (vision models)."""
    out = [dict(m) for m in messages]
    last = out[-1]
    url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    last["content"] = [{"type": "text", "text": last["content"]}, {"type": "image_url", "image_url": {"url": url}}]
    return out


def parse_json(text: str) -> Any:
    """The JSON value in a model's answer: the whole text, else the first ``{...}`` in it
    (models wrap JSON in prose or code fences)."""
    text = text.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            return json.loads(text[start:end + 1])
        raise


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model's answer; ValueError saying what is wrong, for the retry."""
    try:
        data = parse_json(text)
    except ValueError:  # json.JSONDecodeError is one
        raise ValueError("it is not JSON") from None
    if not isinstance(data, dict):
        raise ValueError("it is not a JSON object")
    return data


def prompt_environment(folder: str | Path | None, builtin: Path) -> jinja2.Environment:
    """Prompt templates from ``folder`` first (a user's overrides), then the built-in
    ones of the plugin asking (``builtin``)."""
    loaders: list[jinja2.BaseLoader] = []
    if folder:
        path = Path(folder).expanduser()
        if not path.is_dir():
            raise ConfigError(f"prompts_dir: no folder {path}", hint="point it at a folder of .j2 prompt templates")
        loaders.append(jinja2.FileSystemLoader(str(path)))
    loaders.append(jinja2.FileSystemLoader(str(builtin)))
    return jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=False, autoescape=False)


def get_engine(name: str) -> type[Engine]:
    """The engine class registered as ``name`` (``openai``, ``llamacpp``, ``vllm``);
    a PluginError listing the installed ones when there is none."""
    from docverify.plugins import installed_plugins

    return installed_plugins().get("engines", name)


#: An option naming a model engine: checked against the installed engines when the
#: configuration is read (policies, judges and ResourceCoder take ``engine = "..."``).
EngineName = Annotated[str, naming(get_engine)]
