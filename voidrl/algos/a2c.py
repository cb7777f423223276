"""Advantage actor-critic: the synchronous variant of A3C (Mnih et al. 2016)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch

from voidrl.algos.base import OnPolicyAlgorithm, PolicyConfig, rollout_gae, standardize_advantages, validate_discounting
from voidrl.validation import require_choice, require_non_negative, require_positive, require_positive_integers, validate_fraction
from voidrl.nets.flat import adam
from voidrl.math import entropy_loss, explained_variance, policy_gradient_loss, value_loss
from voidrl.rollout.storage import RolloutStorage

OPTIMIZERS = ("rmsprop", "adam")


@dataclass
class A2CConfig(PolicyConfig):
    """A2C hyperparameters. Defaults are Stable-Baselines3's."""

    num_steps: int = 5
    """Rollout length per environment between two updates (the n of the n-step returns)."""
    learning_rate: float = 7e-4
    """Learning rate of the optimiser."""
    optimizer: str = "rmsprop"
    """rmsprop (as in the paper and SB3) or adam (fused)."""
    rmsprop_alpha: float = 0.99
    """RMSprop's smoothing constant (decay of the squared-gradient average)."""
    optimizer_eps: float = 1e-5
    """Epsilon of RMSprop or Adam."""
    gamma: float = 0.99
    """Discount factor."""
    gae_lambda: float = 1.0
    """GAE lambda; 1 gives the paper's n-step bootstrapped returns (up to num_steps)."""
    value_coef: float = 0.5
    """Weight c_v of the value loss in L = L_pi + c_v L_v - c_H H."""
    entropy_coef: float = 0.0
    """Weight c_H of the entropy bonus."""
    max_grad_norm: float | None = 0.5
    """Clip the global gradient norm to this before the step; None disables."""
    normalize_advantages: bool = False
    """Standardise the advantages over each rollout."""

    def validate(self) -> None:
        require_positive_integers(self, ("num_steps",))
        require_positive(self, ("learning_rate", "optimizer_eps", "max_grad_norm"))
        require_non_negative(self, ("entropy_coef", "value_coef"))
        require_choice(self, "optimizer", OPTIMIZERS)
        validate_fraction("rmsprop_alpha", self.rmsprop_alpha)
        validate_discounting(self)
        self.validate_policy()


# Named settings: preset -> section (run, env, algo_config, intrinsic_config) -> overrides.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "cartpole": {
        # Tuned here from SB3's defaults (RMSprop 7e-4): 8 x 8-step rollouts, gamma 0.98, lambda 0.9;
        # 475+ (last 20 episodes) by about 200k steps.
        "env": {"num_envs": 8},
        "algo_config": {"num_steps": 8, "gamma": 0.98, "gae_lambda": 0.9},
    },
    "pendulum": {
        # The notebook's pendulum (voidrl/InvertedPendulumFall-v5): its 25 actors, [40, 20] networks,
        # gamma 0.95, 3-mode mixture policy with persistence 0.965, Adam; tuned here to n = 32 steps,
        # lr 1e-3, lambda 0.95, entropy 0.01, normalised observations and advantages. With seeds 0-2
        # greedy evaluations balance all 1000 steps by 250k-400k steps; at this constant lr they can
        # fall back later, so keep the best agent (--eval-every; benchmarks/RESULTS.md).
        "env": {"num_envs": 25, "normalize_observation": True},
        "algo_config": {"num_steps": 32, "optimizer": "adam", "learning_rate": 1e-3, "gamma": 0.95,
                        "gae_lambda": 0.95, "entropy_coef": 0.01, "normalize_advantages": True,
                        "hidden_sizes": (40, 20), "continuous_policy": "mixture", "mixture_modes": 3,
                        "action_persistence": 0.965},
    },
}


class A2C(OnPolicyAlgorithm):
    """One gradient step of the combined loss per rollout of ``num_steps`` x ``num_envs`` transitions."""

    config_class = A2CConfig
    presets = PRESETS

    def __init__(self, config: A2CConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device="cpu"):
        super().__init__(config, obs_shape, action_space, device)
        if config.optimizer == "rmsprop":
            def make_optimizer(flat):
                return torch.optim.RMSprop([flat], config.learning_rate, alpha=config.rmsprop_alpha, eps=config.optimizer_eps)
        else:
            make_optimizer = adam(config.learning_rate, config.optimizer_eps)
        self.parameters = self.trained("optimizer", self.policy.parameters(), make_optimizer)

    def advantages(self, rollout: RolloutStorage) -> tuple[torch.Tensor, torch.Tensor]:
        """``(advantages, returns)``, both ``[T, N]``; with lambda = 1, returns are the n-step targets
        sum_k gamma^k r_{t+k} + gamma^n V(s_{t+n}) (bootstrapped at truncations, not terminations)."""
        cfg = self.config
        return rollout_gae(rollout, cfg.gamma, cfg.gae_lambda)

    def loss(self, rollout: RolloutStorage) -> tuple[torch.Tensor, dict[str, float]]:
        """L = L_pi + c_v L_v - c_H H over the rollout's T x N samples, and its metrics."""
        cfg = self.config
        advantages, returns = (x.reshape(-1) for x in self.advantages(rollout))
        if cfg.normalize_advantages and advantages.numel() > 1:
            advantages = standardize_advantages(advantages)

        dist, values = self.policy(rollout.flat("obs"))
        policy_loss, metrics = policy_gradient_loss(dist.log_prob(rollout.flat("actions")), advantages)
        critic_loss, value_metrics = value_loss(values, returns)
        entropy_term, entropy_metrics = entropy_loss(dist.entropy())
        loss = policy_loss + cfg.value_coef * critic_loss + cfg.entropy_coef * entropy_term
        out = {name: value.item() for name, value in (metrics | value_metrics | entropy_metrics).items()}
        out["train/explained_variance"] = explained_variance(rollout.values.reshape(-1), returns).item()
        return loss, out

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """One gradient step on the rollout's loss."""
        loss, metrics = self.loss(rollout)
        metrics["train/grad_norm"] = self.parameters.minimize(loss, self.config.max_grad_norm).item()
        return metrics
