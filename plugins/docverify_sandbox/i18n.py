"""The console in more than one language: a locale per request, a translation per string.

The English UI strings are the keys. ``catalog/i18n/<locale>.yaml`` maps them to the
locale's wording (the real Alibaba Cloud console's, e.g. ``Create Bucket`` ->
``创建Bucket``), in scopes that narrow down:

- ``common``: every page (top bar, sign-in form, tables, dialogs, statuses);
- ``products.<key>.labels``: that product's pages, over ``common``;
- ``products.<key>.fields.<Parameter>``: one field of the product (its label and
  options: OSS says 开通 for Versioning's "Enable" but 启用 for Zone-redundant
  Storage's); ``products.<key>.steps.<step>``: one wizard step's buttons and links;
- ``messages``: English messages the console composes from values
  (``{singular} created successfully.``), with ``{slots}``: a composed string that
  no table holds is matched against them and the locale's template is filled in,
  each slot translated in turn (``param`` slots, an API parameter name, become the
  field's label).

Because the keys are English, a release that renames a label needs its own entry:
a renamed label without one is shown in English, never as a key. API responses and
audit events never pass through here: only pages do.

:func:`choose_locale` picks the locale of a request like the real console: the
``aliyun_lang`` cookie (``zh``/``en``), else ``Accept-Language``, else English.
A :class:`Translator` is prepared once per catalog and locale (plain dicts, merged
per scope), so a page pays a dict lookup per string.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jinja2 import Environment, pass_context
from jinja2.ext import extract_from_ast
from jinja2.runtime import Context

from docverify_sandbox.catalog import REGIONS, Catalog, read_yaml, zones

I18N_DIR = Path(__file__).parent / "catalog" / "i18n"
#: the cookie the real console keeps the chosen language in
LANG_COOKIE = "aliyun_lang"
DEFAULT_LOCALE = "en"
#: locale -> (``<html lang>``, the name the language switch shows)
LOCALES: dict[str, tuple[str, str]] = {"en": ("en", "English"), "zh": ("zh-CN", "简体中文")}

#: Messages the pages show that are no catalog labels: toasts, confirmations and
#: pagination composed from values, and the API's validation errors shown next to a
#: field (their {slots} are filled in). A locale file translates these templates.
MESSAGES: tuple[str, ...] = (
    "Done",
    "{singular} created successfully.",
    "{action}: the operation succeeded.",
    "{singular} {id} no longer exists.",
    "The specified {singular} '{id}' does not exist.",
    "Are you sure you want to continue? ({action})",
    "Select {terms} to continue.",
    "{singular} ID/Name",
    "Total {total} items, page {page} of {pages}",
    "Next: {short}",
    "Zone {letter}",
    "Release: {name} ({title})",
    "{title} navigation",
    # operations.py: errors of a field, shown next to it
    'The input parameter "{param}" that is mandatory for processing this request is not supplied.',
    'The specified parameter "{param}" is not valid.{why}',
    "It must be at least {min} characters long.",
    "It must be at most {max} characters long.",
    "It contains characters that are not allowed or starts wrongly.",
    "It is not valid JSON.",
    "It must be an integer.",
    "Valid values: {values}.",
    "It is not a valid CIDR block.",
    "The specified zone '{zone}' does not exist in {region}.",
    "The {singular} '{name}' already exists.",
    "The {singular} still has dependent resources.",
    "The {singular} is still used by other resources.",
    "You can create at most {count} {title}.",
)
#: Slots whose values are shown as they are (ids, names, numbers, values the user typed).
VERBATIM_SLOTS = frozenset({"id", "name", "total", "page", "pages", "min", "max", "values", "zone", "region",
                            "count", "letter"})
_SLOT = re.compile(r"\{(\w+)\}")


def choose_locale(cookie: str | None, accept_language: str | None) -> str:
    """The locale of a request: the ``aliyun_lang`` cookie when it names a known one,
    else the most preferred known language of ``Accept-Language`` (``zh-CN``,
    ``zh-TW``, ``zh`` -> ``zh``), else English."""
    if cookie:
        chosen = _primary(cookie)
        if chosen in LOCALES:
            return chosen
    if accept_language:
        return _from_accept_language(accept_language)
    return DEFAULT_LOCALE


def _primary(tag: str) -> str:
    return tag.strip().lower().replace("_", "-").split("-")[0]


@functools.lru_cache(maxsize=256)
def _from_accept_language(header: str) -> str:
    best, best_q = DEFAULT_LOCALE, 0.0
    for part in header.split(","):
        tag, _, params = part.partition(";")
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        language = _primary(tag)
        if language in LOCALES and q > best_q:  # the first of equal preferences wins
            best, best_q = language, q
    return best


@functools.cache
def locale_data(locale: str) -> dict[str, Any]:
    """The parsed ``catalog/i18n/<locale>.yaml`` (English has none: its strings are the keys)."""
    if locale == DEFAULT_LOCALE:
        return {}
    path = I18N_DIR / f"{locale}.yaml"
    data = read_yaml(path) or {}
    return data


@dataclass(frozen=True)
class Message:
    """A composed English message and the locale's template for it."""

    english: str
    pattern: re.Pattern[str]
    template: str

    @classmethod
    def compile(cls, english: str, template: str) -> "Message":
        parts = _SLOT.split(english)  # literal, slot, literal, slot, ...
        regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.*?)" for i, part in enumerate(parts))
        return cls(english, re.compile(regex, re.DOTALL), template)


