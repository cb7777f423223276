"""What the algorithms share: the on-policy skeleton, the policy config, validation helpers, the GAE step."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch

from voidrl.algos.algorithm import Algorithm
from voidrl.distributed import collective
from voidrl.math import generalized_advantage_estimate, non_episodic_gae, standardize
from voidrl.nets.actor_critic import CONTINUOUS_POLICIES, STD_PARAMETERIZATIONS, ActorCritic
from voidrl.nets.bodies import NETWORKS
from voidrl.nets.flat import TrainedParameters
from voidrl.nets.persistence import PersistentUniforms
from voidrl.rollout.collector import PolicySampling
from voidrl.rollout.storage import RolloutStorage
from voidrl.validation import require_choice, require_positive_integers, validate_fraction, validate_hidden_sizes


class OnPolicyAlgorithm(Algorithm):
    """The skeleton every on-policy algorithm shares; a subclass adds its config, presets and ``update``.

    The loop builds it with ``Algo(config, obs_shape, action_space, device)``, reads ``policy`` to act
    and ``num_steps`` to size rollouts, and calls ``update`` on each filled rollout. A subclass
    registers what it trains with ``trained`` (one optimiser each, checkpointed under its name) and
    takes its gradient steps through them (``TrainedParameters.minimize`` / ``step``).
    """

    def __init__(self, config: Any, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str = "cpu"):
        config.validate()
        self.config = config
        self.num_steps: int = config.num_steps
        self.policy = self.make_policy(config, obs_shape, action_space, device)
        self.optimized: dict[str, TrainedParameters] = {}

    @staticmethod
    def make_policy(config: Any, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str) -> ActorCritic:
        """The untrained network this algorithm acts with (also used to load saved agents)."""
        return config.build_policy(obs_shape, action_space, device)

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
        persistent ``action_noise`` when given)."""
        return PolicySampling(self.policy, action_noise)

    @abstractmethod
    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """Learn from one filled rollout; ``progress`` in [0, 1) is the fraction of the step budget already
        spent (for schedules). Returns metrics named ``train/...``."""

    def state_dict(self) -> dict[str, Any]:
        return {"policy": self.policy.state_dict(), **{name: group.state_dict() for name, group in self.optimized.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.policy.load_state_dict(state["policy"])
        for name, group in self.optimized.items():
            group.load_state_dict(state[name])


@dataclass
class PolicyConfig:
    """The acting network; every algorithm's config except PPG's (discrete only) extends it."""

    network: str = "auto"
    """Body: auto, mlp, nature (Nature CNN, 2015), dqn2013 (the 2013 DQN network, the thesis's policy body),
    minatar, apt (APT's encoder, fc 256)."""
    hidden_sizes: tuple[int, ...] = (64, 64)
    """Hidden layer sizes of the mlp body."""
    shared: bool = False
    """One body for actor and critic (else two separate networks)."""
    continuous_policy: str = "gaussian"
    """Box actions: gaussian (diagonal), tanh_gaussian (squashed into the action bounds), or mixture
    (the notebook's per-coordinate mixture of Gaussians, means clamped to [-1, 1])."""
    std_parameterization: str = "log_std"
    """Gaussian std: log_std (state-independent parameter) or softplus (state-dependent, softplus with
    an offset so it starts at exp(init_log_std))."""
    init_log_std: float = 0.0
    """Initial log standard deviation of Gaussian policies."""
    mixture_modes: int = 3
    """Modes per action coordinate of the mixture policy."""
    action_persistence: float = 0.0
    """Mixture policy only: probability that an environment keeps its mode and Gaussian quantile draws
    from the previous step (the notebook uses 0.965 on the pendulum, 0.931 on the cheetah); 0 = fresh
    draws every step."""

    def validate_policy(self) -> None:
        require_choice(self, "network", NETWORKS)
        require_choice(self, "continuous_policy", CONTINUOUS_POLICIES)
        require_choice(self, "std_parameterization", STD_PARAMETERIZATIONS)
        require_positive_integers(self, ("mixture_modes",))
        validate_hidden_sizes(self.hidden_sizes)
        if not 0.0 <= self.action_persistence < 1.0:
            raise ValueError(f"action_persistence must lie in [0, 1), got {self.action_persistence}")
        if self.action_persistence and self.continuous_policy != "mixture":
            raise ValueError("action_persistence needs continuous_policy mixture")

    def build_policy(self, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str,
                     intrinsic_value: bool = False) -> ActorCritic:
        return ActorCritic(
            obs_shape, action_space, self.network, self.hidden_sizes, self.shared, self.init_log_std,
            continuous_policy=self.continuous_policy, std_parameterization=self.std_parameterization,
            mixture_modes=self.mixture_modes, intrinsic_value=intrinsic_value,
        ).to(device)


def validate_discounting(config: Any) -> None:
    """gamma in (0, 1] and, where the config has them, gae_lambda in [0, 1] and intrinsic_gamma in (0, 1)."""
    validate_fraction("gamma", config.gamma, 0.0, 1.0 + 1e-9)
    gae_lambda = getattr(config, "gae_lambda", 0.0)
    if not 0.0 <= gae_lambda <= 1.0:
        raise ValueError(f"gae_lambda must lie in [0, 1], got {gae_lambda}")
    if getattr(config, "intrinsic_gamma", None) is not None:
        validate_fraction("intrinsic_gamma", config.intrinsic_gamma, 0.0, 1.0)


def rollout_gae(rollout: RolloutStorage, gamma: float, gae_lambda: float) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE advantages and lambda-returns ``[T, N]`` of the rollout's training rewards (one value head)."""
    return generalized_advantage_estimate(
        rollout.training_rewards(), rollout.values, rollout.next_values, rollout.terminated, rollout.truncated, gamma, gae_lambda,
    )


def two_head_gae(rollout: RolloutStorage, gamma: float, intrinsic_gamma: float, gae_lambda: float
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Advantages and returns ``[T, N]`` of a policy with a task and an intrinsic value head: the task head's GAE
    of the task rewards (episodic), the intrinsic head's of the plug-in's rewards (``non_episodic_gae``),
    the advantages combined by the plug-in's (task, intrinsic) ``reward_weights``.

    Returns:
        ``(advantages, task returns, intrinsic returns)``.
    """
    if rollout.reward_weights is None:
        raise ValueError("two value heads need a reward plug-in's rewards (--intrinsic)")
    task_advantages, task_returns = generalized_advantage_estimate(
        rollout.rewards, rollout.values, rollout.next_values, rollout.terminated, rollout.truncated, gamma, gae_lambda,
    )
    intrinsic_advantages, intrinsic_returns = non_episodic_gae(
        rollout.intrinsic_rewards, rollout.intrinsic_values, rollout.intrinsic_bootstrap, intrinsic_gamma, gae_lambda,
    )
    task_weight, intrinsic_weight = rollout.reward_weights
    return task_weight * task_advantages + intrinsic_weight * intrinsic_advantages, task_returns, intrinsic_returns


def standardize_advantages(advantages: torch.Tensor) -> torch.Tensor:
    """``math.standardize`` of a minibatch's advantages; in a data-parallel run over the union of every
    process's part of the minibatch (one small all-reduce), so the ranks' update is the one-process update."""
    if not collective.is_distributed():
        return standardize(advantages)
    mean, variance = collective.global_moments(advantages)
    return (advantages - mean.to(advantages.dtype)) / (variance.sqrt().to(advantages.dtype) + 1e-8)
