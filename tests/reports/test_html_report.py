"""`--report html`: one self-contained page, failures first."""

import base64
import re
import struct
from dataclasses import replace

import pytest
from report_samples import ECS_DOC, make_summary, sample_results

from docverify.check.verdict import Finding, FindingKind, Verdict
from docverify.report.trajectory import ProcedureResult, Turn
from docverify_reports.html import HtmlReporter, image_size, outline


def _page(summary, output, **options):
    reporter = HtmlReporter(HtmlReporter.Options(**options))
    [path] = reporter.run_finished(summary, output)
    assert path == output / "report.html"
    return path.read_text(encoding="utf-8")


def _procedures(page):
    """(anchor, verdict, open) of each procedure section, in page order."""
    return re.findall(r'<details class="procedure" id="(p\d+)" data-verdict="(\w+)" data-kinds="[^"]*"( open)?>', page)


def _result(id, verdict, findings=(), turns=()):
    return ProcedureResult(id=id, title=id, path=f"docs/{id}.md", line=1, verdict=verdict, reason="why",
                           findings=list(findings), turns=list(turns))


def test_every_procedure_is_on_the_page(summary, output):
    page = _page(summary, output)
    for result in summary.results:
        assert result.id in page
        assert f"{result.path}:{result.line}" in page
    assert "run-20260301-abc123" in page and "literal" in page


def test_text_from_the_console_is_escaped(summary, output):
    page = _page(summary, output)
    assert page.count("<script") == 1  # the page's own filters; nothing the console showed
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page


def test_failures_come_first_and_are_open(summary, output):
    assert [(verdict, bool(opened)) for _, verdict, opened in _procedures(_page(summary, output))] == [
        ("DRIFT", True), ("FAIL", True), ("ENV_ERROR", True), ("INCONCLUSIVE", True), ("PASS", False)]


def test_the_order_within_a_verdict_is_the_runs(output):
    results = [_result("a", Verdict.PASS), _result("b", Verdict.DRIFT), _result("c", Verdict.INCONCLUSIVE),
               _result("d", Verdict.PASS), _result("e", Verdict.DRIFT), _result("f", Verdict.ENV_ERROR)]
    page = _page(make_summary(results), output)
    shown = re.findall(r'<details class="procedure" id="p\d+"[^>]*>\s*<summary>.*?<code>(\w)</code>', page, re.S)
    assert shown == ["b", "e", "f", "c", "a", "d"]
    table = page[page.index("<tbody>"):page.index("</tbody>")]
    assert re.findall(r'<a href="#p\d+"><code>(\w)</code>', table) == shown  # the summary table too


def test_the_verdict_bar_has_a_segment_per_verdict_as_wide_as_its_share(output):
    results = [_result(f"pass{i}", Verdict.PASS) for i in range(6)] + [_result("drift", Verdict.DRIFT),
                                                                         _result("fail", Verdict.FAIL)]
    page = _page(make_summary(results), output)
    bar = page[page.index('<div class="bar"'):page.index("</div>", page.index('<div class="bar"'))]
    assert 'aria-label="1 DRIFT, 1 FAIL, 6 PASS"' in bar
    segments = re.findall(r'<a class="(\w+)" href="#(p\d+)" style="width: ([\d.]+)%" title="(\d+) \w+">', bar)
    assert segments == [("DRIFT", "p1", "12.5", "1"), ("FAIL", "p2", "12.5", "1"), ("PASS", "p3", "75.0", "6")]


def test_filters_offer_the_verdicts_and_finding_kinds_that_occur(summary, output):
    page = _page(summary, output)
    form = page[page.index('<form class="filters"'):page.index("</form>")]
    assert re.search(r'<form class="filters" id="filters" hidden>', form)  # shown by the script: no JS, no filters
    assert re.findall(r'name="verdict" value="(\w+)" checked', form) == ["DRIFT", "FAIL", "ENV_ERROR", "INCONCLUSIVE",
                                                                         "PASS"]
    kinds = re.findall(r'name="kind" value="(\w+)" checked> ([\w ]+) \((\d+)\)', form)
    assert kinds == [("element_not_found", "element not found", "1"), ("label_changed", "label changed", "1"),
                     ("not_verifiable", "not verifiable", "1"), ("none", "no findings", "4")]
    assert "menu_moved" not in form  # kinds no procedure has are not offered
    drifted = re.search(r'<details class="procedure" id="p1" data-verdict="DRIFT" data-kinds="([^"]*)"', page)
    assert drifted.group(1) == "element_not_found label_changed not_verifiable"
    assert re.search(r'<tr data-verdict="PASS" data-kinds="none">', page)  # the table rows filter too


