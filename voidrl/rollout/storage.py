"""Preallocated on-policy rollout storage, time-major ``[T, N, ...]``."""

from __future__ import annotations

import torch


class RolloutStorage:
    """One rollout of ``num_steps`` vector steps over ``num_envs`` environments.

    Observations keep their native dtype (uint8 pixels stay uint8). ``next_values[t]``
    is V of the true successor of step t (the final observation on a time-limit
    truncation); it is unused where ``terminated[t]``.
    """

    def __init__(
        self,
        num_steps: int,
        num_envs: int,
        obs_shape: tuple[int, ...],
        obs_dtype: torch.dtype,
        action_shape: tuple[int, ...],
        action_dtype: torch.dtype,
        device: torch.device | str = "cpu",
    ):
        shape = (num_steps, num_envs)
        self.obs = torch.zeros(shape + tuple(obs_shape), dtype=obs_dtype, device=device)
        self.actions = torch.zeros(shape + tuple(action_shape), dtype=action_dtype, device=device)
        self.log_probs = torch.zeros(shape, device=device)
        self.values = torch.zeros(shape, device=device)
        self.next_values = torch.zeros(shape, device=device)
        self.rewards = torch.zeros(shape, device=device)
        self.terminated = torch.zeros(shape, dtype=torch.bool, device=device)
        self.truncated = torch.zeros(shape, dtype=torch.bool, device=device)

    @property
    def num_steps(self) -> int:
        return self.obs.shape[0]

    @property
    def num_envs(self) -> int:
        return self.obs.shape[1]

    def flat(self, name: str) -> torch.Tensor:
        """Field ``name`` viewed as ``[T * N, ...]`` (no copy), for minibatch indexing."""
        tensor = getattr(self, name)
        return tensor.reshape(-1, *tensor.shape[2:])
