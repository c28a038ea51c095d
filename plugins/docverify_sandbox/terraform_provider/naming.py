"""Terraform names for sandbox API names: ``VSwitchId`` -> ``vswitch_id``."""

from __future__ import annotations

import re

#: words the Alibaba Cloud API spells with a one-letter prefix that Terraform writes as one word
_ONE_WORD = {"VSwitch": "Vswitch", "VRouter": "Vrouter", "VServer": "Vserver"}


def attribute_name(api_name: str) -> str:
    """The snake_case attribute for an API parameter.

    ``VpcName`` -> ``vpc_name``, ``DBInstanceId`` -> ``db_instance_id``,
    ``Ipv6CidrBlock`` -> ``ipv6_cidr_block``, ``PrivatePoolOptions.MatchCriteria``
    -> ``private_pool_options_match_criteria``.
    """
    name = api_name
    for word, single in _ONE_WORD.items():
        name = name.replace(word, single)
    name = re.sub(r"[^A-Za-z0-9]+", "_", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return re.sub(r"_+", "_", name).strip("_").lower()


def type_name(product: str, rtype: str) -> str:
    """The Terraform resource type of a catalog resource: ``sandbox_<product>_<resource>``."""
    return f"sandbox_{product}_{rtype}"
