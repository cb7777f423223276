"""Phasic Policy Gradient (Cobbe et al. 2021) with Müller's (2022) stabilisers as options.

Policy phase (every rollout): the clipped surrogate plus entropy trains the policy
network; the separate critic regresses the GAE returns. Auxiliary phase (every
``policy_iterations`` rollouts): ``aux_epochs`` passes over *all* states of those
rollouts, training the policy's auxiliary value head on the critic's returns while a
behaviour-cloning KL to pi_old (the policy at the start of the phase) keeps the
policy in place, and training the critic again on the same data. A critic warm-up
(``critic_warmup_rollouts``) makes a run's first rollouts train the critic alone.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import torch

from voidrl.algos.base import OnPolicyAlgorithm, rollout_gae, standardize_advantages
from voidrl.configs.ppg import PPGConfig
from voidrl.collective import global_mean
from voidrl.math import clipped_surrogate_loss, entropy_loss, explained_variance, value_loss
from voidrl.nets.actor_critic import ActorCritic, build_actor_critic
from voidrl.nets.flat import adam
from voidrl.rollout.frames import Store, compact_copy, gather_across, load_store, store_state
from voidrl.rollout.minibatches import accumulation_chunks, sequence_steps
from voidrl.rollout.storage import RolloutStorage

class AuxiliaryBuffer:
    """The last rollouts' states, critic targets and episode starts, and the policy's state before each sequence of
    ``sequence_length`` steps, for the auxiliary phase (sequences of one step for a feed-forward policy).

    Frame-stacked uint8 pixels keep one new frame per state (``StackedFrames``), so the
    Müller's (2022) 32 rollouts of 16 x 256 Atari states take 0.9 GB instead of 3.7 GB.
    """

    def __init__(self, sequence_length: int = 1):
        self.sequence_length = sequence_length
        self.clear()

    def add(self, obs: torch.Tensor, returns: torch.Tensor, sequences: dict[str, torch.Tensor]) -> None:
        """``obs [T, N, ...]``, the critic's targets ``[T, N, heads]`` and ``sequences`` (``OnPolicyAlgorithm.sequence_fields``)
        of one rollout (copied: the storage is reused)."""
        self.joined = {}
        self.rollout_shape = tuple(obs.shape[:2])
        self.stores.append(compact_copy(obs))
        self.returns.append(returns.flatten(0, 1).clone())
        self.episode_starts.append(sequences["episode_starts"].flatten(0, 1).clone())
        self.lstm_hidden.append(sequences["lstm_hidden"][:: self.sequence_length].flatten(0, 1).clone())
        self.lstm_cell.append(sequences["lstm_cell"][:: self.sequence_length].flatten(0, 1).clone())

    def __len__(self) -> int:
        return len(self.stores)

    @property
    def num_states(self) -> int:
        return sum(len(store) for store in self.stores)

    def all_returns(self) -> torch.Tensor:
        return self.concatenated("returns")

    def concatenated(self, field: str) -> torch.Tensor:
        """The stored rollouts' ``field`` (returns, episode_starts, lstm_hidden, lstm_cell) as one tensor, joined once
        per buffer content rather than for every minibatch of the auxiliary phase."""
        if field not in self.joined:
            self.joined[field] = torch.cat(getattr(self, field))
        return self.joined[field]

    def sequences(self, ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Sequences ``ids [B]`` of the stored rollouts, each rollout cut per environment as ``sequence_steps``
        cuts it (rollout r holding ids r S .. (r + 1) S - 1), as ``shuffled_sequence_minibatches`` gives them:
        ``obs [L, B, ...]``, ``returns [L, B, heads]``, ``episode_starts [L, B]`` (one-step samples: ``[B, ...]``),
        and the state before each sequence's first step as ``lstm_hidden`` and ``lstm_cell`` ``[B, K, H]``."""
        steps, envs = self.rollout_shape
        per_rollout = steps // self.sequence_length * envs
        rollout = torch.div(ids, per_rollout, rounding_mode="floor")
        step_index, env_index = sequence_steps(ids % per_rollout, self.sequence_length, envs)
        flat = rollout * steps * envs + step_index * envs + env_index
        if self.sequence_length == 1:
            flat = flat[0]
        return {
            "obs": gather_across(self.stores, flat.flatten()).unflatten(0, flat.shape),
            "returns": self.concatenated("returns")[flat],
            "episode_starts": self.concatenated("episode_starts")[flat],
            "lstm_hidden": self.concatenated("lstm_hidden")[ids],
            "lstm_cell": self.concatenated("lstm_cell")[ids],
        }

    def clear(self) -> None:
        self.joined: dict[str, torch.Tensor] = {}
        self.stores: list[Store] = []
        self.returns: list[torch.Tensor] = []
        self.episode_starts: list[torch.Tensor] = []
        self.lstm_hidden: list[torch.Tensor] = []
        self.lstm_cell: list[torch.Tensor] = []

    def state_dict(self) -> dict[str, Any]:
        state = {"stores": [store_state(store) for store in self.stores], "returns": list(self.returns)}
        if self.stores:
            state |= {"rollout_shape": list(self.rollout_shape), "episode_starts": list(self.episode_starts),
                      "lstm_hidden": list(self.lstm_hidden), "lstm_cell": list(self.lstm_cell)}
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.clear()
        self.stores = [load_store(store) for store in state["stores"]]
        self.returns = [r if r.dim() == 2 else r.unsqueeze(-1) for r in state["returns"]]  # [states] before two heads
        if not self.stores:
            return
        if "rollout_shape" in state:
            self.rollout_shape = tuple(state["rollout_shape"])
            self.episode_starts, self.lstm_hidden, self.lstm_cell = state["episode_starts"], state["lstm_hidden"], state["lstm_cell"]
        elif self.sequence_length == 1:  # a feed-forward policy's buffer before 2026-11-28: states without sequences
            self.rollout_shape = (len(self.stores[0]), 1)  # one-step sequences: the split of a rollout's ids is immaterial
            for store in self.stores:
                self.episode_starts.append(torch.zeros(len(store), dtype=torch.bool))
                self.lstm_hidden.append(torch.zeros(len(store), 0, 0))
                self.lstm_cell.append(torch.zeros(len(store), 0, 0))
        else:
            raise ValueError("this auxiliary buffer holds no sequences (written by a feed-forward policy)")


