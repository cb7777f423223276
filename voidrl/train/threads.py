"""How many CPU threads a run's torch work gets.

Torch's default is one intra-op thread per core of the machine, whatever share of it
the process may use and whatever the work. On a 2-core machine two runs with that
default slow each other down more than tenfold (their thread pools spin against each
other), and small networks gain nothing from splitting a matrix product anyway.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from pathlib import Path

import torch

CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def available_cpus() -> int:
    """CPUs this process may run on: its affinity mask, capped by a cgroup (v2) CPU quota."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    try:
        quota, period = CGROUP_CPU_MAX.read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cpus)


def default_threads(obs_shape: tuple[int, ...]) -> int:
    """One thread for vector observations (MLPs) and small frames (MinAtar's 10x10), all available
    CPUs for large frames (Atari's 84x84 convolutions, which do scale)."""
    large_frames = len(obs_shape) == 3 and min(obs_shape[1:]) >= 36
    return available_cpus() if large_frames else 1


@contextlib.contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` intra-op threads, then give back the caller's setting."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
