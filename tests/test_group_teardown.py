"""A data-parallel rank's process group is gone once destroyed: no gloo thread outlives it.

torch.distributed.nn.functional binds the default group as the default argument of its functions when it is first
imported, and torch imports it lazily (through torch._dynamo, at a process's first optimizer). Imported after the group
formed, it held the group, so destroy_process_group left gloo's worker threads running into the interpreter's exit,
where one that was still releasing a finished collective aborted the rank ("terminate called without an active
exception", SIGABRT; seen in test_data_parallel.py under pytest -n 2). voidrl.collective imports it first.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from voidrl import collective  # imported before any group forms, as every voidrl entry point does


def threads() -> list[str]:
    """The names of this process's threads (gloo's: ``gloo_tcp_loop``, ``pt_gloo_runloop``)."""
    return [(Path("/proc/self/task") / task / "comm").read_text().strip() for task in os.listdir("/proc/self/task")]


def teardown_worker(rank: int, store: str, out_dir: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))])  # the first optimizer: torch imports torch._dynamo now
        collective.any_process(rank == 1)
    finally:
        dist.destroy_process_group()
    (Path(out_dir) / f"threads{rank}.txt").write_text("\n".join(threads()))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread names are read from /proc")
def test_a_destroyed_group_leaves_no_gloo_thread_running(tmp_path):
    mp.start_processes(teardown_worker, args=(str(tmp_path / "store"), str(tmp_path)), nprocs=2, start_method="spawn")
    for rank in range(2):
        left = [name for name in (tmp_path / f"threads{rank}.txt").read_text().split("\n") if "gloo" in name]
        assert left == [], f"rank {rank}: {left} still run after destroy_process_group"
