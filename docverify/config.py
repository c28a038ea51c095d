"""docverify.toml, ``DOCVERIFY_*`` environment variables and CLI options -> :class:`Settings`.

Precedence, lowest first: defaults < docverify.toml < environment < CLI options.

The file is found upward from the working directory (or given with ``--config`` /
``DOCVERIFY_CONFIG``). Layout::

    jobs = 4                     # DOCVERIFY_JOBS

    [parse]                      # DOCVERIFY_PARSE__MAX_FILE_BYTES=...
    max_file_bytes = 5_000_000

    [console]
    use = "sandbox"              # DOCVERIFY_CONSOLE=sandbox
    [console.sandbox]            # options of the plugin `sandbox` (its Options model)
    release = "2026-06-01"       # DOCVERIFY_CONSOLE__SANDBOX__RELEASE=...

Every plugin family has such a table (``console``, ``provisioner``, ``executor``,
``policy``, ``checker``, ``reporter``, ``backend``): ``use`` picks the plugin(s), a sub-table per
plugin holds its options. Without ``use`` a family gets the plugin that registered
itself as its default (``register(..., default=True)``). An unknown key is an error
naming the key and where it came from (file and line, environment variable or option).
A plugin's former name (``register(..., aliases=(...))``) still works, in ``use`` and
as a table name, with a warning (:attr:`Config.warnings`).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Iterable, Mapping

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from docverify.cost import BUDGET, Price
from docverify.errors import ConfigError, PluginError
from docverify.registry import Plugin, unknown_name_message

if TYPE_CHECKING:
    from docverify.plugins import PluginSet

CONFIG_FILE_NAME = "docverify.toml"
ENV_PREFIX = "DOCVERIFY_"
#: DOCVERIFY_* variables that are not settings (read where they are used).
ENV_NOT_SETTINGS = frozenset({"DOCVERIFY_CONFIG", "DOCVERIFY_DEBUG", "DOCVERIFY_CORPUS"})


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class ParseSettings(_Section):
    """How documents are found and read."""

    include: list[str] = Field(["*.md", "*.mdx"], description="file name patterns of documents")
    exclude: list[str] = Field(
        [".git", "node_modules", ".venv", "venv", "__pycache__", ".docverify"],
        description="file or folder names never entered",
    )
    max_file_bytes: int = Field(5_000_000, gt=0, description="larger files are reported and skipped")
    jobs: int = Field(0, ge=0, le=256, description="processes that parse a large set of files (0: one per core)")


class FamilySettings(BaseModel):
    """``use`` picks plugins of one family; each other key is a plugin's options table."""

    model_config = ConfigDict(extra="allow")

    #: ``use`` as configured; None when it is not (then :attr:`use` is the family's default).
    #: The schema says what a file may hold: a list of names (never null, no default).
    configured: Annotated[list[str] | None, WithJsonSchema({"items": {"type": "string"}, "type": "array"})] = Field(
        None, alias="use", title="Use",
        description="the plugin(s) to use; when unset, the plugin that declares itself the family's default",
        json_schema_extra=lambda schema: schema.pop("default", None))
    _table: str = PrivateAttr("")
    _plugins: "Callable[[], PluginSet] | None" = PrivateAttr(None)

    @field_validator("configured", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return _split_names(value)

    @property
    def use(self) -> list[str]:
        """The plugin(s) to use: ``use`` as configured, else the one plugin of the family
        registered with ``default=True``. ConfigError when none or several are."""
        if self.configured is not None:
            return list(self.configured)
        from docverify.plugins import installed_plugins

        plugins = (self._plugins or installed_plugins)()
        return [plugins.registry(FAMILY_TABLES[self._table]).default()]

    def plugin_tables(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def _split_names(value: Any) -> Any:
    """``"json, junit"`` -> ``["json", "junit"]``; anything else as it is."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _family() -> Any:
    return Field(default_factory=FamilySettings)


class Settings(_Section):
    """The whole configuration tree."""

    jobs: int = Field(default_factory=lambda: min(4, os.cpu_count() or 1), ge=1, le=64,
                      description="procedures run in parallel (browser contexts); default: CPU cores, at most 4")
    parse: ParseSettings = Field(default_factory=ParseSettings)
    console: FamilySettings = _family()
    provisioner: FamilySettings = _family()
    executor: FamilySettings = _family()
    policy: FamilySettings = _family()
    checker: FamilySettings = _family()
    reporter: FamilySettings = _family()
    backend: FamilySettings = _family()
    prices: dict[str, Price] = Field(default_factory=dict,
                                     description="per model: USD/CNY per million tokens, e.g. [prices.gpt-4o-mini]")
    budget: str | None = Field(None, description="stop model calls before this is spent, e.g. '2.50USD', '20CNY'")

    @field_validator("budget")
    @classmethod
    def _budget(cls, value: str | None) -> str | None:
        if value is not None and not BUDGET.match(value):
            raise ValueError("not a budget: write an amount and a currency, e.g. 2.50USD or 20CNY")
        return value

    @model_validator(mode="after")
    def _name_families(self) -> "Settings":
        for table in FAMILY_TABLES:
            getattr(self, table)._table = table
        return self


#: config table -> plugin family (hookspecs / registries)
FAMILY_TABLES: dict[str, str] = {
    "console": "consoles",
    "provisioner": "provisioners",
    "executor": "executors",
    "policy": "policies",
    "checker": "checkers",
    "reporter": "reporters",
    "backend": "backends",
}


@dataclass
class Config:
    """Validated settings plus where each value came from."""

    settings: Settings
    file: Path | None = None
    #: dotted key -> "docverify.toml:12", "env DOCVERIFY_JOBS", "option --jobs"
    origins: dict[str, str] = field(default_factory=dict)
    #: what the user should change, though it works (a plugin's former name), each with where it is
    warnings: list[str] = field(default_factory=list)

    def origin(self, dotted: str) -> str:
        """Where a key's value came from (the nearest enclosing key that has one)."""
        if dotted in self.origins:
            return self.origins[dotted]
        for key, where in self.origins.items():  # a table set only through its keys
            if key.startswith(dotted + "."):
                return where
        parts = dotted.split(".")[:-1]
        while parts:
            if (found := self.origins.get(".".join(parts))) is not None:
                return found
            parts.pop()
        return "default"

    def values(self) -> dict[str, Any]:
        """The settings as JSON values, each family's ``use`` the plugins it picks (its
        default plugin where none is configured)."""
        values = self.settings.model_dump(mode="json", by_alias=True)
        for table in FAMILY_TABLES:
            values[table]["use"] = getattr(self.settings, table).use
        return values

    def plugin_options(self, table: str, name: str, plugin: type[Plugin]) -> Plugin.Options:
        """Validate ``[<table>.<name>]`` against the plugin's ``Options`` model."""
        raw = getattr(self.settings, table).plugin_tables().get(name, {})
        try:
            return plugin.Options.model_validate(raw)
        except ValidationError as error:
            raise ConfigError(_describe(error, self, prefix=(table, name), model=plugin.Options)) from None

    def check_plugin_tables(self, names_by_table: Mapping[str, Iterable[str]]) -> None:
        """Every plugin table must name an installed plugin of its family."""
        from docverify.registry import FAMILY_BY_NAME

        for table, family in FAMILY_TABLES.items():
            valid = sorted(names_by_table.get(table, ()))
            for name, value in getattr(self.settings, table).plugin_tables().items():
                where = self.origin(f"{table}.{name}")
                if name not in valid:
                    raise ConfigError(
                        f"{where}: [{table}.{name}]: "
                        + unknown_name_message(FAMILY_BY_NAME[family], name, valid)
                    )
                if not isinstance(value, dict):
                    raise ConfigError(f"{where}: {table}.{name} must be a table of options")


def find_config_file(start: Path) -> Path | None:
    """docverify.toml in ``start`` or the nearest folder above it."""
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_FILE_NAME
        if candidate.is_file():
            return candidate
    return None


def load_config(
    *,
    path: str | Path | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    override_names: Mapping[str, str] | None = None,
    plugins: "Callable[[], PluginSet] | None" = None,
) -> Config:
    """Build the configuration.

    ``overrides`` maps dotted keys to CLI values (``None`` = not given);
    ``override_names`` maps dotted keys to the option that set them, for messages.
    ``plugins`` gives the plugin set whose defaults and former names apply (default:
    the installed plugins); it is asked only when a default or a name is looked up.
    """
    environ = os.environ if environ is None else environ
    cwd = cwd or Path.cwd()
    path = path or environ.get("DOCVERIFY_CONFIG") or None
    if path:
        file = Path(path)
        if not file.is_file():
            raise ConfigError(f"config file {file} does not exist", hint="check --config / DOCVERIFY_CONFIG")
    else:
        file = find_config_file(cwd)

    merged: dict[str, Any] = Settings().model_dump(by_alias=True)
    origins: dict[str, str] = {}
    if file is not None:
        data, lines = read_toml(file)
        shown = display_path(file)
        _merge(merged, data, origins, lambda key: f"{shown}:{lines[key]}" if key in lines else None)
    env_data, env_origins = _from_environ(environ)
    _merge(merged, env_data, origins, env_origins.get)
    cli_data: dict[str, Any] = {}
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        _set_dotted(cli_data, dotted, value)
    names = override_names or {}
    _merge(merged, cli_data, origins, lambda key: f"option {names.get(key, key)}")

    if plugins is None:
        from docverify.plugins import installed_plugins

        plugins = installed_plugins
    config = Config(Settings.model_construct(), file, origins)
    config.warnings = _rename_plugins(merged, config, plugins)
    try:
        config.settings = Settings.model_validate(merged)
    except ValidationError as error:
        raise ConfigError(_describe(error, config)) from None
    for table in FAMILY_TABLES:
        getattr(config.settings, table)._plugins = plugins
    return config


def _rename_plugins(merged: dict[str, Any], config: Config, plugins: "Callable[[], PluginSet]") -> list[str]:
    """A plugin's former names (its registry's aliases) in ``<family>.use`` and as
    options tables ``[<family>.<former>]`` -> its name, with one warning per name
    saying where it was. Nothing is asked of the plugins when no family names one;
    plugins that cannot be loaded leave the names as they are (the error comes when
    the plugins are used)."""
    warnings: dict[tuple[str, str], str] = {}
    for table, family in FAMILY_TABLES.items():
        section = merged.get(table)
        if not isinstance(section, dict):
            continue
        use = _split_names(section.get("use"))
        names = [name for name in use if isinstance(name, str)] if isinstance(use, list) else []
        tables = [key for key in section if key != "use"]
        if not names and not tables:
            continue
        try:
            registry = plugins().registry(family)
        except PluginError:
            return list(warnings.values())
        for name in names:
            if (message := registry.renamed(name)) is not None:
                warnings.setdefault((table, name), f"{config.origin(f'{table}.use')}: {message}")
        if any(registry.renamed(name) for name in names):
            section["use"] = [registry.canonical(name) if isinstance(name, str) else name for name in use]
        for old in tables:
            if (message := registry.renamed(old)) is None:
                continue
            warnings.setdefault((table, old), f"{config.origin(f'{table}.{old}')}: {message}")
            _move_table(section, config.origins, table, old, registry.canonical(old))
    return list(warnings.values())


def _move_table(section: dict[str, Any], origins: dict[str, str], table: str, old: str, new: str) -> None:
    """``[<table>.<old>]`` -> ``[<table>.<new>]`` and the origins of its keys; where both
    are set, the new table's own values win."""
    options, current = section.pop(old), section.get(new)
    if isinstance(options, dict) and isinstance(current, dict):
        section[new] = {**options, **current}
    elif current is None:
        section[new] = options
    prefix = f"{table}.{old}"
    for key in [key for key in origins if key == prefix or key.startswith(prefix + ".")]:
        where = origins.pop(key)
        origins.setdefault(f"{table}.{new}{key[len(prefix):]}", where)


def display_path(file: Path) -> str:
    try:
        return str(file.relative_to(Path.cwd()))
    except ValueError:
        return str(file)


def read_toml(file: Path, error: type[ConfigError] = ConfigError) -> tuple[dict[str, Any], dict[str, int]]:
    """A TOML file's data and the line of each dotted key; ``error`` (a ConfigError)
    names the file when it cannot be read or parsed."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        raise error(f"cannot read {display_path(file)}: {problem}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as problem:
        raise error(f"{display_path(file)}: invalid TOML: {problem}") from None
    return data, _key_lines(text)


_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")


def _key_lines(text: str) -> dict[str, int]:
    """Dotted key -> line of its table header or assignment (first seen)."""
    lines: dict[str, int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if header := _TABLE.match(line):
            table = _unquote_dotted(header.group(1))
            lines.setdefault(table, number)
        elif assign := _ASSIGN.match(line):
            key = _unquote_dotted(assign.group(1))
            lines.setdefault(f"{table}.{key}" if table else key, number)
    return lines


def _unquote_dotted(key: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in key.split("."))


def _from_environ(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """``DOCVERIFY_JOBS=4`` -> jobs; ``DOCVERIFY_POLICY=openai`` -> policy.use;
    ``DOCVERIFY_PARSE__MAX_FILE_BYTES`` -> parse.max_file_bytes;
    ``DOCVERIFY_POLICY__OPENAI__MODEL`` -> policy.openai.model."""
    data: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or name in ENV_NOT_SETTINGS:
            continue
        parts = name[len(ENV_PREFIX):].lower().split("__")
        head = parts[0]
        if head in FAMILY_TABLES and len(parts) == 1:
            parts = [head, "use"]
        elif head not in Settings.model_fields:
            continue  # e.g. DOCVERIFY_BROWSER, read by the plugin that needs it
        value: Any = environ[name]
        if _is_list_key(parts):
            value = [item.strip() for item in value.split(",") if item.strip()]
        dotted = ".".join(parts)
        _set_dotted(data, dotted, value)
        origins[dotted] = f"env {name}"
    return data, origins


def _is_list_key(parts: list[str]) -> bool:
    if parts[-1] == "use" and parts[0] in FAMILY_TABLES:
        return True
    model: Any = Settings
    for part in parts:
        info = getattr(model, "model_fields", {}).get(part)
        if info is None:
            return False
        model = info.annotation
    return getattr(model, "__origin__", None) is list


def _set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = value


def _merge(
    target: dict[str, Any],
    layer: Mapping[str, Any],
    origins: dict[str, str],
    where: Callable[[str], str | None],
    prefix: str = "",
) -> None:
    """Deep-merge ``layer`` into ``target``, recording where each key came from."""
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if (here := where(dotted)) is not None:
                origins[dotted] = here
            if not isinstance(target.get(key), dict):
                target[key] = {}
            _merge(target[key], value, origins, where, f"{dotted}.")
            continue
        target[key] = value
        if (here := where(dotted)) is not None:
            origins[dotted] = here


def _describe(
    error: ValidationError, config: Config, prefix: tuple[str, ...] = (), model: type[BaseModel] = Settings
) -> str:
    """One line per problem: ``<where>: <key>: <what>``; ``model`` is what was
    validated, ``prefix`` where it sits in the configuration tree."""
    messages = []
    for problem in error.errors():
        relative = tuple(str(part) for part in problem["loc"])
        dotted = ".".join(prefix + relative)
        where = config.origin(dotted)
        if problem["type"] == "extra_forbidden":
            key = relative[-1]
            known = _known_keys(model, relative[:-1])
            close = difflib.get_close_matches(key, known, n=1)
            suggestion = f" (did you mean {close[0]!r}?)" if close else ""
            valid = f"; valid keys: {', '.join(known)}" if known else ""
            messages.append(f"{where}: unknown key {dotted!r}{suggestion}{valid}")
        else:
            messages.append(f"{where}: {dotted}: {problem['msg']}")
    return "\n".join(messages)


def _known_keys(model: Any, parent: tuple[str, ...]) -> list[str]:
    for part in parent:
        info = getattr(model, "model_fields", {}).get(part)
        if info is None:
            return []
        model = info.annotation
    return sorted(getattr(model, "model_fields", {}))
