"""A fake OpenAI-protocol server on loopback (real HTTP), scripted per test.

``FakeOpenAI(responder)`` serves ``POST /v1/chat/completions``; ``responder``
gets the request body (and the server, for its state) and returns a
:class:`Reply`: the answer text, or an HTTP error status, or a tool call.
Every request body is kept in :attr:`FakeOpenAI.requests`, so tests can read the
exact prompts the policy sent. ``reject`` lists structured-output modes the
"endpoint" does not support (it answers 400 naming ``response_format``/``tools``,
as real servers do).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    usage: tuple[int, int] | None = (100, 20)  #: prompt, completion tokens; None: no usage block


Responder = Callable[[dict[str, Any], "FakeOpenAI"], Reply]


class FakeOpenAI:
    def __init__(self, responder: Responder, *, reject: tuple[str, ...] = ()) -> None:
        self.responder = responder
        self.reject = set(reject)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake.lock:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if not self.path.endswith("/chat/completions"):
                    return self.send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                mode = fake.mode(body)
                if mode in fake.reject:
                    field_name = "tools" if mode == "tools" else "response_format"
                    return self.send(400, {"error": {"message": f"'{field_name}' of type {mode} is not supported",
                                                     "type": "invalid_request_error", "param": field_name}})
                reply = fake.responder(body, fake)
                if reply.status != 200:
                    return self.send(reply.status, {"error": {"message": reply.text or "error", "type": "server_error"}},
                                     reply.headers)
                message: dict[str, Any] = {"role": "assistant", "content": reply.text}
                if mode == "tools":
                    name = body["tools"][0]["function"]["name"]
                    message = {"role": "assistant", "content": None, "tool_calls": [{
                        "id": "call_1", "type": "function", "function": {"name": name, "arguments": reply.text}}]}
                answer: dict[str, Any] = {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                }
                if reply.usage is not None:
                    answer["usage"] = {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                                       "total_tokens": sum(reply.usage)}
                self.send(200, answer, reply.headers)

            def send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @staticmethod
    def mode(body: dict[str, Any]) -> str:
        if body.get("tools"):
            return "tools"
        return (body.get("response_format") or {}).get("type", "text")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- helpers for responders ---------------------------------------------------------------

PAGE = re.compile(r"<page>\n(.*?)\n</page>", re.S)
LINE = re.compile(r'^\s*-\s*(?P<role>[a-z]+)(?:\s+"(?P<name>(?:[^"\\]|\\.)*)")?.*?\[ref=(?P<ref>[a-z0-9]+)\]', re.M)


def last_user(body: dict[str, Any]) -> str:
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            content = message["content"]
            return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
    return ""


def first_user(body: dict[str, Any]) -> str:
    for message in body["messages"]:
        if message["role"] == "user":
            return message["content"] if isinstance(message["content"], str) else ""
    return ""


def page_of(body: dict[str, Any]) -> str:
    match = PAGE.search(first_user(body))
    return match.group(1) if match else ""


def ref_of(body: dict[str, Any], name: str, role: str | None = None) -> str | None:
    """The ref of the element called ``name`` (exact, then case-insensitive prefix) on the prompt's page."""
    elements = [(m["role"], (m["name"] or "").replace('\\"', '"'), m["ref"]) for m in LINE.finditer(page_of(body))]
    for match in (lambda n: n == name, lambda n: n.lower().startswith(name.lower())):
        for r, n, ref in elements:
            if match(n) and (role is None or r == role):
                return ref
    return None


def action(kind: str, **fields: Any) -> str:
    return json.dumps({"thought": fields.pop("thought", f"{kind} next"), "action": kind, **fields})
