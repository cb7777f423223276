"""What acting carries from one vector step to the next, for every policy: its state, where episodes begin and each
environment's last reward. The collector's ways of acting, ``Agent.predict`` and ``Agent.evaluate`` all keep one."""

from __future__ import annotations

from typing import Any, Callable

import torch

from voidrl.envs.base import Step


class Memory:
    """A policy's state for ``N`` environments (an actor-critic's ``LSTMState``, empty without an LSTM; a recurrent
    Q-network's own state), carried across vector steps: ``episode_starts [N]`` (bool) marks the environments whose
    episode begins at the next observation, ``previous_reward [N]`` is the reward each received last (0 where an
    episode begins). With ``act``, ``act(obs, state, episode_starts, previous_reward) -> (actions, state)`` chooses the
    actions and the state moves on (``Memory.act``); without, its owner moves the state (``PolicySampling``)."""

    def __init__(self, state: Any, num_envs: int, act: Callable[..., tuple[torch.Tensor, Any]] | None = None):
        self._act, self.state = act, state
        self.episode_starts = torch.ones(num_envs, dtype=torch.bool)
        self.last_reward = torch.zeros(num_envs)
        """The reward of the last step, kept as it came; ``previous_reward`` zeroes it where an episode begins."""

    @property
    def previous_reward(self) -> torch.Tensor:
        return torch.where(self.episode_starts, 0.0, self.last_reward.float().cpu())

    @previous_reward.setter
    def previous_reward(self, value: torch.Tensor) -> None:
        self.last_reward = value

    def act(self, obs: torch.Tensor) -> torch.Tensor:
        """Actions ``[N, ...]`` for ``obs [N, ...]``; the state moves on."""
        action, self.state = self._act(obs, self.state, self.episode_starts.to(obs.device), self.previous_reward.to(obs.device))
        return action

    def after_step(self, step: Step) -> None:
        self.episode_starts = (step.terminated | step.truncated).cpu()
        self.last_reward = step.reward

    def state_dict(self) -> dict[str, Any]:
        """``state``, ``episode_start`` (``episode_starts``, under the name checkpoints have always kept it) and
        ``previous_reward``."""
        return {"state": _parts(self.state), "episode_start": self.episode_starts.clone(), "previous_reward": self.previous_reward.clone()}

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        """Go on from ``saved`` (``state_dict``'s), which must hold tensors of this memory's shapes and dtypes; a
        ValueError otherwise."""
        current = _parts(self.state)
        like = {"episode_start": self.episode_starts, "previous_reward": self.previous_reward}
        parts = saved.get("state") if isinstance(saved, dict) else None
        if (not isinstance(saved, dict) or set(saved) != {"state", *like} or not isinstance(parts, list) or len(parts) != len(current)
                or not all(_like(value, tensor) for value, tensor in zip(parts, current))
                or not all(_like(saved[name], tensor) for name, tensor in like.items())):
            raise ValueError("the saved state is not this policy's for these environments")
        self.state = _rebuilt(self.state, [value.to(tensor.device) for value, tensor in zip(parts, current)])
        self.episode_starts, self.last_reward = saved["episode_start"].cpu(), saved["previous_reward"].cpu()


def _parts(state: torch.Tensor | tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    """A state (a tensor or a tuple of tensors, named or not) as a list of tensors."""
    return [state] if isinstance(state, torch.Tensor) else list(state)


def _rebuilt(like: torch.Tensor | tuple[torch.Tensor, ...], parts: list[torch.Tensor]) -> Any:
    """``parts`` in the form of ``like`` (the inverse of ``_parts``)."""
    if isinstance(like, torch.Tensor):
        return parts[0]
    return type(like)(*parts) if hasattr(like, "_fields") else type(like)(parts)


def _like(value: Any, tensor: torch.Tensor) -> bool:
    return isinstance(value, torch.Tensor) and value.shape == tensor.shape and value.dtype == tensor.dtype
