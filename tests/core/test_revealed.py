"""Secrets a console reveals: the recognisers, the response watch and the trace scrubber,
without a browser (tests/check/test_revealed_secrets.py runs them in one)."""

from __future__ import annotations

import asyncio
import json
import secrets as random
import zipfile

import pytest

from docverify import scrub as registry
from docverify.execute import revealed
from docverify_playwright.reveal import RevealedSecrets
from docverify_playwright.trace import frames_to_drop, scrub_trace

PEM = ("-----BEGIN RSA PRIVATE KEY-----\n"
       "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
       "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
       "-----END RSA PRIVATE KEY-----")


def token(n: int = 30) -> str:
    """A fresh AccessKey-secret-shaped value (letters of both cases and digits)."""
    return "Ab1" + random.token_hex(n)[: n - 6] + "zY9"


@pytest.fixture(autouse=True)
def own_registry():
    """What a test registers is forgotten after it (the registry is process-wide)."""
    before = registry.known()
    yield
    registry.forget(*(registry.known() - before))


# -- what counts as a secret ------------------------------------------------------------


@pytest.mark.parametrize("key", ["AccessKeySecret", "SecretAccessKey", "Password", "AccountPassword",
                                 "PrivateKeyBody", "private_key", "client_secret", "SecurityToken"])
def test_secret_keys(key):
    assert revealed.is_secret_key(key)


@pytest.mark.parametrize("key", ["AccessKeyId", "NextToken", "ClientToken", "PasswordResetRequired", "PublicKeyBody",
                                 "SecretId", "KeyPairFingerPrint", "RequestId"])
def test_keys_that_are_not_secrets(key):
    assert not revealed.is_secret_key(key)


@pytest.mark.parametrize("label", ["AccessKey Secret", "AccessKeySecret", "AccessKey Secret：", "Secret Access Key",
                                   "Password", "New Password *", "Logon Password:", "Private Key", "私钥", "密码",
                                   "登录密码", "AccessKey Secret", "密钥"])
def test_secret_labels(label):
    assert revealed.is_secret_label(label)


@pytest.mark.parametrize("label", ["AccessKey ID", "Password Reset", "Key Pair Name", "密钥对名称", "Public Key",
                                   "Secret ID", "Password Strength Requirements for RAM users", ""])
def test_labels_that_are_not_secrets(label):
    assert not revealed.is_secret_label(label)


@pytest.mark.parametrize("value", ["qdZ6J6afU1zT0YQOaNF03vpUuT3em6", "Docverify-Passw0rd", "0123456789abcdef0123", PEM])
def test_values_that_look_like_secrets(value):
    assert revealed.looks_like_secret(value)


@pytest.mark.parametrize("value", ["Disabled", "Not set", "********", "••••••••", "(hidden)", "abc12345", "Required",
                                   "Abc1"])
def test_values_that_do_not(value):
    assert not revealed.looks_like_secret(value)


# -- recognisers --------------------------------------------------------------------------


def test_secrets_in_api_responses():
    ali, aws, key = token(), token(40), token()
    assert revealed.in_json({"RequestId": "6F3A-11", "AccessKey": {
        "AccessKeyId": "LTAI5tQ7exampleKeyId", "AccessKeySecret": ali, "Status": "Active"}}) == [ali]
    assert revealed.in_json({"CreateAccessKeyResponse": {"CreateAccessKeyResult": {"AccessKey": {
        "UserName": "Bob", "AccessKeyId": "AKIAIOSFODNN7EXAMPLE", "SecretAccessKey": aws}}}}) == [aws]
    assert revealed.in_json({"KeyPairName": "docs", "PrivateKeyBody": PEM, "KeyPairFingerPrint": "89:f0"}) == [PEM]
    assert revealed.in_json({"users": [{"name": "a", "password": key}, {"name": "b", "password": key}]}) == [key]
    assert revealed.in_json({"files": [{"content": f"key:\n{PEM}\n"}]}) == [PEM]  # a PEM key under any name
    assert revealed.in_json({"NextToken": token(), "PasswordResetRequired": True, "Password": "********",
                             "TotalCount": 3}) == []


def test_secrets_on_pages():
    secret, password = token(), "Gen3rated-Passw0rd"
    assert revealed.in_labelled([("AccessKeyId", "LTAI5tQ7exampleKeyId"), ("AccessKeySecret", secret),
                                 ("Logon Password", password), ("Console Password", "Custom Logon Password"),
                                 ("Password", "••••••••"), ("Status", "Active")]) == [secret, password]
    assert revealed.in_labelled([("AccessKey Secret：", secret), ("密码", password)]) == [secret, password]
    assert revealed.in_text(f"Your key:\n{PEM}\nKeep it safe.") == [PEM]


def test_each_line_and_escaped_form_of_a_secret_is_registered():
    quoted = 'Ab1"quo\\ted<&>9z'
    revealed.remember([PEM, quoted])
    known = registry.known()
    assert "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun" in known  # a line, as a DOM node holds it
    assert json.dumps(PEM)[1:-1] in known  # \n-escaped, as a trace's JSON holds it
    assert {quoted, json.dumps(quoted)[1:-1], "Ab1&quot;quo\\ted&lt;&amp;&gt;9z"} <= known
    assert "-----BEGIN RSA PRIVATE KEY-----" not in known  # a header is no secret
    assert registry.scrub(json.dumps({"snapshot": f"- code: {PEM}"})).count(registry.MASK) >= 1
    assert "MIIEow" not in registry.scrub(json.dumps({"snapshot": f"- code: {PEM}"}))


# -- the response watch -------------------------------------------------------------------


