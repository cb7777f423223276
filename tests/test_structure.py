"""The architecture a reviewer can check: voidrl's modules import each other without a cycle (imports inside
functions included; those under ``if TYPE_CHECKING``, for annotations only, left out), and the Ray side
(``voidrl/distributed``) never imports the training loop."""

import ast
from pathlib import Path

import voidrl

ROOT = Path(voidrl.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the voidrl modules it imports anywhere in its body (``from package import module`` counts the module)."""
    modules = {module_name(path): path for path in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported = set()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                node.body = []  # cleared before the walk that collects the imports
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                             for alias in node.names}
        graph[name] = {module for module in imported if module in modules and module != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first = last), or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[module] = "done"
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_the_finder_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle_between_voidrl_modules():
    graph = import_graph()
    assert len(graph) > 50 and "voidrl.train.loop" in graph["voidrl.train.runs"]
    # A package's __init__ re-exports its modules; a module importing its own package's __init__ is not a cycle we mean.
    within = {module: {target for target in targets if not module.startswith(target + ".")} for module, targets in graph.items()}
    assert find_cycle(within) is None


def test_the_ray_side_imports_nothing_from_the_training_loop():
    graph = import_graph()
    distributed = [module for module in graph if module.startswith("voidrl.distributed")]
    assert "voidrl.distributed.engine" in distributed
    assert {module: sorted(t for t in graph[module] if t.startswith("voidrl.train")) for module in distributed} == {
        module: [] for module in distributed}
