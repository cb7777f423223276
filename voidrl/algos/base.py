"""What the on-policy algorithms share: the skeleton and the GAE step (their policy config: ``voidrl.configs.policy``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import gymnasium as gym
import torch

from voidrl import collective
from voidrl.algos.algorithm import Algorithm
from voidrl.configs.policy import PolicyConfig
from voidrl.math import generalized_advantage_estimate, standardize
from voidrl.nets.actor_critic import ActorCritic, LSTMState, build_actor_critic
from voidrl.nets.flat import TrainedParameters, compiled_gradient
from voidrl.nets.persistence import PersistentUniforms
from voidrl.rollout.collector import PolicySampling
from voidrl.rollout.minibatches import STATE_FIELDS, shuffled_sequence_minibatches
from voidrl.rollout.storage import RolloutStorage


def build_policy(config: PolicyConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str) -> ActorCritic:
    """The acting network ``config`` describes, on ``device``, with a value head per discount of ``value_gammas``."""
    return build_actor_critic(obs_shape, action_space, config.memory, config.lstm_size, config.network, config.hidden_sizes,
                              config.shared, config.init_log_std, continuous_policy=config.continuous_policy,
                              std_parameterization=config.std_parameterization, mixture_modes=config.mixture_modes,
                              intrinsic_value=len(config.value_gammas) > 1, bfloat16_bodies=config.bfloat16).to(device)


class OnPolicyAlgorithm(Algorithm):
    """The skeleton every on-policy algorithm shares; a subclass adds its ``config_class`` and ``update``.

    The loop builds it with ``Algo(config, obs_shape, action_space, device)``, reads ``policy`` to act
    and ``num_steps`` to size rollouts, and calls ``update`` on each filled rollout. A subclass
    registers what it trains with ``trained`` (one optimiser each, checkpointed under its name) and
    takes its gradient steps through them (``TrainedParameters.minimize`` / ``step``).
    """

    def __init__(self, config: Any, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str = "cpu"):
        config.validate()
        self.config = config
        self.now = config.at(0.0)
        """The config as the current update reads it: each schedule (learning rate, clip range, entropy coefficient)
        at its value now; ``advance`` moves it."""
        self.num_steps: int = config.num_steps
        self.policy = self.make_policy(config, obs_shape, action_space, device)
        self.optimized: dict[str, TrainedParameters] = {}

    def advance(self, progress: float) -> Any:
        """``now`` at ``progress`` (the fraction of the step budget spent), returned: an update's first call."""
        self.now = self.config.at(progress)
        return self.now

    @staticmethod
    def make_policy(config: Any, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str) -> ActorCritic:
        """The untrained network this algorithm acts with (also used to load saved agents)."""
        return build_policy(config, obs_shape, action_space, device)

    def trained(self, name: str, parameters: Iterable[torch.nn.Parameter],
                make_optimizer: Callable[[torch.nn.Parameter], torch.optim.Optimizer]) -> TrainedParameters:
        """``parameters`` with their own optimiser (e.g. ``nets.flat.adam(lr, eps)``), whose state the
        checkpoint keeps under ``name``."""
        group = TrainedParameters(parameters, make_optimizer)
        self.optimized[name] = group
        return group

    def action_noise(self, num_envs: int, action_space: gym.Space, generator: torch.Generator) -> PersistentUniforms | None:
        """The mixture policy's persistent noise (``PolicyConfig.action_persistence`` > 0), else None."""
        persistence = self.config.action_persistence if isinstance(self.config, PolicyConfig) else 0.0
        return PersistentUniforms(num_envs, action_space.shape[0], persistence, generator) if persistence else None

    def acting(self, num_envs: int, action_noise: PersistentUniforms | None = None) -> PolicySampling:
        """How the collector acts for this algorithm: sampling from ``policy`` (with the mixture policy's
        persistent ``action_noise`` when given), carrying its state."""
        return PolicySampling(self.policy, num_envs, action_noise)

    def minibatches(self, fields: dict[str, torch.Tensor], minibatch_size: int) -> Iterator[dict[str, torch.Tensor]]:
        """One epoch over rollout ``fields [T, N, ...]`` in shuffled minibatches of whole sequences ``[L, B, ...]``
        of ``minibatch_size`` steps in all, L = the config's ``unroll_length`` (1 for a feed-forward policy); with
        the config's ``refresh_states``, each minibatch's starting states are those of the parameters it meets."""
        if not self.config.refresh_states:
            return shuffled_sequence_minibatches(fields, self.config.unroll_length, minibatch_size)
        fields = fields | {name: fields[name].clone() for name in STATE_FIELDS}  # the rollout's stored states stay
        return shuffled_sequence_minibatches(fields, self.config.unroll_length, minibatch_size,
                                             before_each=lambda: self._refresh_states(fields))

    @torch.no_grad()
    def _refresh_states(self, fields: dict[str, torch.Tensor]) -> None:
        """Overwrite the stored states ``fields["lstm_hidden"/"lstm_cell"] [T, N, ...]`` at every sequence's first
        step but the rollout's own with the state the current parameters reach there, unrolling each environment's
        rollout from its first stored state."""
        length = self.config.unroll_length
        state = LSTMState(fields["lstm_hidden"][0], fields["lstm_cell"][0])
        for start in range(length, fields["obs"].shape[0], length):
            previous = slice(start - length, start)
            state = self.policy.encode(fields["obs"][previous], state, fields["episode_starts"][previous])[2]
            fields["lstm_hidden"][start], fields["lstm_cell"][start] = state

    @staticmethod
    def sequence_fields(rollout: RolloutStorage) -> dict[str, torch.Tensor]:
        """What the policy unrolls from besides the observations: the stored states and episode starts ``[T, N, ...]``."""
        return {"lstm_hidden": rollout.lstm_hidden, "lstm_cell": rollout.lstm_cell, "episode_starts": rollout.episode_starts}

    @staticmethod
    def network_inputs(batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, LSTMState, torch.Tensor]:
        """The policy's inputs for a minibatch (``shuffled_sequence_minibatches``'): ``obs``, the state before each
        sample's first step, ``episode_starts`` (sequences ``[L, B, ...]``, or one step ``[B, ...]``)."""
        return batch["obs"], LSTMState(batch["lstm_hidden"], batch["lstm_cell"]), batch["episode_starts"]

    @staticmethod
    def rollout_inputs(rollout: RolloutStorage) -> tuple[torch.Tensor, LSTMState, torch.Tensor]:
        """The policy's inputs for a whole rollout, each environment's steps one sequence ``[T, N, ...]`` from the
        state it began with."""
        return rollout.obs, LSTMState(rollout.lstm_hidden[0], rollout.lstm_cell[0]), rollout.episode_starts

    def state_dict(self) -> dict[str, Any]:
        return {"policy": self.policy.state_dict(), **{name: group.state_dict() for name, group in self.optimized.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.policy.load_state_dict(state["policy"])
        for name, group in self.optimized.items():
            group.load_state_dict(state[name])


class OneLossGradient:
    """The part of an algorithm with one trained group ``parameters`` and one ``loss(batch) -> (loss, metrics)`` that
    gives it ``gradient(batch) -> (gradient [P], metrics)``: compiled into one graph where its config says ``compile``
    (``nets.flat.compiled_gradient``), else by autograd (``eager_gradient``)."""

    parameters: TrainedParameters
    policy: torch.nn.Module
    config: Any

    def make_gradient(self) -> None:
        self.gradient = compiled_gradient(self.policy, self.parameters, self.loss) if self.config.compile else self.eager_gradient
        """``(gradient [P], metrics)`` of ``loss(batch)`` with respect to the flat parameters."""

    def eager_gradient(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        loss, metrics = self.loss(batch)
        return self.parameters.gradient_of(loss), metrics


def rollout_gae(rollout: RolloutStorage, gammas: tuple[float, ...], gae_lambda: float) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE of each value head (``generalized_advantage_estimate``), head h with discount ``gammas[h]`` on its
    ``head_rewards``: the task's head within episodes; a plug-in's across episode ends (its ``next_values`` run on
    into the next episode and nothing ends its recursion). The policy's advantages are the heads' weighted by
    ``head_coefs`` (one head: its own).

    Returns:
        ``(advantages [T, N], returns [T, N, H])``, the returns each head's regression target.
    """
    rewards, values, next_values = rollout.head_rewards(), rollout.values, rollout.next_values
    advantages, returns = [], []
    for head, (gamma, episodic) in enumerate(zip(gammas, rollout.episodic_heads, strict=True)):
        head_advantages, head_returns = generalized_advantage_estimate(
            rewards[..., head], values[..., head], next_values[..., head],
            rollout.terminated & episodic, rollout.truncated & episodic, gamma, gae_lambda,
        )
        advantages.append(head_advantages)
        returns.append(head_returns)
    combined = sum(coef * head_advantages for coef, head_advantages in zip(rollout.head_coefs(), advantages))
    return combined, torch.stack(returns, dim=-1)


def standardize_advantages(advantages: torch.Tensor) -> torch.Tensor:
    """``math.standardize`` of a minibatch's advantages; in a data-parallel run over the union of every
    process's part of the minibatch (one small all-reduce), so the ranks' update is the one-process update."""
    if not collective.is_distributed():
        return standardize(advantages)
    mean, variance = collective.global_moments(advantages)
    return (advantages - mean.to(advantages.dtype)) / (variance.sqrt().to(advantages.dtype) + 1e-8)
