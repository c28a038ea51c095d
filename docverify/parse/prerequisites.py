"""Prerequisites: what must be true before a procedure can run.

Two sources:

- sections whose heading says so ("Prerequisites", "Before you begin",
  "Preparations", "Limits", "前提条件", "准备工作", "使用限制" ...): every
  paragraph and list item in them is one prerequisite, and their ordered lists
  are not procedures. They apply to the procedures that follow in the
  enclosing section (for a level-2 section under the title: the whole rest of
  the document);
- a paragraph led by such a heading in bold ("**Prerequisites:** An EIP is associated
  with the NAT gateway. ..."): every sentence after the lead;
- bare sentences before a procedure's steps that state a precondition:
  "Before you ..., make sure that ...", "An ECS instance is created.",
  "You must have ...", "已创建...", "确保...".
"""

from __future__ import annotations

import re

_SECTION = re.compile(
    r"\bprerequisites?\b|前提条件|准备工作"
    r"|^(?:\d+[.)]\s*)?(?:before\s+you\s+begin|before\s+you\s+start|preparations?|requirements|"
    r"limits|limitations|restrictions|使用限制|限制条件)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(
    r"\bbefore\s+(?:you|creating|starting|using)\b.{0,200}?\b(?:make\s+sure|ensure|be\s+sure|(?:must|need\s+to)\s+(?:have|complete|be)\b)"
    r"|\b(?:make\s+sure|ensure)\s+that\b"
    r"|\byou\s+(?:must|need\s+to)\s+(?:have|be|complete|create|activate|sign\s+up)\b"
    r"|^(?:an?|the)\s+[\w\s()\-/&,]{1,80}?\s(?:is|are|has\s+been|have\s+been)\s+(?:created|activated|purchased|prepared|enabled|configured|installed|obtained|available)\b"
    r"|^[\w\s()\-/&,]{1,80}?\s(?:is|are)\s+(?:known|ready)\b"
    r"|已(?:创建|开通|购买|准备|安装|配置|获取)|确保|请确认|需要先|必须先|前提",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"(?<=[.。!?！？])\s+")
#: A paragraph's bold lead-in ("**Prerequisites:** ...", "__Before you begin__ ...").
_BOLD_LEAD = re.compile(r"^(?:\*\*|__)(?P<lead>[^*_]+?)(?:\*\*|__)\s*(?P<rest>\S)", re.S)


def is_prerequisite_heading(title: str) -> bool:
    return bool(_SECTION.search(title.strip()))


def looks_like_prerequisite(raw: str) -> bool:
    """Cheap test on raw Markdown before rendering a paragraph."""
    return bool(_SENTENCE.search(raw.replace("\\", "")))


def prerequisite_sentences(text: str) -> list[str]:
    """The sentences of a paragraph that state a precondition."""
    return [sentence.strip() for sentence in _SPLIT.split(text) if _SENTENCE.search(sentence.strip())]


def led_prerequisites(raw: str, text: str) -> list[str] | None:
    """A paragraph led by a prerequisite heading in bold ("**Prerequisites:** An EIP is
    associated with the gateway. See ..."): the sentences after the lead, from ``text``
    (the paragraph as plain text); None for a paragraph led otherwise."""
    lead = _BOLD_LEAD.match(raw.strip())
    if lead is None or not is_prerequisite_heading(lead["lead"].strip().rstrip(":：").strip()):
        return None
    words = lead["lead"].strip()
    rest = text[len(words):] if text.startswith(words) else text
    rest = rest.lstrip(":： ")
    return [sentence.strip() for sentence in _SPLIT.split(rest) if sentence.strip()]
