"""REINFORCE (Williams 1992): Monte-Carlo policy gradient over whole episodes, optional learned baseline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch

from voidrl.algos.base import OnPolicyAlgorithm, PolicyConfig, validate_discounting
from voidrl.validation import require_non_negative, require_positive, require_positive_integers
from voidrl.math import discounted_returns, entropy_loss, episode_start_values, explained_variance, policy_gradient_loss, standardize, value_loss
from voidrl.nets.flat import adam
from voidrl.rollout.storage import RolloutStorage


@dataclass
class REINFORCEConfig(PolicyConfig):
    """REINFORCE hyperparameters."""

    num_steps: int = 1000
    """Capacity of a rollout in vector steps: the longest an update waits. An episode still running
    at capacity is cut there like a time limit."""
    episodes_per_env: int = 1
    """Whole episodes each environment contributes to an update; the envs are reset before every
    rollout, and steps after an env's last counted episode are left out."""
    learning_rate: float = 1e-3
    """Adam learning rate."""
    adam_eps: float = 1e-5
    """Adam's epsilon."""
    gamma: float = 0.99
    """Discount factor."""
    baseline: bool = True
    """Subtract a learned state-value baseline: advantage G_t - V(s_t), the critic regressed on G_t.
    With it, an episode cut by a time limit or at capacity is bootstrapped with V of its last
    successor; without it the returns are pure Monte Carlo and a cut is not bootstrapped."""
    reward_to_go: bool = True
    """Weight each step by the return from that step on; False: by its whole episode's return from
    the episode's first step (minus the baseline there), as in Williams's original estimator."""
    normalize_advantages: bool = True
    """Standardise the advantages over the update's valid steps."""
    value_coef: float = 0.5
    """Weight of the baseline's value loss in the combined loss."""
    entropy_coef: float = 0.0
    """Weight of the entropy bonus."""
    max_grad_norm: float | None = None
    """Clip the global gradient norm to this before the step; None disables."""

    def validate(self) -> None:
        require_positive_integers(self, ("num_steps", "episodes_per_env"))
        require_positive(self, ("learning_rate", "adam_eps", "max_grad_norm"))
        require_non_negative(self, ("entropy_coef", "value_coef"))
        validate_discounting(self)
        self.validate_policy()


# Named settings: preset -> section (run, env, algo_config, intrinsic_config) -> overrides.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "cartpole": {
        # Tuned here: with a baseline, 8 episodes per update; 475+ (last 20 episodes) by about 150k steps.
        "env": {"num_envs": 8},
        "algo_config": {"learning_rate": 5e-3},
    },
}


class REINFORCE(OnPolicyAlgorithm):
    """One gradient step per batch of whole episodes (``episodes_per_env`` per env)."""

    config_class = REINFORCEConfig
    presets = PRESETS

    def __init__(self, config: REINFORCEConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device="cpu"):
        super().__init__(config, obs_shape, action_space, device)
        self.whole_episodes = config.episodes_per_env
        self.parameters = self.trained("optimizer", self.policy.parameters(), adam(config.learning_rate, config.adam_eps))

    def advantages(self, rollout: RolloutStorage) -> tuple[torch.Tensor, torch.Tensor]:
        """``(advantages, returns)``, both ``[length, N]``: the weights of grad log pi and the critic's targets.

        G_t = sum_k gamma^k r_{t+k} to the episode's end (discounted_returns; bootstrapped at a
        cut only with a baseline); A_t = G_t - V(s_t), or G_t without a baseline; without
        reward-to-go every step takes its episode's first-step A.
        """
        cfg = self.config
        length = rollout.length
        rewards, terminated, truncated = rollout.training_rewards()[:length], rollout.terminated[:length], rollout.truncated[:length]
        bootstrap = rollout.next_values[:length] if cfg.baseline else torch.zeros_like(rewards)
        returns = discounted_returns(rewards, bootstrap, terminated, truncated, cfg.gamma)
        advantages = returns - rollout.values[:length] if cfg.baseline else returns
        if not cfg.reward_to_go:
            advantages = episode_start_values(advantages, terminated, truncated)
        return advantages, returns

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """One gradient step on L = -mean_B(A log pi(a|s)) + c_v L_V - c_H H over the B valid steps."""
        cfg = self.config
        advantages, returns = self.advantages(rollout)
        valid = rollout.valid[: rollout.length]  # [length, N]: the steps of each env's counted episodes
        obs, actions = rollout.obs[: rollout.length][valid], rollout.actions[: rollout.length][valid]
        advantages, returns = advantages[valid], returns[valid]
        if cfg.normalize_advantages and advantages.numel() > 1:
            advantages = standardize(advantages)

        dist, values = self.policy(obs)
        loss, metrics = policy_gradient_loss(dist.log_prob(actions), advantages)
        if cfg.baseline:
            critic_loss, value_metrics = value_loss(values, returns)
            loss = loss + cfg.value_coef * critic_loss
            metrics |= value_metrics | {"train/explained_variance": explained_variance(values.detach(), returns)}
        entropy_term, entropy_metrics = entropy_loss(dist.entropy())
        loss = loss + cfg.entropy_coef * entropy_term

        grad_norm = self.parameters.minimize(loss, cfg.max_grad_norm)
        out = {name: value.item() for name, value in (metrics | entropy_metrics).items()}
        out["train/grad_norm"] = grad_norm.item()
        out["train/valid_steps"] = float(valid.sum())
        return out
