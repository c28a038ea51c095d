"""Which UI labels of the Alibaba corpus procedures exist in the 2021 release catalog.

A simple local reading of the docs (bold text ``**...**`` and ``\\>`` menu paths); the
real parser lives in docverify/spec and is not used here on purpose.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docverify_sandbox import catalog

CORPUS = Path("/work/shared/corpus/real-docs/alibaba_AlibabaCloudDocs")
#: corpus folder -> catalog products whose pages the docs walk through
PRODUCTS = {
    "ecs": ["ecs", "vpc"], "vpc": ["vpc", "ecs"], "eip": ["eip", "ecs"], "nat": ["nat", "eip", "vpc"],
    "oss": ["oss"], "ram": ["ram"], "slb": ["slb"], "db": ["mongodb", "rds"],
    "actiontrail": ["actiontrail", "ram"],
}
NOISE = re.compile(r"^(note|notes?:|warning|related topics|references|\[default\])\W*$", re.I)
TARGET = 0.90


def clean(label: str) -> str:
    label = re.sub(r"\\([()_\[\]<>*#])", r"\1", label).strip()
    return label.rstrip(":").strip()


def doc_labels(text: str) -> list[str]:
    out = []
    for raw in re.findall(r"\*\*(.+?)\*\*", text):
        label = clean(raw)
        if not label or NOISE.match(label) or label.endswith("?") or label.startswith("!["):
            continue
        out.append(label)
    return out


def menu_paths(text: str) -> list[list[str]]:
    paths = []
    for line in text.splitlines():
        if "\\>" in line:
            for m in re.finditer(r"\*\*[^*]+\*\*(?:\s*\\>\s*\*\*[^*]+\*\*)+", line):
                paths.append([clean(p) for p in re.findall(r"\*\*(.+?)\*\*", m.group(0))])
    return paths


def walk():
    cat = catalog.load("2021-06")
    rows = []
    for doc in sorted(CORPUS.glob("*/en/*.md")):
        text = doc.read_text(encoding="utf-8")
        known = set()
        for p in PRODUCTS[doc.parent.parent.name]:
            known |= {label.lower() for label in cat.labels(p)}
        labels = sorted(set(doc_labels(text)))
        found = [label for label in labels if label.lower() in known]
        paths = menu_paths(text)
        ok_paths = [p for p in paths if all(part.lower() in known for part in p)]
        rows.append((doc.relative_to(CORPUS), labels, found, paths, ok_paths))
    return rows


@pytest.mark.skipif(not CORPUS.exists(), reason=f"corpus not found at {CORPUS}")
def test_corpus_labels_exist_in_2021_release(capsys):
    rows = walk()
    total = sum(len(r[1]) for r in rows)
    found = sum(len(r[2]) for r in rows)
    ptotal = sum(len(r[3]) for r in rows)
    pfound = sum(len(r[4]) for r in rows)
    with capsys.disabled():
        print(f"\n{'procedure':<70} labels  paths")
        for doc, labels, ok, paths, okp in rows:
            print(f"{str(doc):<70} {len(ok):>3}/{len(labels):<3} {len(okp):>2}/{len(paths):<2}")
            missing = sorted(set(labels) - set(ok))
            if missing:
                print("    missing: " + "; ".join(missing))
            for path in paths:
                if path not in okp:
                    print("    missing path: " + " > ".join(path))
        print(f"labels {found}/{total} = {found / total:.1%}; menu paths {pfound}/{ptotal}")
        zh = len(list(CORPUS.glob("*/zh/*.md")))
        print(f"({zh} Chinese procedures not walked: the sandbox renders English labels only)")
    assert found / total >= TARGET
    # the unreached paths are the account centre (Account Management > Security Settings),
    # an icon-only "More" menu and a quick-start path through the old buy page
    assert pfound / ptotal >= 0.85
