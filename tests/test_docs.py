"""Every command the documentation site marks as runnable runs: the shell and Python blocks after a
``<!-- runnable -->`` line, at tiny budgets (a few thousand steps, two seeds, two episodes), each in a fresh
directory; the site's pages are the ones its navigation lists; and the API reference names every registered
algorithm and reward plug-in with its config, and renders the function ``voidrl.train``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUNNABLE = re.compile(r"<!-- runnable -->\n```(bash|python)\n(.+?)\n```", re.S)
TINY = [(r"--(pretrain-)?steps \d+", r"--\1steps 2048"), (r"--seeds \d+", "--seeds 2"), (r"--episodes \d+", "--episodes 2"),
        (r"\bsteps=[\d_]+", "steps=2048"), (r"\bepisodes=\d+", "episodes=2")]
"""Budgets shrunk so that every block runs in seconds; what a block does is otherwise what the page shows."""
TRAINING = re.compile(r"^(voidrl (?:train|pretrain|finetune|compare) .+?)(\s+#.*)?$", re.M)


def runnable_blocks() -> list[tuple[str, str, str]]:
    """(page and index, language, code at tiny budgets) of every runnable block of the site."""
    blocks = []
    for page in sorted(DOCS.rglob("*.md")):
        for index, (language, code) in enumerate(RUNNABLE.findall(page.read_text())):
            for pattern, replacement in TINY:
                code = re.sub(pattern, replacement, code)
            if language == "bash":
                code = TRAINING.sub(r"\1 --torch-threads 1 --no-progress", code)
            blocks.append((f"{page.relative_to(DOCS)}#{index}", language, code))
    return blocks


def test_the_site_has_runnable_blocks_of_both_languages():
    languages = {language for _, language, _ in runnable_blocks()}
    assert languages == {"bash", "python"} and len(runnable_blocks()) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("name,language,code", runnable_blocks(), ids=[name for name, _, _ in runnable_blocks()])
def test_a_runnable_block_runs(tmp_path, name, language, code):
    environment = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    command = ["bash", "-e", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    result = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{name}:\n{code}\n{result.stderr[-3000:]}"


def reference_names() -> set[str]:
    """The dotted paths the API reference renders (``::: path``) or links to (``[text][path]``); the strict build
    (``.ci/docs``) fails on a link to a path that no page renders."""
    text = "\n".join(page.read_text() for page in (DOCS / "reference").glob("*.md"))
    return set(re.findall(r"^::: *([\w.]+)", text, re.M)) | set(re.findall(r"\]\[([\w.]+)\]", text))


def dotted(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def test_the_reference_names_every_algorithm_and_plugin_with_its_config():
    from voidrl.registry import ALGORITHMS, REWARD_SOURCES

    classes = [cls for registry in (ALGORITHMS, REWARD_SOURCES) for name in registry
               for cls in (registry[name], registry.config_class(name)) if cls.__module__.startswith("voidrl.")]
    assert len(classes) >= 2 * (10 + 2)
    missing = {dotted(cls) for cls in classes} - reference_names()
    assert not missing, f"render or link these in docs/reference/: {sorted(missing)}"


def test_the_reference_renders_the_train_function():
    """``voidrl.train`` is the function alone (the subpackage is ``voidrl.training``), as the docs' loader sees it too."""
    index = (DOCS / "reference" / "index.md").read_text()
    assert re.search(r"^::: voidrl\.train$", index, re.M) and re.search(r"^::: voidrl\.load$", index, re.M)
    griffe = pytest.importorskip("griffe")  # the docs extra
    package = griffe.load("voidrl", search_paths=[str(ROOT)])
    assert package["train"].is_function and [p.name for p in package["train"].parameters][:2] == ["algo", "env"]
    assert package["training.agent.Agent"].is_class


def test_every_page_is_in_the_navigation():
    listed = set(re.findall(r":\s*([\w/-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    pages = {page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")}
    assert pages == listed


def test_the_results_page_is_what_its_manifests_and_committed_runs_give():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from protocol import PAGE, PAGE_MANIFESTS, Manifest, page

    assert PAGE.read_text() == page([Manifest.read(path) for path in PAGE_MANIFESTS]), \
        "docs/results.md is stale: python benchmarks/protocol.py page"


