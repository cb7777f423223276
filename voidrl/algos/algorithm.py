"""What the shared code (the loops, the run config, evaluation, the Ray engine) may ask of every algorithm.

``Algorithm`` is the base of both kinds, the on-policy skeleton (``base.OnPolicyAlgorithm``) and the learners that
keep their own data (``learner.ReplayLearner``); ``AlgorithmConfig`` (``voidrl.configs.base``) is what every
algorithm's config has, with what the command line and the run config know of the algorithm without importing it
(presets, Ray actors, its own novelty reward, run checks). Shared code reads these, never an algorithm's fields by name.
"""

from __future__ import annotations

from abc import ABC
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


class Algorithm(ABC):
    """Built by the loop as ``Algo(config, obs_shape, action_space, device)``; it acts with ``policy``."""

    config_class: ClassVar[type[AlgorithmConfig]]
    builder_class: ClassVar[type[Builder] | None] = None
    """What makes its Ray actors (``--actors N``, ``voidrl.algos.roles.Builder``; its config's ``remote_actors``);
    None: it has none."""
    whole_episodes: int | None = None
    """Episodes per environment each rollout gathers from a fresh reset (REINFORCE); None: rollouts of
    ``num_steps`` that go on across updates."""
    config: AlgorithmConfig
    policy: nn.Module
    num_steps: int
    updates: int
    """Of an algorithm with Ray actors: the gradient steps taken, the version of the weights its actors act with."""

    def action_noise(self, num_envs: int, action_space: gym.Space, generator: torch.Generator) -> PersistentUniforms | None:
        """The persistent exploration noise the run keeps (and checkpoints) for this algorithm's sampling; None: none."""
        return None

    @staticmethod
    def family_size(policy: nn.Module) -> int | None:
        """Of a policy family: how many members ``policy`` has; None (the default) where the agent has no family."""
        return None

    @classmethod
    def best_member(cls, state: dict[str, Any], policy: nn.Module) -> int | None:
        """Of a policy family: the member j of ``policy`` to evaluate when none is named, read from the algorithm's
        checkpointed ``state``; None where the agent has no family or no preference among its members."""
        return None

    @staticmethod
    def describe_member(policy: nn.Module, member: int) -> str:
        """How ``voidrl eval`` names member j of ``policy``'s family."""
        return f"member j = {member}"

    def keep_replay_in(self, directory: Path, observation_space: gym.Space) -> ReplayStore | None:
        """Keep the replay beside the run's checkpoints, in ``directory``, where the algorithm has one to keep: the
        store, or None (the default: nothing kept apart from the checkpoint)."""
        return None

    def receive(self, delivery: dict[str, Any], progress: float, steps: int) -> dict[str, float]:
        """What one of its Ray actors delivered for a chunk (``deliver``'s result, with the actor's ``index`` and the
        weights' ``version`` it acted with): learn from it; the metrics. ``steps``: environment steps so far."""
        raise NotImplementedError(f"{type(self).__name__} has no Ray actors")

    def shared_replay(self) -> Any | None:
        """The replay its Ray actors write into, served to them for the run (None: they send everything)."""
        return None

    def use_replay(self, replay: Any) -> None:
        """Sample ``replay`` from now on: a Ray handle on ``shared_replay()`` while actors write into it, a replay in
        this process after."""

    def remote_actor_state(self, index: int) -> dict[str, Any] | None:
        """The state Ray actor ``index`` starts from (a resumed run's); None: a fresh one."""
        return None
