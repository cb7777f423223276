"""Griffe extension for the API reference: ``voidrl.train`` is both a function (``voidrl/__init__.py``) and a
subpackage (``voidrl/train/``). Python resolves ``voidrl.train`` to the function (``voidrl/__init__.py`` defines it
after importing the subpackage), while Griffe keeps only the subpackage, so ``::: voidrl.train`` would document the
subpackage. This extension puts the function back at its name and hangs the subpackage's members under it, so that
``::: voidrl.train`` renders the function and ``::: voidrl.train.agent.Agent`` still finds the class."""

from __future__ import annotations

from typing import Any

import griffe


class ShadowedFunctions(griffe.Extension):
    """Functions of a package's ``__init__`` shadowed by a submodule of the same name take their name back."""

    def __init__(self) -> None:
        super().__init__()
        self.functions: list[griffe.Function] = []

    def on_function_instance(self, *, func: griffe.Function, **kwargs: Any) -> None:
        parent = func.parent
        if isinstance(parent, griffe.Module) and parent.is_init_module:
            self.functions.append(func)

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        for func in self.functions:
            module = func.parent
            submodule = module.members.get(func.name)
            if submodule is None or submodule is func or not submodule.is_module:
                continue
            func.members = submodule.members  # the subpackage's members, still its own (their paths are unchanged)
            module.members[func.name] = func
            loader.modules_collection.members[submodule.path] = submodule  # its aliases still get resolved
