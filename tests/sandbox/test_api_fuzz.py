"""The RPC API over raw HTTP, fuzzed: every malformed request (headers, query, body, the
request head itself) gets a 4xx with the API's error body (RequestId, Code, Message),
never a 500 and never a reset connection.

Requests go over a plain socket, so a test can send what no HTTP client would: bytes
that are not UTF-8, duplicate headers, a 200 KB request line. Valid ACS3 requests are
signed with the official Tea OpenAPI utilities, valid v2 ones with the sandbox client;
each fuzzed request starts from one and breaks it in one drawn way, so every example
must be refused.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import socket
import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from types import SimpleNamespace
from urllib.parse import quote, urlencode, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docverify_sandbox.client import SandboxClient
from docverify_sandbox.state import DEFAULT_ACCOUNTS

VPC = "2016-04-28"
ACCOUNT = DEFAULT_ACCOUNTS[0]
FUZZ = settings(max_examples=50, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def url(sandbox) -> str:
    """The sandbox's base URL (what a failing example prints, not the whole endpoint)."""
    return sandbox.url


# ------------------------------------------------------------------ raw HTTP


@dataclass
class Raw:
    """One HTTP/1.1 request as bytes on the wire; ``Content-Length`` is added for a body
    (or a POST) unless ``framed`` says the headers already frame it."""

    method: bytes
    target: bytes
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""
    version: bytes = b"HTTP/1.1"
    framed: bool = False

    def wire(self) -> bytes:
        lines = [self.method + b" " + self.target + b" " + self.version]
        lines += [name + b": " + value for name, value in self.headers]
        if not self.framed and (self.body or self.method == b"POST"):
            lines.append(b"Content-Length: %d" % len(self.body))
        return b"\r\n".join(lines) + b"\r\n\r\n" + self.body


@dataclass
class Answer:
    status: int
    content_type: str
    body: bytes

    def json(self) -> dict:
        return json.loads(self.body)


def exchange(url: str, request: Raw | bytes) -> Answer:
    """Send ``request`` whole, then read the answer; a reset connection fails the test."""
    parts = urlsplit(url)
    data = request.wire() if isinstance(request, Raw) else request
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(data)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return Answer(response.status, response.headers.get_content_type(), response.read())


def assert_api_error(answer: Answer, status: int | None = None, code: str | None = None) -> dict:
    """A 4xx with the API's error body; returns the body."""
    assert 400 <= answer.status < 500, (answer.status, answer.body[:300])
    if status is not None:
        assert answer.status == status, (answer.status, answer.body[:300])
    assert answer.content_type == "application/json", (answer.content_type, answer.body[:300])
    body = answer.json()
    for key in ("RequestId", "Code", "Message"):
        assert isinstance(body.get(key), str) and body[key], (key, body)
    if code is not None:
        assert body["Code"] == code, body
    return body


def host_of(url: str) -> bytes:
    return urlsplit(url).netloc.encode()


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def acs3_request(url: str, *, query: dict[str, str] | None = None, body: bytes = b"",
                 content_type: str | None = None, action: str = "DescribeVpcs") -> Raw:
    """A valid ACS3-HMAC-SHA256 request, signed as the official SDK signs one."""
    from alibabacloud_tea_openapi.utils import Utils

    query = {"RegionId": "cn-hangzhou"} if query is None else query
    payload = hashlib.sha256(body).hexdigest()
    headers = {"host": host_of(url).decode(), "x-acs-action": action, "x-acs-version": VPC, "x-acs-date": now(),
               "x-acs-signature-nonce": uuid.uuid4().hex, "x-acs-content-sha256": payload}
    if content_type:
        headers["content-type"] = content_type
    signed = SimpleNamespace(pathname="/", method="POST", query=query, headers=dict(headers))
    headers["authorization"] = Utils.get_authorization(signed, "ACS3-HMAC-SHA256", payload,
                                                       ACCOUNT.admin_access_key_id, ACCOUNT.admin_access_key_secret)
    target = "/?" + urlencode(query, quote_via=quote) if query else "/"
    return Raw(b"POST", target.encode(), [(k.encode(), v.encode()) for k, v in headers.items()], body)


def v2_params(action: str = "DescribeVpcs") -> dict[str, str]:
    client = SandboxClient("http://unused", ACCOUNT.admin_access_key_id, ACCOUNT.admin_access_key_secret)
    return client.signed_params(action, VPC, {"RegionId": "cn-hangzhou"}, method="GET")


def v2_request(url: str, params: dict[str, str] | None = None, raw_query: bytes | None = None) -> Raw:
    query = raw_query if raw_query is not None else urlencode(params or v2_params(), quote_via=quote).encode()
    return Raw(b"GET", b"/?" + query, [(b"Host", host_of(url))])


