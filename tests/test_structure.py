"""The architecture a reviewer can check: voidrl's modules import each other without a cycle (imports inside
functions included, and even those under ``if TYPE_CHECKING``, for annotations only), the configuration sits at the
bottom (``voidrl/config.py`` and ``voidrl/configs/`` import nothing above them), and the Ray side
(``voidrl/distributed``) never imports the training loop; the run's configuration, followed from ``make_trainer``,
passes through few modules and seldom goes back up the imports; no function runs over sixty lines."""

import ast
import sys
from pathlib import Path

import pytest

import voidrl

ROOT = Path(voidrl.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(type_only: bool = False) -> dict[str, set[str]]:
    """Module -> the voidrl modules it imports anywhere in its body (``from package import module`` counts the module);
    with ``type_only`` also those imported under ``if TYPE_CHECKING`` (for annotations only)."""
    modules = {module_name(path): path for path in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported = set()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not type_only and isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
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


MAX_FUNCTION_LINES = 60
"""The longest a function may be, docstring included (issue 90), outside the command line's tables (``voidrl/cli.py``)."""


def long_functions(source: str) -> list[tuple[str, int]]:
    """``(name, lines)`` of each function in ``source`` longer than ``MAX_FUNCTION_LINES``."""
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def test_the_length_check_sees_a_long_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def long():\n{body}") == [("long", MAX_FUNCTION_LINES + 1)]
    assert long_functions(f"def short():\n{body[: body.rindex('    x')]}") == []


def test_no_function_is_longer_than_sixty_lines():
    found = {f"{path.relative_to(ROOT.parent)}:{name}": lines for path in ROOT.rglob("*.py") if path.name != "cli.py"
             for name, lines in long_functions(path.read_text())}
    assert found == {}


def package_of(module: str) -> str:
    """The folder (``voidrl.algos``) or top-level module (``voidrl.callbacks``) ``module`` belongs to."""
    return ".".join(module.split(".")[:2])


def two_way_packages(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The pairs of packages (``package_of``) that each import a module of the other."""
    edges = {(package_of(module), package_of(target)) for module, targets in graph.items() for target in targets}
    return {(a, b) for a, b in edges if a < b and (b, a) in edges}


def test_the_pair_finder_sees_two_packages_importing_each_other():
    graph = {"voidrl.nets.parts": {"voidrl.io.checkpoint"}, "voidrl.io.export": {"voidrl.nets.bodies"}, "voidrl.io.checkpoint": set()}
    assert two_way_packages(graph) == {("voidrl.io", "voidrl.nets")}


def test_no_two_packages_import_each_other():
    """Each package sits above or below another, never both: the leaves the lower layers share (the collectives, the
    field checks, the schedules) are top-level modules beneath them, and what uses the whole agent (check-env,
    export) sits in ``voidrl.training``. One exception, for annotations only: ``voidrl.callbacks`` names the
    ``Agent`` it hands a callback."""
    assert two_way_packages(import_graph(type_only=True)) == {("voidrl.callbacks", "voidrl.training")}
    assert two_way_packages(import_graph()) == set()


def test_the_finder_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def without_own_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` less each module's imports of the packages it lies in: a package's __init__ re-exports its modules, and
    a module importing its own package's __init__ is not a cycle we mean."""
    return {module: {target for target in targets if not module.startswith(target + ".")} for module, targets in graph.items()}


def test_no_import_cycle_between_voidrl_modules():
    graph = import_graph()
    assert len(graph) > 50 and "voidrl.training.loop" in graph["voidrl.training.runs"]
    assert find_cycle(without_own_packages(graph)) is None


def test_no_import_cycle_even_through_imports_for_annotations():
    graph = import_graph(type_only=True)
    assert "voidrl.algos.roles" in graph["voidrl.algos.algorithm"]  # under TYPE_CHECKING only
    assert find_cycle(without_own_packages(graph)) is None


CONFIGURATION = ("voidrl.config", "voidrl.configs")
"""The configuration: the run's options, every algorithm's, plug-in's and environment's, and their presets."""
BENEATH_THE_CONFIGURATION = ("voidrl.registry", "voidrl.validation", "voidrl.schedule")
"""What the configuration may import besides itself: the registry of names (classes imported on first use), the
field checks and the schedules, which import no voidrl module above them."""


def test_the_configuration_imports_nothing_above_it():
    """Imports inside functions and for annotations only included: checks that need the layers above run in
    ``voidrl.training.preflight``, and the preset that the environment's suite decides is applied by
    ``voidrl.training.presets``."""
    graph = import_graph(type_only=True)
    allowed = (*CONFIGURATION, *BENEATH_THE_CONFIGURATION)

    def is_allowed(module: str) -> bool:
        return module in allowed or module.startswith(tuple(f"{name}." for name in allowed))

    bottom = [module for module in graph if is_allowed(module)]
    assert {"voidrl.config", "voidrl.configs.ppo", "voidrl.registry", "voidrl.validation"} <= set(bottom)
    reaching_up = {module: sorted(target for target in graph[module] if not is_allowed(target)) for module in bottom}
    assert reaching_up == {module: [] for module in bottom}


def test_the_ray_side_imports_nothing_from_the_training_loop():
    graph = import_graph()
    distributed = [module for module in graph if module.startswith("voidrl.distributed")]
    assert "voidrl.distributed.engine" in distributed
    assert {module: sorted(t for t in graph[module] if t.startswith("voidrl.training")) for module in distributed} == {
        module: [] for module in distributed}


def importers_of(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Module -> every module that imports it, directly or through others (its layers above)."""
    above: dict[str, set[str]] = {module: set() for module in graph}
    for module in graph:
        stack, seen = list(graph[module]), set()
        while stack:
            target = stack.pop()
            if target not in seen and target in graph:
                seen.add(target)
                stack.extend(graph[target])
        for target in seen:
            above[target].add(module)
    return above


def test_a_module_is_below_every_module_that_imports_it_through_others():
    assert importers_of({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"c"}}) == {"a": set(), "b": {"a"}, "c": {"a", "b", "d"}, "d": set()}


CONFIGURATION_LAYER = ("voidrl.config", "voidrl.configs.", "voidrl.validation", "voidrl.schedule")
"""The modules of the configuration itself: a call into one (a config's own ``validate``) is not a step of the walk."""


def carried_values(config) -> set[int]:
    """The ids of what a run's configuration hands out: the config, its option blocks (``run``, ``env``,
    ``algo_config``...) and the option values that are themselves objects a caller passes on (tuples, and strings of 6
    characters or more: shorter ones, such as "lstm", may be interned and so shared with code that never read them)."""
    import dataclasses

    blocks = [getattr(config, field.name) for field in dataclasses.fields(config)]
    blocks = [block for block in blocks if dataclasses.is_dataclass(block)]
    values = [getattr(block, field.name) for block in blocks for field in dataclasses.fields(block)]
    return {id(config)} | {id(block) for block in blocks} | {id(value) for value in values
                                                               if (isinstance(value, str) and len(value) >= 6) or (isinstance(value, tuple) and value)}


def configuration_path(config) -> list[tuple[str, str]]:
    """The calls of ``make_trainer(config)`` that are handed the configuration, one of its option blocks or a value
    taken from them (``carried_values``), in order: ``(caller's module, called function's module)`` for every voidrl
    function outside the configuration layer."""
    from voidrl.training.runs import make_trainer

    carried = carried_values(config)
    calls = []

    def watch(frame, event, _):
        module = frame.f_globals.get("__name__", "")
        if (event == "call" and module.startswith("voidrl") and not module.startswith(CONFIGURATION_LAYER)
                and any(id(value) in carried for value in frame.f_locals.values())):
            calls.append((frame.f_back.f_globals.get("__name__", "") if frame.f_back else "", module))

    sys.setprofile(watch)
    try:
        trainer = make_trainer(config)
    finally:
        sys.setprofile(None)
    trainer.close()
    return calls


def test_the_walk_follows_a_value_taken_from_the_configuration(tmp_path):
    """A module handed only an option's value (the environment's id), never the config, is on the walk."""
    from voidrl.training.presets import make_config

    config = make_config("ppo", None, env="CartPole-v1", seed=0, torch_threads=1, run_dir=str(tmp_path / "run"))
    assert "voidrl.envs.variants" in {module for _, module in configuration_path(config)}


@pytest.mark.parametrize("algo, env, options, rooms", [
    ("ppo", "CartPole-v1", {}, 12), ("ppo", "CartPole-v1", {"intrinsic": "rnd"}, 15), ("r2d2", "CartPole-v1", {}, 13),
    ("ppg", "MinAtar/Breakout-v1", {"intrinsic": "apt"}, 15), ("agent57", "MiniGrid-Empty-5x5-v0", {}, 16),
])
def test_the_configuration_passes_through_few_modules_and_rarely_climbs(tmp_path, algo, env, options, rooms):
    """From ``make_trainer`` the run's configuration and the values taken from it reach at most ``rooms`` modules
    outside the configuration layer (as measured on 2026-12-08: a walk that grows fails), and at most 6 of the calls
    that hand them on go up the imports (into a module that imports the caller, directly or not: a closure handed down,
    a hook)."""
    from voidrl.training.presets import make_config

    calls = configuration_path(make_config(algo, None, env=env, seed=0, torch_threads=1, run_dir=str(tmp_path / "run"), **options))
    modules = list(dict.fromkeys(module for _, module in calls))
    above = importers_of(without_own_packages(import_graph()))
    climbs = [(caller, module) for caller, module in calls if caller in above and module in above[caller]]
    assert {"voidrl.training.loop", "voidrl.envs.factory"} <= set(modules) and any(m.startswith("voidrl.algos.") for m in modules)
    assert len(modules) <= rooms, modules
    assert len(climbs) <= 6, climbs