def test_only_verdicts_that_occur_are_filters(output):
    page = _page(make_summary([_result("a", Verdict.PASS), _result("b", Verdict.DRIFT)]), output)
    assert re.findall(r'name="verdict" value="(\w+)"', page) == ["DRIFT", "PASS"]


def test_screenshots_are_embedded_once_and_missing_ones_skipped(summary, output, png):
    page = _page(summary, output)
    uri = "data:image/png;base64," + base64.b64encode(png).decode()
    assert page.count(uri) == 1  # turn 1's before and after are the same picture: one CSS class
    assert f'.s1 {{ background-image: url("{uri}"); }}' in page
    assert len(re.findall(r'<span class="img s1"', page)) == 2
    assert "missing.png" not in page and "outside.png" not in page
    assert re.search(r'(src|href)="(https?:)?//', page) is None  # nothing fetched from elsewhere
    assert "<link" not in page and "@import" not in page


def test_screenshots_can_be_left_out(summary, output):
    page = _page(summary, output, screenshots=False)
    assert "data:image" not in page and 'class="shot"' not in page


def test_a_turn_shows_the_page_before_it_only_where_the_turn_before_did_not(output, png):
    for name in ("t0.png", "t1.png", "t2.png"):
        (output / name).write_bytes(png + name.encode())  # three different pictures
    turns = [Turn(0, "1", {}, "click a", screenshot_before="t0.png", screenshot_after="t1.png"),
             Turn(1, "2", {}, "click b", screenshot_before="t1.png", screenshot_after="t2.png")]
    page = _page(make_summary([_result("a", Verdict.DRIFT, turns=turns)]), output)
    figures = re.findall(r'<figure class="shot" id="(p1-t\d-\w+)"', page)
    assert figures == ["p1-t0-before", "p1-t0-after", "p1-t1-after"]
    assert page.count("data:image/png") == 3


def test_a_finding_shows_its_screenshot_with_the_element_outlined(output, png):
    (output / "shot.png").write_bytes(png)
    boxed = Finding(FindingKind.LABEL_CHANGED, ECS_DOC, 14, "3", "Create Instance", "Create ECS Instance",
                    screenshot="shot.png", box={"x": 0.25, "y": 0.5, "width": 0.1, "height": 0.05})
    unboxed = Finding(FindingKind.ELEMENT_NOT_FOUND, ECS_DOC, 16, "4", "Next", "no such button", ["Next: Network"],
                      screenshot="shot.png")
    unseen = Finding(FindingKind.ELEMENT_NOT_FOUND, ECS_DOC, 18, "5", "OK", "no such button", screenshot="gone.png")
    page = _page(make_summary([_result("ecs", Verdict.DRIFT, [boxed, unboxed, unseen])]), output)
    first = page[page.index('<div class="finding label_changed" id="p1-f1">'):page.index('id="p1-f2"')]
    assert re.search(r'<figure class="shot" id="p1-f1-shot" style="--ratio: 1.0">\s*'
                     r'<a class="open" href="#p1-f1-shot" title="enlarge"><span class="img s1"[^>]*>'
                     r'<span class="outline" style="left: 25%; top: 50%; width: 10%; height: 5%"></span></span></a>\s*'
                     r'<a class="close" href="#p1-f1" title="close">', first)
    second = page[page.index('id="p1-f2"'):page.index('id="p1-f3"')]
    assert 'id="p1-f2-shot"' in second and "outline" not in second  # its screenshot, nothing to outline
    third = page[page.index('id="p1-f3"'):]
    assert 'class="shot"' not in third[:third.index("</div>")]  # its file is gone: no picture
    assert page.count("data:image/png") == 1


