"""Rollout storage and the one collector shared by every algorithm."""

from voidrl.rollout.collector import Collector, PolicySampling, RolloutStats
from voidrl.rollout.minibatches import shuffled_minibatches
from voidrl.rollout.storage import RolloutStorage

__all__ = ["Collector", "PolicySampling", "RolloutStats", "RolloutStorage", "shuffled_minibatches"]
