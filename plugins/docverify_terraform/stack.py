"""Render a task's Resource META into a Terraform stack.

Templates live in ``terraform_templates/<provider>/`` (the repository's folder,
or the copy installed with the package; a ``--templates DIR`` folder is searched
first, file by file):

- ``types.yaml``: META type -> the provider's Terraform resource type
  (``vpc: alicloud_vpc``); a META type missing there has no template. A type that
  costs money while it exists is a mapping, ``ecs_instance: {resource:
  alicloud_instance, paid: true, size: instance_type}``: ``paid`` marks it for the
  cost guard (:mod:`docverify_terraform.cost_guard`), ``size`` names the attribute
  (and the argument) that chooses how big it is, which the guard holds to an
  allow-list;
- ``provider.tf.j2``: the ``terraform``/``required_providers``/``provider``
  blocks; variables ``region``, ``suffix``, ``provider``;
- ``<meta_type>.tf.j2``: one resource (plus any helper it cannot do without).
  Variables: ``r.address`` (unique local name in the stack: ``vpc_1``),
  ``r.name`` (``docverify-vpc-ab12cd``, with the run suffix; None for unnamed
  types), ``r.suffix``, ``r.region``, ``r.attributes`` (the annotation's, may be
  empty), ``r.index`` (1-based among resources of that type), ``r.meta_type``,
  ``r.tf_type``; functions ``ref(meta_type)`` -> the Terraform address of that
  dependency in this stack (``alicloud_vpc.vpc_1``, so ``vpc_id =
  {{ ref("vpc") }}.id``), ``refs(meta_type)`` -> all of them, ``has(meta_type)``;
  ``attribute(meta_type, name, default)`` -> an attribute of the stack's first
  resource of that type (a vSwitch picks a zone offering the instance's type);
  ``tags``: the tags every taggable resource carries (``docverify-run``,
  ``docverify-task``: ``tags = {{ tags | hcl }}``);
  the filter ``hcl`` writes a Python value as an HCL literal. Every template
  declares ``output "<address>_id"`` and, when the type has a name,
  ``output "<address>_name"``.

Undefined variables are errors (StrictUndefined), reported with the template
file and line. :func:`render_stack` returns the files (``provider.tf``,
``main.tf``) and the map from each output to the task-context keys it fills,
so a doc's ``<vpc-id>`` or ``<your-bucket-name>`` gets the created resource.
"""

from __future__ import annotations

import json
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from docverify.errors import EnvironmentProblem, yaml_error_at
from docverify.provision.meta import META_TYPES, UNNAMED, Requirement, instance_name

#: The default region where a procedure names none.
DEFAULT_REGION = "cn-hangzhou"
#: The tags ``docverify plan`` shows: a run fills in its own (TerraformProvisioner.tags)
PLAN_TAGS = {"docverify-run": "<run id>", "docverify-task": "<procedure id>"}
#: what a mapping entry of types.yaml may hold
_ENTRY_KEYS = {"resource", "paid", "size"}


class TemplateError(EnvironmentProblem):
    """A Terraform template is missing, broken or breaks the contract (names the file and line)."""


class UncoveredMetaError(EnvironmentProblem):
    """Some Resource META has no template for the provider (ResourceCoder's job)."""


# --- where templates are -------------------------------------------------------------------------


def template_dirs(extra: str | Path | None = None) -> list[Path]:
    """The folders searched for ``<provider>/...`` templates, first wins: ``extra``,
    the copy installed with the plugin (``docverify_terraform/terraform_templates``),
    the repository's ``terraform_templates/`` (source checkouts and editable installs)."""
    dirs: list[Path] = []
    if extra is not None:
        folder = Path(extra)
        if not folder.is_dir():
            raise TemplateError(f"templates folder {folder} does not exist",
                                hint="give a folder holding <provider>/types.yaml and <provider>/*.tf.j2")
        dirs.append(folder)
    package = Path(__file__).resolve().parent
    installed = package / "terraform_templates"  # package data (may be a link to the checkout's folder)
    root = package.parent.parent  # plugins/docverify_terraform -> the checkout's root
    candidates = [installed]
    if (root / "pyproject.toml").is_file():  # a source checkout, not some other site-packages folder
        candidates.append(root / "terraform_templates")
    for candidate in candidates:
        if candidate.is_dir() and candidate.resolve() not in {d.resolve() for d in dirs}:
            dirs.append(candidate)
    return dirs


