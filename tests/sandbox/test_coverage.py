"""Which UI labels of the Alibaba corpus procedures exist in the 2021 release catalog.

A simple local reading of the docs (bold text ``**...**`` and ``\\>`` menu paths); the
real parser lives in docverify/parse and is not used here on purpose. English docs are
checked against the English console, Chinese docs against the console in Chinese.
"""

from __future__ import annotations

import re
from pathlib import Path

from docverify.execute.locate import normalize
from docverify_sandbox import catalog, i18n

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "real-docs" / "alibaba_AlibabaCloudDocs"
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


def test_corpus_labels_exist_in_2021_release():
    rows = walk()
    total = sum(len(r[1]) for r in rows)
    found = sum(len(r[2]) for r in rows)
    ptotal = sum(len(r[3]) for r in rows)
    pfound = sum(len(r[4]) for r in rows)
    missing = {str(doc): sorted(set(labels) - set(ok)) for doc, labels, ok, _, _ in rows if set(labels) - set(ok)}
    assert found / total >= TARGET, f"labels {found}/{total}; missing: {missing}"
    # the unreached paths are the account centre (Account Management > Security Settings),
    # an icon-only "More" menu and a quick-start path through the old buy page
    assert pfound / ptotal >= 0.85


#: corpus folder -> catalog products the Chinese docs walk through (ALB 创建实例 is under slb/)
ZH_PRODUCTS = {"ecs": ["ecs", "vpc"], "oss": ["oss"], "ram": ["ram"], "slb": ["slb", "alb"]}
ZH_NOISE = re.compile(r"^(?:说明|警告|注意|相关文档|问题)(?:[:：].*)?$")
#: labels of the Chinese docs with no counterpart in the English console: what they name
#: is not modelled (the account centre, metadata modes, TLS certificates, QUIC, the
#: health status, the terms check box of ALB's order page, a sub-setting's label)
NO_COUNTERPART = {
    "仅加固模式", "普通模式（兼容加固模式）", "去创建", "全部ICMP（IPv6）", "账号管理", "安全设置",
    "服务端加密方式", "TLS安全策略", "关联的QUIC监听", "开启QUIC升级", "选择服务器证书", "知道了", "正常",
    "我已阅读并同意《应用型负载均衡（按量付费）服务协议》",
}


def zh_walk(release: str):
    cat = catalog.load(release)
    t = i18n.translator(cat, "zh")
    rows = []
    for doc in sorted(CORPUS.glob("*/zh/*.md")):
        text = doc.read_text(encoding="utf-8")
        shown: set[str] = set()
        for product in ZH_PRODUCTS[doc.parent.parent.name]:
            shown |= {normalize(s) for s in i18n.shown_strings(cat, t, product)}
        labels = sorted({label for label in doc_labels(text) if not ZH_NOISE.match(label)})
        found = [label for label in labels if normalize(label) in shown]  # as the literal policy matches
        paths = menu_paths(text)
        ok_paths = [p for p in paths if all(normalize(part) in shown for part in p)]
        rows.append((doc.relative_to(CORPUS), labels, found, paths, ok_paths))
    return rows


def test_chinese_corpus_labels_exist_in_the_zh_console():
    """Every bold label and menu path of the Chinese docs that names something the
    console has is shown, in Chinese, by the 2021 release."""
    rows = zh_walk("2021-06")
    total = sum(len(r[1]) for r in rows)
    found = sum(len(r[2]) for r in rows)
    missing = {label for _, labels, ok, _, _ in rows for label in set(labels) - set(ok)}
    assert missing <= NO_COUNTERPART, f"labels the zh console should show: {sorted(missing - NO_COUNTERPART)}"
    assert found / total >= TARGET
    unreached = [path for _, _, _, paths, okp in rows for path in paths
                 if path not in okp and not set(path) & NO_COUNTERPART]
    assert not unreached, f"menu paths the zh console should have: {unreached}"  # all but the account centre's
