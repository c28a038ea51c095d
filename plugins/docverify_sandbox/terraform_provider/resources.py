"""One generic pyvider resource, specialised per catalog resource type.

:func:`resource_class` turns a :class:`ResourceType` into a registered pyvider
resource named after it (``sandbox_vpc_vswitch``): the create operation's
parameters become attributes (required where the API requires them without a
default; otherwise optional and filled in from what the sandbox reports), plus
``region_id`` and the computed ``id`` and ``status``. A change to an attribute
that no update operation covers replaces the resource.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from pyvider.common.utils.attrs_factory import create_attrs_class_from_schema
from pyvider.exceptions import ResourceError
from pyvider.resources.base import BaseResource
from pyvider.resources.context import ResourceContext
from pyvider.schema import PvsAttribute, PvsSchema, a_bool, a_num, a_str, s_resource

from docverify.errors import DocverifyError
from docverify_sandbox.terraform_provider.catalog_types import Attribute, ResourceType
from docverify_sandbox.terraform_provider.lifecycle import ResourceFailure, SandboxResources, attribute_value

_FACTORIES = {"string": a_str, "number": a_num, "bool": a_bool}


def schema_of(rt: ResourceType) -> PvsSchema:
    """The Terraform schema of a resource type."""
    attributes: dict[str, PvsAttribute] = {
        "id": a_str(f"The {rt.title}'s ID ({rt.id_param}).", computed=True),
        "status": a_str(f"The {rt.title}'s status ({rt.status_param}).", computed=True),
        "region_id": a_str("Region; the provider's region when unset.", optional=True, computed=True,
                           requires_replace=True),
    }
    for attr in rt.attributes:
        flags: dict[str, Any] = {"required": True} if attr.required else {"optional": True, "computed": True}
        description = f"{attr.description} ({attr.api_name})"
        if attr.default is not None:
            description += f"; default {attr.default}"
        attributes[attr.name] = _FACTORIES[attr.kind](description, sensitive=attr.sensitive,
                                                      requires_replace=not attr.updatable, **flags)
    for name, api_name in rt.computed:
        attributes[name] = a_str(f"{api_name}, as the sandbox reports it.", computed=True)
    if rt.transitions:
        attributes[DESIRED] = a_str(f"The status to bring the {rt.title} to once created: "
                                    f"{', '.join(rt.statuses)}.", optional=True)
    return s_resource(attributes=attributes)


#: The attribute that asks for a status after creation (a stopped instance), where a type has transitions.
DESIRED = "desired_status"


def _api() -> SandboxResources:
    from pyvider.hub import hub

    provider = hub.get_component("singleton", "provider")
    resources = getattr(provider, "resources", None)
    if resources is None:
        err = ResourceError("the sandbox provider is not configured")
        err.add_context("terraform.summary", "Provider not configured")
        raise err
    return resources


def _failure(exc: Exception) -> ResourceError:
    err = ResourceError(str(exc))
    err.add_context("terraform.summary", str(exc))
    return err


class CatalogResource(BaseResource):
    """A sandbox resource; subclasses name their :class:`ResourceType`."""

    resource_type: ClassVar[ResourceType]
    _schema: ClassVar[PvsSchema]

    @classmethod
    def get_schema(cls) -> PvsSchema:
        return cls._schema

    async def _validate_config(self, config: Any) -> list[str]:
        return []

    # ----------------------------------------------------------- helpers
    def _parent_of(self, state: Any) -> str | None:
        rt = self.resource_type
        if not rt.parent_param:
            return None
        attr = next(a for a in rt.attributes if a.api_name == rt.parent_param)
        return getattr(state, attr.name, None)

    def _state(self, item: dict[str, Any], known: Any, region: str) -> Any:
        """The new state: what Terraform knew, completed from what the sandbox reports."""
        rt = self.resource_type
        values: dict[str, Any] = {"id": str(item[rt.id_param]), "region_id": region}
        status = item.get(rt.status_param)
        values["status"] = None if status is None else str(status)
        for attr in rt.attributes:
            value = getattr(known, attr.name, None) if known is not None else None
            if value is None and not attr.sensitive:
                value = _reported(attr, item)
            values[attr.name] = value
        for name, api_name in rt.computed:
            values[name] = attribute_value("string", item.get(api_name))
        if rt.transitions:
            values[DESIRED] = getattr(known, DESIRED, None) if known is not None else None
        return self.state_class(**values)

    async def _run(self, fn, *args) -> Any:
        try:
            return await asyncio.to_thread(fn, *args)
        except (ResourceFailure, DocverifyError) as exc:  # an API error; the sandbox unreachable
            raise _failure(exc) from None

    # --------------------------------------------------------- lifecycle
    async def _create_apply(self, ctx: ResourceContext) -> tuple[Any, None]:
        rt = self.resource_type
        api = _api()
        config = ctx.config
        region = getattr(config, "region_id", None) or api.region
        values = {a.api_name: getattr(config, a.name) for a in rt.attributes
                  if getattr(config, a.name, None) is not None}
        item = await self._run(api.create, rt, values, region)
        desired = getattr(config, DESIRED, None) if rt.transitions else None
        if desired:
            item = await self._run(api.bring_to, rt, str(item[rt.id_param]), desired, region, self._parent_of(config))
        return self._state(item, config, region), None

    async def _update_apply(self, ctx: ResourceContext) -> tuple[Any, None]:
        rt = self.resource_type
        api = _api()
        prior, planned = ctx.state, ctx.planned_state
        changes = {a.api_name: getattr(planned, a.name) for a in rt.attributes
                   if a.updatable and getattr(planned, a.name, None) is not None
                   and getattr(planned, a.name) != getattr(prior, a.name, None)}
        parent = self._parent_of(prior)
        if changes:
            await self._run(api.update, rt, prior.id, changes, prior.region_id, parent)
        desired = getattr(planned, DESIRED, None) if rt.transitions else None
        if desired and desired != getattr(prior, DESIRED, None):
            await self._run(api.bring_to, rt, prior.id, desired, prior.region_id, parent)
        item = await self._run(api.read, rt, prior.id, prior.region_id, parent)
        if item is None:
            raise _failure(ResourceFailure(f"{rt.name}: {prior.id} disappeared while it was being updated"))
        return self._state(item, planned, prior.region_id), None

    async def read(self, ctx: ResourceContext) -> Any:
        rt = self.resource_type
        prior = ctx.state
        if prior is None or not prior.id:
            return None
        item = await self._run(_api().read, rt, prior.id, prior.region_id, self._parent_of(prior))
        if item is None:
            return None
        return self._state(item, prior, prior.region_id)

    async def _delete_apply(self, ctx: ResourceContext) -> None:
        prior = ctx.state
        if prior is None or not prior.id:
            return
        await self._run(_api().delete, self.resource_type, prior.id, prior.region_id, self._parent_of(prior))


def _reported(attr: Attribute, item: dict[str, Any]) -> Any:
    return attribute_value(attr.kind, item.get(attr.api_name))


def resource_class(rt: ResourceType) -> type[CatalogResource]:
    """A pyvider resource class for one resource type (not yet registered)."""
    schema = schema_of(rt)
    camel = "".join(part.title() for part in rt.name.split("_"))
    return type(camel, (CatalogResource,), {
        "resource_type": rt,
        "_schema": schema,
        "config_class": create_attrs_class_from_schema(f"{camel}Config", schema.block.attributes),
        "state_class": create_attrs_class_from_schema(f"{camel}State", schema.block.attributes),
        "__module__": __name__,
    })