@dataclass
class Translator:
    """One locale's strings for one catalog: a dict per scope, merged once.

    Call it with an English UI string (and the product and field whose page shows
    it); it returns the locale's wording, or the English string when it has none.
    """

    locale: str
    html_lang: str
    common: dict[str, str] = field(default_factory=dict)
    products: dict[str, dict[str, str]] = field(default_factory=dict)
    fields: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    steps: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    params: dict[str, dict[str, str]] = field(default_factory=dict)  #: product -> API parameter -> English label
    messages: tuple[Message, ...] = ()
    _composed: dict[tuple[str, str | None], str] = field(default_factory=dict, repr=False, compare=False)

    #: composed strings remembered per translator (toasts and errors repeat)
    MEMO = 4096

    def __call__(self, text: Any, product: str | None = None, field: str | None = None,
                 step: str | None = None) -> Any:
        """``text`` in this locale, as the pages of ``product`` (None: the console's
        chrome) show it, within one ``field`` or wizard ``step`` when given."""
        if not self.common or not isinstance(text, str) or not text:
            return text
        table = None
        if field is not None:
            table = self.fields.get((product, field))
        elif step is not None:
            table = self.steps.get((product, step))
        if table is None:
            table = self.products.get(product, self.common) if product is not None else self.common
        found = table.get(text)
        if found is not None:
            return found
        key = (text, product)
        found = self._composed.get(key)
        if found is None:
            found = self._compose(text, product)
            if len(self._composed) < self.MEMO:
                self._composed[key] = found
        return found

    def _compose(self, text: str, product: str | None) -> str:
        for message in self.messages:
            match = message.pattern.fullmatch(text)
            if match is not None:
                slots = {name: self._slot(name, value, product) for name, value in match.groupdict().items()}
                return message.template.format_map(slots)
        return text

    def _slot(self, name: str, value: str, product: str | None) -> str:
        if name in VERBATIM_SLOTS:
            return value
        if name == "param":
            value = self.params.get(product or "", {}).get(value, value)
        stripped = value.strip()
        return self(stripped, product) if stripped else value


def translator(catalog: Catalog, locale: str) -> Translator:
    """The translator of ``locale`` for ``catalog`` (English: the identity)."""
    html_lang = LOCALES[locale][0]
    data = locale_data(locale)
    if not data:
        return Translator(locale, html_lang)
    common = {str(k): str(v) for k, v in (data.get("common") or {}).items()}
    products: dict[str, dict[str, str]] = {}
    fields: dict[tuple[str, str], dict[str, str]] = {}
    steps: dict[tuple[str, str], dict[str, str]] = {}
    params: dict[str, dict[str, str]] = {}
    scoped = data.get("products") or {}
    for key, product in catalog.products.items():
        own = scoped.get(key) or {}
        table = {**common, **{str(k): str(v) for k, v in (own.get("labels") or {}).items()}}
        products[key] = table
        for scopes, narrower in ((fields, own.get("fields")), (steps, own.get("steps"))):
            for name, strings in (narrower or {}).items():
                scopes[(key, name)] = {**table, **{str(k): str(v) for k, v in strings.items()}}
        params[key] = {name: spec["label"] for name, spec in _field_specs(product)}
    messages = tuple(Message.compile(english, str(template))
                     for english, template in (data.get("messages") or {}).items())
    return Translator(locale, html_lang, common, products, fields, steps, params, messages)


_CONTEXT_PRODUCT = object()


@pass_context
def gettext(context: Context, text: Any, product: Any = _CONTEXT_PRODUCT, field: str | None = None,
            step: str | None = None) -> Any:
    """The templates' ``_()``: ``text`` in the request's locale (the context's ``i18n``),
    in the scope of the page's product unless ``product`` names another (None: the
    console's chrome)."""
    t = context.get("i18n")
    if t is None:
        return text
    if product is _CONTEXT_PRODUCT:
        product = context.get("product")
    key = product.get("key") if isinstance(product, dict) else product
    return t(text, key, field=field, step=step)


