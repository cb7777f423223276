"""The training loop and the trained-agent handle."""

from voidrl.train.agent import Agent
from voidrl.train.runs import train_from_config

__all__ = ["Agent", "train_from_config"]
