"""The console map: where each site signs in and where each product's console is, per site and region.

The data is ``consoles.yaml`` beside this module (its sources are named there); a
user's own file (``[console.aliyun] console_map``) adds products or changes them, key
by key. A doc names a console as it likes ("ECS console", "Elastic Compute Service
console", "云服务器ECS控制台"): :meth:`ConsoleMap.product` finds it, or says which
consoles it knows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml

from docverify.errors import ConfigError, UsageError, yaml_error_at

BUILT_IN = Path(__file__).with_name("consoles.yaml")
Site = Literal["china", "international"]
SITES: tuple[str, ...] = ("international", "china")
REGION = re.compile(r"^[a-z]{2,}(?:-[a-z0-9]+)+$")  #: cn-hangzhou, ap-southeast-1, us-east-1
#: what a doc adds to a console's name: "the", "Alibaba Cloud", "(management) console", "(管理)控制台"
_PREFIX = re.compile(r"^(?:the\s+)?(?:alibaba\s+cloud\s+|aliyun\s+|阿里云)?", re.IGNORECASE)
_SUFFIX = re.compile(r"\s*(?:management\s+console|console|管理控制台|控制台)$", re.IGNORECASE)


class UnknownConsole(UsageError):
    """A console name the map does not know."""


@dataclass(frozen=True)
class SiteUrls:
    """Where one site (``china``: aliyun.com, ``international``: alibabacloud.com) is."""

    name: str
    signin: str  #: the RAM user logon page
    federation: str  #: the STS sign-in API (GetSigninToken, Login)
    home: str  #: the console home
    domain: str  #: what the product consoles' hosts end with, e.g. console.aliyun.com


@dataclass(frozen=True)
class ProductConsole:
    """One product's console."""

    key: str  #: ecs, vpc, ...
    console: str  #: its name as the English docs write it: "ECS console"
    names: tuple[str, ...] = ()  #: other names docs use for it
    host: str = ""  #: its host's first label on every site (ecs -> ecs.console.aliyun.com)
    hosts: dict[str, str] = field(default_factory=dict)  #: site -> full host, where it differs
    path: str = ""  #: its page, "" for the root
    region: str | None = None  #: its page for one region ("{region}" in it); None: global, or none known
    addresses: tuple[str, ...] = ()  #: other addresses docs link to for it (no scheme)

    def url(self, site: SiteUrls, region: str | None = None, base: str | None = None) -> str:
        """The console on ``site`` (in ``region`` where it has a page per region). ``base``:
        a server standing in for every console (tests): ``<base>/<key><page>``."""
        page = self.region.format(region=region) if self.region and region else self.path
        if base is not None:
            return f"{base.rstrip('/')}/{self.key}{page}"
        host = self.hosts.get(site.name) or f"{self.host}.{site.domain}"
        return f"https://{host}{page}"

    def own_addresses(self) -> tuple[str, ...]:
        """Every address (no scheme) a doc may link to for this console, on either site."""
        found = [self.hosts[name] + self.path for name in SITES if name in self.hosts]
        if self.host:
            found += [f"{self.host}.console.aliyun.com{self.path}", f"{self.host}.console.alibabacloud.com{self.path}"]
        return tuple(dict.fromkeys((*found, *self.addresses)))


@dataclass(frozen=True)
class ConsoleMap:
    sites: dict[str, SiteUrls]
    products: dict[str, ProductConsole]
    origins: tuple[str, ...] = ()
    source: str = str(BUILT_IN)

    @classmethod
    def load(cls, extra: str | Path | None = None) -> ConsoleMap:
        """The built-in map, with ``extra``'s products and sites laid over it (a YAML file
        of the same schema; its keys replace the built-in ones field by field)."""
        data = _read(BUILT_IN)
        source = str(BUILT_IN)
        if extra is not None:
            path = Path(extra).expanduser()
            if not path.is_file():
                raise ConfigError(f"console map {path} does not exist",
                                  hint="point [console.aliyun] console_map at a YAML file of the consoles.yaml schema")
            data = _merged(data, _read(path))
            source = f"{BUILT_IN} + {path}"
        return _parse(data, source)

    def site(self, name: str) -> SiteUrls:
        try:
            return self.sites[name]
        except KeyError:
            raise ConfigError(f"unknown Alibaba Cloud site {name!r}",
                              hint=f"[console.aliyun] site is one of {', '.join(sorted(self.sites))}") from None

    def product(self, name: str) -> ProductConsole:
        """The console a doc names ("ECS console", "ecs", "云服务器ECS控制台"); raises
        :class:`UnknownConsole` naming the known ones."""
        wanted = _key(name)
        for product in self.products.values():
            if wanted in {_key(text) for text in (product.key, product.console, *product.names)}:
                return product
        raise UnknownConsole(
            f"the aliyun console map has no console named {name!r}",
            hint=f"known: {', '.join(p.console for p in self.products.values())}; add it to a file named by "
                 "[console.aliyun] console_map (the schema of docverify_aliyun/consoles.yaml)")

    def url(self, name: str, site: str, region: str | None = None, base: str | None = None) -> str:
        return self.product(name).url(self.site(site), region, base)


