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
    """The most threads worth giving the work: one for vector observations (an MLP gains little from more:
    PPO on CartPole ran 7% faster on two threads than on one, and two such runs side by side kept 25% of
    their speed with two threads each against 100% with one); every available CPU for frames, whose
    convolutions do scale (APT + PPG on MinAtar Breakout: 163 steps/s on two threads against 114 on one).
    ``benchmarks/RESULTS.md``."""
    return available_cpus() if len(obs_shape) == 3 else 1


def busy_cpus_warning(threads: int) -> str | None:
    """A line for a run about to use ``threads`` intra-op threads on a machine whose other processes already keep
    the CPUs busy (the 1-minute load average), else None. The count is not lowered: it changes the order of
    floating-point sums, so a run's results would depend on what else ran. A one-thread run (what several runs sharing
    a machine are advised to use) gets none: it has no fewer threads to take."""
    cpus = available_cpus()
    others = os.getloadavg()[0]
    if threads == 1 or others + threads <= cpus + 0.5:
        return None
    return (f"voidrl: other processes keep about {others:.1f} of this machine's {cpus} CPUs busy; this run's {threads} torch "
            "thread(s) will wait on them (pass --torch-threads 1 to each of several runs sharing the machine)")


@contextlib.contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` intra-op threads, then give back the caller's setting."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
