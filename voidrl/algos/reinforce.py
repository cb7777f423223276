"""REINFORCE (Williams 1992): Monte-Carlo policy gradient over whole episodes, optional learned baseline."""

from __future__ import annotations

import gymnasium as gym
import torch

from voidrl.algos.base import OnPolicyAlgorithm
from voidrl.configs.reinforce import REINFORCEConfig
from voidrl.math import discounted_returns, entropy_loss, episode_start_values, explained_variance, policy_gradient_loss, standardize, value_loss
from voidrl.nets.actor_critic import first_step_inputs
from voidrl.nets.flat import adam
from voidrl.rollout.storage import RolloutStorage


class REINFORCE(OnPolicyAlgorithm):
    """One gradient step per batch of whole episodes (``episodes_per_env`` per env)."""

    config_class = REINFORCEConfig

    def __init__(self, config: REINFORCEConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device="cpu"):
        super().__init__(config, obs_shape, action_space, device)
        self.whole_episodes = config.episodes_per_env
        self.parameters = self.trained("optimizer", self.policy.parameters(), adam(self.now.learning_rate, config.adam_eps))

    def advantages(self, rollout: RolloutStorage) -> tuple[torch.Tensor, torch.Tensor]:
        """``(advantages, returns)``, both ``[length, N]``: the weights of grad log pi and the critic's targets.

        G_t = sum_k gamma^k r_{t+k} to the episode's end (discounted_returns; bootstrapped at a
        cut only with a baseline); A_t = G_t - V(s_t), or G_t without a baseline; without
        reward-to-go every step takes its episode's first-step A.
        """
        cfg = self.config
        length = rollout.length
        rewards, terminated, truncated = rollout.training_rewards()[:length], rollout.terminated[:length], rollout.truncated[:length]
        values, next_values = rollout.values[:length, :, 0], rollout.next_values[:length, :, 0]  # the one value head's
        bootstrap = next_values if cfg.baseline else torch.zeros_like(rewards)
        returns = discounted_returns(rewards, bootstrap, terminated, truncated, cfg.gamma)
        advantages = returns - values if cfg.baseline else returns
        if not cfg.reward_to_go:
            advantages = episode_start_values(advantages, terminated, truncated)
        return advantages, returns

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """One gradient step on L = -mean_B(A log pi(a|s)) + c_v L_V - c_H H over the B valid steps."""
        cfg = self.advance(progress)
        self.parameters.set_learning_rate(cfg.learning_rate)
        advantages, returns = self.advantages(rollout)
        valid = rollout.valid[: rollout.length]  # [length, N]: the steps of each env's counted episodes
        obs, actions = rollout.obs[: rollout.length][valid], rollout.actions[: rollout.length][valid]
        advantages, returns = advantages[valid], returns[valid]
        if cfg.normalize_advantages and advantages.numel() > 1:
            advantages = standardize(advantages)

        dist, values, _ = self.policy(*first_step_inputs(self.policy, obs))
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
        return out | self.config.schedule_metrics(cfg)