def header(raw: Raw, name: bytes) -> bytes:
    return next(v for n, v in raw.headers if n.lower() == name)


def with_header(raw: Raw, name: bytes, value: bytes) -> Raw:
    return replace(raw, headers=[(n, value if n.lower() == name else v) for n, v in raw.headers])


def without_header(raw: Raw, name: bytes) -> Raw:
    return replace(raw, headers=[(n, v) for n, v in raw.headers if n.lower() != name])


# ------------------------------------------------------------------ strategies

#: header values: any bytes but CR and LF (which would end the header), UTF-8 text,
#: and values that have broken parsers before
VALUES = st.one_of(
    st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"")),
    st.text(max_size=30).map(lambda t: t.encode("utf-8").replace(b"\r", b"").replace(b"\n", b"")),
    st.sampled_from([b"", b" ", b"\x00", b"\xe9", "é".encode(), b"\xff\xfe", b"=", b",", b";", b"%", b"%zz",
                     b"ACS3-HMAC-SHA256", b"ACS3-HMAC-SHA256 Credential=", b"0" * 64, "签名".encode()]),
)
#: headers the API reads
API_HEADERS = [b"authorization", b"x-acs-action", b"x-acs-version", b"x-acs-date", b"x-acs-signature-nonce",
               b"x-acs-content-sha256", b"content-type"]
#: headers that frame the exchange: never noise (the tests that mean to send them do)
FRAMING = {b"content-length", b"transfer-encoding", b"host", b"connection", b"upgrade", b"expect", b"te"}
NOISE_NAMES = st.one_of(
    st.from_regex(rb"\A[a-z][a-z0-9-]{0,15}\Z").filter(lambda n: n not in FRAMING and not n.startswith(b"x-acs-")
                                                         and n not in API_HEADERS),
    st.sampled_from([b"bad name", b"\xe9t\xe9", b"x\x00y", b"(x)", b"User-Agent", b"Accept-Language"]),
)
NOISE = st.lists(st.tuples(NOISE_NAMES, VALUES), max_size=4)
CONTENT_TYPES = st.sampled_from([None, "application/x-www-form-urlencoded", "application/json",
                                 "application/json; charset=utf-8", "text/plain", "multipart/form-data; boundary=x",
                                 "application/x-www-form-urlencoded; charset=latin-1", "\u00e9/\u00e9"])
PARAM_TEXT = st.text(max_size=20)
JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                 max_size=3), max_leaves=8)

ACS3_BREAKS = st.one_of(
    st.tuples(st.just("signature"), VALUES),
    st.tuples(st.just("value"), st.sampled_from([b"x-acs-action", b"x-acs-version", b"x-acs-date",
                                                 b"x-acs-signature-nonce", b"x-acs-content-sha256", b"host"]), VALUES),
    st.tuples(st.just("drop"), st.sampled_from(API_HEADERS[:-1] + [b"host"])),
    st.tuples(st.just("repeat"), st.sampled_from(API_HEADERS), VALUES),
    st.tuples(st.just("authorization"), VALUES),
    st.tuples(st.just("body"), st.binary(min_size=1, max_size=60)),
)


def break_acs3(raw: Raw, how: tuple) -> Raw:
    kind = how[0]
    if kind == "signature":
        auth = header(raw, b"authorization")
        head, _, sig = auth.rpartition(b"Signature=")
        value = how[1] if how[1] != sig else b"x" + how[1]
        return with_header(raw, b"authorization", head + b"Signature=" + value)
    if kind == "value":
        old = header(raw, how[1])
        value = how[2] if how[2].strip(b" \t") != old else old + b"x"
        return with_header(raw, how[1], value)
    if kind == "drop":
        return without_header(raw, how[1])
    if kind == "repeat":  # twice at least, whether or not the request has it
        given = [(how[1], how[2])] if any(n == how[1] for n, _ in raw.headers) else [(how[1], how[2])] * 2
        return replace(raw, headers=raw.headers + given)
    if kind == "authorization":
        return with_header(raw, b"authorization", how[1])
    return replace(raw, body=how[1])  # a body x-acs-content-sha256 does not sign


QUERY_BREAKS = st.one_of(
    st.tuples(st.just("signature"), PARAM_TEXT),
    st.tuples(st.just("drop"), st.sampled_from(["Signature", "AccessKeyId", "Timestamp", "SignatureNonce",
                                                "Action", "Version", "RegionId"])),
    st.tuples(st.just("extra"), PARAM_TEXT, PARAM_TEXT),
    st.tuples(st.just("raw"), st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30)),
    st.tuples(st.just("escape"), st.sampled_from(["%", "%z", "%zz", "%ff", "%C3", "%C3%28", "%ED%A0%80", "%00"])),
)


