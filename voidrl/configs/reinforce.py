"""REINFORCE's options and presets (the algorithm: ``voidrl.algos.reinforce``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voidrl.configs.conditions import Choice, Never
from voidrl.configs.policy import PolicyConfig, validate_discounting
from voidrl.schedule import Schedule
from voidrl.validation import require_non_negative, require_positive, require_positive_integers


# Named settings: preset -> section (run, env, algo_config, intrinsic_config) -> overrides.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "cartpole": {
        # Tuned here: with a baseline, 8 episodes per update; 475+ (last 20 episodes) by about 150k steps.
        "env": {"num_envs": 8},
        "algo_config": {"learning_rate": 5e-3},
    },
}


@dataclass
class REINFORCEConfig(PolicyConfig):
    """REINFORCE hyperparameters."""

    presets = PRESETS
    whole_episodes = True

    num_steps: int = 1000
    """Capacity of a rollout in vector steps: the longest an update waits. An episode still running
    at capacity is cut there like a time limit."""
    episodes_per_env: int = 1
    """Whole episodes each environment contributes to an update; the envs are reset before every
    rollout, and steps after an env's last counted episode are left out."""
    learning_rate: Schedule = 1e-3
    """Adam learning rate: a number, or lin_X (from X linearly to 0 over the run; Python: also a function of the
    remaining progress)."""
    adam_eps: float = 1e-5
    """Adam's epsilon."""
    gamma: float = 0.99
    """Discount factor."""
    baseline: bool = True
    """Subtract a learned state-value baseline: advantage G_t - V(s_t), the critic regressed on G_t.
    With it, an episode cut by a time limit or at capacity is bootstrapped with V of its last
    successor; without it the returns are pure Monte Carlo and a cut is not bootstrapped."""
    reward_to_go: bool = True
    """Weight each step by the return from that step on; False: by its whole episode's return from
    the episode's first step (minus the baseline there), as in Williams's original estimator."""
    normalize_advantages: bool = True
    """Standardise the advantages over the update's valid steps."""
    value_coef: float = 0.5
    """Weight of the baseline's value loss in the combined loss."""
    entropy_coef: Schedule = 0.0
    """Weight of the entropy bonus (a schedule, as learning_rate)."""
    max_grad_norm: float | None = None
    """Clip the global gradient norm to this before the step; None disables."""

    acts_only = {"value_coef": Choice("baseline", True),
                 "compile": Never("in ppo, a2c and a3c", "its update over whole episodes is not compiled")}

    def validate(self) -> None:
        require_positive_integers(self, ("num_steps", "episodes_per_env"))
        require_positive(self, ("learning_rate", "adam_eps", "max_grad_norm"))
        require_non_negative(self, ("entropy_coef", "value_coef"))
        validate_discounting(self)
        self.validate_policy()
