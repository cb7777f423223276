"""Jump-Start RL's guide (Uchendu et al., 2023) for R2D2's actors: a saved actor-critic, such as a reward-free
pre-training's, plays the first steps of every episode greedily and the actors' own epsilon-greedy policy the rest; the
guide's share shrinks as the run goes on, so the replay starts with the guide's play and ends with the learner's own."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch

from voidrl.config import TrainConfig
from voidrl.io.checkpoint import CheckpointError, load_run_checkpoint
from voidrl.nets.actor_critic import ActorCritic
from voidrl.registry import ALGORITHMS


def load_frozen_actor_critic(path: str, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str,
                             field: str) -> ActorCritic:
    """The actor-critic saved in ``path`` (a run's checkpoint, or the weights ``voidrl export --format weights`` writes),
    frozen, for a run whose environments give ``obs_shape`` and take ``action_space``; a ``ValueError`` naming
    ``field`` (the option that gave ``path``: R2D2's ``guide`` or ``prior``) where it cannot serve this run."""
    payload = load_run_checkpoint(path)
    config = TrainConfig.from_dict(payload["config"])
    if config.env.normalize_observation:
        raise ValueError(f"{field}: {path!r} was trained on standardised observations (normalize_observation), which this run's "
                         "actors do not see; give a run without it")
    try:
        policy = ALGORITHMS[config.algo].make_policy(config.algo_config, obs_shape, action_space, device)
    except ValueError as error:
        raise ValueError(f"{field}: {path!r} is a policy for {config.run.env}, which this run's environments do not fit ({error})") from None
    if not isinstance(policy, ActorCritic):
        raise ValueError(f"{field}: {path!r} holds a {config.algo} run's Q-network; a {field} is an actor-critic's run (ppo, ppg, ...)")
    try:
        policy.load_state_dict(payload["algorithm"]["policy"])
    except RuntimeError:
        raise CheckpointError(f"{field}: {path!r} does not fit this run's environments (observations {list(obs_shape)}, "
                              f"actions {action_space})") from None
    return policy.requires_grad_(False).eval()


class JumpStartGuide:
    """The guide's greedy actions for the first ``horizon`` steps of each environment's episodes. The horizon shrinks
    linearly from ``steps`` to 0 over ``decay_steps`` environment steps of the run, each vector step of these
    environments counting ``run_envs`` (the environments of all actors; None: these alone).

    Args:
        policy: the guide (``load_frozen_actor_critic``); steps: the first horizon; decay_steps: the run's steps until it is 0.
    """

    def __init__(self, policy: ActorCritic, steps: int, decay_steps: int, run_envs: int | None = None):
        self.policy, self.steps, self.decay_steps, self.run_envs = policy, steps, decay_steps, run_envs
        self.vector_steps = 0
        """Vector steps these environments have taken."""
        self.episode_steps: torch.Tensor | None = None
        """``[N]`` long, on the observations' device: steps each environment's episode has taken; set at the first step."""
        self.state: Any = None
        """The guide's recurrent state (empty for a feed-forward guide); set at the first step."""

    def horizon(self) -> float:
        """The episode steps the guide plays now."""
        own_envs = 0 if self.episode_steps is None else len(self.episode_steps)
        run_steps = self.vector_steps * (self.run_envs or own_envs)
        return self.steps * max(0.0, 1.0 - run_steps / self.decay_steps)

    @torch.no_grad()
    def actions(self, obs: torch.Tensor, episode_starts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
        """``(guided [N] bool, the guide's greedy actions [N])`` for one vector step's ``obs [N, ...]``, where
        ``episode_starts [N]`` marks the episodes that begin at it; None once the horizon is 0. Call once a step."""
        if self.state is None:
            self.state = self.policy.initial_state(len(obs))
            self.episode_steps = torch.zeros(len(obs), dtype=torch.long, device=obs.device)
        horizon = self.horizon()
        if horizon <= 0:
            return None
        self.episode_steps = torch.where(episode_starts, 0, self.episode_steps)
        action, self.state = self.policy.act(obs, self.state, episode_starts, deterministic=True)
        guided = self.episode_steps < horizon
        self.episode_steps += 1
        self.vector_steps += 1
        return guided, action

    def state_dict(self) -> dict[str, Any]:
        return {"vector_steps": self.vector_steps, "episode_steps": self.episode_steps, "state": None if self.state is None else list(self.state)}

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        device = next(self.policy.parameters()).device
        self.vector_steps = saved["vector_steps"]
        self.episode_steps = None if saved["episode_steps"] is None else saved["episode_steps"].to(device)
        self.state = None if saved["state"] is None else type(self.policy.initial_state(1))(*(part.to(device) for part in saved["state"]))
