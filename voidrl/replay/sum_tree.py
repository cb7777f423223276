"""Prioritised sampling (Schaul et al., 2016): a sum tree over the replay's slots.

Each leaf holds a slot's priority (already raised to the exponent alpha by the caller); each inner
node the sum of its two children. Sampling a slot with probability priority / total is a descent
from the root, log2(capacity) steps, done for a whole batch at once with numpy.
"""

from __future__ import annotations

import numpy as np
import torch


class SumTree:
    """Priorities of ``capacity`` slots; empty slots have priority 0 and are never sampled."""

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"capacity must be a positive integer, got {capacity}")
        self.capacity = capacity
        self._leaves = 1 << (capacity - 1).bit_length()
        # Heap layout: node i has children 2i and 2i + 1; the leaves are nodes [leaves, 2 leaves).
        self._nodes = np.zeros(2 * self._leaves, dtype=np.float64)

    @property
    def total(self) -> float:
        return float(self._nodes[1])

    def priorities(self, slots: np.ndarray) -> np.ndarray:
        return self._nodes[self._leaves + np.asarray(slots)]

    def update(self, slots: np.ndarray, priorities: np.ndarray) -> None:
        """Set the priorities of ``slots`` (``[K]`` ints; the last value wins for a repeated slot)."""
        slots, priorities = np.asarray(slots, dtype=np.int64).ravel(), np.asarray(priorities, dtype=np.float64).ravel()
        if slots.shape != priorities.shape:
            raise ValueError(f"update: {slots.size} slots but {priorities.size} priorities")
        if slots.size and (slots.min() < 0 or slots.max() >= self.capacity):
            raise IndexError(f"update: slots must lie in [0, {self.capacity}), got {slots.min()}..{slots.max()}")
        if not np.all(np.isfinite(priorities)) or np.any(priorities < 0):
            raise ValueError("update: priorities must be finite and non-negative")
        if slots.size == 0:
            return
        nodes = self._leaves + slots
        self._nodes[nodes] = priorities
        while nodes[0] > 1:  # one level of the tree per pass: every leaf is at the same depth
            nodes = np.unique(nodes // 2)
            self._nodes[nodes] = self._nodes[2 * nodes] + self._nodes[2 * nodes + 1]

    def find(self, values: np.ndarray) -> np.ndarray:
        """The slot whose cumulative-priority interval holds each of ``values`` (in [0, total))."""
        nodes = np.ones(len(values), dtype=np.int64)
        values = np.asarray(values, dtype=np.float64).copy()
        while nodes[0] < self._leaves:
            left = 2 * nodes
            left_sums = self._nodes[left]
            # Never step into an empty subtree, whatever the rounding of the sums above it.
            go_right = (values >= left_sums) & (self._nodes[left + 1] > 0.0)
            values -= np.where(go_right, left_sums, 0.0)
            nodes = left + go_right
        return nodes - self._leaves

    def sample(self, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        """``[batch_size]`` slots, slot i with probability priority_i / total, one from each of
        ``batch_size`` equal strata of the cumulative priority (lower variance than i.i.d. draws)."""
        if self.total <= 0.0:
            raise ValueError("sample: every priority is zero (nothing has been added)")
        strata = (np.arange(batch_size) + rng.random(batch_size)) * (self.total / batch_size)
        return self.find(strata)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"priorities": torch.from_numpy(self._nodes[self._leaves:self._leaves + self.capacity].copy())}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        priorities = np.asarray(state["priorities"], dtype=np.float64)
        if priorities.shape != (self.capacity,):
            raise ValueError(f"sum tree state holds {priorities.shape[0]} slots, this tree has {self.capacity}")
        self._nodes[:] = 0.0
        self.update(np.arange(self.capacity), priorities)


def importance_weights(probabilities: np.ndarray, size: int, beta: float) -> np.ndarray:
    """w_i = (size * P(i))^-beta, divided by the batch's largest so that weights only scale updates down.

    Args:
        probabilities: ``[B]`` sampling probabilities of the drawn slots; size: slots filled.
    """
    weights = (size * np.asarray(probabilities, dtype=np.float64)) ** -beta
    return weights / weights.max()
