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
        state_shape: tuple[int, int] = (0, 0),
    ):
        """``state_shape``: the shape of each tensor of the policy's state per environment (``ActorCritic.state_shape``;
        empty for a feed-forward policy)."""
        shape = (num_steps, num_envs)
        self.obs = torch.zeros(shape + tuple(obs_shape), dtype=obs_dtype, device=device)
        self.actions = torch.zeros(shape + tuple(action_shape), dtype=action_dtype, device=device)
        self.log_probs = torch.zeros(shape, device=device)
        self.values = torch.zeros(shape, device=device)
        self.next_values = torch.zeros(shape, device=device)
        self.rewards = torch.zeros(shape, device=device)
        """The task's rewards (after the env's scaling or clipping)."""
        self.intrinsic_rewards = torch.zeros(shape, device=device)
        """A reward plug-in's rewards, written after the collection."""
        self.intrinsic_values = torch.zeros(shape, device=device)
        """A separate intrinsic value head's values (policies that have one; else unused)."""
        self.intrinsic_bootstrap = torch.zeros(num_envs, device=device)
        """That head's value of the observation after the last step."""
        self.reward_weights: tuple[float, float] | None = None
        """(task, intrinsic) weights of ``training_rewards``; None: task rewards only (no plug-in)."""
        self.terminated = torch.zeros(shape, dtype=torch.bool, device=device)
        self.truncated = torch.zeros(shape, dtype=torch.bool, device=device)
        self.last_obs = torch.zeros((num_envs, *obs_shape), dtype=obs_dtype, device=device)
        """The observation after the last step (what the next rollout starts from)."""
        self.final_obs: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        """Step t -> (env indices ``[K]``, their true final observations ``[K, ...]``) where episodes ended."""
        self.lstm_hidden = torch.zeros(shape + tuple(state_shape), device=device)
        """Each step's starting LSTM hidden state ``[T, N, K, H]``, before the reset where the step begins an episode."""
        self.lstm_cell = torch.zeros(shape + tuple(state_shape), device=device)
        """Each step's starting LSTM cell state ``[T, N, K, H]``, likewise."""
        self.episode_starts = torch.zeros(shape, dtype=torch.bool, device=device)
        """``[T, N]``: step t begins an episode (the environments' reset, or the step after an episode ended)."""
        self.length = num_steps
        """Vector steps filled by the last collection (less than ``num_steps`` only when it
        stopped after whole episodes); algorithms read ``[:length]``."""
        self.valid = torch.ones(shape, dtype=torch.bool, device=device)
        """Steps that belong to the episodes an update may use (all, unless the collection
        gathered whole episodes: then the steps after each env's last counted episode are False)."""

    @property
    def num_steps(self) -> int:
        return self.obs.shape[0]

    @property
    def num_envs(self) -> int:
        return self.obs.shape[1]

    def training_rewards(self) -> torch.Tensor:
        """The rewards one value head learns from ``[T, N]``: task * w_task + intrinsic * w_intrinsic with
        ``reward_weights``, else the task rewards."""
        if self.reward_weights is None:
            return self.rewards
        task_weight, intrinsic_weight = self.reward_weights
        return self.rewards * task_weight + intrinsic_weight * self.intrinsic_rewards

    def flat(self, name: str) -> torch.Tensor:
        """Field ``name`` viewed as ``[T * N, ...]`` (no copy), for minibatch indexing."""
        tensor = getattr(self, name)
        return tensor.reshape(-1, *tensor.shape[2:])

    def next_obs(self, start: int, stop: int) -> torch.Tensor:
        """True successor observations of steps ``start..stop-1``: ``[stop - start, N, ...]``.

        ``obs[t + 1]`` where the episode went on, the final observation where it ended,
        ``last_obs`` after the rollout's last step. Built on demand, so the rollout never
        holds a second full copy of its observations.
        """
        out = torch.empty((stop - start, *self.obs.shape[1:]), dtype=self.obs.dtype, device=self.obs.device)
        inner_stop = min(stop, self.num_steps - 1)
        out[: inner_stop - start] = self.obs[start + 1 : inner_stop + 1]
        if stop == self.num_steps:
            out[-1] = self.last_obs
        for t in range(start, stop):
            if t in self.final_obs:
                env_indices, final = self.final_obs[t]
                out[t - start, env_indices] = final
        return out
