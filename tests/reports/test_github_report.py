"""`--report github`: annotations on doc lines and the job summary."""

import io

from report_samples import ECS_DOC, make_summary, sample_results, task_for

from docverify_reports.github import GithubReporter, blob_url, command, escape_data, escape_property, job_summary

EXPECTED = [
    "::error file=docs/ecs/create-instance.md,line=14,title=docverify label_changed::"
    "step 3: label changed: doc: Create Instance; console: Create, ECS: instance%0Anow 100%25"
    " (nearest: Create ECS Instance)",
    "::error file=docs/ecs/create-instance.md,line=16,title=docverify element_not_found::"
    "step 4: element not found: doc: Next: Networking; console: <script>alert('x')</script>",
    "::notice file=docs/ecs/create-instance.md,line=18,title=docverify not_verifiable::"
    "step 5: not verifiable: doc: Wait a few minutes; console: nothing to do literally",
    "::error file=docs/vpc/create-vpc.md,line=7,title=docverify FAIL::"
    "FAIL: goal not reached: no CreateVpc event",
    "::warning file=docs/rds/create.md,line=2,title=docverify ENV_ERROR::"
    "ENV_ERROR: login failed: HTTP 502",
    "::warning file=docs/kms/create-key.md,line=9,title=docverify INCONCLUSIVE::"
    "INCONCLUSIVE: the step budget (40) ran out",
]


def _run(summary, *, environ=None, output=None):
    stdout = io.StringIO()
    reporter = GithubReporter(stdout=stdout, environ=environ or {})
    written = reporter.run_finished(summary, output)
    return stdout.getvalue(), written


def test_escaping_follows_the_runner_rules():
    assert escape_data("a%b\r\nc: d, e") == "a%25b%0D%0Ac: d, e"
    assert escape_property("a%b\r\nc: d, e") == "a%25b%0D%0Ac%3A d%2C e"
    assert command("error", "x\ny", file="docs/a,b:c.md", line=3, title="t: 1, 2") == (
        "::error file=docs/a%2Cb%3Ac.md,line=3,title=t%3A 1%2C 2::x%0Ay"
    )


def test_annotations_on_the_exact_doc_lines(summary):
    printed, written = _run(summary)
    assert printed.splitlines() == EXPECTED
    assert written == []


def test_nothing_is_printed_before_the_run_ends(summary):
    stdout = io.StringIO()
    reporter = GithubReporter(stdout=stdout, environ={})
    reporter.run_started(5, summary.console, summary.policy)
    for result in summary.results:
        reporter.procedure_started(task_for(result))
        for turn in result.turns:
            reporter.turn(task_for(result), turn)
        reporter.procedure_finished(result)
    assert stdout.getvalue() == ""


def test_absolute_paths_become_workspace_relative(tmp_path):
    result = sample_results()[2]
    result.path = str(tmp_path / "docs" / "vpc.md")
    printed, _ = _run(make_summary([result]), environ={"GITHUB_WORKSPACE": str(tmp_path)})
    assert printed.startswith("::error file=docs/vpc.md,line=7,")


def test_job_summary_is_appended_each_run(summary, tmp_path):
    step_summary = tmp_path / "step_summary.md"
    step_summary.write_text("earlier step\n", encoding="utf-8")
    environ = {"GITHUB_STEP_SUMMARY": str(step_summary)}
    _run(summary, environ=environ)
    once = step_summary.read_text(encoding="utf-8")
    _run(summary, environ=environ)
    twice = step_summary.read_text(encoding="utf-8")
    assert once.startswith("earlier step\n## docverify\n")
    assert twice == once + once[len("earlier step\n"):]
    assert twice.count("## docverify") == 2


