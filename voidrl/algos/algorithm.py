"""What the shared code (the loops, the run config, evaluation, the Ray engine) may ask of every algorithm.

``Algorithm`` is the base of both kinds, the on-policy skeleton (``base.OnPolicyAlgorithm``) and the learners that
keep their own data (``learner.ReplayLearner``); ``AlgorithmConfig`` (``voidrl.configs.base``) is what every
algorithm's config has, with what the command line and the run config know of the algorithm without importing it
(presets, Ray actors, its own novelty reward, run checks). Shared code reads these, never an algorithm's fields by name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import gymnasium as gym
import torch
from torch import nn

from voidrl.configs.base import AlgorithmConfig
from voidrl.nets.persistence import PersistentUniforms

if TYPE_CHECKING:
    from voidrl.algos.roles import Builder
    from voidrl.replay.store import ReplayStore
    from voidrl.rollout.storage import RolloutStorage


class Algorithm(ABC):
    """Built by the loop as ``Algo(config, obs_shape, action_space, device)``; it acts with ``policy``. What the
    training loop calls is abstract here; what only some algorithms have is an optional interface below
    (``PolicyFamily``, ``RemoteActors``, ``KeepsReplay``), asked for with ``isinstance``/``issubclass``."""

    config_class: ClassVar[type[AlgorithmConfig]]
    whole_episodes: int | None = None
    """Episodes per environment each rollout gathers from a fresh reset (REINFORCE); None: rollouts of
    ``num_steps`` that go on across updates."""
    config: AlgorithmConfig
    policy: nn.Module
    num_steps: int

    @staticmethod
    @abstractmethod
    def make_policy(config: Any, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str) -> nn.Module:
        """The untrained network this algorithm acts with (also used to load saved agents)."""

    @abstractmethod
    def acting(self, num_envs: int, action_noise: PersistentUniforms | None = None) -> Any:
        """How the collector acts for this algorithm in ``num_envs`` environments (``voidrl.rollout.collector``'s
        acting protocol: ``act``, ``after_step``, its state)."""

    @abstractmethod
    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """Learn from one filled rollout (or chunk) ``[T, N, ...]``; ``progress`` in [0, 1) is the fraction of the step
        budget already spent (for schedules). Returns metrics named ``train/...``."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume (networks, optimisers, counters), the acting network under ``"policy"``."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()``'s result."""

    def action_noise(self, num_envs: int, action_space: gym.Space, generator: torch.Generator) -> PersistentUniforms | None:
        """The persistent exploration noise the run keeps (and checkpoints) for this algorithm's sampling; None: none."""
        return None


class PolicyFamily(ABC):
    """An algorithm that trains a family of policies in one network (NGU, Agent57): ``voidrl eval --member`` plays one."""

    @staticmethod
    @abstractmethod
    def family_size(policy: nn.Module) -> int:
        """How many members ``policy`` has."""

    @classmethod
    def best_member(cls, state: dict[str, Any], policy: nn.Module) -> int | None:
        """The member j of ``policy`` to evaluate when none is named, read from the algorithm's checkpointed ``state``;
        None where it has no preference among its members."""
        return None

    @staticmethod
    def describe_member(policy: nn.Module, member: int) -> str:
        """How ``voidrl eval`` names member j of ``policy``'s family."""
        return f"member j = {member}"


class RemoteActors(ABC):
    """An algorithm with Ray actors (``--actors N``; its config's ``remote_actors``), made by its ``builder_class``."""

    builder_class: ClassVar[type[Builder]]
    updates: int
    """The gradient steps taken: the version of the weights its actors act with."""

    @abstractmethod
    def receive(self, delivery: dict[str, Any], progress: float, steps: int) -> dict[str, float]:
        """What one of its Ray actors delivered for a chunk (``deliver``'s result, with the actor's ``index`` and the
        weights' ``version`` it acted with): learn from it; the metrics. ``steps``: environment steps so far."""

    def shared_replay(self) -> Any | None:
        """The replay its Ray actors write into, served to them for the run (None: they send everything)."""
        return None

    def use_replay(self, replay: Any) -> None:
        """Write into (and sample from) ``replay`` from now on: the served one during a Ray run, the local one after."""

    def remote_actor_state(self, index: int) -> dict[str, Any] | None:
        """The state Ray actor ``index`` starts from (a resumed run's); None: a fresh one."""
        return None


class KeepsReplay(ABC):
    """An algorithm whose replay can be kept beside the run's checkpoints (R2D2's family, ``--save-replay``)."""

    @abstractmethod
    def keep_replay_in(self, directory: Path, observation_space: gym.Space) -> ReplayStore | None:
        """Keep the replay in ``directory``; the store, or None where this run keeps none."""
