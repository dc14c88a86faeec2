"""The package's layering: the commands sit on top of a library that never calls back up into them, no
module imports another that imports it back, even by way of others (function-level imports included,
since they hide a cycle from the interpreter but not from a reader), and the editor server stays free of
the probe."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tapelint"
# Where each installed package's files are (pyproject.toml's package-dir): rules/ is tapelint.rules.
PACKAGE_DIRS = {"tapelint": PACKAGE, "tapelint.rules": ROOT / "rules"}
# For the layering, sub-packages are one node each: what matters is how the layers above them use them.
TOP = {"launch", "cli", "commands", "__main__", "daemon_server"}
# Imports from one module to another that are known to close a cycle and are being removed elsewhere,
# as (importer, imported). Empty: every cycle found so far was broken.
KNOWN_CYCLE_EDGES: set[tuple[str, str]] = set()


def _modules() -> dict[str, Path]:
    """Every module of the installed package, by its dotted name."""
    found: dict[str, Path] = {}
    for package, directory in PACKAGE_DIRS.items():
        for path in directory.rglob("*.py"):
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if parts[0] == "rules" and directory == PACKAGE:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:`: imports only a type checker follows."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _is_main_block(test: ast.expr) -> bool:
    """`if __name__ == "__main__":`: a script's entry point, not something the library runs."""
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `module` imports, at the top or in a function; not under
    `if TYPE_CHECKING:` nor in the `__main__` block. `from p import x` imports p.x when that is a module,
    p otherwise."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (_is_type_checking(node.test) or _is_main_block(node.test)):
            skipped.update(id(n) for statement in node.body for n in ast.walk(statement))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    targets = set()
    for name in found:
        while name and name not in modules:  # `import a.b.c` where only a.b is a module of ours
            name = name.rpartition(".")[0]
        if name and name != module:
            targets.add(name)
    return targets


def module_graph() -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports."""
    modules = _modules()
    return {module: _imports(module, path, modules) for module, path in modules.items()}


def import_graph() -> dict[str, set[str]]:
    """The layers: the package's top-level modules, its sub-packages (but rules) one node each."""
    graph: dict[str, set[str]] = {}
    for module, targets in module_graph().items():
        source = _layer(module)
        if source is None or source == "rules":
            continue
        edges = graph.setdefault(source, set())
        edges.update(layer for layer in map(_layer, targets) if layer is not None and layer != source)
    return graph


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_library_never_imports_the_command_layer():
    graph = import_graph()
    offenders = {source: sorted(targets & TOP) for source, targets in graph.items()
                 if source not in TOP and targets & TOP}
    assert offenders == {}


def test_the_layers_have_no_import_cycles():
    assert _cycle(import_graph()) is None


def test_no_module_imports_itself_by_way_of_others():
    graph = module_graph()
    for source, target in KNOWN_CYCLE_EDGES:
        graph[source].discard(target)
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_module_graph_sees_every_kind_of_import():
    graph = module_graph()
    assert "tapelint.rules.tl001_optimizer_never_applied" in graph  # rules/ under its installed name
    assert "tapelint.rule" in graph["tapelint.rules.tl001_optimizer_never_applied"]
    assert "tapelint.runner" in graph["tapelint.commands"]
    # Function-level imports count; `if TYPE_CHECKING:` ones do not (tapelint/__init__.py has only those).
    assert "tapelint.reporters.json" in graph["tapelint.reporters"]
    assert graph["tapelint"] == set()


def test_the_editor_server_never_reaches_the_probe():
    graph = import_graph()
    reached: set[str] = set()
    todo = ["lsp"]
    while todo:
        node = todo.pop()
        for target in graph.get(node, ()):
            if target not in reached:
                reached.add(target)
                todo.append(target)
    assert "probe" not in reached and "commands" not in reached


def test_a_cycle_is_found_when_there_is_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
