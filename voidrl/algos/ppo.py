"""Proximal Policy Optimization (Schulman et al. 2017), clipped-surrogate variant."""

from __future__ import annotations

import gymnasium as gym
import torch

from voidrl.algos.base import OneLossGradient, OnPolicyAlgorithm, rollout_gae, standardize_advantages
from voidrl.configs.ppo import PPOConfig
from voidrl.collective import global_mean
from voidrl.math import (
    clipped_surrogate_loss,
    entropy_loss,
    explained_variance,
    value_loss,
)
from voidrl.nets.flat import adam
from voidrl.rollout.storage import RolloutStorage

VALUE_LOSS_METRICS = ("train/value_loss", "train/intrinsic_value_loss")
"""The value loss metric of each value head: the task's, a reward plug-in's."""


class PPO(OneLossGradient, OnPolicyAlgorithm):
    """``epochs`` passes over each rollout in shuffled minibatches, one gradient step on ``loss(batch)`` each, until
    a minibatch's approximate KL to the rollout policy exceeds ``target_kl``."""

    config_class = PPOConfig

    def __init__(self, config: PPOConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device="cpu"):
        super().__init__(config, obs_shape, action_space, device)
        self.parameters = self.trained("optimizer", self.policy.parameters(), adam(self.now.learning_rate, config.adam_eps))
        self.make_gradient()

    def loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """L = L_clip + c_v sum_h L_v^h - c_H H on one minibatch (``minibatches``': sequences ``[L, B, ...]`` or steps
        ``[B, ...]``, ``old_values`` and ``returns`` with a last dimension per value head), each sequence unrolled
        from its stored starting state, and its metrics, detached (``train/approx_kl`` decides the target-KL stop).
        The clip range and entropy weight come as 0-d tensors (``coefficients``), so that a compiled loss takes
        their scheduled values without recompiling."""
        cfg = self.config
        dist, values, _ = self.policy.forward_heads(*self.network_inputs(batch), final_state=False)
        log_probs = dist.log_prob(batch["actions"])
        advantages = batch["advantages"]
        if cfg.normalize_advantages and advantages.numel() > 1:
            advantages = standardize_advantages(advantages)
        policy_loss, metrics = clipped_surrogate_loss(log_probs, batch["old_log_probs"], advantages, batch["clip"])
        # one [...] tensor per head, unbound from the head dimension in front: the gradient then reaches each head
        # contiguous, summed over the batch in the order of a head computed alone
        per_head = (tensor.movedim(-1, 0) for tensor in (values, batch["returns"], batch["old_values"]))
        head_losses = [value_loss(*head, cfg.clip_value)[0] for head in zip(*per_head)]
        metrics |= {name: head_loss.detach() for name, head_loss in zip(VALUE_LOSS_METRICS, head_losses)}
        loss = policy_loss + cfg.value_coef * sum(head_losses[1:], start=head_losses[0])
        if cfg.entropy_coef:  # a number, else a schedule
            entropy_term, entropy_metrics = entropy_loss(dist.entropy())
            loss = loss + batch["entropy_coef"] * entropy_term
        else:  # keep the entropy out of the graph when it has no weight
            with torch.no_grad():
                _, entropy_metrics = entropy_loss(dist.entropy())
        return loss, metrics | entropy_metrics

    def coefficients(self) -> dict[str, torch.Tensor]:
        """The clip range and entropy weight ``now`` as 0-d tensors, in the dtypes a Python number takes in the loss's
        arithmetic (the clip's bounds are computed in double, then rounded as a number's are)."""
        return {"clip": torch.tensor(self.now.clip, dtype=torch.float64), "entropy_coef": torch.tensor(self.now.entropy_coef)}

    def batch_fields(self, rollout: RolloutStorage) -> dict[str, torch.Tensor]:
        """What ``loss(batch)`` reads, per step ``[T, N, ...]`` (``minibatches`` cuts them): the rollout's observations,
        actions, log-probabilities and values, the GAE advantages and returns ``[T, N, heads]``, and the sequences'
        starting states; a loss that needs another field adds it here."""
        advantages, returns = rollout_gae(rollout, self.config.value_gammas, self.config.gae_lambda)
        return {
            "obs": rollout.obs, "actions": rollout.actions, "old_log_probs": rollout.log_probs,
            "old_values": rollout.values, "advantages": advantages, "returns": returns,
        } | self.sequence_fields(rollout)

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        cfg = self.advance(progress)
        self.parameters.set_learning_rate(cfg.learning_rate)

        fields = self.batch_fields(rollout)
        coefficients = self.coefficients()
        history: list[dict[str, torch.Tensor]] = []
        stopped_early = False
        for _ in range(cfg.epochs):
            for batch in self.minibatches(fields, cfg.minibatch_size):
                gradient, metrics = self.gradient(batch | coefficients)
                if cfg.target_kl is not None and global_mean(metrics["train/approx_kl"]) > cfg.target_kl:
                    stopped_early = True  # measured before this minibatch's step, which is not taken
                    break
                metrics["train/grad_norm"] = self.parameters.descend(gradient, cfg.max_grad_norm)
                history.append(metrics)
            if stopped_early:
                break

        out = {name: torch.stack([h[name] for h in history]).mean().item() for name in history[0]} if history else {}
        out["train/explained_variance"] = explained_variance(rollout.values[..., 0].reshape(-1), fields["returns"][..., 0].reshape(-1)).item()
        out["train/learning_rate"] = cfg.learning_rate
        out |= self.config.schedule_metrics(cfg)
        out["train/gradient_steps"] = float(len(history))
        out["train/stopped_early"] = float(stopped_early)
        return out