def _key(text: str) -> str:
    text = _SUFFIX.sub("", _PREFIX.sub("", text.strip()))
    return re.sub(r"\s+", " ", text).casefold()


def _read(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        at, problem = yaml_error_at(error)
        raise ConfigError(f"{path}{f':{at + 1}' if at is not None else ''}: not valid YAML: {problem}") from None
    except OSError as error:
        raise ConfigError(f"cannot read the console map {path}: {error.strerror or error}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a console map is a mapping with sites, products and origins")
    return data


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for table in ("sites", "products"):
        merged = {key: dict(value) for key, value in (base.get(table) or {}).items()}
        for key, value in (extra.get(table) or {}).items():
            if not isinstance(value, dict):
                raise ConfigError(f"console map: {table}.{key} must be a mapping of its fields")
            merged[key] = {**merged.get(key, {}), **value}
        out[table] = merged
    out["origins"] = [*(base.get("origins") or []), *(extra.get("origins") or [])]
    unknown = set(extra) - {"sites", "products", "origins"}
    if unknown:
        raise ConfigError(f"console map: unknown key(s) {', '.join(sorted(unknown))}",
                          hint="a console map has sites, products and origins")
    return out


_PRODUCT_FIELDS = {"console", "names", "host", "hosts", "path", "region", "addresses"}
_SITE_FIELDS = {"signin", "federation", "home", "domain"}


def _parse(data: dict[str, Any], source: str) -> ConsoleMap:
    sites: dict[str, SiteUrls] = {}
    for name, value in (data.get("sites") or {}).items():
        if not isinstance(value, dict) or set(value) != _SITE_FIELDS:
            raise ConfigError(f"{source}: site {name!r} needs exactly {', '.join(sorted(_SITE_FIELDS))}")
        sites[name] = SiteUrls(name, **{key: str(value[key]) for key in _SITE_FIELDS})
    products: dict[str, ProductConsole] = {}
    for key, value in (data.get("products") or {}).items():
        if not isinstance(value, dict) or not set(value) <= _PRODUCT_FIELDS or "console" not in value:
            raise ConfigError(f"{source}: product {key!r} needs `console` and only {', '.join(sorted(_PRODUCT_FIELDS))}")
        if not value.get("host") and not value.get("hosts"):
            raise ConfigError(f"{source}: product {key!r} needs `host` (ecs -> ecs.console.aliyun.com) or `hosts`")
        region = value.get("region")
        if region is not None and "{region}" not in str(region):
            raise ConfigError(f"{source}: product {key!r}: `region` must hold {{region}}, e.g. /vpc/{{region}}/vpcs")
        products[str(key)] = ProductConsole(
            key=str(key), console=str(value["console"]), names=tuple(str(n) for n in value.get("names") or ()),
            host=str(value.get("host") or ""), hosts={str(k): str(v) for k, v in (value.get("hosts") or {}).items()},
            path=str(value.get("path") or ""), region=str(region) if region is not None else None,
            addresses=tuple(str(a) for a in value.get("addresses") or ()))
    origins = tuple(str(o) for o in data.get("origins") or ())
    return ConsoleMap(sites, products, origins, source)


@lru_cache(maxsize=8)
def console_map(extra: str | None = None) -> ConsoleMap:
    """The map (cached: it is read once per file)."""
    return ConsoleMap.load(extra)
