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

    Beside each observation it keeps how the observation was reached (``arrivals``): the action its environment took
    from that environment's observation one step before, when the caller gives it, else -1. Pairs of consecutive
    observations and their actions are what ``sample_transitions`` draws, for inverse dynamics.
    """

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], block_steps: int = 32):
        if capacity < 1:
            raise ValueError(f"RepresentationBuffer: capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.obs_shape = tuple(obs_shape)
        self.block_steps = block_steps
        self.blocks: list[Store] = []
        self.block_arrivals: list[torch.Tensor] = []
        """Per sealed block ``[steps * N]`` (int64): the action that reached each observation from its environment's
        observation one step before, or -1 (none given, or not that observation's successor)."""
        self._staging: torch.Tensor | None = None
        """``[block_steps, N, *obs_shape]``, allocated at the first step and reused."""
        self._staging_arrivals: torch.Tensor | None = None
        """``[block_steps, N]``, the staged observations' arrivals."""
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

    def add(self, obs: torch.Tensor, arrivals: torch.Tensor | None = None) -> None:
        """Append one step of ``[N, *obs_shape]`` uint8 observations, dropping blocks no longer needed; ``arrivals [N]``
        (int) is the action by which each environment reached its observation from its previous one (``latest()``),
        -1 where it did not (a new episode); none given: -1 for all."""
        if obs.dtype != torch.uint8 or tuple(obs.shape[1:]) != self.obs_shape:
            raise ValueError(
                f"RepresentationBuffer.add: expected uint8 [N, {', '.join(map(str, self.obs_shape))}], "
                f"got {obs.dtype} {list(obs.shape)}"
            )
        if arrivals is None:
            arrivals = torch.full((obs.shape[0],), -1)
        if self._staging is not None and self._staging.shape[1] != obs.shape[0]:
            self._seal()
            self._staging = None
            # a pair is found N observations back: with another N every stored pair would be misread
            for block in self.block_arrivals:
                block.fill_(-1)
            arrivals = torch.full_like(arrivals, -1)
        if self._staging is None:
            # empty, not zeros: pages are only touched as the block fills
            self._staging = torch.empty((self.block_steps, *obs.shape), dtype=torch.uint8)
            self._staging_arrivals = torch.empty((self.block_steps, obs.shape[0]), dtype=torch.int64)
        self._staging[self._staged] = obs
        self._staging_arrivals[self._staged] = arrivals
        self._staged += 1
        self._total += obs.shape[0]
        if self._staged == self.block_steps:
            self._seal()
        while self.blocks and self._total - len(self.blocks[0]) >= self.capacity:
            self._total -= len(self.blocks.pop(0))
            self.block_arrivals.pop(0)

    def _seal(self) -> None:
        if self._staged:
            self.blocks.append(compact_copy(self._staging[: self._staged]))
            self.block_arrivals.append(self._staging_arrivals[: self._staged].flatten().clone())
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

    @property
    def num_envs(self) -> int:
        """N of the last step added (0 before the first)."""
        return 0 if self._staging is None else self._staging.shape[1]

    def latest(self) -> torch.Tensor | None:
        """The last step added ``[N, *obs_shape]``, or None before the first."""
        if self._total == 0:
            return None
        return gather_across(self._stores(), torch.arange(self._total - self.num_envs, self._total))

    def _arrivals(self) -> torch.Tensor:
        """``[len held]``: every held observation's arrival, in the order of ``_stores``."""
        staged = [] if not self._staged else [self._staging_arrivals[: self._staged].flatten()]
        return torch.cat([*self.block_arrivals, *staged])

    def sample_transitions(self, batch_size: int, generator: torch.Generator | None = None
                           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """``(before [B, *obs_shape], actions [B], after [B, *obs_shape])``: B pairs of an environment's consecutive
        observations and the action between them, drawn uniformly, with replacement, among the newest ``len``
        observations that were reached from a held one; None while there is none."""
        if self._total == 0:
            return None
        arrivals = self._arrivals()
        n = self.num_envs
        reached = arrivals >= 0
        reached[: max(n, self._total - len(self))] = False
        candidates = reached.nonzero().squeeze(1)
        if candidates.numel() == 0:
            return None
        after = candidates[torch.randint(candidates.numel(), (batch_size,), generator=generator)]
        frames = gather_across(self._stores(), torch.cat([after - n, after]))
        return frames[:batch_size], arrivals[after], frames[batch_size:]

    def state_dict(self) -> dict[str, object]:
        """Tensors only (fit for a weights-only checkpoint); views of the held data, not copies."""
        staging = self._staging[: self._staged] if self._staging is not None else torch.empty(0, 0, *self.obs_shape, dtype=torch.uint8)
        return {
            "blocks": [store_state(block) for block in self.blocks],
            "staging": staging,
            "total": torch.tensor(self._total),
            "capacity": torch.tensor(self.capacity),
            "block_arrivals": list(self.block_arrivals),
            "staging_arrivals": torch.empty(0, 0, dtype=torch.int64) if self._staging is None else self._staging_arrivals[: self._staged],
        }

    def load_state_dict(self, state: dict[str, object]) -> None:
        capacity, staging = int(state["capacity"]), state["staging"]
        if capacity != self.capacity or tuple(staging.shape[2:]) != self.obs_shape:
            raise ValueError(
                f"RepresentationBuffer.load_state_dict: state holds {capacity} observations shaped "
                f"{list(staging.shape[2:])}; this buffer holds {self.capacity} shaped {list(self.obs_shape)}"
            )
        self.blocks = [load_store(block) for block in state["blocks"]]
        # a checkpoint from before arrivals were kept: none of its observations was reached from a held one
        self.block_arrivals = [arrivals.clone() for arrivals in state.get("block_arrivals", [])] or [
            torch.full((len(block),), -1) for block in self.blocks]
        self._total = int(state["total"])
        self._staged = staging.shape[0]
        self._staging = self._staging_arrivals = None
        if staging.shape[1]:
            self._staging = torch.empty((self.block_steps, *staging.shape[1:]), dtype=torch.uint8)
            self._staging[: self._staged] = staging
            self._staging_arrivals = torch.empty((self.block_steps, staging.shape[1]), dtype=torch.int64)
            self._staging_arrivals[: self._staged] = state.get("staging_arrivals", torch.full(staging.shape[:2], -1))
