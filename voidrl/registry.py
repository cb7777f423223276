"""Classes by name, each imported on first use, so that what only names them (the command line, the run config)
imports no torch: the registries of the algorithms (``ALGORITHMS``) and of the reward plug-ins (``REWARD_SOURCES``),
from the tables of where each class and its options class are (``"module:Class"``). This module imports no other
voidrl module, so the configuration (``voidrl.config``, ``voidrl.configs``), at the bottom of the package, looks
names up here without importing what it names."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any


def import_attribute(path: str) -> Any:
    """``"package.module:name"`` -> that module's ``name``, the module imported if it is not yet."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def lazy_attributes(module: str, paths: dict[str, str]) -> Callable[[str], Any]:
    """A ``__getattr__`` for ``module`` (PEP 562) that imports each of ``paths`` (name -> ``"module:name"``) on first use."""

    def __getattr__(name: str) -> Any:
        if name not in paths:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return import_attribute(paths[name])

    return __getattr__


class Registry(MutableMapping[str, type]):
    """Name -> class, imported from its path (``"module:Class"``) on the first ``registry[name]``; ``config_class(name)``
    is its options class, imported from ``configs`` (name -> ``"module:Class"``) without importing the class itself.
    ``registry[name] = cls`` registers a class as it is (the tests' toy algorithms and plug-ins), whose options class
    is its ``config_class``."""

    def __init__(self, paths: dict[str, str], configs: dict[str, str]):
        self.entries: dict[str, str | type] = dict(paths)
        self.configs = configs

    def __getitem__(self, name: str) -> type:
        entry = self.entries[name]
        if isinstance(entry, str):
            entry = self.entries[name] = import_attribute(entry)
        return entry

    def __setitem__(self, name: str, cls: type) -> None:
        self.entries[name] = cls

    def __delitem__(self, name: str) -> None:
        del self.entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def config_class(self, name: str) -> type:
        """The options class of ``name``; a KeyError for an unknown name."""
        entry = self.entries[name]
        return import_attribute(self.configs[name]) if isinstance(entry, str) else entry.config_class


CONFIGS: dict[str, str] = {
    "ppo": "voidrl.configs.ppo:PPOConfig", "ppg": "voidrl.configs.ppg:PPGConfig", "reinforce": "voidrl.configs.reinforce:REINFORCEConfig",
    "a2c": "voidrl.configs.a2c:A2CConfig", "a3c": "voidrl.configs.a3c:A3CConfig", "npg": "voidrl.configs.npg:NPGConfig",
    "trpo": "voidrl.configs.trpo:TRPOConfig", "r2d2": "voidrl.configs.r2d2:R2D2Config", "ngu": "voidrl.configs.ngu:NGUConfig",
    "agent57": "voidrl.configs.agent57:Agent57Config",
}
"""Algorithm name -> where its config class is (``voidrl.configs``, no torch)."""
ALGORITHM_CLASSES: dict[str, str] = {
    "ppo": "voidrl.algos.ppo:PPO", "ppg": "voidrl.algos.ppg:PPG", "reinforce": "voidrl.algos.reinforce:REINFORCE",
    "a2c": "voidrl.algos.a2c:A2C", "a3c": "voidrl.algos.a3c:A3C", "npg": "voidrl.algos.npg:NPG", "trpo": "voidrl.algos.trpo:TRPO",
    "r2d2": "voidrl.algos.r2d2:R2D2", "ngu": "voidrl.algos.ngu:NGU", "agent57": "voidrl.algos.agent57:Agent57",
}
"""Algorithm name -> where its class is."""
ALGORITHMS = Registry(ALGORITHM_CLASSES, CONFIGS)
"""Algorithm name -> class (an ``Algorithm``); ``ALGORITHMS.config_class(name)`` without importing it."""

REWARD_CONFIGS: dict[str, str] = {"apt": "voidrl.configs.apt:APTConfig", "rnd": "voidrl.configs.rnd:RNDConfig"}
"""``--intrinsic NAME`` -> where the reward plug-in's config class is."""
REWARD_SOURCE_CLASSES: dict[str, str] = {"apt": "voidrl.intrinsic.apt:APTReward", "rnd": "voidrl.intrinsic.rnd:RNDReward"}
"""``--intrinsic NAME`` -> where the plug-in's class is."""
REWARD_SOURCES = Registry(REWARD_SOURCE_CLASSES, REWARD_CONFIGS)
"""``--intrinsic NAME`` -> plug-in class; each has a ``config_class`` whose fields are its options
(``REWARD_SOURCES.config_class(name)`` without importing the plug-in)."""
