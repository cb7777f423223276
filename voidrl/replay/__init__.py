"""Replay for the off-policy learners: prioritised sampling and sequence storage."""

from voidrl.replay.sum_tree import SumTree, importance_weights

__all__ = ["SumTree", "importance_weights"]
