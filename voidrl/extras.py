"""The packages only some runs need, and the one-line error that names the extra bringing a missing one.

``pip install voidrl`` installs what every run needs (torch, Gymnasium with its classic-control tasks, TensorBoard);
each environment suite and the analysis behind ``voidrl compare`` and ``voidrl plot`` is an extra of
``pyproject.toml``. This module imports no torch, so a command can check what it needs before it starts.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

EXTRAS = {
    "atari": "the Atari emulator",
    "mujoco": "MuJoCo",
    "minatar": "MinAtar",
    "minigrid": "MiniGrid",
    "box2d": "Box2D",
    "analysis": "the analysis packages (matplotlib, SciPy, rliable)",
}
"""Extra -> what it brings, as the error names it: the extras of ``pyproject.toml`` that ``require`` points to."""


class MissingExtra(ValueError):
    """A package of an extra is not installed; the message is one line naming the extra."""


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """``module`` imported (``"ale_py.roms"``), or ``MissingExtra``: ``{purpose} needs {what extra brings}: pip install
    "voidrl[{extra}]"`` where its top-level package is not installed. A package that is installed but fails to
    import raises its own error."""
    if importlib.util.find_spec(module.partition(".")[0]) is None:
        raise MissingExtra(f'{purpose} needs {EXTRAS[extra]}: pip install "voidrl[{extra}]"')
    return importlib.import_module(module)