def providers(dirs: Iterable[Path]) -> list[str]:
    """The providers the folders have templates for (a ``types.yaml`` each)."""
    found = {child.name for folder in dirs for child in folder.iterdir() if (child / "types.yaml").is_file()} if dirs else set()
    return sorted(found)


@dataclass
class TemplateSet:
    """One provider's templates over a search path."""

    provider: str
    dirs: list[Path]
    types: dict[str, str]  #: META type -> Terraform resource type
    sources: dict[str, Path]  #: META type -> the types.yaml that mapped it
    #: META types that cost money while they exist: marked ``paid`` in any folder's
    #: types.yaml (a folder searched first cannot unmark what the built-in one marks)
    paid: set[str] = field(default_factory=set)
    sizes: dict[str, str] = field(default_factory=dict)  #: META type -> the attribute choosing its size

    @classmethod
    def load(cls, provider: str, templates: str | Path | None = None) -> "TemplateSet":
        dirs = template_dirs(templates)
        provider_dirs = [folder / provider for folder in dirs if (folder / provider).is_dir()]
        if not any((d / "types.yaml").is_file() for d in provider_dirs):
            known = providers(dirs)
            raise TemplateError(
                f"no Terraform templates for provider '{provider}' in {', '.join(str(d) for d in dirs) or 'no folder'}",
                hint=f"providers with templates: {', '.join(known) or 'none'}",
            )
        types: dict[str, str] = {}
        sources: dict[str, Path] = {}
        marked: set[str] = set()
        sizes: dict[str, str] = {}
        for folder in reversed(provider_dirs):  # the first folder wins
            path = folder / "types.yaml"
            if not path.is_file():
                continue
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            except yaml.YAMLError as error:
                at, problem = yaml_error_at(error)
                line = f":{at + 1}" if at is not None else ""
                raise TemplateError(f"{path}{line}: not valid YAML: {problem}") from None
            if not isinstance(data, dict):
                raise TemplateError(f"{path}: must map META types to Terraform resource types (vpc: alicloud_vpc)")
            for key, value in data.items():
                if key not in META_TYPES:
                    raise TemplateError(f"{path}: unknown META type '{key}'", hint=f"valid types: {', '.join(META_TYPES)}")
                resource, paid, size = _entry(path, key, value)
                types[key] = resource
                sources[key] = path
                if paid:
                    marked.add(key)
                if size:
                    sizes[key] = size
        return cls(provider=provider, dirs=provider_dirs, types=types, sources=sources, paid=marked, sizes=sizes)

    def template_path(self, name: str) -> Path | None:
        for folder in self.dirs:
            if (folder / name).is_file():
                return folder / name
        return None

    def covers(self, meta_type: str) -> bool:
        return meta_type in self.types and self.template_path(f"{meta_type}.tf.j2") is not None

    def environment(self):
        from jinja2 import Environment, FileSystemLoader, StrictUndefined

        env = Environment(
            loader=FileSystemLoader([str(d) for d in self.dirs]),
            undefined=StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )
        env.filters["hcl"] = hcl
        return env


def _entry(path: Path, key: str, value: Any) -> tuple[str, bool, str | None]:
    """(Terraform resource type, paid, size attribute) of one types.yaml entry: a type
    name, or a mapping ``{resource: ..., paid: true, size: instance_type}``."""
    if isinstance(value, Mapping):
        unknown = sorted(set(map(str, value)) - _ENTRY_KEYS)
        if unknown:
            raise TemplateError(f"{path}: '{key}' has unknown keys {', '.join(unknown)}",
                                hint="an entry maps to a resource type name, or to {resource: NAME, paid: true, "
                                     "size: ATTRIBUTE}")
        resource, paid, size = value.get("resource"), value.get("paid", False), value.get("size")
        if not isinstance(paid, bool):
            raise TemplateError(f"{path}: '{key}': paid must be true or false, not {paid!r}")
        if size is not None and not (isinstance(size, str) and re.fullmatch(r"[a-z_][a-z0-9_]*", size)):
            raise TemplateError(f"{path}: '{key}': size must name an attribute (instance_type), not {size!r}")
    else:
        resource, paid, size = value, False, None
    if not isinstance(resource, str) or not re.fullmatch(r"[A-Za-z_][\w-]*", resource):
        raise TemplateError(f"{path}: '{key}' must map to a Terraform resource type name, not {resource!r}")
    return resource, paid, size


# --- HCL values ----------------------------------------------------------------------------------


