"""RND's options (the reward plug-in: ``voidrl.intrinsic.rnd``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from voidrl.configs.conditions import Condition, VectorObservations
from voidrl.validation import require_non_negative, require_positive, require_positive_integers, validate_fraction


@dataclass
class RNDConfig:
    """RND plug-in settings (used with ``--intrinsic rnd``); defaults are the paper's where it has one."""

    extrinsic_coef: float = 2.0
    """Weight of the task's advantages (two value heads) or rewards (one head)."""
    intrinsic_coef: float = 1.0
    """Weight of the intrinsic advantages or rewards."""
    embedding_size: int = 512
    """Width of the target's embedding the predictor learns to match."""
    vector_hidden_size: int = 256
    """Hidden units of the networks on vector observations."""
    predictor_learning_rate: float = 1e-4
    """Adam learning rate of the predictor."""
    predictor_epochs: int = 4
    """Passes over each rollout's transitions to train the predictor."""
    predictor_minibatch_size: int = 256
    """Transitions per predictor step, before ``predictor_update_proportion`` thins them."""
    predictor_update_proportion: float = 0.25
    """Share of the transitions each predictor step trains on (the paper keeps the predictor from
    outlearning the target when there are many environments)."""
    return_gamma: float = 0.99
    """Discount of the running sums of intrinsic rewards whose std normalises them (the intrinsic head's)."""
    observation_clip: float = 5.0
    """Normalised observations are clipped to +-this."""
    observation_warmup_steps: int = 2048
    """Random-action environment steps (over all environments) that warm up the observation statistics
    before a fresh run's first rollout; none on resume."""

    acts_only: ClassVar[dict[str, Condition]] = {"vector_hidden_size": VectorObservations()}

    def validate(self) -> None:
        require_positive_integers(self, ("embedding_size", "vector_hidden_size", "predictor_epochs", "predictor_minibatch_size"))
        require_positive(self, ("predictor_learning_rate", "observation_clip"))
        require_non_negative(self, ("extrinsic_coef", "intrinsic_coef", "observation_warmup_steps"))
        if not 0.0 < self.predictor_update_proportion <= 1.0:
            raise ValueError(f"predictor_update_proportion must lie in (0, 1], got {self.predictor_update_proportion}")
        validate_fraction("return_gamma", self.return_gamma, 0.0, 1.0)