NOT_IN_THE_REFERENCE = {"voidrl.__main__"}
"""``python -m voidrl``: the command line's entry, which ``voidrl.cli`` documents."""


def test_every_module_of_the_package_is_rendered_in_the_docs():
    """Each module has a mkdocstrings block (``::: module``, or one of its objects) on some page of the site."""
    package = ROOT / "voidrl"
    modules = {".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for path in package.rglob("*.py")} - NOT_IN_THE_REFERENCE
    rendered = {match for page in (ROOT / "docs").rglob("*.md")
                for match in re.findall(r"^::: (voidrl[\w.]*)", page.read_text(), re.MULTILINE)}
    missing = {module for module in modules
               if not any(name == module or name.startswith(module + ".") for name in rendered)}
    assert missing == set(), f"modules with no ::: block in docs/: {sorted(missing)}"


def architecture_block(heading: str) -> str:
    """The first code block under ``heading`` in docs/architecture.md."""
    text = (DOCS / "architecture.md").read_text()
    return text.split(heading, 1)[1].split("```", 2)[1]


def test_the_architecture_pages_folder_tree_names_every_package_and_module():
    """The tree under "The folders" is the package's: each subpackage and top-level module, nothing else."""
    named = set(re.findall(r"^  (\w+/|\w+\.py)", architecture_block("## The folders"), re.MULTILINE))
    package = ROOT / "voidrl"
    actual = ({f"{path.parent.name}/" for path in package.glob("*/__init__.py")}
              | {path.name for path in package.glob("*.py") if path.name not in ("__init__.py", "__main__.py")})
    assert named == actual


def test_the_architecture_pages_roles_are_the_codes():
    """Every class the roles diagram names exists, and every ``make_*`` it names is a builder's method."""
    from voidrl.algos import learner, ngu, r2d2, roles
    from voidrl.distributed import engine
    from voidrl.replay import adder, dataset, prioritized, rate_limiter

    block = architecture_block("## The roles of an off-policy agent")
    modules = (roles, learner, r2d2, ngu, adder, dataset, prioritized, rate_limiter, engine)
    for name in set(re.findall(r"\b[A-Z][a-z]+[A-Z]\w*|\bActor\b|\bLearner\b|\bNetworks\b", block)):
        assert any(hasattr(module, name) for module in modules), name
    for name in set(re.findall(r"\bmake_\w+", block)):
        assert hasattr(roles.SequenceBuilder, name), name


def test_the_architecture_pages_ppo_snippet_is_ppos_update():
    """Each line of the PPO snippet, but its ellipsis, is a line of ``PPO.update`` (comments aside)."""
    import inspect

    from voidrl.algos.ppo import PPO

    snippet = (DOCS / "architecture.md").read_text().split("```python\n", 1)[1].split("```", 1)[0]
    source = {line.split("#")[0].strip() for line in inspect.getsource(PPO.update).splitlines()}
    lines = [line.split("#")[0].strip() for line in snippet.splitlines() if line.strip() != "..."]
    assert lines and all(line in source for line in lines), [line for line in lines if line not in source]


def test_every_algorithms_options_are_rendered_on_its_page():
    """Each field of a registered algorithm's config is rendered on an algorithm page by the config class that
    declares it (``::: voidrl.configs...`` without ``members: false``), inherited ones included."""
    import dataclasses
    import importlib

    from voidrl.registry import ALGORITHMS

    rendered = set()
    for page in (DOCS / "algorithms").glob("*.md"):
        for path, options in re.findall(r"^::: (voidrl\.configs\.[\w.]+)\n((?:    .*\n)*)", page.read_text(), re.MULTILINE):
            if "members: false" not in options:
                module, _, name = path.rpartition(".")
                rendered.add(getattr(importlib.import_module(module), name))
    for algo in ALGORITHMS:
        config_class = ALGORITHMS.config_class(algo)
        shown = {name for cls in config_class.__mro__ if cls in rendered for name in vars(cls).get("__annotations__", {})}
        missing = {field.name for field in dataclasses.fields(config_class)} - shown
        assert not missing, f"{algo}: options rendered on no algorithm page: {sorted(missing)}"
