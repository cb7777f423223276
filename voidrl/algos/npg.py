"""Truncated Natural Policy Gradient (Kakade 2001; Rajeswaran et al. 2017).

One policy step per rollout along the natural gradient d ~= F^-1 g, found by conjugate
gradient with Fisher-vector products, then a critic regression on the GAE returns.
TRPO (``voidrl.algos.trpo``) shares all of this and replaces only ``accept_step``.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import torch

from voidrl.algos.base import OnPolicyAlgorithm, rollout_gae
from voidrl.configs.npg import NaturalGradientConfig, NPGConfig
from voidrl.math import (
    conjugate_gradient,
    explained_variance,
    fisher_vector_product,
    flat_gradient,
    natural_gradient_step,
    standardize,
    value_loss,
)
from voidrl.nets.actor_critic import first_step_inputs
from voidrl.nets.distributions import kl_divergence
from voidrl.nets.flat import adam
from voidrl.rollout.minibatches import shuffled_minibatches
from voidrl.rollout.storage import RolloutStorage

Evaluate = Callable[[torch.Tensor], tuple[float, float]]
"""Sets the actor to theta_old + step ``[P]``; returns (surrogate improvement, mean KL(pi_old || pi))."""


@torch.no_grad()
def add_flat_step(parameters: list[torch.nn.Parameter], base: list[torch.Tensor], step: torch.Tensor) -> None:
    """Set each parameter to its ``base`` value plus its part of the flat ``step [P]``.

    ``step`` is cut by numel in the order of ``parameters`` and each part read row-major (the layout
    of ``flat_gradient``), whatever the parameters' own memory layout.
    """
    for param, base_value, part in zip(parameters, base, step.split([p.numel() for p in parameters])):
        param.copy_(base_value + part.view_as(param))


@torch.no_grad()
def restore_parameters(parameters: list[torch.nn.Parameter], saved: list[torch.Tensor]) -> None:
    """Copy ``saved`` back into ``parameters`` bit for bit."""
    for param, value in zip(parameters, saved):
        param.copy_(value)


class NPG(OnPolicyAlgorithm):
    config_class = NPGConfig

    def __init__(self, config: NaturalGradientConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device="cpu"):
        super().__init__(config, obs_shape, action_space, device)
        self.critic = self.trained("value_optimizer", self.policy.critic_parameters(), adam(config.value_learning_rate, config.adam_eps))

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """GAE advantages, one natural-gradient policy step on the whole rollout, then the critic fit."""
        cfg = self.config
        advantages, returns = rollout_gae(rollout, (cfg.gamma,), cfg.gae_lambda)
        advantages, returns = advantages.reshape(-1), returns.reshape(-1)
        if cfg.normalize_advantages and advantages.numel() > 1:
            advantages = standardize(advantages)
        obs = rollout.flat("obs")
        metrics = self.policy_step(obs, rollout.flat("actions"), advantages)
        metrics |= self.fit_value(obs, returns)
        metrics["train/explained_variance"] = explained_variance(rollout.values.reshape(-1), returns).item()
        return metrics

    def policy_step(self, obs: torch.Tensor, actions: torch.Tensor, advantages: torch.Tensor) -> dict[str, float]:
        """Step the actor along d ~= F^-1 g on ``obs [B, ...]``, ``actions [B]`` or ``[B, A]``, ``advantages [B]``.

        pi_old is the policy as the update starts (the one that collected the rollout), recomputed on
        the batch rather than read from the rollout's log-probabilities, so that the surrogate's ratio
        and the KL refer to the same distribution. F is the Hessian of the mean KL(pi_old || pi) at
        theta_old; ``accept_step`` decides how far to go along d.
        """
        cfg = self.config
        actor = self.policy.actor_parameters()
        dist = self.policy.distribution(*first_step_inputs(self.policy, obs))
        old = dist.detach()
        old_log_probs = old.log_prob(actions)

        def surrogate(new) -> torch.Tensor:
            """L = mean(pi(a|s) / pi_old(a|s) A)."""
            return ((new.log_prob(actions) - old_log_probs).exp() * advantages).mean()

        gradient = flat_gradient(surrogate(dist), actor, retain_graph=True)
        fisher_product = fisher_vector_product(kl_divergence(old, dist).mean(), actor, cfg.cg_damping)
        direction = conjugate_gradient(fisher_product, gradient, cfg.cg_iterations)

        theta_old = [p.detach().clone() for p in actor]
        surrogate_old = surrogate(old).item()

        @torch.no_grad()
        def evaluate(step: torch.Tensor) -> tuple[float, float]:
            add_flat_step(actor, theta_old, step)
            new = self.policy.distribution(*first_step_inputs(self.policy, obs))
            return surrogate(new).item() - surrogate_old, kl_divergence(old, new).mean().item()

        if gradient.any():
            step, metrics = self.accept_step(gradient, direction, fisher_product, evaluate)
        else:  # every advantage is zero: the surrogate is flat, there is no direction to step along
            step, metrics = None, {}
        if step is None:
            restore_parameters(actor, theta_old)
            improvement, kl = 0.0, 0.0
        else:
            improvement, kl = evaluate(step)
        return metrics | {
            "train/surrogate_improvement": improvement,
            "train/kl": kl,
            "train/step_norm": 0.0 if step is None else step.norm().item(),
            "train/step_accepted": float(step is not None),
            "train/entropy": old.entropy().mean().item(),
        }

    def accept_step(
        self, gradient: torch.Tensor, direction: torch.Tensor, fisher_product: Callable[[torch.Tensor], torch.Tensor], evaluate: Evaluate
    ) -> tuple[torch.Tensor | None, dict[str, float]]:
        """NPG: always the step alpha / sqrt(g . d) d (``[P]``), for the gradient g and d ~= F^-1 g ``[P]``.

        Returns the step to take from theta_old, or None for none (the parameters may be anywhere:
        the caller sets them), and metrics of the choice. ``evaluate`` tries a step (TRPO's line search).
        """
        return natural_gradient_step(gradient, direction, self.config.step_size), {}

    def fit_value(self, obs: torch.Tensor, returns: torch.Tensor) -> dict[str, float]:
        """Adam on 0.5 (V(s) - G)^2 over ``obs [B, ...]`` and ``returns [B]``; touches only the critic."""
        cfg = self.config
        losses = []
        for _ in range(cfg.value_epochs):
            for batch in shuffled_minibatches({"obs": obs, "returns": returns}, cfg.value_minibatch_size):
                values = self.policy.critic_values(*first_step_inputs(self.policy, batch["obs"]))[..., 0]
                loss, _ = value_loss(values, batch["returns"])
                self.critic.minimize(loss, cfg.value_max_grad_norm)
                losses.append(loss.detach())
        return {"train/value_loss": torch.stack(losses).mean().item()}
