"""The sandbox's HTTP/1.1 connections: a request the server cannot read gets the API's error.

uvicorn's h11 protocol answers a request it cannot parse with a plain-text 400 and
closes the socket while the client may still be sending, so a client with a 200 KB
request line reads a reset connection instead of an answer. Here such a request gets
the Alibaba-style error body of the API, with the status that names the problem
(414 request line too long, 431 headers too large, 400 anything else), and the
connection closes only once the client has stopped sending (a lingering close).

The limits are checked on every request head, not only on one that arrives in
pieces: whether a 20 KB request line is accepted does not depend on how TCP cut it.
"""

from __future__ import annotations

import h11
from starlette.responses import JSONResponse
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol

from docverify_sandbox.errors import ApiError
from docverify_sandbox.rpc import error_body

MAX_REQUEST_LINE = 16 * 1024  #: bytes of the request line (method, path and query, version)
MAX_HEADERS = 32 * 1024  #: bytes of all header lines together
MAX_HEAD = MAX_REQUEST_LINE + MAX_HEADERS + 1024  #: what h11 buffers of a head before it gives up
LINGER_S = 2.0  #: how long a connection being closed still reads (and drops) what the client sends


class SandboxH11Connection(h11.Connection):
    """h11's server side, refusing a request head over the sandbox's limits, and
    keeping the error it raised for the answer."""

    error: h11.RemoteProtocolError | None = None

    def next_event(self):
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            self.error = exc
            if exc.error_status_hint == 431 and not line_fits(self.trailing_data[0]):
                # h11's "Receive buffer too long" names no part: here it is the request line
                self.error = h11.RemoteProtocolError("request line too long", error_status_hint=414)
            raise
        if isinstance(event, h11.Request):
            try:
                check_head(event)
            except h11.RemoteProtocolError as exc:
                self.error = exc
                raise
        return event


def check_head(request: h11.Request) -> None:
    """Raise :class:`h11.RemoteProtocolError` for a request line or headers over the limits."""
    line = len(request.method) + len(request.target) + len(b"HTTP/") + len(request.http_version) + 2
    if line > MAX_REQUEST_LINE:
        raise h11.RemoteProtocolError("request line too long", error_status_hint=414)
    if sum(len(name) + len(value) + 4 for name, value in request.headers) > MAX_HEADERS:
        raise h11.RemoteProtocolError("request headers too large", error_status_hint=431)


def line_fits(received: bytes) -> bool:
    """Whether the request line at the start of ``received`` ends within the limit."""
    end = received.find(b"\n", 0, MAX_REQUEST_LINE + 2)
    return end != -1 and len(received[:end].rstrip(b"\r")) <= MAX_REQUEST_LINE


def refusal(error: h11.RemoteProtocolError | None) -> ApiError:
    """The API error for a request h11 (or :func:`check_head`) refused."""
    status = error.error_status_hint if error is not None else 400
    if status == 414:
        return ApiError("RequestURITooLong", f"The request line is longer than {MAX_REQUEST_LINE} bytes.", 414)
    if status == 431:
        return ApiError("RequestHeaderFieldsTooLarge",
                        f"The request headers are larger than {MAX_HEADERS} bytes.", 431)
    # h11 hints 501 for a Transfer-Encoding other than chunked: still the client's request to fix
    why = str(error) if error is not None else "unreadable request"
    return ApiError("BadRequest", f"The request is not valid HTTP/1.1: {why}.", 400)


class SandboxH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the sandbox's limits, error bodies and lingering close."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.conn = SandboxH11Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        self.lingering = False

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = LingeringTransport(transport, self)  # the request cycles close through it

    def data_received(self, data: bytes) -> None:
        if self.lingering:  # answered and closing: drop what the client still sends
            return
        super().data_received(data)

    def send_400_response(self, msg: str) -> None:  # uvicorn calls it for every request h11 refuses
        if self.cycle is not None and not self.cycle.response_complete:
            if self.cycle.response_started:  # halfway through an answer: nothing better than closing
                self.transport.close()
                return
            # the app is still reading this request: it reads a disconnect and answers nobody
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        error = refusal(self.conn.error)
        answer = JSONResponse(error_body(error), status_code=error.status, headers={"connection": "close"})
        headers = [*self.server_state.default_headers, *answer.raw_headers]
        try:
            self.transport.write(self.conn.send(h11.Response(status_code=error.status, headers=headers,
                                                             reason=STATUS_PHRASES[error.status])))
            self.transport.write(self.conn.send(h11.Data(data=answer.body)))
            self.transport.write(self.conn.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:  # no answer fits where the exchange stands
            self.transport.close()
            return
        self.linger()

    def linger(self) -> None:
        """Close after the answer without resetting the connection: send FIN, keep
        reading until the client closes its side (uvicorn's ``eof_received`` then
        closes the transport) or ``LINGER_S`` has passed."""
        self.lingering = True
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)


class LingeringTransport:
    """The connection's transport as uvicorn's request cycle sees it: closing it while
    the client is still sending a body the app refused unread (413 on its declared
    length) lingers instead, so the client reads the answer, not a reset."""

    def __init__(self, transport, protocol: SandboxH11Protocol) -> None:
        self._transport = transport
        self._protocol = protocol

    def close(self) -> None:
        if not self._protocol.lingering and self._protocol.conn.their_state is h11.SEND_BODY:
            self._protocol.linger()
        else:
            self._transport.close()

    def __getattr__(self, name: str):
        return getattr(self._transport, name)
