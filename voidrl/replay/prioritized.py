"""Prioritised replay of R2D2 sequences (Schaul et al., 2016; Kapturowski et al., 2019).

A ring of ``capacity`` sequences: a new one overwrites the oldest. Sequence i is sampled with
probability p_i^alpha / sum_j p_j^alpha and its loss weighted by (size P(i))^-beta / max; a new
sequence gets the largest priority seen so far, so it is replayed soon. Frame stacks are stored
one new frame per step (``voidrl.rollout.frames``): a sequence never crosses an episode's end, so
its stacks form one chain.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np
import torch

from voidrl.replay.base import Replay, SequenceBatch
from voidrl.replay.rate_limiter import SamplesPerInsert
from voidrl.replay.sequences import Sequence
from voidrl.replay.sum_tree import SumTree, importance_weights
from voidrl.rollout.frames import Store, compact_copy, load_store, store_state

_STEP_FIELDS = ("actions", "rewards", "behaviour_probs", "guided", "terminated", "truncated", "mask")


class SequenceReplay(Replay):
    """Args:
        capacity: sequences kept; priority_exponent: alpha (0.9 in R2D2); importance_exponent: beta (0.6);
        limiter: how often ``sample_due`` gives a batch (None: ``sample`` only).
    """

    def __init__(self, capacity: int, priority_exponent: float = 0.9, importance_exponent: float = 0.6, seed: int = 0,
                 limiter: SamplesPerInsert | None = None):
        self.capacity, self.limiter = capacity, limiter
        self.priority_exponent, self.importance_exponent = priority_exponent, importance_exponent
        self.tree = SumTree(capacity)
        self.rng = np.random.default_rng(seed)
        self.items: list[dict[str, Any] | None] = [None] * capacity
        self.obs: list[Store | None] = [None] * capacity
        self.insertions = np.zeros(capacity, dtype=np.int64)
        """Per slot: how many sequences it has held, so a late priority update to an overwritten slot is ignored."""
        self.added = 0
        self.max_priority = 1.0

    def __len__(self) -> int:
        return min(self.added, self.capacity)

    def add(self, sequences: list[Sequence], priorities: np.ndarray | None = None) -> None:
        """Store ``sequences``, with ``priorities [K]`` (before the exponent) or the largest seen so far."""
        if priorities is None:
            priorities = np.full(len(sequences), self.max_priority)
        slots = (self.added + np.arange(len(sequences))) % self.capacity
        for slot, sequence in zip(slots, sequences):
            self.obs[slot] = compact_copy(sequence.obs.unsqueeze(1))
            self.items[slot] = {f.name: getattr(sequence, f.name) for f in fields(sequence) if f.name != "obs"}
            self.insertions[slot] += 1
        self.added += len(sequences)
        self._set_priorities(slots, np.asarray(priorities, dtype=np.float64))
        if self.limiter is not None:
            self.limiter.inserted(len(sequences), len(self))

    def sample_due(self) -> tuple[SequenceBatch, bool] | None:
        """A batch of the limiter's size if the insertions so far have earned one, and whether another is earned (so a
        learner across a Ray call need not ask again to hear no); None when none is."""
        if not self.limiter.take():
            return None
        return self.sample(self.limiter.batch_size), self.limiter.credit >= 1.0

    def due_credit(self) -> float:
        return self.limiter.credit

    def set_due_credit(self, credit: float) -> None:
        self.limiter.credit = credit

    def sample(self, batch_size: int) -> SequenceBatch:
        if len(self) == 0:
            raise ValueError("sample: the replay is empty")
        slots = self.tree.sample(batch_size, self.rng)
        probabilities = self.tree.priorities(slots) / self.tree.total
        items = [self.items[slot] for slot in slots]
        length = items[0]["mask"].shape[0]
        steps = torch.arange(length + 1)
        obs = torch.stack([self.obs[slot].gather(steps) for slot in slots], dim=1)
        stacked = {name: torch.stack([item[name] for item in items], dim=1) for name in _STEP_FIELDS}
        start_state = tuple(torch.stack(parts) for parts in zip(*(item["start_state"] for item in items)))
        weights = importance_weights(probabilities, len(self), self.importance_exponent)
        return SequenceBatch(
            obs=obs,
            **stacked,
            start_state=start_state,
            previous_action=torch.stack([item["previous_action"] for item in items]),
            previous_reward=torch.stack([item["previous_reward"] for item in items]),
            starts_episode=torch.tensor([item["starts_episode"] for item in items]),
            weights=torch.as_tensor(weights, dtype=torch.float32),
            keys=torch.as_tensor(np.stack([slots, self.insertions[slots]], axis=1)),
        )

    def update_priorities(self, keys: torch.Tensor, priorities: np.ndarray | torch.Tensor) -> None:
        """New priorities (before the exponent) of sampled sequences; those overwritten since are skipped."""
        keys = np.asarray(keys)
        current = self.insertions[keys[:, 0]] == keys[:, 1]
        self._set_priorities(keys[current, 0], np.asarray(priorities, dtype=np.float64)[current])

    def _set_priorities(self, slots: np.ndarray, priorities: np.ndarray) -> None:
        if priorities.size:
            self.max_priority = max(self.max_priority, float(priorities.max()))
        self.tree.update(slots, priorities**self.priority_exponent)

    def index_state(self) -> dict[str, Any]:
        """Everything but the sequences: priorities, insertion counts, the sampling RNG (small: ``capacity`` numbers)."""
        return {
            "capacity": self.capacity,
            "tree": self.tree.state_dict(),
            "insertions": torch.from_numpy(self.insertions.copy()),
            "added": self.added,
            "max_priority": self.max_priority,
            "rng": self.rng.bit_generator.state,
        }

    def state_dict(self) -> dict[str, Any]:
        """The whole replay: ``index_state`` and the sequences by slot."""
        filled = range(len(self))
        return self.index_state() | {"items": [self.items[slot] for slot in filled], "obs": [store_state(self.obs[slot]) for slot in filled]}

    def snapshot(self, since: int) -> dict[str, Any]:
        """The index and the sequences inserted since insertion number ``since`` that the replay still holds, in one
        call (a replay served to actors takes no insertion in between): ``first`` numbers the oldest of ``items``."""
        first = max(since, self.added - len(self))
        slots = [number % self.capacity for number in range(first, self.added)]
        return {"index": self.index_state(), "first": first, "items": [self.items[slot] for slot in slots],
                "obs": [store_state(self.obs[slot]) for slot in slots]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state["capacity"] != self.capacity:
            raise ValueError(f"replay state has capacity {state['capacity']}, this replay {self.capacity}")
        for slot, (item, obs) in enumerate(zip(state["items"], state["obs"])):
            if "guided" not in item:  # saved before guided steps were kept
                item = item | {"guided": torch.zeros_like(item["mask"])}
            self.items[slot], self.obs[slot] = item, load_store(obs)
        self.tree.load_state_dict(state["tree"])
        self.insertions = state["insertions"].numpy().copy()
        self.added, self.max_priority = state["added"], state["max_priority"]
        self.rng.bit_generator.state = state["rng"]
