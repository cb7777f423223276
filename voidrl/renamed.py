"""Import paths renamed since, that still work for one version with a ``DeprecationWarning``.

``voidrl.training`` was ``voidrl.train`` until 2026-12-08, when the subpackage shared its name with the function
``voidrl.train``. ``import voidrl.train.agent`` and ``from voidrl.train.agent import Agent`` still give the modules of
``voidrl.training`` (the same objects, not copies) until version 0.3.0; ``voidrl.train`` itself is the function.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from pathlib import Path
from typing import Any

OLD, NEW = "voidrl.train", "voidrl.training"


def warn_renamed(old: str) -> None:
    warnings.warn(f"{old} is {NEW + old.removeprefix(OLD)} now (renamed after voidrl 0.1.0); the old path goes in 0.3.0",
                  DeprecationWarning, stacklevel=3)


class RenamedPackage(types.ModuleType):
    """What ``sys.modules["voidrl.train"]`` holds: the old package's name, its attributes read from the new one. It
    stays out of ``voidrl``'s attributes, where ``train`` is the function."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # what tools ask of every module (inspect: __file__), not a user's import
            raise AttributeError(name)
        warn_renamed(f"{OLD}.{name}")
        return getattr(importlib.import_module(NEW), name)


class RenamedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``voidrl.train.X`` as the module ``voidrl.training.X`` already is (imported on first use)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(OLD + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        warn_renamed(spec.name)
        return importlib.import_module(NEW + spec.name.removeprefix(OLD))

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the new module ran when it was imported."""


def keep_old_import_paths() -> None:
    """Install the old package's name and the finder of its modules (before Python's own finders, which would load a
    second copy of each module from the new package's folder)."""
    package = RenamedPackage(OLD, "voidrl.training under its name until 2026-12-08")
    package.__path__ = [str(Path(__file__).resolve().parent / "training")]
    sys.modules.setdefault(OLD, package)
    if not any(isinstance(finder, RenamedModules) for finder in sys.meta_path):
        sys.meta_path.insert(0, RenamedModules())
