import sys

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


@pytest.fixture
def lazy_module(tmp_path, monkeypatch):
    """A module ``lazy_policies`` on sys.path, not imported yet."""
    (tmp_path / "lazy_policies.py").write_text(
        "from docverify.registry import Plugin\n\n"
        "class Lazy(Plugin):\n    '''Imported late.'''\n    name = 'lazy'\n\n"
        "class Other(Plugin):\n    name = 'other'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazy_policies", raising=False)
    yield "lazy_policies"
    sys.modules.pop("lazy_policies", None)


def test_a_reference_is_imported_only_when_the_plugin_is_used(lazy_module):
    registry = Registry(FAMILY_BY_NAME["policies"])
    registry.add(f"{lazy_module}:Lazy", plugin="mine", name="lazy")
    assert registry.names() == ["lazy"] and "lazy" in registry
    assert lazy_module not in sys.modules and not registry.entry("lazy").loaded
    cls = registry.get("lazy")
    assert cls.__name__ == "Lazy" and cls.summary() == "Imported late."
    assert registry.get("lazy") is cls and sys.modules[lazy_module].Lazy is cls


def test_a_reference_that_does_not_load_names_the_plugin_and_the_reference(lazy_module):
    registry = Registry(FAMILY_BY_NAME["policies"])
    registry.add("no_such_module_here:Policy", plugin="broken", name="gone")
    registry.add(f"{lazy_module}:Missing", plugin="typo", name="missing")
    registry.add(f"{lazy_module}:Other", plugin="renamed", name="lazy")
    with pytest.raises(PluginError, match=r"policy 'gone' of plugin 'broken' failed to load from "
                                          r"no_such_module_here:Policy: ModuleNotFoundError") as caught:
        registry.get("gone")
    assert caught.value.exit_code == ExitCode.PLUGIN and "reinstall" in caught.value.hint
    with pytest.raises(PluginError, match="AttributeError"):
        registry.get("missing")
    with pytest.raises(PluginError, match=r"registered as 'lazy' but lazy_policies:Other is named 'other'"):
        registry.get("lazy")


def test_a_reference_needs_a_module_an_attribute_and_a_name():
    registry = Registry(FAMILY_BY_NAME["policies"])
    with pytest.raises(PluginError, match="module:attribute"):
        registry.add("lazy_policies.Lazy", plugin="mine", name="lazy")
    with pytest.raises(PluginError, match="with the plugin's name"):
        registry.add("lazy_policies:Lazy", plugin="mine")
    with pytest.raises(PluginError, match="registered policy 'alpha' as 'beta'"):
        registry.add(Alpha, plugin="mine", name="beta")
    registry.add("lazy_policies:Lazy", plugin="one", name="alpha")
    with pytest.raises(PluginError, match="two policies are named 'alpha'"):
        registry.add(Alpha, plugin="two")
