"""What a replay is to the roles that use it (``voidrl.algos.roles``): the interface the replay in the learner's
process (``SequenceReplay``) and its handle on a Ray actor (``voidrl.distributed.engine.HostedReplay``) both
implement, and the batch it samples."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch

from voidrl.replay.sequences import Sequence


@dataclass
class SequenceBatch(Sequence):
    """``B`` sampled sequences, time-major: every field of ``Sequence`` with a batch axis, after the time axis for the
    per-step fields (``obs [L + 1, B, ...]``, ``actions``, ``rewards``, ``behaviour_probs``, ``guided``, ``terminated``,
    ``truncated``, ``mask`` ``[L, B, ...]``) and first for the others (``start_state`` tensors and
    ``previous_action`` ``[B, ...]``, ``previous_reward [B]``, ``starts_episode [B]`` bool); and what sampling adds."""

    weights: torch.Tensor
    """``[B]`` importance weights, at most 1."""
    keys: torch.Tensor
    """``[B, 2]`` (slot, insertion number): what ``update_priorities`` takes back."""

    def to(self, device: torch.device) -> SequenceBatch:
        """The batch on ``device`` (``keys`` stay where the replay is)."""
        moved = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "keys"}
        moved = {name: tuple(t.to(device) for t in value) if isinstance(value, tuple) else value.to(device) for name, value in moved.items()}
        return SequenceBatch(**moved, keys=self.keys)


class Replay(ABC):
    """A prioritised replay of sequences that rations its own sampling: actors ``add``, the learner's dataset takes
    the batches its rate limiter has earned (``sample_due``) and hands back their priorities; a checkpoint keeps the
    limiter's credit, and the sequences where the run keeps its replay (``snapshot``, ``load_state_dict``)."""

    @abstractmethod
    def __len__(self) -> int:
        """The sequences stored."""

    @abstractmethod
    def add(self, sequences: list[Sequence]) -> None:
        """Store ``sequences`` (each ``[L, ...]`` per step), with the largest priority seen so far."""

    @abstractmethod
    def sample(self, batch_size: int) -> SequenceBatch:
        """``batch_size`` sequences drawn by priority, whatever the rate limiter says."""

    @abstractmethod
    def sample_due(self) -> tuple[SequenceBatch, bool] | None:
        """A batch if the insertions so far have earned one, and whether another is earned too; None when none is."""

    @abstractmethod
    def update_priorities(self, keys: torch.Tensor, priorities: np.ndarray | torch.Tensor) -> None:
        """New priorities ``[B]`` (before the exponent) of the sequences a batch's ``keys [B, 2]`` name."""

    @abstractmethod
    def due_credit(self) -> float:
        """The batches earned and not yet sampled: the rate limiter's state, which a checkpoint keeps."""

    @abstractmethod
    def set_due_credit(self, credit: float) -> None:
        """Restore ``due_credit`` from a checkpoint."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """The whole replay: its index (priorities, insertion counts, sampling RNG) and its sequences."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None: ...

    @abstractmethod
    def snapshot(self, since: int) -> dict[str, Any]:
        """The index and the sequences inserted since insertion number ``since``, in one call: what a checkpoint
        adds to the replay kept beside it (``voidrl.replay.store.ReplayStore``)."""
