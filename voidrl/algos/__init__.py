"""Algorithms, one short file each, registered by name for the training loop and CLI."""

from voidrl.algos.base import Algorithm
from voidrl.algos.ppg import PPG, PPGConfig
from voidrl.algos.ppo import PPO, PPOConfig

ALGORITHMS: dict[str, type[Algorithm]] = {"ppo": PPO, "ppg": PPG}

__all__ = ["ALGORITHMS", "PPG", "PPO", "Algorithm", "PPGConfig", "PPOConfig"]
