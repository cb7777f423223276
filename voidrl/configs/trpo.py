"""TRPO's options and presets (the algorithm: ``voidrl.algos.trpo``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voidrl.configs.npg import NaturalGradientConfig
from voidrl.validation import require_positive, require_positive_integers, validate_fraction


# Named settings: preset -> section (run, env, algo_config, intrinsic_config) -> overrides.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "cartpole": {
        # After RL Zoo's CartPole-v1 settings (2 x 512 steps per update, lambda 0.98); 475+ by about 25k steps.
        "env": {"num_envs": 2},
        "algo_config": {"num_steps": 512, "gamma": 0.99, "gae_lambda": 0.98, "value_epochs": 10},
    },
    "mujoco": {
        # RL Zoo-like: 1024 steps per update, delta 0.01, 10 critic epochs, observation normalisation.
        "env": {"num_envs": 1, "normalize_observation": True},
        "algo_config": {"num_steps": 1024, "gamma": 0.99, "gae_lambda": 0.95, "max_kl": 0.01, "cg_damping": 0.1,
                        "value_learning_rate": 1e-3, "value_epochs": 10, "value_minibatch_size": 128},
    },
}


@dataclass
class TRPOConfig(NaturalGradientConfig):
    """TRPO hyperparameters. Defaults are Spinning Up's (delta 0.01, backtrack 0.8 up to 10 times)."""

    presets = PRESETS

    max_kl: float = 0.01
    """delta: the bound on the mean KL(pi_old || pi) over the rollout."""
    backtrack_ratio: float = 0.8
    """Each rejected candidate step is multiplied by this, in (0, 1)."""
    max_backtracks: int = 10
    """Candidate steps tried (full step included) before the update gives up and keeps theta_old."""

    def validate(self) -> None:
        super().validate()
        require_positive(self, ("max_kl",))
        require_positive_integers(self, ("max_backtracks",))
        validate_fraction("backtrack_ratio", self.backtrack_ratio)
