"""The training loop and the trained-agent handle (imported on first use: ``voidrl.train.signals`` needs no torch)."""

from voidrl.registry import lazy_attributes

EXPORTS = {"Agent": "voidrl.train.agent:Agent", "train_from_config": "voidrl.train.runs:train_from_config"}
"""The names this package exports, imported on first use."""
__getattr__ = lazy_attributes(__name__, EXPORTS)

__all__ = [*EXPORTS]
