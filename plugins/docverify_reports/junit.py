"""The ``junit`` reporter: JUnit XML, one testcase per procedure, for CI test views."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from docverify.check.verdict import Verdict
from docverify.report.reporter import Reporter
from docverify.report.trajectory import ProcedureResult, RunSummary
from docverify_reports.output import output_dir, write_text
from docverify_reports.problems import problems

FILE_NAME = "junit.xml"
SUITE_NAME = "docverify"

#: verdict -> the child element of its testcase (PASS has none)
ELEMENT = {
    Verdict.DRIFT: "failure",
    Verdict.FAIL: "failure",
    Verdict.ENV_ERROR: "error",
    Verdict.INCONCLUSIVE: "error",
}

#: characters XML 1.0 cannot hold at all, even escaped (terminal colour codes, NUL)
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class JUnitReporter(Reporter):
    """Writes <output>/junit.xml: one testcase per procedure, DRIFT/FAIL as failures."""

    name = "junit"
    writes_files = True

    def run_finished(self, summary: RunSummary, output: Path | None) -> list[Path]:
        """Write ``<output>/junit.xml``: a ``<testsuites>`` holding one ``<testsuite
        name="docverify">`` with tests/failures/errors/time, and per procedure a
        ``<testcase classname=path name=id file=path line=line time=…>``; DRIFT and
        FAIL carry ``<failure type=… message=reason>`` whose text lists the findings
        (``path:line: message``), ENV_ERROR and INCONCLUSIVE an ``<error>``."""
        directory = output_dir(self.name, output)
        tree = ET.ElementTree(junit_xml(summary))
        ET.indent(tree)
        text = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(tree.getroot(), encoding="unicode") + "\n"
        return [write_text(directory / FILE_NAME, text)]


def junit_xml(summary: RunSummary) -> ET.Element:
    """The JUnit document of a run."""
    counts = summary.counts()
    failures = counts[Verdict.DRIFT.value] + counts[Verdict.FAIL.value]
    errors = counts[Verdict.ENV_ERROR.value] + counts[Verdict.INCONCLUSIVE.value]
    totals = {
        "tests": str(len(summary.results)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": "0",
        "time": f"{summary.duration_s:.3f}",
    }
    root = ET.Element("testsuites", {"name": SUITE_NAME, **totals})
    suite = ET.SubElement(root, "testsuite", {
        "name": SUITE_NAME, **totals, "timestamp": summary.started_at,
    })
    properties = ET.SubElement(suite, "properties")
    usage = summary.usage()
    values = [("run_id", summary.run_id), ("console", summary.console), ("policy", summary.policy)]
    if usage.calls:
        values += [("model_calls", str(usage.calls)), ("tokens_in", str(usage.tokens_in)),
                   ("tokens_out", str(usage.tokens_out)), ("model_turns", str(usage.model_turns)),
                   ("cost", usage.describe_cost())]
    if summary.shard is not None:
        values.append(("shard", f"{summary.shard.index}/{summary.shard.count}"))
    if summary.merged is not None:
        values.append(("merged_shards", str(len(summary.merged.shards))))
        if not summary.merged.complete:
            values += [("missing_shards", ",".join(f"{index}/{summary.merged.count}"
                                                  for index in summary.merged.missing_shards)),
                       ("missing_procedures", ",".join(summary.merged.missing))]
    for name, value in values:
        ET.SubElement(properties, "property", {"name": name, "value": _text(value)})
    for result in summary.results:
        suite.append(testcase(result))
    return root


def testcase(result: ProcedureResult) -> ET.Element:
    """One procedure as a ``<testcase>``."""
    case = ET.Element("testcase", {
        "classname": _text(result.path),
        "name": _text(result.id),
        "file": _text(result.path),
        "line": str(result.line),
        "time": f"{result.duration_s:.3f}",
    })
    element = ELEMENT.get(result.verdict)
    if element is not None:
        problem = ET.SubElement(case, element, {"type": result.verdict.value, "message": _text(result.reason)})
        lines = [f"{'  └ ' if p.follows else ''}{p.location}: {p.message}" for p in problems(result)]
        problem.text = _text("\n".join(lines))
    steps = [f"{s.number} (line {s.line}) {s.status.value}: {s.text}" for s in result.steps]
    if result.usage.calls:
        steps.append(f"model: {result.usage.describe()}")
    if steps:
        ET.SubElement(case, "system-out").text = _text(f"{result.title}\n" + "\n".join(steps))
    return case


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)
