"""A3C's options and presets (the algorithm: ``voidrl.algos.a3c``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voidrl.configs.a2c import A2CConfig
from voidrl.configs.run import RunConfig
from voidrl.schedule import Schedule


PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "cartpole": {
        # A2C's CartPole settings, with 8-step rollouts of 4 environments per actor-learner.
        "env": {"num_envs": 4},
        "algo_config": {"num_steps": 8, "gamma": 0.98, "gae_lambda": 0.9},
    },
    "minatar": {
        # MinAtar's 10 x 10 frames through its small CNN; 16 environments of 5 steps per actor-learner.
        "env": {"num_envs": 16},
        "algo_config": {"network": "minatar", "shared": True, "num_steps": 5},
    },
}


@dataclass
class A3CConfig(A2CConfig):
    """A3C hyperparameters: A2C's, with the paper's entropy bonus 0.01 and 5-step rollouts per actor-learner."""

    presets = PRESETS
    remote_actors = True
    data_parallel = False  # its actor-learners send gradients of their own; no torchrun group

    entropy_coef: Schedule = 0.01
    """Weight c_H of the entropy bonus (the paper's 0.01); a number: the actor-learners compute their gradients
    without the run's progress."""
    max_grad_norm: float | None = 40.0
    """Clip each gradient's global norm to this when the holder applies it; None disables."""

    def validate(self) -> None:
        super().validate()
        if "entropy_coef" in self.changing_fields():
            raise ValueError(f"entropy_coef must be a number for a3c, got {self.entropy_coef!r}: its actor-learners "
                             "compute their gradients without the run's progress (the learning rate may be a schedule)")

    def check_run(self, run: RunConfig) -> None:
        if run.actors and self.action_persistence:
            raise ValueError("action_persistence needs actors 0: Ray actors sample fresh noise every step")
