"""Replay for the off-policy learners: prioritised sampling and sequence storage."""

from voidrl.replay.prioritized import SequenceBatch, SequenceReplay
from voidrl.replay.sequences import Sequence, SequenceWriter
from voidrl.replay.sum_tree import SumTree, importance_weights

__all__ = ["Sequence", "SequenceBatch", "SequenceReplay", "SequenceWriter", "SumTree", "importance_weights"]
