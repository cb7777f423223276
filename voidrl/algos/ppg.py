"""Phasic Policy Gradient (Cobbe et al. 2021) with the thesis's stabilisers as options.

Policy phase (every rollout): the clipped surrogate plus entropy trains the policy
network; the separate critic regresses the GAE returns. Auxiliary phase (every
``policy_iterations`` rollouts): ``aux_epochs`` passes over *all* states of those
rollouts, training the policy's auxiliary value head on the critic's returns while a
behaviour-cloning KL to pi_old (the policy at the start of the phase) keeps the
policy in place, and training the critic again on the same data.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch

from voidrl.algos.base import make_adam, require_positive, require_positive_integers, validate_discounting, validate_fraction
from voidrl.math import clipped_surrogate_loss, entropy_loss, explained_variance, generalized_advantage_estimate, value_loss
from voidrl.nets.actor_critic import ActorCritic
from voidrl.nets.bodies import NETWORKS
from voidrl.nets.flat import FlatParameters
from voidrl.rollout.frames import StackedFrames
from voidrl.rollout.minibatches import shuffled_minibatches
from voidrl.rollout.storage import RolloutStorage


@dataclass
class PPGConfig:
    """PPG hyperparameters. Defaults follow the PPG paper and the thesis (SPEC.md section 1)."""

    num_steps: int = 256
    """Rollout length per environment between two policy phases."""
    learning_rate: float = 3e-4
    """Adam learning rate of the policy network (the thesis uses 1e-4 in pre-training)."""
    critic_learning_rate: float = 1e-3
    """Adam learning rate of the critic."""
    adam_eps: float = 1e-5
    """Adam's epsilon for both networks."""
    gamma: float = 0.99
    """Discount factor."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    epochs: int = 1
    """Policy epochs per rollout (E_pi)."""
    value_epochs: int = 1
    """Critic epochs per rollout in the policy phase (E_V)."""
    minibatch_size: int = 32
    """Samples per gradient step in the policy phase."""
    clip: float = 0.25
    """Surrogate clipping range epsilon, in (0, 1)."""
    entropy_coef: float = 0.01
    """Weight of the entropy bonus (never decayed)."""
    max_grad_norm: float = 0.5
    """Clip the policy network's gradient norm to this."""
    critic_max_grad_norm: float = 10.0
    """Clip the critic's gradient norm to this."""
    normalize_advantages: bool = True
    """Standardise advantages within each minibatch."""
    policy_iterations: int = 32
    """N_pi: rollouts between two auxiliary phases; the phase trains on all their states."""
    aux_epochs: int = 3
    """E_aux: passes over the stored states in each auxiliary phase."""
    aux_minibatch_size: int = 256
    """Samples per gradient step in the auxiliary phase."""
    beta_clone: float = 1.0
    """Weight of the behaviour-cloning KL(pi_old || pi) in the auxiliary loss."""
    aux_kl_stop: float | None = None
    """Thesis stabiliser: stop the phase's policy updates once a minibatch's KL(pi_old || pi)
    exceeds this (critic updates continue); None disables."""
    network: str = "auto"
    """Policy body: auto, mlp, nature, thesis, minatar."""
    critic_network: str | None = None
    """Critic body (a separate network); None = same kind as the policy's."""
    hidden_sizes: tuple[int, ...] = (64, 64)
    """Hidden layer sizes of mlp bodies."""

    @property
    def shared(self) -> bool:
        """PPG always keeps a separate critic."""
        return False

    def validate(self) -> None:
        require_positive_integers(self, ("num_steps", "epochs", "value_epochs", "minibatch_size", "policy_iterations",
                                         "aux_epochs", "aux_minibatch_size"))
        require_positive(self, ("learning_rate", "critic_learning_rate", "max_grad_norm", "critic_max_grad_norm", "aux_kl_stop"))
        validate_fraction("clip", self.clip)
        validate_discounting(self)
        if self.beta_clone < 0:
            raise ValueError(f"beta_clone must be >= 0, got {self.beta_clone}")
        for name in ("network", "critic_network"):
            value = getattr(self, name)
            if value is not None and value not in NETWORKS:
                raise ValueError(f"{name} must be one of {', '.join(NETWORKS)}, got {value!r}")


class FlatStates:
    """A rollout's observations ``[T, N, ...]`` kept as they are (non-pixel observations)."""

    def __init__(self, obs: torch.Tensor):
        self.obs = obs.reshape(-1, *obs.shape[2:]).clone()

    def __len__(self) -> int:
        return self.obs.shape[0]

    def gather(self, index: torch.Tensor) -> torch.Tensor:
        return self.obs[index]

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"obs": self.obs}

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> FlatStates:
        store = cls.__new__(cls)
        store.obs = state["obs"]
        return store


