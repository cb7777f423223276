"""Representation buffer: the most recent observations, kept as uint8 for contrastive training."""

from __future__ import annotations

import torch

from voidrl.rollout.frames import FlatStates, Store, compact_copy, gather_across, load_store, store_state


class RepresentationBuffer:
    """The last ``capacity`` observations, added one vector step ``[N, *obs_shape]`` (uint8) at a time.

    Steps gather in a staging block of ``block_steps`` steps; a full block is sealed into a
    compact copy (``compact_copy``: one new frame per state for frame stacks), so 10,000
    Atari states take ~95 MB instead of 282 MB. Whole blocks are dropped once the newer
    ones hold ``capacity`` observations, and ``sample`` draws only from the newest
    ``capacity`` (never from an unfilled slot). A step with a different N seals the block.
    """

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], block_steps: int = 32):
        if capacity < 1:
            raise ValueError(f"RepresentationBuffer: capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.obs_shape = tuple(obs_shape)
        self.block_steps = block_steps
        self.blocks: list[Store] = []
        self._staging: torch.Tensor | None = None
        """``[block_steps, N, *obs_shape]``, allocated at the first step and reused."""
        self._staged = 0
        self._total = 0
        """Observations held: in the sealed blocks and the staging block."""

    def __len__(self) -> int:
        return min(self._total, self.capacity)

    @property
    def nbytes(self) -> int:
        """Bytes of observations held, compact blocks and staging block."""
        tensors = [t for block in self.blocks for t in block.state_dict().values()]
        if self._staging is not None:
            tensors.append(self._staging)
        return sum(t.nbytes for t in tensors)

    def add(self, obs: torch.Tensor) -> None:
        """Append one step of ``[N, *obs_shape]`` uint8 observations, dropping blocks no longer needed."""
        if obs.dtype != torch.uint8 or tuple(obs.shape[1:]) != self.obs_shape:
            raise ValueError(
                f"RepresentationBuffer.add: expected uint8 [N, {', '.join(map(str, self.obs_shape))}], "
                f"got {obs.dtype} {list(obs.shape)}"
            )
        if self._staging is not None and self._staging.shape[1] != obs.shape[0]:
            self._seal()
            self._staging = None
        if self._staging is None:
            # empty, not zeros: pages are only touched as the block fills
            self._staging = torch.empty((self.block_steps, *obs.shape), dtype=torch.uint8)
        self._staging[self._staged] = obs
        self._staged += 1
        self._total += obs.shape[0]
        if self._staged == self.block_steps:
            self._seal()
        while self.blocks and self._total - len(self.blocks[0]) >= self.capacity:
            self._total -= len(self.blocks.pop(0))

    def _seal(self) -> None:
        if self._staged:
            self.blocks.append(compact_copy(self._staging[: self._staged]))
            self._staged = 0

    def _stores(self) -> list[Store]:
        if not self._staged:
            return self.blocks
        return [*self.blocks, FlatStates(self._staging[: self._staged])]

    def sample(self, batch_size: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """``[batch_size, *obs_shape]`` uint8 observations drawn uniformly, with replacement, from the newest ``len``."""
        if self._total == 0:
            raise ValueError("RepresentationBuffer.sample: the buffer is empty")
        index = torch.randint(self._total - len(self), self._total, (batch_size,), generator=generator)
        return gather_across(self._stores(), index)

    def state_dict(self) -> dict[str, object]:
        """Tensors only (fit for a weights-only checkpoint); views of the held data, not copies."""
        staging = self._staging[: self._staged] if self._staging is not None else torch.empty(0, 0, *self.obs_shape, dtype=torch.uint8)
        return {
            "blocks": [store_state(block) for block in self.blocks],
            "staging": staging,
            "total": torch.tensor(self._total),
            "capacity": torch.tensor(self.capacity),
        }

    def load_state_dict(self, state: dict[str, object]) -> None:
        capacity, staging = int(state["capacity"]), state["staging"]
        if capacity != self.capacity or tuple(staging.shape[2:]) != self.obs_shape:
            raise ValueError(
                f"RepresentationBuffer.load_state_dict: state holds {capacity} observations shaped "
                f"{list(staging.shape[2:])}; this buffer holds {self.capacity} shaped {list(self.obs_shape)}"
            )
        self.blocks = [load_store(block) for block in state["blocks"]]
        self._total = int(state["total"])
        self._staged = staging.shape[0]
        self._staging = None
        if staging.shape[1]:
            self._staging = torch.empty((self.block_steps, *staging.shape[1:]), dtype=torch.uint8)
            self._staging[: self._staged] = staging
