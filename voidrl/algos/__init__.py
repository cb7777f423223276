"""Algorithms, one short file each, registered by name for the training loop and CLI."""

from voidrl.algos.base import Algorithm
from voidrl.algos.ppo import PPO, PPOConfig

ALGORITHMS: dict[str, type[Algorithm]] = {"ppo": PPO}

__all__ = ["ALGORITHMS", "PPO", "Algorithm", "PPOConfig"]