def break_query(params: dict[str, str], how: tuple) -> bytes:
    kind = how[0]
    params = dict(params)
    tail = b""
    if kind == "signature":
        params["Signature"] = how[1] if how[1] != params["Signature"] else how[1] + "x"
    elif kind == "drop":
        del params[how[1]]
    elif kind == "extra":
        params["Fuzz" + how[1]] = how[2]
    elif kind == "raw":
        tail = b"&Fuzz" + how[1].encode()
    else:  # a percent-escape that is malformed or not UTF-8, in the signature
        tail = b"&Signature=" + how[1].encode()
        del params["Signature"]
    return urlencode(params, quote_via=quote).encode() + tail


# ------------------------------------------------------------------ properties


def test_the_unbroken_requests_are_accepted(url):
    """The fuzzed requests start from these: each broken one fails only for its break."""
    assert exchange(url, acs3_request(url)).status == 200
    assert exchange(url, v2_request(url)).status == 200
    body = json.dumps({"RegionId": "cn-hangzhou", "PageSize": 10}).encode()
    answer = exchange(url, acs3_request(url, query={}, body=body, content_type="application/json"))
    assert answer.status == 200 and answer.json()["Vpcs"]["Vpc"]


@FUZZ
@given(how=ACS3_BREAKS, noise=NOISE)
def test_broken_acs3_headers_get_an_api_error(url, how, noise):
    raw = break_acs3(acs3_request(url), how)
    assert_api_error(exchange(url, replace(raw, headers=raw.headers + noise)))


@FUZZ
@given(how=QUERY_BREAKS, noise=NOISE)
def test_broken_v2_queries_get_an_api_error(url, how, noise):
    raw = v2_request(url, raw_query=break_query(v2_params(), how))
    assert_api_error(exchange(url, replace(raw, headers=raw.headers + noise)))


@FUZZ
@given(body=st.one_of(st.binary(max_size=200),
                      st.dictionaries(PARAM_TEXT, PARAM_TEXT, max_size=5).map(
                          lambda d: urlencode(d, quote_via=quote).encode()),
                      JSONISH.map(lambda v: json.dumps(v).encode()),
                      st.sampled_from([b"{", b"[" * 5000, b'{"Action": "\\ud800"}', b"Action=%E9", b"%%%",
                                       b"\xff\xfe=x", b"Action=DescribeVpcs&Version=" + VPC.encode()])),
       content_type=CONTENT_TYPES, signed=st.booleans())
def test_malformed_bodies_get_an_api_error(url, body, content_type, signed):
    """A POST body of any shape, unsigned or after a signed v2 form."""
    if signed:
        body = urlencode(v2_params(), quote_via=quote).encode() + b"&" + body
    headers = [(b"Host", host_of(url))]
    if content_type is not None:
        headers.append((b"Content-Type", content_type.encode("utf-8")))
    assert_api_error(exchange(url, Raw(b"POST", b"/", headers, body)))


@FUZZ
@given(method=st.one_of(st.sampled_from([b"GET", b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"get"]),
                        st.binary(min_size=1, max_size=8).filter(lambda b: not set(b) & set(b" \r\n")
                                                                 and b != b"HEAD")),
       query=st.one_of(st.none(), st.binary(max_size=80).filter(lambda b: not set(b) & set(b" \r\n#"))),
       version=st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2", b"HTTP/9.9", b"HTTPS/1.1", b"http/1.1", b""]),
       noise=NOISE)
def test_malformed_request_heads_get_an_api_error(url, method, query, version, noise):
    """Any method (but HEAD, whose answer has no body to check), query bytes and version at
    ``/``: never a 5xx; an error is the API's. (A GET without an Action is the console's
    home, a redirect.)"""
    target = b"/" if query is None else b"/?" + query
    raw = Raw(method, target, [(b"Host", host_of(url)), *noise], version=version, framed=True)
    answer = exchange(url, raw)
    assert answer.status < 500, (answer.status, answer.body[:300])
    if answer.status >= 400:
        assert_api_error(answer)


# ------------------------------------------------------------------ reported cases (issue 18)


def test_non_ascii_acs3_signature_is_a_mismatch_not_a_500(url):
    """compare_digest raised TypeError on a str with non-ASCII characters: a 500."""
    raw = acs3_request(url)
    for sig in ("é".encode(), b"\xe9\xff", "签名".encode()):
        broken = break_acs3(raw, ("signature", sig))
        assert_api_error(exchange(url, broken), 400, "SignatureDoesNotMatch")


def test_non_ascii_v2_signature_is_a_mismatch_not_a_500(url):
    params = {**v2_params(), "Signature": "é"}
    assert_api_error(exchange(url, v2_request(url, params)), 400, "SignatureDoesNotMatch")