class PPG(OnPolicyAlgorithm):
    config_class = PPGConfig

    def __init__(self, config: PPGConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device="cpu"):
        if not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(f"ppg supports discrete action spaces only, got {action_space}")
        super().__init__(config, obs_shape, action_space, device)
        self.actor = self.trained("actor_optimizer", self.policy.actor_parameters(), adam(self.now.learning_rate, config.adam_eps))
        self.critic = self.trained("critic_optimizer", self.policy.critic_parameters(), adam(config.critic_learning_rate, config.adam_eps))
        self.aux_buffer = AuxiliaryBuffer(config.unroll_length)
        self.rollouts_learned = 0
        """Rollouts this run has learned from (warm-up ones included): what ends the critic warm-up."""

    @staticmethod
    def make_policy(config: PPGConfig, obs_shape, action_space, device) -> ActorCritic:
        return build_actor_critic(obs_shape, action_space, config.memory, config.lstm_size, config.network, config.hidden_sizes,
                                  critic_network=config.critic_network, aux_value=True,
                                  intrinsic_value=len(config.value_gammas) > 1).to(device)

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        cfg = self.advance(progress)
        self.actor.set_learning_rate(cfg.learning_rate)
        advantages, returns = rollout_gae(rollout, cfg.value_gammas, cfg.gae_lambda)
        sequences = self.sequence_fields(rollout)
        warming_up = self.rollouts_learned < cfg.critic_warmup_rollouts
        self.rollouts_learned += 1
        started = time.perf_counter()
        metrics = {} if warming_up else self.policy_phase({
            "obs": rollout.obs, "actions": rollout.actions, "old_log_probs": rollout.log_probs, "advantages": advantages,
        } | sequences)
        policy_done = time.perf_counter()
        metrics |= self.critic_phase({"obs": rollout.obs, "returns": returns} | sequences, cfg.value_epochs, cfg.minibatch_size)
        critic_done = time.perf_counter()
        metrics["train/explained_variance"] = explained_variance(rollout.values[..., 0].reshape(-1), returns[..., 0].reshape(-1)).item()
        metrics["time/policy_phase_seconds"] = policy_done - started
        metrics["time/critic_phase_seconds"] = critic_done - policy_done
        metrics |= self.config.schedule_metrics(cfg)
        if cfg.critic_warmup_rollouts:
            metrics["train/critic_warmup"] = float(warming_up)
        if warming_up:
            return metrics
        self.aux_buffer.add(rollout.obs, returns, sequences)
        if len(self.aux_buffer) == cfg.policy_iterations:
            metrics |= self.auxiliary_phase(rollout.head_coefs())
            metrics["time/aux_phase_seconds"] = time.perf_counter() - critic_done
            self.aux_buffer.clear()
        return metrics

    def chunks(self, batch: dict[str, torch.Tensor], chunk_size: int | None) -> Iterator[tuple[float, dict[str, torch.Tensor]]]:
        """``accumulation_chunks`` of a minibatch, ``chunk_size`` steps each."""
        return accumulation_chunks(batch, chunk_size and chunk_size // self.config.unroll_length)

    def policy_phase(self, fields: dict[str, torch.Tensor]) -> dict[str, float]:
        """Clipped surrogate plus entropy on rollout ``fields [T, N, ...]``, the actor's parameters only."""
        cfg = self.now
        history = []
        for _ in range(cfg.epochs):
            for batch in self.minibatches(fields, cfg.minibatch_size):
                adv = batch["advantages"]
                if cfg.normalize_advantages and adv.numel() > 1:
                    batch["advantages"] = standardize_advantages(adv)
                self.actor.zero_grad()
                chunk_metrics = []
                for share, chunk in self.chunks(batch, cfg.chunk_size):
                    dist = self.policy.distribution(*self.network_inputs(chunk))
                    policy_loss, metrics = clipped_surrogate_loss(
                        dist.log_prob(chunk["actions"]), chunk["old_log_probs"], chunk["advantages"], cfg.clip)
                    entropy_term, entropy_metrics = entropy_loss(dist.entropy())
                    (share * (policy_loss + cfg.entropy_coef * entropy_term)).backward()
                    chunk_metrics.append((share, metrics | entropy_metrics))
                metrics = {name: sum(share * m[name] for share, m in chunk_metrics) for name in chunk_metrics[0][1]}
                metrics["train/grad_norm"] = self.actor.step(cfg.max_grad_norm)
                history.append(metrics)
        return _mean_metrics(history)

    def critic_phase(self, fields: dict[str, torch.Tensor], epochs: int, minibatch_size: int, prefix: str = "train/") -> dict[str, float]:
        """The critic's regression on rollout ``fields [T, N, ...]`` (``returns [T, N, heads]``)."""
        history = []
        for _ in range(epochs):
            for batch in self.minibatches(fields, minibatch_size):
                self.critic.zero_grad()
                loss = sum(share * self._critic_backward(chunk, share) for share, chunk in self.chunks(batch, self.config.chunk_size))
                self.critic.step(self.config.critic_max_grad_norm)
                history.append({f"{prefix}value_loss": loss})
        return _mean_metrics(history)

    def _critic_backward(self, batch: dict[str, torch.Tensor], share: float = 1.0) -> torch.Tensor:
        """Accumulate the gradient of ``share`` x the critic's regression loss on a minibatch, the sum over its
        value heads of each head's loss against its column of ``batch["returns"] [..., heads]``; returns the loss."""
        values = self.policy.critic_values(*self.network_inputs(batch))
        loss = values.shape[-1] * value_loss(values, batch["returns"])[0]
        (share * loss).backward()
        return loss.detach()

    def auxiliary_phase(self, head_coefs: tuple[float, ...] = (1.0,)) -> dict[str, float]:
        """L_aux = 0.5 MSE(pi_aux(s), G) + clone_coef KL(pi_old || pi) over every stored state; critic on the
        same data. G is the value the policy's advantages follow: the critic targets ``[..., heads]`` weighted
        by ``head_coefs`` (two heads: the plug-in's (extrinsic, intrinsic) reward coefficients, so a reward-free run's
        task returns reach no parameter of the policy; one head: its returns). A recurrent policy trains on the
        stored rollouts' sequences, each unrolled from its stored starting state, and pi_old is that same unroll
        at the start of the phase (so the phase starts at KL 0). The stored states are those of collection,
        stale from the first gradient step on, as in the policy phase; re-computing them before every epoch
        (each rollout unrolled whole) learned no better on CartPole without velocities."""
        cfg = self.config
        buffer = self.aux_buffer
        unit = cfg.unroll_length  # steps per sample: a whole sequence (one step for a feed-forward policy)
        across = int(unit > 1)  # the samples' dim of the log-probabilities: [L, B, A] of sequences, [B, A] of steps
        minibatch_units = cfg.aux_minibatch_size // unit
        chunk_units = (cfg.chunk_size or cfg.aux_minibatch_size) // unit
        returns = buffer.all_returns()
        coefs = torch.tensor(head_coefs, dtype=returns.dtype, device=returns.device)
        every_unit = torch.arange(buffer.num_states // unit, device=returns.device)
        with torch.no_grad():
            old_log_probs = torch.cat([self.policy.distribution(*self.network_inputs(buffer.sequences(chunk))).log_probs
                                       for chunk in every_unit.split(chunk_units)], dim=across)
        history, policy_steps, stopped = [], 0, False
        for _ in range(cfg.aux_epochs):
            for index in torch.randperm(every_unit.numel(), device=returns.device).split(minibatch_units):
                self.actor.zero_grad()
                self.critic.zero_grad()
                aux_loss = clone_kl = critic_loss = 0.0
                for chunk in index.split(chunk_units):
                    share = chunk.shape[0] / index.shape[0]  # the minibatch's losses are means over its states
                    batch = buffer.sequences(chunk)
                    if not stopped:
                        dist, aux_values = self.policy.policy_and_aux_value(*self.network_inputs(batch))
                        chunk_aux_loss, _ = value_loss(aux_values, batch["returns"] @ coefs)
                        chunk_clone_kl = dist.kl_from(old_log_probs.index_select(across, chunk)).mean()
                        (share * (chunk_aux_loss + cfg.clone_coef * chunk_clone_kl)).backward()
                        aux_loss += share * chunk_aux_loss.detach()
                        clone_kl += share * chunk_clone_kl.detach()
                    critic_loss += share * self._critic_backward(batch, share)
                if not stopped:
                    if cfg.aux_kl_stop is not None and global_mean(clone_kl) > cfg.aux_kl_stop:
                        stopped = True  # this minibatch's policy gradient is dropped, not applied
                    else:
                        self.actor.step(cfg.max_grad_norm)
                        policy_steps += 1
                    history.append({"aux/aux_value_loss": aux_loss, "aux/clone_kl": clone_kl})
                self.critic.step(self.config.critic_max_grad_norm)
                history.append({"aux/value_loss": critic_loss})
        metrics = _mean_metrics(history)
        metrics.update({"aux/states": float(buffer.num_states), "aux/policy_steps": float(policy_steps), "aux/stopped_early": float(stopped)})
        return metrics

    def state_dict(self) -> dict[str, Any]:
        return super().state_dict() | {"aux_buffer": self.aux_buffer.state_dict(), "rollouts_learned": self.rollouts_learned}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.aux_buffer.load_state_dict(state["aux_buffer"])
        self.rollouts_learned = int(state.get("rollouts_learned", 0))  # a checkpoint from before the count: its run has no warm-up


def _mean_metrics(history: list[dict[str, torch.Tensor]]) -> dict[str, float]:
    """Mean of each metric over the entries that report it."""
    names = {name for entry in history for name in entry}
    return {name: torch.stack([entry[name] for entry in history if name in entry]).float().mean().item() for name in sorted(names)}
