import pytest

from docverify.check.verdict import Finding, FindingKind, Verdict, decide, exit_code
from docverify.errors import ExitCode


def _finding(kind):
    return Finding(kind, "docs/a.md", 12, "3", "Create Instance", "Create ECS Instance", ["Create ECS Instance"])


@pytest.mark.parametrize(
    ("findings", "goal", "env", "expected"),
    [
        ([], True, None, Verdict.PASS),
        ([], False, None, Verdict.FAIL),
        ([], None, None, Verdict.INCONCLUSIVE),
        ([FindingKind.LABEL_CHANGED], True, None, Verdict.DRIFT),  # goal reached by another path: still drift
        ([FindingKind.ELEMENT_NOT_FOUND], False, None, Verdict.DRIFT),
        ([FindingKind.NOT_VERIFIABLE], True, None, Verdict.PASS),  # not literal is not a defect
        ([FindingKind.ELEMENT_NOT_FOUND], False, "console unreachable", Verdict.ENV_ERROR),
    ],
)
def test_decide(findings, goal, env, expected):
    assert decide([_finding(kind) for kind in findings], goal_reached=goal, environment_error=env) is expected


def test_finding_message_names_doc_and_console():
    message = _finding(FindingKind.LABEL_CHANGED).message
    assert message == (
        "step 3: label changed: doc: Create Instance; console: Create ECS Instance (nearest: Create ECS Instance)"
    )
    assert _finding(FindingKind.LABEL_CHANGED).to_dict()["kind"] == "label_changed"


def test_exit_codes():
    assert exit_code([Verdict.PASS]) is ExitCode.OK
    assert exit_code([Verdict.PASS, Verdict.DRIFT, Verdict.ENV_ERROR]) is ExitCode.DEFECTS
    assert exit_code([Verdict.PASS, Verdict.INCONCLUSIVE]) is ExitCode.ENVIRONMENT
    assert exit_code([Verdict.DRIFT, Verdict.ENV_ERROR], fail_on=["env"]) is ExitCode.ENVIRONMENT
    assert exit_code([Verdict.DRIFT], fail_on=["fail"]) is ExitCode.OK
