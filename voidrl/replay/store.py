"""The replay kept beside a run's checkpoint (``--save-replay``), written a little at a time.

A replay learner's checkpoint holds the replay's index (priorities, insertion counts, sampling RNG:
``capacity`` numbers); the sequences live in ``RUN_DIR/replay/`` as segment files, one per checkpoint,
each with the sequences inserted since the one before: ``{first:012d}-{end:012d}.pt`` holds insertions
``first .. end - 1``. Checkpoint N needs the segments covering insertions ``[N - size, N)``.

Each checkpoint writes its segment first (atomically, like a checkpoint), then the checkpoint itself. A
run stopped in between leaves a segment beyond the checkpoint on disk: loading skips it and the next save
removes it. Segments the ring has overwritten are removed one checkpoint later, once the checkpoint that
still needed them has been replaced, so the directory holds about ``capacity`` sequences plus one
checkpoint interval's worth.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from voidrl.io.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

SEGMENT_NAME = re.compile(r"^(\d{12})-(\d{12})\.pt$")
TEMPORARY = ".*.pt.*.tmp"


def observation_bytes_per_sequence(space: gym.Space, length: int) -> int:
    """The bytes a stored sequence of ``length`` steps takes for its ``length + 1`` observations: each one's newest
    frame for uint8 frame stacks ``[K, H, W]``, and the first one's whole stack; every observation whole otherwise."""
    shape, itemsize = space.shape, np.dtype(space.dtype).itemsize
    if len(shape) == 3 and itemsize == 1 and shape[0] > 1:
        return (length + 1 + shape[0]) * math.prod(shape[1:])
    return (length + 1) * math.prod(shape) * itemsize


def size_text(size: float) -> str:
    """``size`` bytes as a person reads them: ``"1.3 kB"``, ``"2.40 GB"``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size:.0f} B"


class ReplayStore:
    """The segment files of one run's replay, in ``directory``.

    Args:
        directory: ``RUN_DIR/replay``; bytes_per_sequence, capacity: the expected size of a stored sequence and how
            many the replay keeps (for ``describe``).
    """

    def __init__(self, directory: str | Path, bytes_per_sequence: int, capacity: int):
        self.directory = Path(directory)
        self.bytes_per_sequence, self.capacity = bytes_per_sequence, capacity
        self.saved = 0
        """Insertions before this number are in segments (as of the last checkpoint written or loaded)."""
        self.needed_from = 0
        """The oldest insertion the checkpoint on disk needs: segments ending at or before it are dead."""

    def describe(self) -> str:
        full = self.capacity * self.bytes_per_sequence
        return (f"--save-replay keeps up to {self.capacity:,} sequences in {self.directory} (about {size_text(self.bytes_per_sequence)} "
                f"of observations each, {size_text(full)} when full), adding at each checkpoint what arrived since the last")

    def segments(self) -> list[tuple[int, int, Path]]:
        """``(first, end, path)`` of every segment file, oldest first."""
        if not self.directory.is_dir():
            return []
        found = [(int(m.group(1)), int(m.group(2)), path) for path in self.directory.iterdir() if (m := SEGMENT_NAME.match(path.name))]
        return sorted(found)

    def save(self, replay: Any) -> dict[str, Any]:
        """Write the sequences ``replay`` took in since the last save; return what the checkpoint keeps (the index)."""
        snapshot = replay.snapshot(self.saved)
        index, first = snapshot["index"], snapshot["first"]
        added = index["added"]
        for start, end, path in self.segments():
            if end <= self.needed_from or start >= self.saved:  # overwritten, or beyond the checkpoint on disk
                path.unlink()
        for path in self.directory.glob(TEMPORARY):  # a segment's write cut off by a kill
            path.unlink()
        if added > first:
            save_checkpoint(self.directory / f"{first:012d}-{added:012d}.pt",
                            {"kind": "voidrl-replay-segment", "items": snapshot["items"], "obs": snapshot["obs"]})
        self.saved, self.needed_from = added, added - min(added, index["capacity"])
        return {"index": index}

    def load(self, replay: Any, state: dict[str, Any]) -> None:
        """Fill ``replay`` with what the checkpoint's ``state`` (from ``save``) says it held, from the segments."""
        index = state["index"]
        added, capacity = index["added"], index["capacity"]
        size = min(added, capacity)
        oldest = added - size
        items: list[Any] = [None] * size
        obs: list[Any] = [None] * size
        for start, end, path in self.segments():
            if end <= oldest or start >= added:
                continue
            if end > added:
                raise CheckpointError(f"replay segment {str(path)!r} runs past the checkpoint's {added} insertions: "
                                      "the replay directory belongs to another run")
            segment = load_checkpoint(path)
            for number in range(max(start, oldest), end):
                items[number % capacity] = segment["items"][number - start]
                obs[number % capacity] = segment["obs"][number - start]
        missing = sum(item is None for item in items)
        if missing:
            raise CheckpointError(f"the checkpoint's replay needs {size} sequences from {self.directory}, and {missing} of them are "
                                  "missing; restore that directory, or start a new run")
        replay.load_state_dict(index | {"items": items, "obs": obs})
        self.saved, self.needed_from = added, oldest