#: the console shows times in China Standard Time, as the real one does for its regions
CONSOLE_TZ = timezone(timedelta(hours=8))


@pass_context
def console_time(context: Context, epoch: Any) -> str:
    """The templates' ``when()``: a Unix time as the console shows it, in the request's
    locale ("Jan 1, 2021, 08:00:00"; 2021年1月1日 08:00:00)."""
    try:
        moment = datetime.fromtimestamp(float(epoch), CONSOLE_TZ)
    except (TypeError, ValueError, OverflowError, OSError):
        return str(epoch or "")
    t = context.get("i18n")
    clock = moment.strftime("%H:%M:%S")
    if t is not None and t.locale == "zh":
        return f"{moment.year}年{moment.month}月{moment.day}日 {clock}"
    return f"{moment.strftime('%b')} {moment.day}, {moment.year}, {clock}"


# ------------------------------------------------------------- the English UI


def _field_specs(product: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    """Every (parameter, field spec) of a product: resource fields, extra fields and
    the fields declared inline by action dialogs."""
    for res in product.get("resources", {}).values():
        for group in (res.get("fields") or {}, res.get("extra_fields") or {}):
            yield from group.items()
        for action in (res.get("actions") or {}).values():
            inline = (action.get("form") or {}).get("fields")
            if isinstance(inline, dict):
                yield from inline.items()


def field_strings(product: dict[str, Any]) -> dict[str, set[str]]:
    """Per field parameter of a product: the strings its widget shows (label, options,
    check box label, empty choice)."""
    out: dict[str, set[str]] = {}
    for name, spec in _field_specs(product):
        strings = out.setdefault(name, set())
        strings.add(spec["label"])
        strings.update(str(v) for v in (spec.get("options") or {}).values())
        strings.update(spec[k] for k in ("checkbox_label", "empty", "advanced", "value") if isinstance(spec.get(k), str))
    return out


def product_strings(catalog: Catalog, key: str) -> set[str]:
    """Every string the pages of product ``key`` show (:meth:`Catalog.labels` plus the
    texts of dialogs and pages that are not labels)."""
    product = catalog.products[key]
    out = set(catalog.labels(key))
    for strings in field_strings(product).values():
        out |= strings
    nav = product.get("nav", {})
    out.update(item["title"] for item in nav.values() if item.get("title"))
    for res in product.get("resources", {}).values():
        create = res.get("create") or {}
        for box in (create.get("confirm"), create.get("confirm_page"), create.get("created")):
            if box:
                out.update(v for k, v in box.items() if k in ("title", "text", "ok", "done", "link") and isinstance(v, str))
        for action in (res.get("actions") or {}).values():
            if isinstance(action.get("text"), str):
                out.add(action["text"])
            for box in ("confirm", "form"):
                dialog = action.get(box) or {}
                out.update(v for k, v in dialog.items() if k in ("title", "text", "ok", "done", "confirm_ok")
                           and isinstance(v, str))
        for step in (create.get("steps") or {}).values():
            out.update(v for k, v in step.items() if k in ("title", "short", "summary", "advanced", "next")
                       and isinstance(v, str))
    out.discard("")
    return out


def template_strings(env: Environment) -> set[str]:
    """The literal strings the templates pass to ``_()``."""
    out: set[str] = set()
    for name in env.list_templates():
        source = env.loader.get_source(env, name)[0] if env.loader else ""
        for _, _, strings in extract_from_ast(env.parse(source), gettext_functions=("_",), babel_style=False):
            out.update(s for s in strings[:1] if isinstance(s, str))
    return out


def chrome_strings(env: Environment) -> set[str]:
    """Strings of the console's own chrome: the templates' literals, region and zone
    names, and the composed messages."""
    return template_strings(env) | set(REGIONS.values()) | set(zones("cn-hangzhou").values()) | set(MESSAGES)


def shown_strings(catalog: Catalog, t: Translator, key: str) -> set[str]:
    """Every string the pages of product ``key`` show in ``t``'s locale: its catalog
    strings in their fields' and wizard steps' scopes, and the console's chrome."""
    product = catalog.products[key]
    out = {t(text, key) for text in product_strings(catalog, key)}
    for name, strings in field_strings(product).items():
        out.update(t(text, key, field=name) for text in strings)
    for res in product.get("resources", {}).values():
        for step_key, step in ((res.get("create") or {}).get("steps") or {}).items():
            out.update(t(text, key, step=step_key) for text in (*step.get("buttons", ()), *step.get("links", ())))
    out.update(t(text) for text in set(REGIONS.values()) | set(zones("cn-hangzhou").values()))
    return out
