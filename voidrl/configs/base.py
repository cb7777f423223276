"""What every algorithm's config has: the fields and checks shared code reads, and the facts about its algorithm that
the command line and ``TrainConfig`` need without importing the algorithm (and torch)."""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any, ClassVar

from voidrl.configs.conditions import Condition
from voidrl.configs.run import RunConfig
from voidrl.schedule import Schedule, is_constant, schedule_value
from voidrl.validation import field_type


@cache
def _scheduled_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if field_type(cls, f.name)[0] is Schedule)


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
    checkpoint_options: ClassVar[tuple[str, ...]] = ()
    """Its options that name a checkpoint the run reads (R2D2's guide and prior): the run warns where one was saved
    from another environment."""
    whole_episodes: ClassVar[bool] = False
    """Its rollouts gather whole episodes (REINFORCE), so a budget below one rollout of ``num_steps`` still trains."""
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

    @classmethod
    def scheduled_fields(cls) -> tuple[str, ...]:
        """The options that take a schedule (``voidrl.schedule``): the learning rate, clip range, entropy
        coefficient, where the algorithm has them."""
        return _scheduled_fields(cls)

    def changing_fields(self) -> tuple[str, ...]:
        """The scheduled options this config gives a schedule rather than a constant."""
        return tuple(name for name in self.scheduled_fields() if not is_constant(getattr(self, name)))

    def at(self, progress: float) -> Any:
        """This config with each schedule at its value once the fraction ``progress`` of the step budget is spent:
        what an update reads."""
        return dataclasses.replace(self, **{name: schedule_value(getattr(self, name), progress) for name in self.changing_fields()})

    def schedule_metrics(self, now: Any) -> dict[str, float]:
        """``train/NAME``: the value ``now`` (``at``'s result) gives each option that changes over the run."""
        return {f"train/{name}": getattr(now, name) for name in self.changing_fields()}

    def compiles(self) -> bool:
        """Its update is compiled by ``torch.compile`` (a C++ compiler must be on the PATH)."""
        return False

    def check_run(self, run: RunConfig) -> None:
        """Refuse, with a one-line ``ValueError``, a run its algorithm cannot do (``TrainConfig.validate`` asks)."""
