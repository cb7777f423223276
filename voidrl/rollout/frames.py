"""Frame-stacked observations kept as one new frame per state.

Consecutive Atari observations share K-1 of their K frames. Keeping every stack
stores each frame K times; here a rollout keeps each state's newest frame plus the
full stack only where the chain breaks (the rollout's first step, resets), a K-fold
saving for PPG's auxiliary buffer of N_pi rollouts.
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
