"""Blocks of stored observations, frame stacks kept as one new frame per state.

Consecutive Atari observations share K-1 of their K frames. Keeping every stack
stores each frame K times; here a block of steps keeps each state's newest frame
plus the full stack only where the chain breaks (the block's first step, resets),
a K-fold saving for PPG's auxiliary buffer of N_pi rollouts and APT's
representation buffer. Every store has ``len``, ``gather(flat indices)`` and a
tensors-only ``state_dict``.
"""

from __future__ import annotations

import torch


class StackedFrames:
    """A rollout's observations ``[T, N, K, H, W]`` (uint8), rebuilt exactly on ``gather``."""

    def __init__(self, obs: torch.Tensor):
        steps, envs, depth = obs.shape[:3]
        continues = torch.zeros(steps, envs, dtype=torch.bool, device=obs.device)
        for start in range(1, steps, 64):  # in time chunks: one full comparison would be a 170 MB bool tensor
            stop = min(start + 64, steps)
            continues[start:stop] = (obs[start:stop, :, :-1] == obs[start - 1 : stop - 1, :, 1:]).flatten(2).all(-1)
        anchors = ~continues  # states whose whole stack is kept
        self.envs, self.depth = envs, depth
        self.frames = obs[:, :, -1].clone()
        self.stacks = obs[anchors].clone()
        slots = torch.full((steps, envs), -1, dtype=torch.long, device=obs.device)
        slots[anchors] = torch.arange(int(anchors.sum()), device=obs.device)
        times = torch.arange(steps, device=obs.device).unsqueeze(1).expand(steps, envs)
        self.anchor_time = torch.where(anchors, times, 0).cummax(0).values
        self.anchor_slot = slots.gather(0, self.anchor_time)

    def __len__(self) -> int:
        return self.frames.shape[0] * self.envs

    def gather(self, index: torch.Tensor) -> torch.Tensor:
        """Observations ``[B, K, H, W]`` at flat (time-major) indices ``[B]``."""
        t, n = index // self.envs, index % self.envs
        anchor, slot = self.anchor_time[t, n], self.anchor_slot[t, n]
        channels = []
        for c in range(self.depth):
            source = t - (self.depth - 1) + c  # the step whose newest frame sits in channel c
            from_frames = (source > anchor).view(-1, 1, 1)
            in_stack = (c + t - anchor).clamp(max=self.depth - 1)
            channels.append(torch.where(from_frames, self.frames[source.clamp(min=0), n], self.stacks[slot, in_stack]))
        return torch.stack(channels, 1)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"frames": self.frames, "stacks": self.stacks, "anchor_time": self.anchor_time, "anchor_slot": self.anchor_slot}

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> StackedFrames:
        store = cls.__new__(cls)
        store.frames, store.stacks = state["frames"], state["stacks"]
        store.anchor_time, store.anchor_slot = state["anchor_time"], state["anchor_slot"]
        store.envs, store.depth = store.frames.shape[1], store.stacks.shape[1]
        return store


class FlatStates:
    """A block of observations ``[T, N, ...]`` kept as they are (a view, not a copy)."""

    def __init__(self, obs: torch.Tensor):
        self.obs = obs.reshape(-1, *obs.shape[2:])

    def __len__(self) -> int:
        return self.obs.shape[0]

    def gather(self, index: torch.Tensor) -> torch.Tensor:
        """Observations ``[B, ...]`` at flat (time-major) indices ``[B]``."""
        return self.obs[index]

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"obs": self.obs}

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> FlatStates:
        store = cls.__new__(cls)
        store.obs = state["obs"]
        return store


STORES = {"stacked": StackedFrames, "flat": FlatStates}
Store = StackedFrames | FlatStates


def compact_copy(obs: torch.Tensor) -> Store:
    """A copy of observations ``[T, N, ...]``: one new frame per state for uint8 frame stacks
    ``[T, N, K, H, W]`` (K > 1), as they are otherwise."""
    if obs.dim() == 5 and obs.dtype == torch.uint8 and obs.shape[2] > 1:
        return StackedFrames(obs)
    return FlatStates(obs.clone())


def store_state(store: Store) -> dict[str, object]:
    """``store.state_dict()`` tagged with its kind, for ``load_store``."""
    kind = next(name for name, cls in STORES.items() if isinstance(store, cls))
    return {"kind": kind, "state": store.state_dict()}


def load_store(state: dict[str, object]) -> Store:
    return STORES[state["kind"]].from_state_dict(state["state"])


def gather_across(stores: list[Store], index: torch.Tensor) -> torch.Tensor:
    """Observations ``[B, ...]`` at indices ``[B]`` into the concatenation of ``stores``."""
    sizes = torch.tensor([len(store) for store in stores], device=index.device)
    ends = sizes.cumsum(0)
    which = torch.searchsorted(ends, index, right=True)
    local = index - (ends - sizes)[which]
    out = None
    for i in which.unique().tolist():
        mask = which == i
        part = stores[i].gather(local[mask])
        if out is None:
            out = torch.empty((index.shape[0], *part.shape[1:]), dtype=part.dtype, device=part.device)
        out[mask] = part
    return out
