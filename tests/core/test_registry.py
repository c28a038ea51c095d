import pytest

from docverify.errors import ExitCode, PluginError
from docverify.registry import FAMILY_BY_NAME, Plugin, Registry


class Alpha(Plugin):
    """First line.

    More text."""

    name = "alpha"


class Alpha2(Plugin):
    name = "alpha"


class Nameless(Plugin):
    pass


def test_get_returns_the_registered_class():
    registry = Registry(FAMILY_BY_NAME["policies"])
    registry.add(Alpha, plugin="one")
    assert registry.get("alpha") is Alpha
    assert registry.names() == ["alpha"]
    assert Alpha.summary() == "First line."


def test_duplicate_name_names_both_plugins():
    registry = Registry(FAMILY_BY_NAME["policies"])
    registry.add(Alpha, plugin="one")
    with pytest.raises(PluginError) as caught:
        registry.add(Alpha2, plugin="two")
    assert "'one'" in str(caught.value) and "'two'" in str(caught.value)
    assert caught.value.exit_code == ExitCode.PLUGIN


def test_unknown_name_lists_valid_names_and_suggests():
    registry = Registry(FAMILY_BY_NAME["policies"])
    registry.add(Alpha, plugin="one")
    with pytest.raises(PluginError, match=r"unknown policy 'alpah' \(did you mean 'alpha'\?\); valid policies: alpha"):
        registry.get("alpah")


def test_unknown_name_in_an_empty_family():
    registry = Registry(FAMILY_BY_NAME["executors"])
    with pytest.raises(PluginError, match="none is installed"):
        registry.get("playwright")


def test_class_without_name_is_refused():
    with pytest.raises(PluginError, match="has no `name`"):
        Registry(FAMILY_BY_NAME["checkers"]).add(Nameless, plugin="x")