def hcl(value: Any) -> str:
    """A Python value as an HCL literal: strings quoted (``${`` and ``%{`` escaped),
    numbers, true/false, null, lists and maps."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("${", "$${").replace("%{", "%%{")
    if isinstance(value, Mapping):
        items = []
        for key, item in value.items():
            name = str(key) if re.fullmatch(r"[A-Za-z_][\w-]*", str(key)) else hcl(str(key))
            items.append(f"{name} = {hcl(item)}")
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(value, (list, tuple, set)):
        return "[" + ", ".join(hcl(item) for item in value) + "]"
    return hcl(str(value))


# --- the stack -----------------------------------------------------------------------------------


@dataclass
class StackResource:
    """One Terraform resource of the stack (a requirement with count 2 gives two)."""

    address: str  #: unique local name: vpc_1
    meta_type: str
    tf_type: str  #: alicloud_vpc
    name: str | None
    suffix: str
    region: str
    attributes: dict[str, Any]
    index: int  #: 1-based among the resources of its META type
    template: str  #: the template file used, for messages
    paid: bool = False  #: it costs money while it exists (types.yaml ``paid``)
    size: str | None = None  #: the attribute (and argument) choosing how big it is (types.yaml ``size``)
    text: str = ""  #: what its template rendered (its block, and any helper it declares)

    @property
    def tf_address(self) -> str:
        return f"{self.tf_type}.{self.address}"

    def to_dict(self) -> dict[str, Any]:
        return {"address": self.tf_address, "meta_type": self.meta_type, "name": self.name,
                "attributes": dict(self.attributes), "template": self.template, "paid": self.paid}


@dataclass
class Stack:
    """The Terraform that makes a task's Resource META exist."""

    provider: str
    region: str
    suffix: str
    resources: list[StackResource] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  #: file name -> HCL
    outputs: dict[str, list[str]] = field(default_factory=dict)  #: output name -> task-context keys
    uncovered: list[Requirement] = field(default_factory=list)  #: no template (and what depends on them)
    tags: dict[str, str] = field(default_factory=dict)  #: what every taggable resource is tagged with

    def context(self, values: Mapping[str, Any]) -> dict[str, str]:
        """Task-context entries from ``terraform output -json`` (or plain name -> value):
        each output fills all its keys; the first output to claim a key keeps it."""
        out: dict[str, str] = {}
        for name, keys in self.outputs.items():
            if name not in values:
                continue
            value = values[name]
            if isinstance(value, Mapping) and "value" in value:
                value = value["value"]
            if value is None:
                continue
            for key in keys:
                out.setdefault(key, str(value))
        return out

    def describe(self) -> list[str]:
        """Human-readable resources, for reports: ``alicloud_vpc.vpc_1 (docverify-vpc-ab12cd)``."""
        return [r.tf_address + (f" ({r.name})" if r.name else "") for r in self.resources]

    def paid(self) -> list[StackResource]:
        """The resources that cost money while they exist (the cost guard counts them)."""
        return [r for r in self.resources if r.paid]

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider, "region": self.region, "suffix": self.suffix,
            "resources": [r.to_dict() for r in self.resources],
            "files": dict(self.files),
            "outputs": {name: list(keys) for name, keys in self.outputs.items()},
            "uncovered": [r.type for r in self.uncovered],
            "tags": dict(self.tags),
        }


#: Words a doc uses for each type's placeholders (<vpc-id>, <your-bucket-name>).
_NOUNS: dict[str, tuple[str, ...]] = {
    "vpc": ("vpc",), "vswitch": ("vswitch", "vsw", "v-switch"), "security_group": ("security-group", "sg"),
    "route_table": ("route-table",), "ipv6_gateway": ("ipv6-gateway",), "key_pair": ("key-pair", "keypair"),
    "ecs_instance": ("instance", "ecs-instance", "ecs"), "disk": ("disk",), "snapshot": ("snapshot",),
    "image": ("image", "custom-image"), "eip": ("eip", "allocation"), "nat_gateway": ("nat-gateway", "nat"),
    "snat_entry": ("snat-entry",), "dnat_entry": ("dnat-entry", "forward-entry"), "oss_bucket": ("bucket", "oss-bucket"),
    "oss_object": ("object", "object-key"), "ram_user": ("user", "ram-user"), "ram_group": ("group", "user-group", "ram-group"),
    "ram_role": ("role", "ram-role"), "ram_policy": ("policy", "ram-policy"), "ram_access_key": ("access-key", "accesskey"),
    "slb": ("slb", "clb", "load-balancer", "slb-instance"), "slb_listener": ("listener", "slb-listener"),
    "alb": ("alb", "alb-instance", "load-balancer"), "alb_listener": ("alb-listener", "listener"),
    "alb_server_group": ("server-group", "alb-server-group"),
    "rds_instance": ("rds-instance", "db-instance", "rds", "instance"), "rds_database": ("database", "db"),
    "rds_account": ("account", "db-account"), "mongodb_instance": ("mongodb-instance", "instance"),
    "kms_key": ("key", "kms-key", "cmk"), "actiontrail_trail": ("trail",),
}
#: Types a doc names by their name (a bare <bucket> means the bucket's name); the others by ID.
_NAME_FIRST = frozenset({"oss_bucket", "oss_object", "ram_user", "ram_group", "ram_role", "ram_policy", "key_pair",
                         "rds_database", "rds_account", "actiontrail_trail"})


