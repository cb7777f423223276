"""voidrl: policy-optimisation reinforcement learning with reward-free pre-training.

Two lines to train::

    import voidrl
    agent = voidrl.train("ppo", env="CartPole-v1", steps=100_000)

``import voidrl`` imports no torch: the names below are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from voidrl.registry import lazy_attributes

if TYPE_CHECKING:
    from voidrl.train import Agent

__version__ = "0.1.0"

EXPORTS = {"Agent": "voidrl.train.agent:Agent", "TrainConfig": "voidrl.config:TrainConfig", "make_config": "voidrl.config:make_config",
           "train_from_config": "voidrl.train.runs:train_from_config"}
"""The names this package exports beside ``train`` and ``load``, imported on first use."""
__getattr__ = lazy_attributes(__name__, EXPORTS)

importlib.import_module("voidrl.train")  # before train() below, which a first import of the subpackage would overwrite


def train(algo: str, env: str = "CartPole-v1", steps: int = 100_000, preset: str | None = None, **options: Any) -> Agent:
    """Train ``algo`` on ``env``; ``options`` name any config field (``seed=1``, ``learning_rate=1e-3``...).

    Returns an ``Agent`` that can ``predict`` (raw observations, one or a batch), ``act``, ``evaluate`` and ``save``.
    """
    from voidrl.config import make_config
    from voidrl.train.runs import train_from_config

    return train_from_config(make_config(algo, preset, env=env, steps=steps, **options))


def load(path: str, device: str = "cpu") -> Agent:
    """An ``Agent`` from a checkpoint file."""
    from voidrl.train.agent import Agent

    return Agent.load(path, device)


__all__ = ["load", "train", *EXPORTS]
