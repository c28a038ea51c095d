"""`--report junit`: one testcase per procedure, DRIFT/FAIL as failures."""

import xml.etree.ElementTree as ET

from report_samples import make_summary, sample_results

from docverify.check.verdict import Verdict
from docverify_reports.junit import JUnitReporter


def _suite(summary, tmp_path):
    [path] = JUnitReporter().run_finished(summary, tmp_path)
    assert path == tmp_path / "junit.xml"
    root = ET.parse(path).getroot()
    suites = root.findall("testsuite")
    assert len(suites) == 1 and suites[0].get("name") == "docverify"
    return suites[0]


def test_one_testcase_per_procedure_with_counts(summary, tmp_path):
    suite = _suite(summary, tmp_path)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "2", "2")
    assert suite.get("time") == "62.300"
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert list(cases) == [r.id for r in summary.results]
    drifted = cases["ecs#create-an-instance"]
    assert drifted.attrib == {
        "classname": "docs/ecs/create-instance.md", "name": "ecs#create-an-instance",
        "file": "docs/ecs/create-instance.md", "line": "5", "time": "31.500",
    }
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties["policy"] == "literal"


def test_verdicts_map_to_failures_and_errors(summary, tmp_path):
    cases = {case.get("name"): case for case in _suite(summary, tmp_path).findall("testcase")}
    assert cases["oss#create-a-bucket"].find("failure") is None
    assert cases["oss#create-a-bucket"].find("error") is None

    failure = cases["ecs#create-an-instance"].find("failure")
    assert failure.get("type") == "DRIFT" and failure.get("message") == "2 steps drifted"
    assert failure.text.splitlines() == [
        "docs/ecs/create-instance.md:14: step 3: label changed: doc: Create Instance; console: Create, ECS: instance",
        "now 100% (nearest: Create ECS Instance)",
        "docs/ecs/create-instance.md:16: step 4: element not found: doc: Next: Networking; "
        "console: <script>alert('x')</script>",
    ]
    assert cases["vpc#create-a-vpc"].find("failure").get("type") == "FAIL"
    assert "goal not reached" in cases["vpc#create-a-vpc"].find("failure").text

    error = cases["rds#create-an-instance"].find("error")
    assert error.get("type") == "ENV_ERROR" and "login failed: HTTP 502" in error.text
    assert cases["kms#create-a-key"].find("error").get("type") == "INCONCLUSIVE"
    assert cases["kms#create-a-key"].find("failure") is None


def test_control_characters_do_not_break_the_xml(tmp_path):
    result = sample_results()[2]
    result.reason = "console said \x1b[31mno\x1b[0m\x00"
    suite = _suite(make_summary([result]), tmp_path)
    failure = suite.find("testcase").find("failure")
    assert failure.get("message").startswith("console said ") and "no" in failure.get("message")
    assert result.verdict is Verdict.FAIL


def test_an_empty_run_is_valid_junit(tmp_path):
    suite = _suite(make_summary([]), tmp_path)
    assert suite.get("tests") == "0" and suite.findall("testcase") == []
