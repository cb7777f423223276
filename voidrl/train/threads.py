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
import time
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


class ThreadGovernor:
    """Keeps the intra-op thread count at what the other processes leave free, up to ``most``.

    Threads that wait for a busy core make every thread of the pool wait: two pixel runs with two
    threads each on two cores crawl. Every ``interval`` seconds (called at update boundaries), the CPUs
    used by others are estimated as the 1-minute load average minus this process's own CPU use over
    the interval, and the count becomes ``most`` capped by the CPUs left, at least one.
    """

    def __init__(self, most: int, adaptive: bool = True, interval: float = 30.0):
        """``adaptive=False``: hold ``most`` threads (a count the user chose)."""
        self.most = most
        self.interval = interval if adaptive else math.inf
        self.last_wall = time.monotonic()
        self.last_cpu = time.process_time()
        if adaptive:
            self._set(own_load=0.0)
        else:
            torch.set_num_threads(most)

    def _set(self, own_load: float) -> None:
        others = max(0.0, os.getloadavg()[0] - own_load)
        torch.set_num_threads(max(1, min(self.most, round(available_cpus() - others))))

    def adjust(self) -> int:
        """Re-choose the count if ``interval`` has passed; returns the count in force."""
        wall, cpu = time.monotonic(), time.process_time()
        if wall - self.last_wall >= self.interval:
            self._set(own_load=(cpu - self.last_cpu) / (wall - self.last_wall))
            self.last_wall, self.last_cpu = wall, cpu
        return torch.get_num_threads()


@contextlib.contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` intra-op threads, then give back the caller's setting."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