def _spellings(key: str) -> list[str]:
    """The context key of a placeholder; ``Task.resolve`` matches ``<your_vpc_id>`` and
    ``<Your VPC ID>`` to ``your-vpc-id`` itself (:func:`docverify.task.placeholder_key`)."""
    return [key]


def context_keys(resource: StackResource, first_of_type: bool) -> tuple[list[str], list[str]]:
    """(keys the ID fills, keys the name fills) in the task context."""
    id_keys = [f"{resource.address}_id"]
    name_keys = [f"{resource.address}_name"]
    if first_of_type:
        for noun in _NOUNS.get(resource.meta_type, ()):
            id_keys += _spellings(f"{noun}-id") + _spellings(f"your-{noun}-id")
            name_keys += _spellings(f"{noun}-name") + _spellings(f"your-{noun}-name")
            bare = _spellings(noun) + _spellings(f"your-{noun}")
            (name_keys if resource.meta_type in _NAME_FIRST and resource.name else id_keys).extend(bare)
    return list(dict.fromkeys(id_keys)), list(dict.fromkeys(name_keys))


def render_stack(
    requirements: list[Requirement],
    provider: str,
    *,
    suffix: str,
    region: str | None = None,
    templates: str | Path | None = None,
    allow_uncovered: bool = False,
    tags: Mapping[str, str] | None = None,
) -> Stack:
    """The Terraform files for ``requirements`` (closed over dependencies, in order:
    :func:`docverify.provision.meta.resolve_meta`) with ``provider``'s templates;
    ``tags`` (default :data:`PLAN_TAGS`) go on every resource whose template tags it.

    A META type without a template is an :class:`UncoveredMetaError`, unless
    ``allow_uncovered``: then it and what depends on it are left out and listed in
    ``Stack.uncovered`` (``docverify plan`` shows them; ResourceCoder writes them)."""
    region = region or DEFAULT_REGION
    template_set = TemplateSet.load(provider, templates)
    stack = Stack(provider=provider, region=region, suffix=suffix, tags=dict(PLAN_TAGS if tags is None else tags))
    missing = {r.type for r in requirements if not template_set.covers(r.type)}
    blocked = set(missing)
    changed = True
    while changed:  # what depends on something uncovered cannot be rendered either
        changed = False
        for requirement in requirements:
            if requirement.type not in blocked and any(d in blocked for d in requirement.dependencies):
                blocked.add(requirement.type)
                changed = True
    if missing and not allow_uncovered:
        raise UncoveredMetaError(
            f"no '{provider}' template for {', '.join(sorted(missing))}",
            hint=f"add terraform_templates/{provider}/<type>.tf.j2 and a types.yaml entry, or let ResourceCoder write them",
        )
    stack.uncovered = [r for r in requirements if r.type in blocked]
    counters: dict[str, int] = {}
    for requirement in requirements:
        if requirement.type in blocked:
            continue
        for number in range(1, requirement.count + 1):
            counters[requirement.type] = counters.get(requirement.type, 0) + 1
            index = counters[requirement.type]
            stack.resources.append(StackResource(
                address=f"{requirement.type}_{index}",
                meta_type=requirement.type,
                tf_type=template_set.types[requirement.type],
                name=instance_name(requirement, suffix, number) if requirement.type not in UNNAMED else None,
                suffix=suffix,
                region=region,
                attributes=dict(requirement.attributes),
                index=index,
                template=f"{provider}/{requirement.type}.tf.j2",
                paid=requirement.type in template_set.paid,
                size=template_set.sizes.get(requirement.type),
            ))
    env = template_set.environment()
    globals_ = {"region": region, "suffix": suffix, "provider": provider, "tags": dict(stack.tags)}
    stack.files["provider.tf"] = _render(env, template_set, "provider.tf.j2", globals_)
    blocks = []
    others: dict[str, list[str]] = {}  #: the templates' further outputs (an EIP's address): their own key
    for resource in stack.resources:
        text = _render(env, template_set, f"{resource.meta_type}.tf.j2", {**globals_, **_functions(stack, resource)})
        _check_outputs(text, resource, template_set)
        resource.text = text
        for attribute in re.findall(rf'output\s+"{re.escape(resource.address)}_(\w+)"', text):
            if attribute not in ("id", "name"):
                others[f"{resource.address}_{attribute}"] = [f"{resource.address}_{attribute}"]
        blocks.append(f"# {resource.meta_type} {resource.index}" + (f": {resource.name}" if resource.name else "") + "\n" + text.strip() + "\n")
    stack.files["main.tf"] = "\n".join(blocks)
    seen: set[str] = set()
    for resource in stack.resources:
        id_keys, name_keys = context_keys(resource, resource.meta_type not in seen)
        seen.add(resource.meta_type)
        stack.outputs[f"{resource.address}_id"] = id_keys
        if resource.name is not None:
            stack.outputs[f"{resource.address}_name"] = name_keys
    stack.outputs.update(others)
    return stack


