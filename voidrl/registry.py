"""Classes by name, each imported on first use, so that what only names them (the command line, the run config)
imports no torch."""

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
    is its options class without that import. ``registry[name] = cls`` registers a class as it is (the tests' toy
    algorithms and plug-ins), whose options class is its ``config_class``."""

    def __init__(self, paths: dict[str, str], configs: dict[str, type]):
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
        return self.configs[name] if isinstance(entry, str) else entry.config_class
