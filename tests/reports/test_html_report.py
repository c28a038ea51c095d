"""`--report html`: one self-contained page."""

import base64
import re

from docverify_reports.html import HtmlReporter

from report_samples import make_summary, sample_results


def _page(summary, output, **options):
    reporter = HtmlReporter(HtmlReporter.Options(**options))
    [path] = reporter.run_finished(summary, output)
    assert path == output / "report.html"
    return path.read_text(encoding="utf-8")


def test_every_procedure_is_on_the_page(summary, output):
    page = _page(summary, output)
    for result in summary.results:
        assert result.id in page
        assert f"{result.path}:{result.line}" in page
    assert "run-20260301-abc123" in page and "literal" in page


def test_text_from_the_console_is_escaped(summary, output):
    page = _page(summary, output)
    assert "<script" not in page  # neither the finding's text nor any script of our own
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page


def test_screenshots_are_embedded_and_missing_ones_skipped(summary, output, png):
    page = _page(summary, output)
    uri = "data:image/png;base64," + base64.b64encode(png).decode()
    assert page.count(f'src="{uri}"') == 2  # turn 1's before and after
    assert "missing.png" not in page and "outside.png" not in page
    assert re.search(r'(src|href)="(https?:)?//', page) is None  # nothing fetched from elsewhere
    assert "<link" not in page


def test_screenshots_can_be_left_out(summary, output):
    assert "data:image" not in _page(summary, output, screenshots=False)


def test_procedures_that_did_not_pass_are_open(summary, output):
    page = _page(summary, output)
    opened = re.findall(r'<details class="procedure" id="(p\d)"( open)?>', page)
    assert opened == [("p1", ""), ("p2", " open"), ("p3", " open"), ("p4", " open"), ("p5", " open")]


def test_findings_sit_under_their_step_and_turns_follow(summary, output):
    page = _page(summary, output)
    section = page[page.index('id="p2"'):page.index('id="p3"')]
    step3 = section.index("Click **Create Instance**.")
    finding = section.index("Create ECS Instance", step3)
    step4 = section.index("Click **Next: Networking**.")
    assert step3 < finding < step4
    assert section.index("Turns") > step4
    assert "error: element e9 is not visible" in section
    assert "The doc says Create Instance" in section


def test_trace_is_linked_with_how_to_open_it(summary, output):
    page = _page(summary, output)
    assert 'href="traces/ecs-create-an-instance.zip"' in page
    assert "playwright show-trace traces/ecs-create-an-instance.zip" in page


def test_artifact_links_cannot_become_scripts(output):
    result = sample_results()[1]
    result.artifacts = {"trace": "javascript:alert(1)"}
    page = _page(make_summary([result]), output)
    assert 'href="javascript:' not in page
    assert 'href="javascript%3Aalert%281%29"' in page
