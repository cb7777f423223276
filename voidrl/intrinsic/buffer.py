"""Representation buffer: the most recent observations, kept as uint8 for contrastive training."""

from __future__ import annotations

import math

import torch


class RepresentationBuffer:
    """Ring buffer of the last ``capacity`` observations, preallocated as uint8.

    Slots are filled from index 0 on, so until the buffer wraps the filled slots are
    ``0 .. len - 1``; ``sample`` draws only from those (an unfilled slot is never seen).
    """

    def __init__(self, capacity: int, obs_shape: tuple[int, ...]):
        if capacity < 1:
            raise ValueError(f"RepresentationBuffer: capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.obs_shape = tuple(obs_shape)
        # empty, not zeros: the pages of a large buffer are only touched as it fills
        self._storage = torch.empty((capacity, *self.obs_shape), dtype=torch.uint8)
        self._position = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        return self.capacity * math.prod(self.obs_shape)

    def add(self, obs: torch.Tensor) -> None:
        """Append ``[N, *obs_shape]`` uint8 observations, overwriting the oldest when full."""
        if obs.dtype != torch.uint8 or tuple(obs.shape[1:]) != self.obs_shape:
            raise ValueError(
                f"RepresentationBuffer.add: expected uint8 [N, {', '.join(map(str, self.obs_shape))}], "
                f"got {obs.dtype} {list(obs.shape)}"
            )
        count = obs.shape[0]
        kept = obs[-self.capacity :]
        start = (self._position + count - kept.shape[0]) % self.capacity
        slots = (start + torch.arange(kept.shape[0])) % self.capacity
        self._storage[slots] = kept.to(self._storage.device)
        self._position = (self._position + count) % self.capacity
        self._size = min(self._size + count, self.capacity)

    def sample(self, batch_size: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """``[batch_size, *obs_shape]`` uint8 observations drawn uniformly, with replacement, from filled slots."""
        if self._size == 0:
            raise ValueError("RepresentationBuffer.sample: the buffer is empty")
        return self._storage[torch.randint(0, self._size, (batch_size,), generator=generator)]

    def state_dict(self) -> dict[str, torch.Tensor]:
        """Tensors only (fit for a weights-only checkpoint). ``storage`` is a view of the filled
        slots, not a copy: a checkpoint of a full 10,000-frame buffer must not double its 282 MB."""
        return {
            "storage": self._storage[: self._size],
            "position": torch.tensor(self._position),
            "size": torch.tensor(self._size),
            "capacity": torch.tensor(self.capacity),
        }

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        storage = state["storage"]
        size, position, capacity = (int(state[k]) for k in ("size", "position", "capacity"))
        if capacity != self.capacity or tuple(storage.shape) != (size, *self.obs_shape):
            raise ValueError(
                f"RepresentationBuffer.load_state_dict: state holds {size} of {capacity} slots shaped "
                f"{list(storage.shape[1:])}; this buffer has {self.capacity} slots shaped {list(self.obs_shape)}"
            )
        self._storage[:size] = storage
        self._position, self._size = position, size