STORES = {"stacked": StackedFrames, "flat": FlatStates}


class AuxiliaryBuffer:
    """The last rollouts' states and critic targets, for the auxiliary phase.

    Frame-stacked uint8 pixels keep one new frame per state (``StackedFrames``), so the
    thesis's 32 rollouts of 16 x 256 Atari states take 0.9 GB instead of 3.7 GB.
    """

    def __init__(self):
        self.stores: list[StackedFrames | FlatStates] = []
        self.returns: list[torch.Tensor] = []

    def add(self, obs: torch.Tensor, returns: torch.Tensor) -> None:
        """``obs [T, N, ...]`` and ``returns [T, N]`` of one rollout (copied: the storage is reused)."""
        stacked = obs.dim() == 5 and obs.dtype == torch.uint8 and obs.shape[2] > 1
        self.stores.append(StackedFrames(obs) if stacked else FlatStates(obs))
        self.returns.append(returns.reshape(-1).clone())

    def __len__(self) -> int:
        return len(self.stores)

    @property
    def num_states(self) -> int:
        return sum(len(store) for store in self.stores)

    def all_returns(self) -> torch.Tensor:
        return torch.cat(self.returns)

    def gather(self, index: torch.Tensor) -> torch.Tensor:
        """States at indices ``[B]`` into the concatenation of the stored rollouts (all of one size)."""
        size = len(self.stores[0])
        which, local = index // size, index % size
        parts = [(i, which == i) for i in range(len(self.stores))]
        first = next(i for i, mask in parts if mask.any())
        sample = self.stores[first].gather(local[:1])
        out = torch.empty((index.shape[0], *sample.shape[1:]), dtype=sample.dtype, device=sample.device)
        for i, mask in parts:
            if mask.any():
                out[mask] = self.stores[i].gather(local[mask])
        return out

    def clear(self) -> None:
        self.stores, self.returns = [], []

    def state_dict(self) -> dict[str, Any]:
        kinds = ["stacked" if isinstance(store, StackedFrames) else "flat" for store in self.stores]
        return {"kinds": kinds, "stores": [store.state_dict() for store in self.stores], "returns": list(self.returns)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.stores = [STORES[kind].from_state_dict(store) for kind, store in zip(state["kinds"], state["stores"])]
        self.returns = list(state["returns"])


class PPG:
    config_class = PPGConfig

    def __init__(self, config: PPGConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device="cpu"):
        config.validate()
        if not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(f"ppg supports discrete action spaces only, got {action_space}")
        self.config = config
        self.num_steps = config.num_steps
        self.policy = self.make_policy(config, obs_shape, action_space, device)
        self.actor = FlatParameters(self.policy.actor_parameters())
        self.critic = FlatParameters(self.policy.critic_parameters())
        self.actor_optimizer = make_adam(self.actor.flat, config.learning_rate, config.adam_eps)
        self.critic_optimizer = make_adam(self.critic.flat, config.critic_learning_rate, config.adam_eps)
        self.aux_buffer = AuxiliaryBuffer()

    @staticmethod
    def make_policy(config: PPGConfig, obs_shape, action_space, device) -> ActorCritic:
        return ActorCritic(
            obs_shape, action_space, config.network, config.hidden_sizes, shared=False,
            critic_network=config.critic_network, aux_value=True,
        ).to(device)

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        cfg = self.config
        advantages, returns = generalized_advantage_estimate(
            rollout.rewards, rollout.values, rollout.next_values,
            rollout.terminated, rollout.truncated, cfg.gamma, cfg.gae_lambda,
        )
        obs = rollout.flat("obs")
        started = time.perf_counter()
        metrics = self.policy_phase({
            "obs": obs, "actions": rollout.flat("actions"), "old_log_probs": rollout.flat("log_probs"),
            "advantages": advantages.reshape(-1),
        })
        policy_done = time.perf_counter()
        metrics |= self.critic_phase({"obs": obs, "returns": returns.reshape(-1)}, cfg.value_epochs, cfg.minibatch_size)
        critic_done = time.perf_counter()
        metrics["train/explained_variance"] = explained_variance(rollout.values.reshape(-1), returns.reshape(-1)).item()
        metrics["time/policy_phase_seconds"] = policy_done - started
        metrics["time/critic_phase_seconds"] = critic_done - policy_done
        self.aux_buffer.add(rollout.obs, returns)
        if len(self.aux_buffer) == cfg.policy_iterations:
            metrics |= self.auxiliary_phase()
            metrics["time/aux_phase_seconds"] = time.perf_counter() - critic_done
            self.aux_buffer.clear()
        return metrics

    def policy_phase(self, fields: dict[str, torch.Tensor]) -> dict[str, float]:
        cfg = self.config
        history = []
        for _ in range(cfg.epochs):
            for batch in shuffled_minibatches(fields, cfg.minibatch_size):
                dist = self.policy.distribution(batch["obs"])
                adv = batch["advantages"]
                if cfg.normalize_advantages and adv.numel() > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss, metrics = clipped_surrogate_loss(dist.log_prob(batch["actions"]), batch["old_log_probs"], adv, cfg.clip)
                entropy_term, entropy_metrics = entropy_loss(dist.entropy())
                self.actor.zero_grad()
                (policy_loss + cfg.entropy_coef * entropy_term).backward()
                metrics["train/grad_norm"] = self.actor.clip_grad_norm_(cfg.max_grad_norm)
                self.actor_optimizer.step()
                history.append(metrics | entropy_metrics)
        return _mean_metrics(history)

    def critic_phase(self, fields: dict[str, torch.Tensor], epochs: int, minibatch_size: int, prefix: str = "train/") -> dict[str, float]:
        history = []
        for _ in range(epochs):
            for batch in shuffled_minibatches(fields, minibatch_size):
                loss, _ = value_loss(self.policy.value(batch["obs"]), batch["returns"])
                self._critic_step(loss)
                history.append({f"{prefix}value_loss": loss.detach()})
        return _mean_metrics(history)

    def _critic_step(self, loss: torch.Tensor) -> None:
        self.critic.zero_grad()
        loss.backward()
        self.critic.clip_grad_norm_(self.config.critic_max_grad_norm)
        self.critic_optimizer.step()

    def auxiliary_phase(self) -> dict[str, float]:
        """L_aux = 0.5 MSE(pi_aux(s), G) + beta_clone KL(pi_old || pi) over every stored state; critic on the same data."""
        cfg = self.config
        buffer = self.aux_buffer
        every_state = torch.arange(buffer.num_states, device=buffer.returns[0].device)
        with torch.no_grad():
            old_log_probs = torch.cat([
                self.policy.distribution(buffer.gather(chunk)).log_probs for chunk in every_state.split(cfg.aux_minibatch_size)
            ])
        returns = buffer.all_returns()
        history, policy_steps, stopped = [], 0, False
        for _ in range(cfg.aux_epochs):
            for index in torch.randperm(buffer.num_states, device=returns.device).split(cfg.aux_minibatch_size):
                batch = {"obs": buffer.gather(index), "returns": returns[index], "old_log_probs": old_log_probs[index]}
                if not stopped:
                    dist, aux_values = self.policy.policy_and_aux_value(batch["obs"])
                    aux_loss, _ = value_loss(aux_values, batch["returns"])
                    clone_kl = dist.kl_from(batch["old_log_probs"]).mean()
                    if cfg.aux_kl_stop is not None and clone_kl > cfg.aux_kl_stop:
                        stopped = True
                    else:
                        self.actor.zero_grad()
                        (aux_loss + cfg.beta_clone * clone_kl).backward()
                        self.actor.clip_grad_norm_(cfg.max_grad_norm)
                        self.actor_optimizer.step()
                        policy_steps += 1
                    history.append({"aux/aux_value_loss": aux_loss.detach(), "aux/clone_kl": clone_kl.detach()})
                critic_loss, _ = value_loss(self.policy.value(batch["obs"]), batch["returns"])
                self._critic_step(critic_loss)
                history.append({"aux/value_loss": critic_loss.detach()})
        metrics = _mean_metrics(history)
        metrics.update({"aux/states": float(buffer.num_states), "aux/policy_steps": float(policy_steps), "aux/stopped_early": float(stopped)})
        return metrics

    def state_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy.state_dict(),
            "actor_optimizer": self.actor_optimizer.state_dict(),
            "critic_optimizer": self.critic_optimizer.state_dict(),
            "aux_buffer": self.aux_buffer.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.policy.load_state_dict(state["policy"])
        self.actor_optimizer.load_state_dict(state["actor_optimizer"])
        self.critic_optimizer.load_state_dict(state["critic_optimizer"])
        self.aux_buffer.load_state_dict(state["aux_buffer"])


def _mean_metrics(history: list[dict[str, torch.Tensor]]) -> dict[str, float]:
    """Mean of each metric over the entries that report it."""
    names = {name for entry in history for name in entry}
    return {name: torch.stack([entry[name] for entry in history if name in entry]).float().mean().item() for name in sorted(names)}
