"""Preallocated on-policy rollout storage, time-major ``[T, N, ...]``."""

from __future__ import annotations

import torch


class RolloutStorage:
    """One rollout of ``num_steps`` vector steps over ``num_envs`` environments.

    Observations keep their native dtype (uint8 pixels stay uint8). The policy's values have a head dimension
    ``[T, N, H]``: head 0 learns the task's (or, with one head, the training) rewards within episodes; a second
    head, where the policy has one, a reward plug-in's rewards alone, across episode ends. ``next_values[t]``
    is each head's V of the true successor of step t (for the task's head, the final observation on a
    time-limit truncation, and unused where ``terminated[t]``).
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
        value_heads: int = 1,
    ):
        """``state_shape``: the shape of each tensor of the policy's state per environment (``ActorCritic.state_shape``;
        empty for a feed-forward policy); ``value_heads``: H, the policy's value heads (``ActorCritic.value_heads``)."""
        shape = (num_steps, num_envs)
        self.obs = torch.zeros(shape + tuple(obs_shape), dtype=obs_dtype, device=device)
        self.actions = torch.zeros(shape + tuple(action_shape), dtype=action_dtype, device=device)
        self.log_probs = torch.zeros(shape, device=device)
        self.values = torch.zeros(shape + (value_heads,), device=device)
        """Each value head's V(s_t) ``[T, N, H]``."""
        self.next_values = torch.zeros(shape + (value_heads,), device=device)
        """Each value head's V of the state after step t ``[T, N, H]`` (``collector.fill_next_values``)."""
        self.rewards = torch.zeros(shape, device=device)
        """The task's rewards (after the env's scaling or clipping)."""
        self.intrinsic_rewards = torch.zeros(shape, device=device)
        """A reward plug-in's rewards, written after the collection."""
        self.reward_coefs: tuple[float, float] | None = None
        """The reward plug-in's (extrinsic, intrinsic) coefficients (``RewardSource.reward_coefs``); None: task
        rewards only (no plug-in)."""
        self.terminated = torch.zeros(shape, dtype=torch.bool, device=device)
        self.truncated = torch.zeros(shape, dtype=torch.bool, device=device)
        self.last_obs = torch.zeros((num_envs, *obs_shape), dtype=obs_dtype, device=device)
        """The observation after the last step (what the next rollout starts from)."""
        self.final_obs: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        """Step t -> (env indices ``[K]``, their true final observations ``[K, ...]``) where episodes ended."""
        self.lstm_hidden = torch.zeros(shape + tuple(state_shape), device=device)
        """Each step's starting LSTM hidden state ``[T, N, K, lstm_size]``, before the reset where the step begins an episode."""
        self.lstm_cell = torch.zeros(shape + tuple(state_shape), device=device)
        """Each step's starting LSTM cell state ``[T, N, K, lstm_size]``, likewise."""
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

    @property
    def value_heads(self) -> int:
        """H, the value heads whose values the rollout holds."""
        return self.values.shape[2]

    @property
    def episodic_heads(self) -> tuple[bool, ...]:
        """Per value head, whether its returns stop at episode ends: the task's head (0) does; a plug-in's runs on
        into the next episode (RND's intrinsic returns, Burda et al. 2019)."""
        return (True,) + (False,) * (self.value_heads - 1)

    def training_rewards(self) -> torch.Tensor:
        """The rewards one value head learns from ``[T, N]``: extrinsic_coef * task + intrinsic_coef * intrinsic
        with ``reward_coefs``, else the task rewards."""
        if self.reward_coefs is None:
            return self.rewards
        extrinsic_coef, intrinsic_coef = self.reward_coefs
        return self.rewards * extrinsic_coef + intrinsic_coef * self.intrinsic_rewards

    def head_rewards(self) -> torch.Tensor:
        """What each value head learns ``[T, N, H]``: one head the ``training_rewards``; two heads the task's and the
        plug-in's rewards apart, their coefficients applied to the heads' advantages instead (``head_coefs``)."""
        streams = (self.training_rewards(),) if self.value_heads == 1 else (self.rewards, self.intrinsic_rewards)
        return torch.stack(streams, dim=-1)

    def head_coefs(self) -> tuple[float, ...]:
        """The coefficient of each value head's advantages ``[H]`` in the policy's advantage: 1 for one head (its
        rewards carry the coefficients), the plug-in's ``reward_coefs`` for two."""
        if self.value_heads == 1:
            return (1.0,)
        if self.reward_coefs is None:
            raise ValueError("two value heads need a reward plug-in's rewards (--intrinsic)")
        return self.reward_coefs

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
