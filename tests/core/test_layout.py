"""The source tree keeps the shape the README promises: no plugin imports another, so
a third-party plugin can do whatever a built-in does (what plugins share is in core,
or asked for by name)."""

from __future__ import annotations

import ast
from pathlib import Path

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"


def imported_modules(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """Every module ``tree`` imports, anywhere in it (``if TYPE_CHECKING:`` blocks and
    function bodies included), with its line; relative imports resolved against
    ``package``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                found.append((node.lineno, f"{base}.{node.module}" if node.module else base))
            elif node.module:
                found.append((node.lineno, node.module))
    return found


def cross_plugin_imports(root: Path) -> list[str]:
    """``path:line imports module`` for each import of one ``docverify_*`` plugin
    package by another under ``root``."""
    plugins = {folder.name for folder in root.iterdir() if folder.is_dir() and folder.name.startswith("docverify_")}
    problems = []
    for plugin in sorted(plugins):
        for source in sorted((root / plugin).rglob("*.py")):
            package = ".".join(source.relative_to(root).with_suffix("").parts[:-1])
            for line, module in imported_modules(ast.parse(source.read_text(encoding="utf-8")), package):
                top = module.split(".")[0]
                if top in plugins and top != plugin:
                    problems.append(f"{source.relative_to(root)}:{line} imports {module}")
    return problems


def test_no_plugin_imports_another():
    assert cross_plugin_imports(PLUGINS) == []


def test_the_check_sees_imports_under_type_checking_and_in_functions(tmp_path):
    (tmp_path / "docverify_a").mkdir()
    (tmp_path / "docverify_b").mkdir()
    (tmp_path / "docverify_b" / "__init__.py").write_text("")
    (tmp_path / "docverify_a" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import own\n"
        "if TYPE_CHECKING:\n"
        "    from docverify_b.thing import Thing\n"
        "def later():\n"
        "    import docverify_b\n")
    assert cross_plugin_imports(tmp_path) == [
        "docverify_a/__init__.py:4 imports docverify_b.thing", "docverify_a/__init__.py:6 imports docverify_b"]