def test_200kb_request_line_gets_414_not_a_reset(url):
    raw = Raw(b"GET", b"/?Action=" + b"a" * 200_000, [(b"Host", host_of(url))])
    assert_api_error(exchange(url, raw), 414, "RequestURITooLong")


def test_request_line_limit_does_not_depend_on_how_tcp_cuts_it(url):
    """20 KB arrive whole and are over the limit all the same (h11 alone only refuses what
    it buffers while waiting for the rest)."""
    raw = Raw(b"GET", b"/?Action=" + b"a" * 20_000, [(b"Host", host_of(url))])
    assert_api_error(exchange(url, raw), 414, "RequestURITooLong")
    at_limit = Raw(b"GET", b"/?Action=" + b"a" * 12_000 + b"&Version=" + VPC.encode(), [(b"Host", host_of(url))])
    assert_api_error(exchange(url, at_limit), 400, "MissingParameter")


def test_oversize_headers_get_431(url):
    one_big = Raw(b"POST", b"/", [(b"Host", host_of(url)), (b"X-Big", b"b" * 200_000)])
    assert_api_error(exchange(url, one_big), 431, "RequestHeaderFieldsTooLarge")
    many = Raw(b"POST", b"/", [(b"Host", host_of(url))] + [(b"X-H%d" % i, b"v" * 200) for i in range(200)])
    assert_api_error(exchange(url, many), 431, "RequestHeaderFieldsTooLarge")


def test_oversize_body_gets_413_before_it_is_read(url):
    """A declared length over the limit is refused at once: the client need not send it."""
    declared = Raw(b"POST", b"/", [(b"Host", host_of(url)), (b"Content-Length", b"50000000")],
                   b"x" * 1000, framed=True)
    assert_api_error(exchange(url, declared), 413, "RequestEntityTooLarge")
    sent = Raw(b"POST", b"/", [(b"Host", host_of(url))], b"x" * (3 * 1024 * 1024))
    assert_api_error(exchange(url, sent), 413, "RequestEntityTooLarge")


def test_unreadable_http_gets_the_api_error_body(url):
    host = host_of(url)
    for wire in (b"\x00\x01\x02 hello\r\n\r\n",
                 b"GET /?Action=\xe9 HTTP/1.1\r\nHost: " + host + b"\r\n\r\n",
                 b"POST / HTTP/1.1\r\nHost: " + host + b"\r\nContent-Length: abc\r\n\r\n",
                 b"POST / HTTP/1.1\r\nHost: " + host + b"\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                 b"POST / HTTP/1.1\r\nHost: " + host + b"\r\nTransfer-Encoding: gzip\r\n\r\n",
                 b"GET /?Action=x HTTP/1.1\r\n\r\n"):
        assert_api_error(exchange(url, wire), 400, "BadRequest")


def test_malformed_parameters_and_headers_name_the_problem(url):
    host = [(b"Host", host_of(url))]
    cases = [
        (Raw(b"GET", b"/?Action=%zz&Version=%", host), "malformed percent-escape"),
        (Raw(b"GET", b"/?Action=%ff%fe&Version=" + VPC.encode(), host), "not valid UTF-8"),
        (Raw(b"POST", b"/", host + [(b"Content-Type", b"application/x-www-form-urlencoded")], b"Action=\xff"),
         "not valid UTF-8"),
        (Raw(b"POST", b"/", host + [(b"Content-Type", b"application/json")], b"{bad json"), "not valid JSON"),
        (Raw(b"POST", b"/", host + [(b"Content-Type", b"application/json")], b"[1, 2]"), "not a JSON object"),
        (Raw(b"POST", b"/", host + [(b"Authorization", b"ACS3-HMAC-SHA256 a=b"), (b"Authorization", b"x")]),
         "given more than once"),
    ]
    for raw, words in cases:
        body = assert_api_error(exchange(url, raw), 400, "InvalidParameter")
        assert words in body["Message"], body
    answer = exchange(url, Raw(b"PUT", b"/?Action=DescribeVpcs", host))
    assert_api_error(answer, 405, "UnsupportedHTTPMethod")
    missing_hash = without_header(acs3_request(url), b"x-acs-content-sha256")
    body = assert_api_error(exchange(url, missing_hash), 400, "MissingParameter")
    assert "x-acs-content-sha256" in body["Message"]


def test_the_server_answers_after_refusing(url):
    """A refused head leaves the server (and the next connection) as it was."""
    exchange(url, Raw(b"GET", b"/?Action=" + b"a" * 200_000, [(b"Host", host_of(url))]))
    assert exchange(url, acs3_request(url)).status == 200
