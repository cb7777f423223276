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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")
PROC_STAT = Path("/proc/stat")
SAMPLE_SECONDS = 0.25
"""How long ``busy_cpus_warning`` watches the other processes before a run with more than one thread, in seconds."""


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


def check_thread_count(count: int, option: str) -> None:
    """Refuse, naming ``option``, a thread count this process cannot use: below 1, or above the CPUs it may run on
    (more threads than CPUs only wait on one another, and torch crashes on counts in the tens of thousands)."""
    cpus = available_cpus()
    if not 1 <= count <= cpus:
        raise ValueError(f"{option} must be from 1 to {cpus} (the CPUs this process may use), got {count}")


def default_threads(obs_shape: tuple[int, ...]) -> int:
    """The intra-op threads a run gets unless ``--torch-threads`` names a count: every available CPU
    (``available_cpus``) for frames (observations of shape [C, H, W]) in a process of normal priority; one for vector
    observations, and one in a process started with ``nice`` (a background job).

    Measured with ``benchmarks/bench_threads.py`` on 2 CPUs (``benchmarks/RESULTS.md``, 2026-11-29): alone, two
    threads ran PPO at 1.73x one thread's steps/s with the Nature CNN, 1.27x with MinAtar's and 1.08x with CartPole's
    MLP. Niced beside one busy process, a run kept 0.97-1.11 of its speed alone with one thread and 0.00-0.15 with
    two: each operation waits for its slowest thread, and a niced thread sharing a CPU barely runs. The count is chosen
    once per run and recorded in its config.json (it changes the order of floating-point sums), never from the
    machine's load of the moment: the same command with or without ``nice`` is two runs."""
    return available_cpus() if len(obs_shape) == 3 and not niced() else 1


def niced() -> bool:
    """Whether this process runs below normal priority (``nice`` above 0); False where that cannot be read."""
    try:
        return os.getpriority(os.PRIO_PROCESS, 0) > 0
    except (AttributeError, OSError):  # no getpriority (Windows)
        return False


@dataclass(frozen=True)
class CpuClocks:
    """One reading of the clocks ``other_processes_cpus`` compares, each in seconds."""

    busy: float
    """CPU-seconds the CPUs this process may run on (its affinity mask) have spent busy since boot: /proc/stat's
    user, nice, system, irq, softirq and steal time, not idle or waiting on I/O."""
    own: float
    """CPU-seconds this process has used, all its threads together (live child processes are not counted)."""
    wall: float
    """A monotonic clock."""
    cpus: int
    """How many CPUs ``busy`` counts."""


def read_cpu_clocks() -> CpuClocks | None:
    """The clocks now; None where /proc/stat cannot be read (not Linux)."""
    try:
        schedulable = os.sched_getaffinity(0)
        busy_ticks = 0
        for line in PROC_STAT.read_text().splitlines():
            name, *ticks = line.split() or [""]
            if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in schedulable:
                user, nice, system, idle, iowait, irq, softirq, steal = (int(tick) for tick in ticks[:8])
                busy_ticks += user + nice + system + irq + softirq + steal  # guest time is already in user and nice
    except (AttributeError, OSError, ValueError):  # no affinity or /proc/stat (not Linux), or a layout not Linux's
        return None
    return CpuClocks(busy_ticks / os.sysconf("SC_CLK_TCK"), time.process_time(), time.monotonic(), len(schedulable))


def other_processes_cpus(seconds: float = SAMPLE_SECONDS,
                         read: Callable[[], CpuClocks | None] = read_cpu_clocks) -> tuple[float, int] | None:
    """How many of the CPUs this process may run on other processes kept busy over the next ``seconds`` (their busy
    time less this process's own, per second of wall time), and how many CPUs that counts; None where ``read`` gives no
    clocks. Measured, not the load average: that lags by a minute, so a run's own previous work read as another
    process's (issue 65)."""
    before = read()
    if before is None:
        return None
    time.sleep(seconds)
    after = read()
    if after is None:
        return None
    others = ((after.busy - before.busy) - (after.own - before.own)) / (after.wall - before.wall)
    return min(max(0.0, others), after.cpus), after.cpus  # /proc/stat counts whole ticks (10 ms): clamp the rounding


def busy_cpus_warning(threads: int, seconds: float = SAMPLE_SECONDS,
                      read: Callable[[], CpuClocks | None] = read_cpu_clocks) -> str | None:
    """A line for a run about to use ``threads`` intra-op threads where other processes keep so many of its CPUs busy
    (``other_processes_cpus`` over ``seconds``) that its threads must wait on them, else None; None too where that
    cannot be measured. A one-thread run (what several runs sharing a machine are advised to use) gets none and pays no
    measurement: it has no fewer threads to take. The count is not lowered: it changes the order of floating-point
    sums, so a run's results would depend on what else ran."""
    if threads == 1:
        return None
    measured = other_processes_cpus(seconds, read)
    if measured is None:
        return None
    others, cpus = measured
    if others + threads <= cpus + 0.5:
        return None
    return (f"voidrl: other processes keep about {others:.1f} of the {cpus} CPUs this run may use busy; its {threads} "
            "torch threads will wait on them (pass --torch-threads 1 to each of several runs sharing the machine)")


@contextlib.contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` intra-op threads, then give back the caller's setting."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