def test_job_summary_content(summary, tmp_path):
    _, written = _run(summary, output=tmp_path / "out")
    assert written == [tmp_path / "out" / "summary.md"]
    markdown = written[0].read_text(encoding="utf-8")
    lines = markdown.splitlines()
    assert "**5 procedures**: ✅ 1 PASS · ❌ 1 DRIFT · 🛑 1 FAIL · ⚠️ 1 ENV_ERROR · ❔ 1 INCONCLUSIVE in 1m02s" in lines
    assert "| ❌ DRIFT | `ecs#create-an-instance` | `docs/ecs/create-instance.md#L5` | 2 | 31.5s |" in lines
    assert "| ✅ PASS | `oss#create-a-bucket` | `docs/oss/create-bucket.md#L3` | 0 | 4.2s |" in lines
    assert (
        "- ❌ `docs/ecs/create-instance.md#L14` (`ecs#create-an-instance`): step 3: label changed: "
        "doc: Create Instance; console: Create, ECS: instance now 100% (nearest: Create ECS Instance)"
    ) in lines
    assert "console: \\<script\\>alert('x')\\</script\\>" in markdown  # shown, not rendered as HTML
    assert "- ⚠️ `docs/rds/create.md#L2` (`rds#create-an-instance`): ENV\\_ERROR: login failed: HTTP 502" in lines
    assert "ℹ️ 1 step could not be verified literally." in lines


def test_job_summary_links_into_the_repository(summary):
    environ = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/docs", "GITHUB_SHA": "abc123"}
    markdown = job_summary(summary, links=blob_url(environ))
    assert f"[`{ECS_DOC}#L14`](https://github.com/acme/docs/blob/abc123/{ECS_DOC}#L14)" in markdown
    assert blob_url({"GITHUB_REPOSITORY": "acme/docs"}) is None


def test_all_pass_prints_no_annotation():
    printed, _ = _run(make_summary([sample_results()[0]]))
    assert printed == ""


def _drifted(index: int, path: str) -> "ProcedureResult":  # noqa: F821 - imported in the body
    from docverify.check.verdict import Finding, FindingKind, Verdict
    from docverify.report.trajectory import ProcedureResult

    findings = [Finding(kind=FindingKind.ELEMENT_NOT_FOUND, path=path, line=10 * index + k, step=str(k),
                        expected=f"Button {index}.{k}", observed="") for k in (1, 2)]
    return ProcedureResult(id=f"doc#p{index}", title=f"P{index}", path=path, line=10 * index, verdict=Verdict.DRIFT,
                           reason="drifted", findings=findings)


def test_the_ten_shown_errors_are_the_changed_lines_then_one_per_procedure(tmp_path):
    """GitHub shows 10 errors per step: a pull request's own lines come first, then the
    first finding of each procedure; one notice says how many more and where they are."""
    from docverify_reports.github import annotations

    doc = tmp_path / "doc.md"
    results = [_drifted(index, str(doc)) for index in range(15)]  # 30 errors
    changed = {doc.resolve(): {142}}  # the pull request edited procedure 14's second step
    lines = annotations(make_summary(results), changed=changed)
    errors = [line for line in lines if line.startswith("::error")]
    assert len(errors) == 10
    shown_lines = {int(line.split(",line=")[1].split(",")[0]) for line in errors}
    assert 142 in shown_lines  # the changed line, though it is nobody's first finding
    assert shown_lines - {142} == {10 * index + 1 for index in range(9)}  # first findings, in run order
    assert lines[-1].startswith("::notice title=docverify::20 errors more:") and "job summary" in lines[-1]
    assert len(lines) == 11
    # without changed lines: the first finding of each of the first ten procedures
    plain = [line for line in annotations(make_summary(results)) if line.startswith("::error")]
    assert {int(line.split(",line=")[1].split(",")[0]) for line in plain} == {10 * i + 1 for i in range(10)}


def test_under_the_limit_every_annotation_is_shown_and_no_notice_is_added(summary):
    printed, _ = _run(summary)
    assert len(printed.splitlines()) == len(EXPECTED) and "more:" not in printed
