"""Advantage actor-critic: the synchronous variant of A3C (Mnih et al. 2016)."""

from __future__ import annotations

import gymnasium as gym
import torch

from voidrl.algos.base import OneLossGradient, OnPolicyAlgorithm, rollout_gae, standardize_advantages
from voidrl.configs.a2c import A2CConfig
from voidrl.nets.actor_critic import LSTMState
from voidrl.nets.flat import adam
from voidrl.math import entropy_loss, explained_variance, policy_gradient_loss, value_loss
from voidrl.rollout.storage import RolloutStorage


class A2C(OneLossGradient, OnPolicyAlgorithm):
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
        self.make_gradient()

    def advantages(self, rollout: RolloutStorage) -> tuple[torch.Tensor, torch.Tensor]:
        """``(advantages, returns)``, both ``[T, N]``; with lambda = 1, returns are the n-step targets
        sum_k gamma^k r_{t+k} + gamma^n V(s_{t+n}) (bootstrapped at truncations, not terminations)."""
        cfg = self.config
        advantages, returns = rollout_gae(rollout, (cfg.gamma,), cfg.gae_lambda)
        return advantages, returns[..., 0]

    def batch_fields(self, rollout: RolloutStorage) -> dict[str, torch.Tensor]:
        """What ``loss(batch)`` reads: each environment's rollout as one sequence from the state it began with
        (``obs``, ``episode_starts`` ``[T, N]``, the starting ``hidden`` and ``cell``), its ``actions``, and the advantages
        and returns ``[T * N]``."""
        advantages, returns = (x.reshape(-1) for x in self.advantages(rollout))
        obs, state, episode_starts = self.rollout_inputs(rollout)
        return {"obs": obs, "hidden": state.hidden, "cell": state.cell, "episode_starts": episode_starts,
                "actions": rollout.actions, "advantages": advantages, "returns": returns}

    def loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """L = L_pi + c_v L_v - c_H H over the rollout's T x N samples (``batch_fields``), and its metrics, detached.
        The entropy weight comes as a 0-d tensor (``entropy_coef``), so that a compiled loss takes a schedule's value
        without recompiling."""
        cfg = self.config
        advantages, returns = batch["advantages"], batch["returns"]
        if cfg.normalize_advantages and advantages.numel() > 1:
            advantages = standardize_advantages(advantages)
        dist, values, _ = self.policy(batch["obs"], LSTMState(batch["hidden"], batch["cell"]), batch["episode_starts"], final_state=False)
        log_probs, values = dist.log_prob(batch["actions"]).reshape(-1), values.reshape(-1)
        policy_loss, metrics = policy_gradient_loss(log_probs, advantages)
        critic_loss, value_metrics = value_loss(values, returns)
        entropy_term, entropy_metrics = entropy_loss(dist.entropy())
        loss = policy_loss + cfg.value_coef * critic_loss + batch["entropy_coef"] * entropy_term
        return loss, metrics | value_metrics | entropy_metrics

    def rollout_gradient(self, rollout: RolloutStorage) -> tuple[torch.Tensor, dict[str, float]]:
        """The loss's gradient ``[P]`` on ``rollout`` (compiled with ``compile``) and its metrics as numbers."""
        fields = self.batch_fields(rollout)
        gradient, metrics = self.gradient(fields | {"entropy_coef": torch.tensor(self.now.entropy_coef)})
        out = {name: value.item() for name, value in metrics.items()}
        out["train/explained_variance"] = explained_variance(rollout.values.reshape(-1), fields["returns"]).item()
        return gradient, out

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """One gradient step on the rollout's loss."""
        self.parameters.set_learning_rate(self.advance(progress).learning_rate)
        gradient, metrics = self.rollout_gradient(rollout)
        metrics["train/grad_norm"] = self.parameters.descend(gradient, self.config.max_grad_norm).item()
        return metrics | self.config.schedule_metrics(self.now)