class FakeResponse:
    def __init__(self, body: bytes, content_type: str = "application/json") -> None:
        self.headers = {"content-type": content_type}
        self._body = body

    async def body(self) -> bytes:
        return self._body


class FakeContext:
    """A browser context that replays responses to its ``response`` listeners."""

    def __init__(self) -> None:
        self.listeners = []

    def on(self, event: str, listener) -> None:
        assert event == "response"
        self.listeners.append(listener)

    def receive(self, response: FakeResponse) -> None:
        for listener in self.listeners:
            listener(response)


def test_json_responses_are_read_for_secrets():
    secret, in_html = token(), token()

    async def scenario():
        watch, context = RevealedSecrets(), FakeContext()
        watch.watch(context)
        context.receive(FakeResponse(json.dumps({"AccessKey": {"AccessKeySecret": secret}}).encode()))
        context.receive(FakeResponse(f"<dd>{in_html}</dd>".encode(), "text/html"))  # the page's part
        context.receive(FakeResponse(b"{not json"))
        await asyncio.wait(set(watch.reading), timeout=5)

    asyncio.run(scenario())
    assert secret in registry.known() and in_html not in registry.known()


# -- the trace ----------------------------------------------------------------------------


def trace_events(secret: str) -> list[dict]:
    """A trace's events: the page is seen without the secret at t=100 (an accessibility
    snapshot), with it at t=200 (a DOM snapshot) and t=300, without it again at t=400."""
    return [
        {"type": "screencast-frame", "pageId": "p", "file": "screencast/p-1.jpeg", "timestamp": 50},
        {"type": "before", "callId": "c1", "startTime": 90, "method": "ariaSnapshot", "params": {}},
        {"type": "after", "callId": "c1", "endTime": 100, "result": {"snapshot": "- button \"Create AccessKey\""}},
        {"type": "frame-snapshot", "snapshot": {"callId": "c2", "timestamp": 200, "html": ["DD", {}, secret]}},
        {"type": "screencast-frame", "pageId": "p", "file": "screencast/p-2.jpeg", "timestamp": 250},
        {"type": "before", "callId": "c3", "startTime": 290, "method": "ariaSnapshot", "params": {}},
        {"type": "after", "callId": "c3", "endTime": 300, "result": {"snapshot": f"- code: {secret}"}},
        {"type": "screencast-frame", "pageId": "p", "file": "screencast/p-3.jpeg", "timestamp": 350},
        {"type": "before", "callId": "c4", "startTime": 390, "method": "ariaSnapshot", "params": {}},
        {"type": "after", "callId": "c4", "endTime": 400, "result": {"snapshot": "- heading \"alice\""}},
        {"type": "screencast-frame", "pageId": "p", "file": "screencast/p-4.jpeg", "timestamp": 450},
    ]


def write_trace(path, secret: str) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("trace.trace", "\n".join(json.dumps(e) for e in trace_events(secret)) + "\n")
        archive.writestr("trace.network", json.dumps({"type": "resource-snapshot", "snapshot": {
            "response": {"content": {"_sha1": "abc.html"}}}}) + "\n")
        archive.writestr("resources/abc.html", f"<dl><dt>AccessKeySecret</dt><dd><code>{secret}</code></dd></dl>")
        archive.writestr("resources/font.woff2", b"\xff\xfe\x00" + secret.encode() + b"\x00\xff")
        for i in range(1, 5):
            archive.writestr(f"screencast/p-{i}.jpeg", b"\xff\xd8\xff\xe0 frame %d" % i)


def test_frames_shown_while_a_secret_may_be_on_screen_are_found():
    secret = token()
    revealed.remember([secret])
    events = "\n".join(json.dumps(e) for e in trace_events(secret)).encode()
    # p-1 comes before a page seen without it; p-2 and p-3 between sightings of it; p-4 after
    # the page is seen without it again (a frame between a sighting without and one with it
    # is dropped too: the secret may have appeared at any moment in between)
    assert frames_to_drop({"trace.trace": events}) == {"screencast/p-2.jpeg", "screencast/p-3.jpeg"}
    assert frames_to_drop({"trace.trace": events.replace(secret.encode(), b"x")}) == set()
    appearing = json.dumps({"type": "screencast-frame", "pageId": "p", "file": "screencast/p-5.jpeg", "timestamp": 150})
    assert "screencast/p-5.jpeg" in frames_to_drop({"trace.trace": events + b"\n" + appearing.encode()})


def test_a_saved_trace_keeps_no_secret(tmp_path):
    secret = token()
    revealed.remember([secret])
    trace = tmp_path / "p.trace.zip"
    write_trace(trace, secret)
    assert scrub_trace(trace) == 2
    with zipfile.ZipFile(trace) as archive:
        names = set(archive.namelist())
        assert names == {"trace.trace", "trace.network", "resources/abc.html", "resources/font.woff2",
                         "screencast/p-1.jpeg", "screencast/p-4.jpeg"}
        for name in names:
            assert secret.encode() not in archive.read(name), name
        events = [json.loads(line) for line in archive.read("trace.trace").splitlines()]
        assert [e["file"] for e in events if e["type"] == "screencast-frame"] == [
            "screencast/p-1.jpeg", "screencast/p-4.jpeg"]
        assert registry.MASK in archive.read("resources/abc.html").decode()
        assert len(archive.read("resources/font.woff2")) == len(secret) + 5  # binary stays whole
    assert not (tmp_path / "p.trace.zip.partial").exists()


def test_a_trace_that_cannot_be_scrubbed_is_deleted(tmp_path):
    revealed.remember([token()])
    trace = tmp_path / "broken.trace.zip"
    trace.write_bytes(b"not a zip")
    assert scrub_trace(trace) == 0
    assert not trace.exists()
