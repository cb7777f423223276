"""NPG's options and presets, and the options NPG and TRPO share (the algorithms: ``voidrl.algos.npg``, ``voidrl.algos.trpo``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voidrl.configs.conditions import Never
from voidrl.configs.policy import PolicyConfig, validate_discounting
from voidrl.validation import require_non_negative, require_positive, require_positive_integers


# Named settings: preset -> section (run, env, algo_config, intrinsic_config) -> overrides.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "cartpole": {
        # TRPO's cartpole settings with a fixed step whose quadratic KL model is 0.2^2 / 2 = 0.02.
        "env": {"num_envs": 2},
        "algo_config": {"num_steps": 512, "gamma": 0.99, "gae_lambda": 0.98, "step_size": 0.2, "value_epochs": 10},
    },
}


@dataclass
class NaturalGradientConfig(PolicyConfig):
    """What NPG and TRPO share: rollouts, the natural direction, and the critic fit.

    The policy must be separate from the critic (``shared=False``) and have a closed-form KL
    (categorical, gaussian or tanh_gaussian; not the mixture).
    """

    acts_only = {"compile": Never("in ppo, a2c and a3c", "its natural-gradient step is not compiled")}

    num_steps: int = 512
    """Rollout length per environment between two updates (one policy step each); with the default
    8 environments 4096 samples, about Spinning Up's 4000 per epoch."""
    gamma: float = 0.99
    """Discount factor."""
    gae_lambda: float = 0.97
    """GAE lambda (1 = Monte-Carlo advantages, 0 = one-step TD)."""
    normalize_advantages: bool = True
    """Standardise the advantages over the whole rollout."""
    cg_iterations: int = 10
    """Conjugate-gradient iterations for d ~= (F + damping I)^-1 g."""
    cg_damping: float = 0.1
    """Damping added to the Fisher matrix: CG solves with F + damping I."""
    value_learning_rate: float = 1e-3
    """Adam learning rate of the critic."""
    value_epochs: int = 5
    """Passes of the critic over each rollout, after the policy step."""
    value_minibatch_size: int = 64
    """Samples per critic gradient step."""
    value_max_grad_norm: float | None = None
    """Clip the critic's gradient norm to this before each step; None disables."""
    adam_eps: float = 1e-5
    """Adam's epsilon (critic)."""

    def validate(self) -> None:
        require_positive_integers(self, ("num_steps", "cg_iterations", "value_epochs", "value_minibatch_size"))
        require_positive(self, ("value_learning_rate", "value_max_grad_norm", "adam_eps"))
        validate_discounting(self)
        require_non_negative(self, ("cg_damping",))
        if self.shared:
            raise ValueError("natural-gradient methods need separate actor and critic networks (shared=False): "
                             "the Fisher step moves the actor alone and the critic is fitted separately")
        if self.continuous_policy == "mixture":
            raise ValueError("continuous_policy 'mixture' has no closed-form KL divergence, which the natural "
                             "gradient's Fisher matrix and the trust region need; use gaussian or tanh_gaussian")
        self.validate_policy()


@dataclass
class NPGConfig(NaturalGradientConfig):
    """NPG hyperparameters. The shared part defaults to Spinning Up's TRPO (lambda 0.97, CG 10, damping 0.1)."""

    presets = PRESETS

    step_size: float = 0.1
    """alpha: the step is alpha / sqrt(g^T F^-1 g) F^-1 g, whose quadratic KL model is alpha^2 / 2
    (0.005 at 0.1, half of TRPO's usual bound of 0.01)."""

    def validate(self) -> None:
        super().validate()
        require_positive(self, ("step_size",))
