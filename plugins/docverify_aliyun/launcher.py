"""Where each procedure starts: a page of links to every console of the console map.

A doc says "Log on to the ECS console" and a reader goes there however they like; the
real console home hides the product list in a menu that changes with every release,
so a procedure does not start there but on this page (a ``data:`` URL, served by
nobody): one link per name a doc may use for a console ("ECS console", "Elastic Compute
Service console", "云服务器ECS控制台"), each to that console on the site, in the
account's region. Docs that link the console themselves open their link.
"""

from __future__ import annotations

import base64
import html
import re

from docverify_aliyun.console_map import ConsoleMap, SiteUrls

_CONSOLE_WORD = re.compile(r"(?:console|控制台)$", re.IGNORECASE)
_CJK = re.compile(r"[\u3400-\u9fff]")


def link_names(console: str, names: tuple[str, ...]) -> list[str]:
    """The names a link to a console answers to: its own, and each other name, with
    "console" added to English names that lack it."""
    out = [console]
    for name in names:
        out.append(name if _CONSOLE_WORD.search(name) or _CJK.search(name) else f"{name} console")
    return list(dict.fromkeys(out))


def launcher_page(consoles: ConsoleMap, site: SiteUrls, region: str, base: str | None = None) -> str:
    """The page as a ``data:`` URL."""
    items = []
    for product in consoles.products.values():
        url = html.escape(product.url(site, region, base), quote=True)
        links = " ".join(f'<a href="{url}">{html.escape(name)}</a>' for name in link_names(product.console,
                                                                                         product.names))
        items.append(f"<li>{links}</li>")
    page = (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>Alibaba Cloud consoles</title></head><body>"
        "<h1>Alibaba Cloud consoles</h1>"
        f"<p>Site: {html.escape(site.name)}; region: {html.escape(region)}. The consoles docverify's console map "
        "knows (docverify_aliyun/consoles.yaml; add others with [console.aliyun] console_map).</p>"
        f"<ul>{''.join(items)}</ul></body></html>"
    )
    return "data:text/html;charset=utf-8;base64," + base64.b64encode(page.encode()).decode()
