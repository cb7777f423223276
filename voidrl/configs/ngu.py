"""NGU's options and presets (the algorithm: ``voidrl.algos.ngu``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voidrl.configs.conditions import Choice
from voidrl.configs.r2d2 import PRESETS as R2D2_PRESETS
from voidrl.configs.r2d2 import RecurrentQConfig
from voidrl.validation import require_choice, require_non_negative, require_positive, require_positive_integers, validate_fraction


PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    # R2D2's MiniGrid settings (two environments per policy of a family of 8), with memories as long as
    # an episode can be.
    "minigrid": {"env": R2D2_PRESETS["minigrid"]["env"],
                 "algo_config": {**R2D2_PRESETS["minigrid"]["algo_config"], "episodic_memory": 2048}},
}


@dataclass
class NGUConfig(RecurrentQConfig):
    """NGU hyperparameters on top of a recurrent Q agent's (``gamma`` is the family's largest discount, gamma_max). It
    takes neither R2D2's guide nor its prior: the family's members choose their own actions."""

    presets = PRESETS
    own_intrinsic_reward = True

    td_target: str = "retrace"
    """n-step or retrace; NGU and Agent57 learn by transformed Retrace."""
    num_policies: int = 8
    """N, the policy family's size (32 in the paper; its environments take j = i mod N)."""
    intrinsic_coef: float = 0.3
    """beta, the intrinsic reward's coefficient in the most exploratory policy (r = r_e + beta r_i)."""
    gamma_min: float = 0.99
    """The most exploratory policy's discount (gamma_max is ``gamma``)."""
    controllable_embedding_size: int = 32
    """Width of the controllable-state embedding f trained by inverse dynamics."""
    episodic_neighbours: int = 10
    """Neighbours in the episodic memory that measure a state's episodic novelty."""
    kernel_eps: float = 1e-3
    """epsilon of the inverse kernel K = eps / (d^2 / d_m^2 + eps)."""
    pseudo_count: float = 1e-3
    """c in r_episodic = 1 / (sqrt(sum K) + c)."""
    cluster_distance: float = 8e-3
    """xi: normalised squared distances below this count as zero."""
    max_similarity: float = 8.0
    """r_episodic is 0 where sqrt(sum K) + c exceeds this."""
    max_modulation: float = 5.0
    """L: the life-long modulator alpha is clipped to [1, L]."""
    episodic_memory: int = 30000
    """Embeddings each environment's episodic memory holds (the oldest overwritten beyond)."""
    rnd_embedding_size: int = 128
    """Width of the RND target's output."""
    novelty_learning_rate: float = 5e-4
    """Adam learning rate of the embedding (inverse dynamics) and the RND predictor."""
    split_values: bool = False
    """Separate extrinsic and intrinsic Q networks (Agent57) instead of one network on the mixed reward."""
    intrinsic_terminates: bool = True
    """With split_values: the intrinsic value ends where the task's episode terminates, as in the papers.
    False bootstraps it through a termination as through a time limit (RND's non-episodic intrinsic
    return), so reaching a terminal goal does not cost the intrinsic reward that would have followed."""
    meta_controller: str = "fixed"
    """fixed (environment i keeps j = i mod N, NGU) or bandit (a sliding-window UCB per environment picks j
    at each episode start from the extrinsic returns it has seen, Agent57)."""
    bandit_window: int = 90
    """Episodes the bandit remembers."""
    bandit_beta: float = 1.0
    """Weight of the bandit's exploration bonus sqrt(1 / count)."""
    bandit_epsilon: float = 0.5
    """Share of the bandit's choices that are uniform."""

    acts_only = {"intrinsic_terminates": Choice("split_values", True),
                 **{name: Choice("meta_controller", "bandit") for name in ("bandit_window", "bandit_beta", "bandit_epsilon")}}

    def validate(self) -> None:
        super().validate()
        require_positive_integers(self, ("num_policies", "controllable_embedding_size", "episodic_neighbours", "episodic_memory", "rnd_embedding_size",
                                         "bandit_window"))
        require_positive(self, ("kernel_eps", "pseudo_count", "max_similarity", "novelty_learning_rate"))
        require_non_negative(self, ("intrinsic_coef", "cluster_distance", "bandit_beta"))
        require_choice(self, "meta_controller", ("fixed", "bandit"))
        validate_fraction("gamma_min", self.gamma_min, 0.0, 1.0)
        validate_fraction("bandit_epsilon", self.bandit_epsilon, 0.0, 1.0 + 1e-9)
        if self.gamma_min > self.gamma:
            raise ValueError(f"gamma_min must be at most gamma ({self.gamma}), got {self.gamma_min}")
        if self.max_modulation < 1.0:
            raise ValueError(f"max_modulation must be at least 1, got {self.max_modulation}")
        if not self.intrinsic_terminates and not self.split_values:
            raise ValueError("intrinsic_terminates=False needs split_values=True (a value of the intrinsic reward alone)")
