"""What every algorithm's config has: the fields and checks shared code reads, and the facts about its algorithm that
the command line and ``TrainConfig`` need without importing the algorithm (and torch)."""

from __future__ import annotations

from typing import Any, ClassVar

from voidrl.configs.conditions import Condition
from voidrl.configs.run import RunConfig


class AlgorithmConfig:
    """The base of every algorithm's config dataclass; shared code reads these, never an algorithm's fields by name."""

    presets: ClassVar[dict[str, dict[str, dict[str, Any]]]] = {}
    """Named settings: preset -> config section (run, env, algo_config, intrinsic_config) -> overrides."""
    search_space: ClassVar[dict[str, tuple[Any, ...]]] = {}
    """What ``voidrl tune`` samples on top of a preset: option -> dimension (``voidrl.configs.search``); empty: the
    algorithm is not tuned."""
    remote_actors: ClassVar[bool] = False
    """Its algorithm has Ray actors (``--actors N``), made by the algorithm's ``builder_class``."""
    data_parallel: ClassVar[bool] = False
    """Its algorithm trains data-parallel under torchrun (each process's gradients all-reduced)."""
    acts_greedily: ClassVar[bool] = False
    """Its algorithm acts greedily on Q-values: no action distribution to sample in evaluation, no policy entropy
    for ``--collapse-entropy`` to watch."""
    own_intrinsic_reward: ClassVar[bool] = False
    """Its algorithm computes a novelty reward of its own (NGU), so a reward plug-in would add a second one."""
    acts_only: ClassVar[dict[str, Condition]] = {}
    """Its options that act on some runs only, with the condition (``voidrl.configs.conditions``); a subclass's
    table adds to its bases'."""
    gamma: float
    """The task's discount: the environment's reward normaliser discounts returns with it."""
    num_steps: int
    """Vector steps of each rollout (or chunk of experience) the loop collects between updates."""

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first field out of its range."""
        raise NotImplementedError

    def check_run(self, run: RunConfig) -> None:
        """Refuse, with a one-line ``ValueError``, a run its algorithm cannot do (``TrainConfig.validate`` asks)."""
