"""Replay for the off-policy learners: the replay interface, prioritised sampling and sequence storage."""

from voidrl.replay.base import Replay, SequenceBatch
from voidrl.replay.prioritized import SequenceReplay
from voidrl.replay.sequences import Sequence, SequenceWriter
from voidrl.replay.sum_tree import SumTree, importance_weights

__all__ = ["Replay", "Sequence", "SequenceBatch", "SequenceReplay", "SequenceWriter", "SumTree", "importance_weights"]
