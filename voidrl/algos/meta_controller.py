"""Agent57's meta-controller: a sliding-window UCB bandit over the policy family, one per actor.

At each episode start the actor picks the arm j (a pair beta_j, gamma_j) with the best upper bound on
the extrinsic episode return it has brought over the last ``window`` episodes (Badia et al. 2020b,
Garivier & Moulines 2011):

    j = argmax_a  mean_a + beta * sqrt(1 / count_a),

both over the window; an arm absent from the window is played first (lowest index), and with
probability ``epsilon`` the arm is uniform instead. ``best_arm`` is the arm to evaluate: the best mean
return over all actors' windows, without the bonus.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np


class SlidingWindowUCB:
    """Args: arms: the policy family's size N; window: episodes remembered (tau); beta: the bonus's
    weight; epsilon: the share of uniform choices; seed: of its random generator."""

    def __init__(self, arms: int, window: int = 90, beta: float = 1.0, epsilon: float = 0.5, seed: int = 0):
        if arms < 1 or window < 1:
            raise ValueError(f"bandit: arms and window must be positive integers, got {arms} and {window}")
        self.arms, self.beta, self.epsilon = arms, beta, epsilon
        self.history: deque[tuple[int, float]] = deque(maxlen=window)
        """(arm, extrinsic episode return) of the last ``window`` episodes."""
        self.rng = np.random.default_rng(seed)

    def scores(self) -> np.ndarray:
        """``[arms]`` the upper bounds; +inf for an arm absent from the window."""
        counts, sums = arm_totals(self.history, self.arms)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(counts > 0, sums / counts + self.beta * np.sqrt(1.0 / counts), np.inf)

    def choose(self) -> int:
        explore = self.rng.random() < self.epsilon
        arm = self.rng.integers(self.arms)  # drawn every time, so the stream does not depend on the branch
        scores = self.scores()
        if np.isinf(scores).any() or not explore:
            return int(np.argmax(scores))
        return int(arm)

    def observe(self, arm: int, episode_return: float) -> None:
        self.history.append((int(arm), float(episode_return)))

    def state_dict(self) -> dict[str, Any]:
        return {"history": [list(item) for item in self.history], "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.history.clear()
        self.history.extend((int(arm), float(value)) for arm, value in state["history"])
        self.rng.bit_generator.state = state["rng"]


def arm_totals(history: Iterable[tuple[int, float]], arms: int) -> tuple[np.ndarray, np.ndarray]:
    """``[arms]`` episode counts and ``[arms]`` sums of episode returns of ``(arm, episode return)`` pairs."""
    counts, sums = np.zeros(arms), np.zeros(arms)
    for arm, episode_return in history:
        counts[int(arm)] += 1
        sums[int(arm)] += episode_return
    return counts, sums


def best_arm(histories: list[list[tuple[int, float]]], arms: int) -> int:
    """The arm whose episodes in ``histories`` (each bandit's ``(arm, episode return)`` window, pooled)
    have the highest mean return; ties and no episodes at all go to the lowest index (beta = 0)."""
    counts, sums = arm_totals(itertools.chain.from_iterable(histories), arms)
    means = np.where(counts > 0, sums / np.maximum(counts, 1), -np.inf)
    return int(np.argmax(means)) if counts.any() else 0
