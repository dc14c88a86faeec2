"""The package's layering: the commands sit on top of a library that never calls back up into them, and
the library's modules import each other without cycles (function-level imports included, since they
hide cycles from the interpreter but not from a reader). The editor server stays free of the probe."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tapelint"
# Sub-packages are one node each: what matters is how the layers above them use them.
GROUPED = ("analysis", "probe", "reporters", "rules")
TOP = {"launch", "cli", "commands", "__main__", "daemon_server"}


def _node(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "tapelint" or len(parts) == 1:
        return None
    return parts[1]


def _module_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if "rules" in path.relative_to(PACKAGE).parts[:1]:
            continue
        module = _module_of(path)
        source = _node(module)
        if source is None:
            continue
        edges = graph.setdefault(source, set())
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_main_block = set()
        for node in ast.walk(tree):
            # `if __name__ == "__main__":` is a script entry point, not a library call.
            if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and \
                    isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__":
                is_main_block.update(id(n) for n in ast.walk(node))
        for node in ast.walk(tree):
            if id(node) in is_main_block:
                continue
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                base = node.module
                if node.level:
                    base = ".".join(module.split(".")[: -node.level] + [node.module])
                names = [base] + [f"{base}.{alias.name}" for alias in node.names]
            for name in names:
                target = _node(name)
                if target is not None and target != source and \
                        ((PACKAGE / f"{target}.py").exists() or (PACKAGE / target).is_dir()):
                    edges.add(target)
    return graph


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


def test_the_package_has_no_import_cycles():
    assert _cycle(import_graph()) is None


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