def test_a_screenshot_enlarges_as_the_target_and_closes_back(summary, output):
    page = _page(summary, output)
    assert ".shot:target {" in page and ".shot:target > a.close" in page
    assert re.search(r'<a class="close" href="#p5-t1" title="close">', page)  # back to its turn


@pytest.mark.parametrize("box, style", [
    ({"x": 0.25, "y": 0.5, "width": 0.1, "height": 0.05}, "left: 25%; top: 50%; width: 10%; height: 5%"),
    ({"x": 0.1234, "y": 0, "width": 0.5, "height": 1}, "left: 12.34%; top: 0%; width: 50%; height: 100%"),
    ({"x": 0.9, "y": -0.2, "width": 0.5, "height": 0.3}, "left: 90%; top: 0%; width: 10%; height: 30%"),  # clipped
    ({"x": 0.2, "y": 0.2, "width": 0, "height": 0.1}, None),
    ({"x": "1;background:red", "y": 0, "width": 1, "height": 1}, None),  # never markup or CSS from a result
    ({"x": 0.1}, None),
    (None, None),
])
def test_outline_in_percent_of_the_screenshot(box, style):
    assert outline(box) == style


def test_image_size_from_png_and_jpeg_headers(png):
    assert image_size(png) == (1, 1)
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + bytes(9)
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, 900, 1280, 3) + bytes(9)
    assert image_size(b"\xff\xd8" + app0 + sof0 + b"\xff\xd9") == (1280, 900)
    assert image_size(b"GIF89a") is None and image_size(b"\xff\xd8\xff") is None


def test_each_picture_costs_its_bytes_once_however_often_it_is_shown(output):
    """A run's worth of results: 30 passes without screenshots (the runner drops them)
    and 10 drifts of 12 turns, each turn's before the last one's after, each finding
    on one of them. The page is the pictures once, plus the text."""
    screens = output / "artifacts"
    results, pictures = [], 0
    for i in range(10):
        folder = screens / f"drift{i}"
        folder.mkdir(parents=True)
        for n in range(13):
            (folder / f"turn-{n:03d}.jpg").write_bytes(bytes([i, n]) * 20_000)  # 40 kB, each different
            pictures += 40_000
        turns = [Turn(n, str(n), {}, f"click {n}", screenshot_before=f"artifacts/drift{i}/turn-{n:03d}.jpg",
                      screenshot_after=f"artifacts/drift{i}/turn-{n + 1:03d}.jpg") for n in range(12)]
        findings = [Finding(FindingKind.LABEL_CHANGED, "d.md", n, str(n), "A", "B",
                            screenshot=turns[n].screenshot_after, box={"x": 0.1, "y": 0.1, "width": 0.1, "height": 0.1})
                    for n in (3, 7)]
        results.append(_result(f"drift{i}", Verdict.DRIFT, findings, turns))
    results += [_result(f"pass{i}", Verdict.PASS, turns=[Turn(0, "1", {}, "click")] * 8) for i in range(30)]
    page = _page(make_summary(results), output)
    assert page.count("data:image/jpeg") == 130
    assert len(page.encode()) < pictures * 4 / 3 + 300_000


def test_findings_sit_under_their_step_and_turns_follow(summary, output):
    page = _page(summary, output)
    section = page[page.index('id="p1"'):page.index('id="p2"')]
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


def test_findings_from_a_store_without_screenshots_still_show(output):
    """Results written before findings named their screenshot read back as before."""
    data = sample_results()[1].to_dict()
    assert all("screenshot" not in f and "box" not in f for f in data["findings"])
    result = ProcedureResult.from_dict(data)
    assert result.findings[0].screenshot is None and result.findings[0].box is None
    boxed = replace(result.findings[0], screenshot="s.png", box={"x": 0.5, "y": 0.5, "width": 0.1, "height": 0.1})
    assert boxed == result.findings[0]  # where it was seen is no part of what the finding is
    again = ProcedureResult.from_dict({**data, "findings": [boxed.to_dict()]})
    assert (again.findings[0].screenshot, again.findings[0].box) == ("s.png", boxed.box)
    assert "Create ECS Instance" in _page(make_summary([result]), output)
