"""A2C's options and presets (the algorithm: ``voidrl.algos.a2c``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voidrl.configs.conditions import Choice, Never
from voidrl.configs.policy import PolicyConfig, validate_discounting
from voidrl.schedule import Schedule
from voidrl.validation import require_choice, require_non_negative, require_positive, require_positive_integers, validate_fraction

OPTIMIZERS = ("rmsprop", "adam")


# Named settings: preset -> section (run, env, algo_config, intrinsic_config) -> overrides.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "cartpole": {
        # Tuned here from SB3's defaults (RMSprop 7e-4): 8 x 8-step rollouts, gamma 0.98, lambda 0.9;
        # 475+ (last 20 episodes) by about 200k steps.
        "env": {"num_envs": 8},
        "algo_config": {"num_steps": 8, "gamma": 0.98, "gae_lambda": 0.9},
    },
    "pendulum": {
        # Leite's (2022) pendulum (voidrl/InvertedPendulumFall-v5): its 25 actors, [40, 20] networks,
        # gamma 0.95, 3-mode mixture policy with persistence 0.965, Adam; tuned here to n = 32 steps,
        # lr 1e-3, lambda 0.95, entropy 0.01, normalised observations and advantages. With seeds 0-2
        # greedy evaluations balance all 1000 steps by 250k-400k steps; at this constant lr they can
        # fall back later, so keep the best agent (--eval-every; benchmarks/RESULTS.md).
        "env": {"num_envs": 25, "normalize_observation": True},
        "algo_config": {"num_steps": 32, "optimizer": "adam", "learning_rate": 1e-3, "gamma": 0.95,
                        "gae_lambda": 0.95, "entropy_coef": 0.01, "normalize_advantages": True,
                        "hidden_sizes": (40, 20), "continuous_policy": "mixture", "mixture_modes": 3,
                        "action_persistence": 0.965},
    },
}


# What voidrl tune samples on top of the preset: after RL Zoo's A2C sampler (sample_a2c_params), continuous where it
# lists values, the learning rate capped at 1e-2 and the rollout from the paper's 5 steps to 128 per environment.
SEARCH_SPACE: dict[str, tuple[Any, ...]] = {
    "learning_rate": ("log_float", 1e-5, 1e-2),
    "optimizer": ("categorical", ["rmsprop", "adam"]),
    "num_steps": ("categorical", [5, 8, 16, 32, 64, 128]),
    "gamma": ("float", 0.9, 0.9999),
    "gae_lambda": ("float", 0.8, 1.0),
    "entropy_coef": ("log_float", 1e-8, 0.1),
    "value_coef": ("float", 0.1, 1.0),
    "max_grad_norm": ("float", 0.3, 5.0),
    "normalize_advantages": ("categorical", [False, True]),
}


@dataclass
class A2CConfig(PolicyConfig):
    """A2C hyperparameters. Defaults are Stable-Baselines3's."""

    presets = PRESETS
    search_space = SEARCH_SPACE
    data_parallel = True
    takes_memory = True

    num_steps: int = 5
    """Rollout length per environment between two updates (the n of the n-step returns)."""
    learning_rate: Schedule = 7e-4
    """Learning rate of the optimiser: a number, or lin_X (from X linearly to 0 over the run; Python: also a
    function of the remaining progress)."""
    optimizer: str = "rmsprop"
    """rmsprop (as in the paper and SB3) or adam (fused)."""
    rmsprop_alpha: float = 0.99
    """RMSprop's smoothing constant (decay of the squared-gradient average)."""
    optimizer_eps: float = 1e-5
    """Epsilon of RMSprop or Adam."""
    gamma: float = 0.99
    """Discount factor."""
    gae_lambda: float = 1.0
    """GAE lambda; 1 gives the paper's n-step bootstrapped returns (up to num_steps)."""
    value_coef: float = 0.5
    """Weight c_v of the value loss in L = L_pi + c_v L_v - c_H H."""
    entropy_coef: Schedule = 0.0
    """Weight c_H of the entropy bonus (a schedule, as learning_rate)."""
    max_grad_norm: float | None = 0.5
    """Clip the global gradient norm to this before the step; None disables."""
    normalize_advantages: bool = False
    """Standardise the advantages over each rollout."""

    acts_only = {
        "rmsprop_alpha": Choice("optimizer", "rmsprop"),
        **{name: Never("on ppo and ppg", "a2c and a3c unroll each environment's whole rollout from the state it began with")
           for name in ("sequence_length", "refresh_states")},
    }

    def validate(self) -> None:
        require_positive_integers(self, ("num_steps",))
        require_positive(self, ("learning_rate", "optimizer_eps", "max_grad_norm"))
        require_non_negative(self, ("entropy_coef", "value_coef"))
        require_choice(self, "optimizer", OPTIMIZERS)
        validate_fraction("rmsprop_alpha", self.rmsprop_alpha)
        validate_discounting(self)
        self.validate_policy()
