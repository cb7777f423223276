"""The vectorised-environment interface every backend and wrapper implements.

All backends reset finished sub-environments in the same step ("same-step
autoreset"): ``Step.obs`` is what the agent acts on next (a reset observation
where an episode ended) and ``Step.final_obs`` is the true successor of the
transition just taken. Both are torch tensors ``[N, *obs_shape]`` in the
backend's native dtype (uint8 for pixels).
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch

from voidrl.envs.snapshot import NotSaveable, from_plain, to_plain


@dataclass
class Step:
    """One vector step. Shapes: obs/final_obs ``[N, *obs_shape]``, the rest ``[N]``."""

    obs: torch.Tensor
    reward: torch.Tensor
    terminated: torch.Tensor
    truncated: torch.Tensor
    final_obs: torch.Tensor
    episode_returns: torch.Tensor
    """``[K]`` undiscounted raw task returns of the K episodes that finished in this step."""
    episode_lengths: torch.Tensor
    """``[K]`` their lengths in agent steps (decisions: with an action repeat, each up to that many environment steps)."""
    episode_envs: torch.Tensor
    """``[K]`` the sub-environments they ran in."""
    screens: np.ndarray | None = None
    """``[N, H, W, 3]`` uint8: each sub-environment's own rendering of the state ``final_obs`` observes (where
    an episode ended, the screen it ended on); None unless the env was made with ``screens``."""
    ram: np.ndarray | None = None
    """``[N, 128]`` uint8: each Atari game's RAM in the state ``final_obs`` observes; None unless the env was made
    with ``ram``."""


class VecEnv:
    """A batch of ``num_envs`` environments stepped together, speaking torch."""

    num_envs: int
    single_observation_space: gym.Space
    single_action_space: gym.Space
    screen_fps: float | None = None
    """Real-time frames per second of ``Step.screens`` (one per agent step); None without screens."""
    action_repeat: int = 1
    """Environment steps each agent step counts for (``EnvConfig.action_repeat``; Atari's frame skip is not one)."""

    def reset(self, seed: int) -> torch.Tensor:
        """Reset every sub-environment; sub-environment i is seeded with ``seed + i``."""
        raise NotImplementedError

    def step(self, actions: torch.Tensor) -> Step:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def state_dict(self) -> dict:
        """State that must survive a restart (normaliser statistics); empty for plain backends."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        if state:
            raise ValueError(f"{type(self).__name__} has no state to load, got keys {sorted(state)}")

    def episodes_state(self) -> dict:
        """The episodes in progress as plain data (``voidrl.envs.snapshot``), what ``load_episodes_state`` needs to go
        on with each where it stands; raises ``NotSaveable`` (saying why) where they cannot be saved."""
        raise NotSaveable(f"{type(self).__name__} cannot save its episodes")

    def load_episodes_state(self, state: dict) -> None:
        """Continue the episodes ``episodes_state`` saved, on environments built as those were; a ``ValueError`` for a
        state that is not one."""
        raise NotSaveable(f"{type(self).__name__} cannot load episodes")


class EpisodeTracker:
    """Accumulates raw rewards per sub-environment and reports finished episodes."""

    def __init__(self, num_envs: int):
        self.returns = np.zeros(num_envs, dtype=np.float64)
        self.lengths = np.zeros(num_envs, dtype=np.int64)

    def update(self, rewards: np.ndarray, episode_over: np.ndarray) -> dict[str, torch.Tensor]:
        """Add one step; return the ``Step.episode_*`` fields of the episodes that ended in it."""
        self.returns += rewards
        self.lengths += 1
        finished = {
            "episode_returns": torch.from_numpy(self.returns[episode_over].astype(np.float32)),
            "episode_lengths": torch.from_numpy(self.lengths[episode_over]),
            "episode_envs": torch.from_numpy(np.flatnonzero(episode_over)),
        }
        self.returns[episode_over] = 0.0
        self.lengths[episode_over] = 0
        return finished

    def reset(self) -> None:
        self.returns[:] = 0.0
        self.lengths[:] = 0

    def state_dict(self) -> dict:
        return {"returns": to_plain(self.returns, "episode returns"), "lengths": to_plain(self.lengths, "episode lengths")}

    def load_state_dict(self, state: dict) -> None:
        returns = from_plain(state.get("returns"), "episode returns")
        lengths = from_plain(state.get("lengths"), "episode lengths")
        if not (isinstance(returns, np.ndarray) and returns.shape == self.returns.shape and returns.dtype == self.returns.dtype
                and isinstance(lengths, np.ndarray) and lengths.shape == self.lengths.shape and lengths.dtype == self.lengths.dtype):
            raise ValueError(f"episode returns and lengths: not the {len(self.returns)} environments' counters")
        self.returns, self.lengths = returns, lengths


def actions_to_numpy(actions: torch.Tensor, space: gym.Space) -> np.ndarray:
    """Convert a batch of actions for ``space``; Box actions are clipped to its bounds."""
    array = actions.detach().cpu().numpy()
    if isinstance(space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete)):
        return array.astype(np.int64, copy=False)
    if isinstance(space, gym.spaces.Box):
        return np.clip(array, space.low, space.high).astype(space.dtype, copy=False)
    raise TypeError(f"unsupported action space {space}")
