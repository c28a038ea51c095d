"""Secrets the console reveals, seen in a Playwright session and kept out of its pictures.

:class:`RevealedSecrets` watches one browser context:

- every JSON response the console's pages receive (an XHR/fetch API call) goes
  through :func:`docverify.execute.revealed.in_json`;
- before every observation and screenshot, :data:`FIND` reads the page's labelled
  values (``<dt>``/``<dd>``, ``<label>``/field, ``<th>``/cell, a term and the element
  after it, ``Label: value``) and PEM private keys for
  :func:`docverify.execute.revealed.in_labelled`, then :data:`MARK` marks every element
  whose text or value holds a registered secret, and the screenshot masks them
  (Playwright's ``mask``).

So a secret is registered before the observation that shows it is returned, and no
screenshot docverify takes shows one. (The trace's own screencast is a different
matter: see :mod:`docverify_playwright.trace`.)
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from docverify.execute import revealed
from docverify.scrub import known

log = logging.getLogger(__name__)

#: The attribute :data:`MARK` puts on elements that hold a secret (what the screenshot masks).
MARKED = "data-docverify-secret"
#: JSON responses larger than this are not read (no console reveals a secret in a bulk listing).
MAX_JSON_BYTES = 2_000_000

#: (label regex source) -> {pairs: [[label, value]], texts: [PEM blocks], shown: the page's text
#: and field values}; reads, changes nothing.
FIND = r"""(source) => {
  const label = new RegExp(source, 'i');
  const norm = t => (t || '').replace(/\s+/g, ' ').trim().replace(/[:：*＊\s]+$/, '');
  const named = t => { const n = norm(t); return n && n.length <= 40 && label.test(n) ? n : null; };
  // a password field the procedure types into holds what it typed (from the doc), not a reveal
  const typed = field => field.type === 'password' && !field.readOnly && !field.disabled;
  const shown = el => {
    if (!el) return '';
    if (el.matches('input, textarea, select')) return typed(el) ? '' : el.value || '';
    const field = el.querySelector('input, textarea');
    if (field && field.value) return typed(field) ? '' : field.value;
    return (el.innerText ?? el.textContent ?? '').trim();
  };
  const pairs = [];
  const add = (name, value) => { if (name && value && value.trim()) pairs.push([name, value.trim()]); };
  // a field and its label: <label for>, a label around it, aria-label, aria-labelledby
  for (const field of document.querySelectorAll('input, textarea')) {
    if (!field.value || typed(field)) continue;
    const names = [...(field.labels || [])].map(l => l.textContent);
    names.push(field.getAttribute('aria-label'));
    for (const id of (field.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean))
      names.push(document.getElementById(id)?.textContent);
    add(names.map(named).find(Boolean), field.value);
  }
  // a term and its description
  for (const dt of document.querySelectorAll('dt')) {
    const name = named(dt.textContent);
    if (!name) continue;
    let dd = dt.nextElementSibling;
    while (dd && dd.tagName !== 'DD') dd = dd.nextElementSibling;
    add(name, shown(dd));
  }
  // a column whose header names a secret
  for (const th of document.querySelectorAll('thead th, [role=columnheader]')) {
    const name = named(th.textContent);
    const table = th.closest('table, [role=table], [role=grid]');
    if (!name || !table) continue;
    const index = [...th.parentElement.children].indexOf(th);
    for (const row of table.querySelectorAll('tbody tr, [role=row]')) {
      const cell = row.children[index];
      if (cell && cell !== th && !cell.matches('th, [role=columnheader]')) add(name, shown(cell));
    }
  }
  // a short label element and the element after it (row headers, key/value lists),
  // or "Label: value" in one element
  for (const el of document.body ? document.body.querySelectorAll('*') : []) {
    if (el.childElementCount || el.matches('script, style, template, input, textarea, select, option, dd')) continue;
    const text = norm(el.textContent);
    if (!text || text.length > 200) continue;
    const name = named(text);
    if (name) {
      add(name, shown(el.nextElementSibling || el.parentElement?.nextElementSibling));
      continue;
    }
    const colon = text.match(/^(.{1,40}?)\s*[:：]\s*(\S+)$/);
    if (colon && named(colon[1])) add(named(colon[1]), colon[2]);
  }
  const texts = [];
  const pem = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z0-9 ]*PRIVATE KEY-----/g;
  const values = [...document.querySelectorAll('textarea, input')].map(f => f.value || '');
  for (const text of [document.body ? document.body.innerText : '', ...values])
    for (const m of text.match(pem) || []) texts.push(m);
  return {pairs, texts, shown: [document.body ? document.body.textContent : '', ...values].join('\n')};
}"""

#: ({secrets, attribute}) -> how many elements now carry the attribute: the smallest
#: elements whose text holds a secret, and fields whose value does.
MARK = r"""({secrets, attribute}) => {
  for (const el of document.querySelectorAll(`[${attribute}]`)) el.removeAttribute(attribute);
  const body = document.body;
  if (!body || !secrets.length) return 0;
  const marked = new Set();
  const holds = (el, s) => (el.textContent || '').includes(s);
  const descend = (el, s) => {
    const inner = [...el.children].filter(c => holds(c, s));
    if (!inner.length) marked.add(el); else inner.forEach(c => descend(c, s));
  };
  const text = body.textContent || '';
  for (const s of secrets) if (text.includes(s)) descend(body, s);
  for (const field of document.querySelectorAll('input, textarea'))
    if (field.value && secrets.some(s => field.value.includes(s))) marked.add(field);
  for (const el of marked) el.setAttribute(attribute, '');
  return marked.size;
}"""


class RevealedSecrets:
    """What one session's console reveals: recognised, registered, masked."""

    def __init__(self) -> None:
        self.reading: set[asyncio.Task[None]] = set()
        self.masked: list[int] = []  #: elements masked in each screenshot, in order (for tests and debugging)

    # -- API responses ---------------------------------------------------------------

    def watch(self, context: Any) -> None:
        """Read every JSON response of ``context`` for secrets (in the background; the
        next capture waits for what is still being read)."""
        context.on("response", self._response)

    def _response(self, response: Any) -> None:
        headers = response.headers
        if "json" not in headers.get("content-type", "") or int(headers.get("content-length") or 0) > MAX_JSON_BYTES:
            return
        task = asyncio.ensure_future(self._read(response))
        self.reading.add(task)
        task.add_done_callback(self.reading.discard)

    @staticmethod
    async def _read(response: Any) -> None:
        try:
            body = await response.body()
        except Exception:  # a redirect, a page gone: no body to read
            return
        if len(body) > MAX_JSON_BYTES:
            return
        try:
            data = json.loads(body)
        except ValueError:
            return
        revealed.remember(revealed.in_json(data))

    # -- the page --------------------------------------------------------------------

    async def before_capture(self, page: Any) -> list[Any]:
        """Recognise what the page (and the responses behind it) reveal, register it, and
        mark the elements that show a registered secret; the locators to mask in a
        screenshot of ``page``. Never fails: a page that cannot be read is captured as is."""
        if self.reading:
            await asyncio.wait(set(self.reading), timeout=5)
        masks: list[Any] = []
        marked = 0
        for frame in page.frames:
            try:
                found = await frame.evaluate(FIND, revealed.SECRET_LABEL.pattern)
                revealed.remember(revealed.in_labelled(tuple(pair) for pair in found["pairs"]))
                for text in found["texts"]:
                    revealed.remember(revealed.in_text(text))
                # only the secrets the page already shows go back into it, to find where (no
                # other registered secret, a model's API key say, ever reaches the page); the
                # call's arguments are in the trace, which is scrubbed when it is saved
                present = sorted(secret for secret in known() if secret in found["shown"])
                count = await frame.evaluate(MARK, {"secrets": present, "attribute": MARKED}) if present else 0
            except Exception as error:  # a frame navigating away, a detached frame
                log.debug("could not look for secrets in %s: %s", frame.url, error)
                continue
            if count:
                marked += count
                masks.append(frame.locator(f"[{MARKED}]"))
        self.masked.append(marked)
        if marked:
            log.debug("masking %d element(s) that show a secret on %s", marked, page.url)
        return masks
