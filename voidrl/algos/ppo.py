"""Proximal Policy Optimization (Schulman et al. 2017), clipped-surrogate variant."""

from __future__ import annotations

import gymnasium as gym
import torch

from voidrl.algos.base import OnPolicyAlgorithm, build_policy, rollout_gae, standardize_advantages, two_head_gae
from voidrl.configs.ppo import PPOConfig
from voidrl.distributed.collective import global_mean
from voidrl.math import (
    clipped_surrogate_loss,
    entropy_loss,
    explained_variance,
    value_loss,
)
from voidrl.nets.actor_critic import ActorCritic
from voidrl.nets.flat import adam
from voidrl.rollout.storage import RolloutStorage


class PPO(OnPolicyAlgorithm):
    config_class = PPOConfig

    def __init__(self, config: PPOConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device="cpu"):
        super().__init__(config, obs_shape, action_space, device)
        self.parameters = self.trained("optimizer", self.policy.parameters(), adam(config.learning_rate, config.adam_eps))

    @staticmethod
    def make_policy(config: PPOConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str) -> ActorCritic:
        return build_policy(config, obs_shape, action_space, device, intrinsic_value=config.intrinsic_gamma is not None)

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        cfg = self.config
        learning_rate = cfg.learning_rate * (1.0 - progress) if cfg.anneal_lr else cfg.learning_rate
        self.parameters.set_learning_rate(learning_rate)

        two_heads = cfg.intrinsic_gamma is not None
        if two_heads:
            advantages, returns, intrinsic_returns = two_head_gae(rollout, cfg.gamma, cfg.intrinsic_gamma, cfg.gae_lambda)
        else:
            advantages, returns = rollout_gae(rollout, cfg.gamma, cfg.gae_lambda)
        fields = {
            "obs": rollout.obs, "actions": rollout.actions, "old_log_probs": rollout.log_probs,
            "old_values": rollout.values, "advantages": advantages, "returns": returns,
        }
        if two_heads:
            fields |= {"old_intrinsic_values": rollout.intrinsic_values, "intrinsic_returns": intrinsic_returns}
        fields |= self.sequence_fields(rollout)
        history: list[dict[str, torch.Tensor]] = []
        stopped_early = False
        for _ in range(cfg.epochs):
            for batch in self.minibatches(fields, cfg.minibatch_size):
                if two_heads:  # each sequence unrolled from its stored starting state
                    dist, values, intrinsic_values, _ = self.policy.forward_with_intrinsic(*self.network_inputs(batch), final_state=False)
                else:
                    dist, values, _ = self.policy(*self.network_inputs(batch), final_state=False)
                log_probs = dist.log_prob(batch["actions"])
                adv = batch["advantages"]
                if cfg.normalize_advantages and adv.numel() > 1:
                    adv = standardize_advantages(adv)
                policy_loss, metrics = clipped_surrogate_loss(log_probs, batch["old_log_probs"], adv, cfg.clip)
                if cfg.target_kl is not None and global_mean(metrics["train/approx_kl"]) > cfg.target_kl:
                    stopped_early = True
                    break
                critic_loss, value_metrics = value_loss(values, batch["returns"], batch["old_values"], cfg.clip_value)
                if two_heads:
                    intrinsic_loss, _ = value_loss(intrinsic_values, batch["intrinsic_returns"], batch["old_intrinsic_values"], cfg.clip_value)
                    critic_loss = critic_loss + intrinsic_loss
                    value_metrics["train/intrinsic_value_loss"] = intrinsic_loss.detach()
                loss = policy_loss + cfg.value_coef * critic_loss
                if cfg.entropy_coef:
                    entropy_term, entropy_metrics = entropy_loss(dist.entropy())
                    loss = loss + cfg.entropy_coef * entropy_term
                else:  # keep the entropy out of the graph when it has no weight
                    with torch.no_grad():
                        _, entropy_metrics = entropy_loss(dist.entropy())

                grad_norm = self.parameters.minimize(loss, cfg.max_grad_norm)
                history.append({**metrics, **value_metrics, **entropy_metrics, "train/grad_norm": grad_norm})
            if stopped_early:
                break

        out = {name: torch.stack([h[name] for h in history]).mean().item() for name in history[0]} if history else {}
        out["train/explained_variance"] = explained_variance(rollout.values.reshape(-1), returns.reshape(-1)).item()
        out["train/learning_rate"] = learning_rate
        out["train/gradient_steps"] = float(len(history))
        out["train/stopped_early"] = float(stopped_early)
        return out
