"""Advantage actor-critic: the synchronous variant of A3C (Mnih et al. 2016)."""

from __future__ import annotations

import gymnasium as gym
import torch

from voidrl.algos.base import OnPolicyAlgorithm, rollout_gae, standardize_advantages
from voidrl.configs.a2c import A2CConfig
from voidrl.nets.flat import adam
from voidrl.math import entropy_loss, explained_variance, policy_gradient_loss, value_loss
from voidrl.rollout.storage import RolloutStorage


class A2C(OnPolicyAlgorithm):
    """One gradient step of the combined loss per rollout of ``num_steps`` x ``num_envs`` transitions."""

    config_class = A2CConfig

    def __init__(self, config: A2CConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device="cpu"):
        super().__init__(config, obs_shape, action_space, device)
        if config.optimizer == "rmsprop":
            def make_optimizer(flat):
                return torch.optim.RMSprop([flat], self.now.learning_rate, alpha=config.rmsprop_alpha, eps=config.optimizer_eps)
        else:
            make_optimizer = adam(self.now.learning_rate, config.optimizer_eps)
        self.parameters = self.trained("optimizer", self.policy.parameters(), make_optimizer)

    def advantages(self, rollout: RolloutStorage) -> tuple[torch.Tensor, torch.Tensor]:
        """``(advantages, returns)``, both ``[T, N]``; with lambda = 1, returns are the n-step targets
        sum_k gamma^k r_{t+k} + gamma^n V(s_{t+n}) (bootstrapped at truncations, not terminations)."""
        cfg = self.config
        advantages, returns = rollout_gae(rollout, (cfg.gamma,), cfg.gae_lambda)
        return advantages, returns[..., 0]

    def loss(self, rollout: RolloutStorage) -> tuple[torch.Tensor, dict[str, float]]:
        """L = L_pi + c_v L_v - c_H H over the rollout's T x N samples, and its metrics."""
        cfg = self.now
        advantages, returns = (x.reshape(-1) for x in self.advantages(rollout))
        if cfg.normalize_advantages and advantages.numel() > 1:
            advantages = standardize_advantages(advantages)

        # each environment's rollout unrolled from the state it began with
        dist, values, _ = self.policy(*self.rollout_inputs(rollout), final_state=False)
        log_probs, values = dist.log_prob(rollout.actions).reshape(-1), values.reshape(-1)
        policy_loss, metrics = policy_gradient_loss(log_probs, advantages)
        critic_loss, value_metrics = value_loss(values, returns)
        entropy_term, entropy_metrics = entropy_loss(dist.entropy())
        loss = policy_loss + cfg.value_coef * critic_loss + cfg.entropy_coef * entropy_term
        out = {name: value.item() for name, value in (metrics | value_metrics | entropy_metrics).items()}
        out["train/explained_variance"] = explained_variance(rollout.values.reshape(-1), returns).item()
        return loss, out

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """One gradient step on the rollout's loss."""
        self.parameters.set_learning_rate(self.advance(progress).learning_rate)
        loss, metrics = self.loss(rollout)
        metrics["train/grad_norm"] = self.parameters.minimize(loss, self.config.max_grad_norm).item()
        return metrics | self.config.schedule_metrics(self.now)
