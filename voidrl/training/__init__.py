"""The training loop and the trained-agent handle (imported on first use: ``voidrl.training.signals`` needs no torch)."""

from voidrl.registry import lazy_attributes

EXPORTS = {"Agent": "voidrl.training.agent:Agent", "train_from_config": "voidrl.training.runs:train_from_config"}
"""The names this package exports, imported on first use."""
__getattr__ = lazy_attributes(__name__, EXPORTS)

__all__ = [*EXPORTS]
