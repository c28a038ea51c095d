"""docverify.scrub.scrub_values: a plugin's own secrets, masked where it writes them."""

from __future__ import annotations

from docverify import scrub
from docverify.scrub import ASCII_MASK, MASK, scrub_values


def test_every_given_value_is_masked_and_none_is_registered():
    text = "key LTAIkey secret s3cr3t-value again LTAIkey"
    assert scrub_values(text, ("LTAIkey", "s3cr3t-value"), ASCII_MASK) == "key *** secret *** again ***"
    assert scrub_values(text, ["s3cr3t-value"]) == f"key LTAIkey secret {MASK} again LTAIkey"
    assert {"LTAIkey", "s3cr3t-value"}.isdisjoint(scrub.known())


def test_short_none_and_empty_values():
    assert scrub_values("a-b", ["a", None, ""], ASCII_MASK) == "***-b"  # no MIN_LENGTH: the caller chose them
    assert scrub_values("nothing to hide", [None, ""]) == "nothing to hide"
    assert scrub_values("", ["abcdef"]) == ""


def test_a_secret_containing_another_is_masked_whole():
    assert scrub_values("id=LTAIkey-and-more", ["LTAIkey", "LTAIkey-and-more"], ASCII_MASK) == "id=***"