def _functions(stack: Stack, resource: StackResource) -> dict[str, Any]:
    def refs(meta_type: str) -> list[str]:
        if meta_type not in META_TYPES:
            raise TemplateError(f"ref('{meta_type}'): not a META type; valid types: {', '.join(META_TYPES)}")
        return [r.tf_address for r in stack.resources if r.meta_type == meta_type]

    def ref(meta_type: str) -> str:
        found = refs(meta_type)
        if not found:
            raise TemplateError(f"ref('{meta_type}'): this stack has no {meta_type} "
                                f"(is '{meta_type}' a dependency of {resource.meta_type} in docverify.provision.meta.DEPENDENCIES?)")
        return found[0]

    def has(meta_type: str) -> bool:
        return bool(refs(meta_type))

    def attribute(meta_type: str, name: str, default: Any = None) -> Any:
        refs(meta_type)  # a META type, or an error naming the valid ones
        first = next((r for r in stack.resources if r.meta_type == meta_type), None)
        return first.attributes.get(name, default) if first is not None else default

    return {"r": resource, "ref": ref, "refs": refs, "has": has, "attribute": attribute}


def _render(env, template_set: TemplateSet, name: str, variables: dict[str, Any]) -> str:
    from jinja2 import TemplateError as JinjaError
    from jinja2 import TemplateNotFound, TemplateSyntaxError

    path = template_set.template_path(name)
    shown = str(path) if path else f"{template_set.provider}/{name}"
    try:
        return env.get_template(name).render(**variables)
    except TemplateNotFound:
        raise TemplateError(f"template {template_set.provider}/{name} not found in {', '.join(map(str, template_set.dirs))}") from None
    except TemplateSyntaxError as error:
        raise TemplateError(f"{error.filename or shown}:{error.lineno}: template syntax error: {error.message}") from None
    except (JinjaError, TemplateError) as error:
        line = _template_line(error, name)
        message = error.message if isinstance(error, TemplateError) else str(error)
        raise TemplateError(f"{shown}:{line}: {message}" if line else f"{shown}: {message}") from None


def _template_line(error: BaseException, name: str) -> int | None:
    """The line of the template being rendered where ``error`` happened (jinja keeps
    template frames in the traceback with their template line numbers)."""
    line = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename and frame.filename.endswith(name):
            line = frame.lineno
    return line


def _check_outputs(text: str, resource: StackResource, template_set: TemplateSet) -> None:
    path = template_set.template_path(f"{resource.meta_type}.tf.j2")
    wanted = [f"{resource.address}_id"] + ([f"{resource.address}_name"] if resource.name is not None else [])
    for output in wanted:
        if not re.search(rf'^\s*output\s+"{re.escape(output)}"\s*\{{', text, re.MULTILINE):
            raise TemplateError(
                f"{path}: declares no output \"{output}\"",
                hint='every template declares output "{{ r.address }}_id" (and "{{ r.address }}_name" for named types)',
            )
