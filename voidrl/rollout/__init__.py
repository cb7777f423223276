"""Rollout storage and the one collector shared by every on-policy algorithm."""

from voidrl.rollout.collector import Collector, RolloutStats
from voidrl.rollout.minibatches import shuffled_minibatches
from voidrl.rollout.storage import RolloutStorage

__all__ = ["Collector", "RolloutStats", "RolloutStorage", "shuffled_minibatches"]
