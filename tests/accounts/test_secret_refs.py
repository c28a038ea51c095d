"""Secret references, masked values and scrubbing."""

from __future__ import annotations

import logging
import pickle
import sys

import pytest
from accounts_helpers import FakeKeyring, write_secret

from docverify.errors import UsageError
from docverify.lease import Account, ScrubFilter, Secret, scrub, secret_values
from docverify.lease.secret import MASK, SecretError, SecretRef, mask_id


@pytest.fixture()
def fake_keyring(monkeypatch):
    ring = FakeKeyring()
    monkeypatch.setitem(sys.modules, "keyring", ring)
    return ring


def test_env_reference_resolves_and_is_masked():
    secret = SecretRef.parse("env:CI_PW").resolve({"CI_PW": "s3cr3t-pw"}, what="password of ci")
    assert secret.reveal() == "s3cr3t-pw"
    assert "s3cr3t-pw" not in repr(secret) and "s3cr3t-pw" not in str(secret)
    assert repr(secret) == "Secret('env:CI_PW')" and str(secret) == MASK
    assert "s3cr3t-pw" in secret_values()


def test_missing_env_variable_names_it_and_what_it_is_for():
    with pytest.raises(SecretError) as info:
        SecretRef.parse("env:NOPE_PW").resolve({}, what="password of account ci-1")
    assert "password of account ci-1" in str(info.value) and "NOPE_PW is not set" in str(info.value)


@pytest.mark.parametrize("text", ["hunter2-literal", "LTAI5tQ9vRbexample", "abc:def/ghi", "vault:secret/ci"])
def test_a_literal_is_refused_without_repeating_it(text):
    with pytest.raises(ValueError) as info:
        SecretRef.parse(text)
    assert text not in str(info.value) and text.split(":")[0] not in str(info.value)
    assert "literal secret" in str(info.value) and "env:VAR" in str(info.value)


def test_file_reference_needs_mode_0600(tmp_path):
    loose = write_secret(tmp_path / "pw", "file-secret-1", mode=0o644)
    with pytest.raises(SecretError) as info:
        SecretRef.parse("file:pw", base=tmp_path).resolve()
    assert "mode 0644" in str(info.value) and f"chmod 600 {loose}" in str(info.value)
    loose.chmod(0o600)
    assert SecretRef.parse("file:pw", base=tmp_path).resolve().reveal() == "file-secret-1"


def test_file_reference_missing_and_empty(tmp_path):
    with pytest.raises(SecretError, match="does not exist"):
        SecretRef.parse("file:absent", base=tmp_path).resolve()
    write_secret(tmp_path / "empty", "")
    with pytest.raises(SecretError, match="is empty"):
        SecretRef.parse("file:empty", base=tmp_path).resolve()


def test_file_store_is_atomic_and_private(tmp_path):
    ref = SecretRef.parse("file:keys/ci.secret", base=tmp_path)
    ref.store("rotated-value-1")
    assert (tmp_path / "keys/ci.secret").stat().st_mode & 0o777 == 0o600
    assert ref.resolve().reveal() == "rotated-value-1"
    assert list((tmp_path / "keys").iterdir()) == [tmp_path / "keys/ci.secret"]  # no temp file left


def test_keyring_reference_reads_and_writes(fake_keyring):
    fake_keyring.store[("docverify", "ci-1")] = "ring-secret-1"
    ref = SecretRef.parse("keyring:docverify/ci-1")
    assert ref.resolve().reveal() == "ring-secret-1"
    ref.store("ring-secret-2")
    assert fake_keyring.store[("docverify", "ci-1")] == "ring-secret-2"
    with pytest.raises(SecretError, match="keyring set docverify other"):
        SecretRef.parse("keyring:docverify/other").resolve()


def test_keyring_not_installed_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "keyring", None)  # import keyring -> ImportError
    with pytest.raises(UsageError) as info:
        SecretRef.parse("keyring:docverify/ci-1").resolve(what="password of ci-1")
    assert "pip install keyring" in str(info.value)


def test_env_and_builtin_are_not_writable():
    assert "environment variable" in SecretRef.parse("env:X").why_not_writable()
    assert SecretRef.parse("file:x").why_not_writable() is None
    with pytest.raises(SecretError, match="cannot store"):
        SecretRef.parse("env:X").store("new")


def test_account_repr_masks_every_secret():
    account = Account("ci", "aliyun", login_user="docs@ci", password=Secret("Pa55word!x", "env:PW"),
                      access_key_id=Secret("LTAIkeyid0001", "file:id"),
                      access_key_secret=Secret("keysecret0001xyz", "keyring:d/ci"))
    text = repr(account) + str(account)
    for value in ("Pa55word!x", "LTAIkeyid0001", "keysecret0001xyz"):
        assert value not in text
    assert account.endpoint_extra()["access_key_secret"] == "keysecret0001xyz"


def test_scrub_masks_every_resolved_secret_in_text():
    Secret("scrub-me-password-1", "env:A")
    Secret("scrub-me-password-12", "env:B")  # contains the first: masked whole
    line = "login with scrub-me-password-12 then scrub-me-password-1 and abc"
    assert scrub(line) == f"login with {MASK} then {MASK} and abc"


def test_scrubbing_filter_cleans_log_records(caplog):
    Secret("log-secret-value-9", "env:C")
    logger = logging.getLogger("docverify.test.scrub")
    logger.addFilter(ScrubFilter())
    with caplog.at_level(logging.INFO, logger="docverify.test.scrub"):
        logger.info("signing with %s", "log-secret-value-9")
    assert "log-secret-value-9" not in caplog.text and f"signing with {MASK}" in caplog.text


def test_a_secret_survives_pickling_and_stays_masked():
    secret = pickle.loads(pickle.dumps(Secret("pickled-secret-7", "env:D")))
    assert secret.reveal() == "pickled-secret-7" and str(secret) == MASK


def test_mask_id_keeps_only_the_ends():
    assert mask_id("LTAIsandboxALICEkey1") == "LTAI****key1"
    assert mask_id("short") == "****"
