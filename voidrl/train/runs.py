"""A run's trainer: the one-process loop, or the same loop fed by Ray actors (``--actors N``)."""

from __future__ import annotations

from typing import Any

from voidrl.config import TrainConfig
from voidrl.train.agent import Agent
from voidrl.train.loop import Trainer


def make_trainer(config: TrainConfig, resume: bool = False, init_checkpoint: dict[str, Any] | None = None) -> Trainer:
    """The run's trainer: this process's loop, or the Ray engine's with ``config.run.actors`` > 0."""
    if config.run.actors:
        from voidrl.train.ray_loop import DistributedTrainer

        return DistributedTrainer(config, resume, init_checkpoint)
    return Trainer(config, resume, init_checkpoint)


def train_from_config(config: TrainConfig, resume: bool = False) -> Agent:
    """Train as ``config`` says; with ``resume``, continue from ``run_dir/checkpoint.pt`` (or start over without one)."""
    return make_trainer(config, resume).train()
