"""The adder: a chunk of steps, with what the actor recorded of each, cut into replay sequences."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from voidrl.replay.sequences import Sequence, SequenceWriter
from voidrl.rollout.storage import RolloutStorage


class StepRecord(NamedTuple):
    """What an actor core records of one vector step of ``N`` environments, besides the storage's fields."""

    start_state: tuple[torch.Tensor, ...]
    """The recurrent state each environment acted from, each tensor ``[N, ...]``."""
    behaviour_probs: torch.Tensor
    """``[N]``: mu(a_t | s_t) of the actions taken."""
    extra_rewards: torch.Tensor | None = None
    """``[N, K]`` rewards the actor computed itself (NGU's intrinsic one), stored after the task's reward as
    ``rewards [L, 1 + K]``; None: the task's reward alone (``rewards [L]``)."""
    guided: torch.Tensor | None = None
    """``[N]`` bool: the environments a guide played this step (Jump-Start RL); None: none."""


class SequenceAdder:
    """Cuts each environment's stream of steps into overlapping sequences of ``length`` steps starting every
    ``period`` steps (``SequenceWriter``), each with the state it started from."""

    def __init__(self, length: int, period: int):
        self.length, self.period = length, period
        self.writer: SequenceWriter | None = None

    def state_dict(self) -> dict[str, Any]:
        """The sequences in progress (none before the first chunk)."""
        return {} if self.writer is None else self.writer.state_dict()

    def load_state_dict(self, state: dict[str, Any], num_envs: int) -> None:
        self.writer = None
        if state:
            self.writer = SequenceWriter(num_envs, self.length, self.period)
            self.writer.load_state_dict(state)

    def add(self, chunk: RolloutStorage, records: list[StepRecord]) -> list[Sequence]:
        """The sequences completed by the ``chunk.length`` steps of ``chunk`` just acted, ``records[t]`` the record of step t."""
        steps = chunk.length
        if len(records) != steps:
            raise RuntimeError(f"the actor recorded {len(records)} steps for a chunk of {steps}")
        if self.writer is None:
            self.writer = SequenceWriter(chunk.num_envs, self.length, self.period)
        rewards, next_obs = chunk.training_rewards().cpu(), chunk.next_obs(0, steps).cpu()
        sequences = []
        for t, record in enumerate(records):
            step_rewards = rewards[t] if record.extra_rewards is None else torch.cat([rewards[t, :, None], record.extra_rewards.cpu()], -1)
            sequences += self.writer.add(chunk.obs[t].cpu(), chunk.actions[t].cpu(), step_rewards, chunk.terminated[t].cpu(),
                                         chunk.truncated[t].cpu(), next_obs[t], tuple(part.cpu() for part in record.start_state),
                                         record.behaviour_probs.cpu(), None if record.guided is None else record.guided.cpu())
        return sequences
