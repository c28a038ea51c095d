"""docverify.scrub: secrets masked where a plugin writes them, in results, in a command line."""

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


def test_results_are_scrubbed_as_objects_every_string_at_every_depth():
    from docverify.check.verdict import Finding, FindingKind, Verdict
    from docverify.cost import Usage
    from docverify.report.trajectory import ProcedureResult, Turn

    secret = "sk-live-0123456789abcdef"
    scrub.register(secret)
    finding = Finding(FindingKind.LABEL_CHANGED, "docs/a.md", 3, "1", f"Key {secret}", "Key ••")
    result = ProcedureResult(id="a", title="t", path="docs/a.md", line=1, verdict=Verdict.DRIFT,
                             reason=f"typed {secret}", findings=[finding],
                             turns=[Turn(0, "1", {"kind": "fill", "value": secret}, f"fill Key = '{secret}'")],
                             context={"key": secret}, usage=Usage(calls=2))
    try:
        clean = scrub.scrub_object(result)
    finally:
        scrub.forget(secret)
    assert secret not in repr(clean) and secret in repr(result)  # a copy: the original is untouched
    assert clean.verdict is Verdict.DRIFT and clean.findings[0].kind is FindingKind.LABEL_CHANGED
    assert clean.turns[0].action["value"] == scrub.MASK and clean.usage.calls == 2
    assert clean.reason == f"typed {scrub.MASK}"


def test_a_command_line_is_written_down_without_its_secrets():
    from docverify.scrub import forget, register, scrub_argv

    register("registered-token-123")
    try:
        shown = scrub_argv(["bench", "run", "-O", "checker.actiontrail.access_key_secret=s3cr3t-value",
                            "-O", "policy.openai.api_key=sk-abc", "--api-key=xyz", "-O", "policy.hybrid.model=a=b",
                            "--label", "x registered-token-123", "-S", "max_steps=4", "-O", "x.password="])
    finally:
        forget("registered-token-123")
    assert shown == ["bench", "run", "-O", f"checker.actiontrail.access_key_secret={MASK}",
                     "-O", f"policy.openai.api_key={MASK}", f"--api-key={MASK}", "-O", "policy.hybrid.model=a=b",
                     "--label", f"x {MASK}", "-S", "max_steps=4", "-O", "x.password="]
