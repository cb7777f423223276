"""The collectives of a data-parallel run launched by ``torchrun`` (``torch.distributed``).

Every function is a no-op, or the single-process answer, when no process group is initialised, so the
library's code calls them unconditionally. Each rank steps its own environments; what must agree
across ranks (the averaged gradient, normaliser statistics, early-stop decisions, the stop on a
signal) goes through these. Imports nothing of voidrl's.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import torch
import torch.distributed as dist

if dist.is_available():
    # Imported now, while no process group exists, not later. torch.distributed.nn.functional binds ``group.WORLD`` as
    # the default argument of its functions when it is first imported, and torch imports it lazily (through
    # torch._dynamo, when a process builds its first optimizer): imported after a group formed, those defaults held
    # the group for the life of the process, so destroy_process_group no longer destroyed it and gloo's worker threads
    # ran on into the interpreter's exit. A worker still releasing a finished collective then needed the GIL of an
    # interpreter going away and the rank aborted: "terminate called without an active exception" (SIGABRT), most
    # often on a loaded machine. Imported before, the defaults are None (the default group at each call).
    import torch.distributed.nn.functional  # noqa: F401


def is_distributed() -> bool:
    """A process group of more than one process is running."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def world_size() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def rank() -> int:
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def is_main_process() -> bool:
    """Rank 0, the one process that writes the run directory (always true without a group)."""
    return rank() == 0


def init_from_environment() -> None:
    """Join the process group ``torchrun`` describes in the environment (``RANK``, ``WORLD_SIZE``,
    ``MASTER_ADDR``...): gloo for CPU tensors, NCCL for CUDA tensors where CUDA is present."""
    if dist.is_initialized():
        return
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available() and local_rank < torch.cuda.device_count():  # a rank without a GPU of its own trains on the CPU
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo")


def local_device(device: torch.device) -> torch.device:
    """``cuda`` without an index is this process's own GPU (``LOCAL_RANK``) in a torchrun group; a ValueError where
    the node has fewer GPUs than processes."""
    if device.type == "cuda" and device.index is None and "LOCAL_RANK" in os.environ:
        local_rank = int(os.environ["LOCAL_RANK"])
        if local_rank >= torch.cuda.device_count():
            raise ValueError(f"device cuda: local rank {local_rank} has no GPU of its own on this node ({torch.cuda.device_count()} "
                             "GPUs); start at most that many processes per node (--nproc-per-node), or train on --device cpu")
        return torch.device("cuda", local_rank)
    return device


def all_reduce_sum_(tensor: torch.Tensor) -> torch.Tensor:
    """Replace ``tensor`` by its sum over all processes, in place; returns it."""
    if is_distributed():
        dist.all_reduce(tensor)
    return tensor


def all_reduce_mean_(tensor: torch.Tensor) -> torch.Tensor:
    """Replace ``tensor`` by its mean over all processes, in place; returns it."""
    if is_distributed():
        dist.all_reduce(tensor)
        tensor.div_(dist.get_world_size())
    return tensor


def global_mean(value: torch.Tensor) -> torch.Tensor:
    """The mean of a scalar over all processes, the same on every rank (``value`` itself without a group):
    what decides whether every rank stops an update early."""
    if not is_distributed():
        return value
    tensor = torch.as_tensor(value, dtype=torch.float64).detach().cpu().reshape(1).clone()
    return all_reduce_mean_(tensor)[0]


def any_process(flag: bool) -> bool:
    """True on every rank when ``flag`` is true on any (a stop asked of one process stops all)."""
    if not is_distributed():
        return flag
    tensor = torch.tensor([float(flag)])
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return bool(tensor.item())


def global_moments(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(mean, unbiased variance)`` of ``values`` over every element of every process, float64: one
    all-reduce of the counts, sums and sums of squares."""
    flat = values.detach().reshape(-1).to(torch.float64)
    sums = torch.stack([torch.tensor(float(flat.numel()), dtype=torch.float64, device=flat.device), flat.sum(), flat.pow(2).sum()])
    count, total, squares = all_reduce_sum_(sums.cpu())
    mean = total / count
    return mean, (squares - count * mean.pow(2)) / (count - 1)


def combine_moments(count: int, mean: torch.Tensor, variance: torch.Tensor) -> tuple[int, torch.Tensor, torch.Tensor]:
    """The ``(count, mean, biased variance)`` of the union of every process's batch, from each one's own
    (float64 CPU tensors of one shape): one all-reduce of the counts, sums and centred sums of squares."""
    if not is_distributed():
        return count, mean, variance
    counts = torch.tensor([float(count)], dtype=torch.float64)
    dist.all_reduce(counts)
    total = counts.item()
    if total == 0:
        return 0, mean, variance
    sums = torch.stack([mean * count, (variance + mean.pow(2)) * count])
    dist.all_reduce(sums)
    union_mean = sums[0] / total
    return int(total), union_mean, (sums[1] / total - union_mean.pow(2)).clamp_min(0.0)


def all_gather_rows(tensor: torch.Tensor) -> torch.Tensor:
    """``[B, ...]`` from every process, concatenated in rank order: ``[W B, ...]`` (no gradient flows back;
    every rank's B must be equal); the tensor itself without a group."""
    if not is_distributed():
        return tensor
    parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor.detach().contiguous())
    return torch.cat(parts)


def gather_to_main(value: Any) -> list[Any] | None:
    """Every rank's ``value`` (picklable) in rank order on rank 0, None on the others."""
    if not is_distributed():
        return [value]
    gathered = [None] * dist.get_world_size() if is_main_process() else None
    dist.gather_object(value, gathered, dst=0)
    return gathered


def is_group_failure(error: BaseException) -> bool:
    """``error`` is a collective's failure because another process of the group went away (gloo's
    connection errors, torch.distributed's own)."""
    return is_distributed() and (isinstance(error, getattr(dist, "DistError", ())) or "/gloo/" in str(error))


def failure_summary(error: BaseException) -> str:
    """The gist of a collective's failure: gloo's message without its source location and advice."""
    text = str(error).split("] ", 1)[-1]
    return text.split(". ", 1)[0]


class GroupFailed(RuntimeError):
    """A collective failed because another process of the group went away, and this process has said so."""


def report_group_failure(error: BaseException) -> GroupFailed:
    """Say at once, in one line, that another process failed (torchrun sends this process SIGTERM right after it sees
    the failure, so the line must be out before the run's handlers are gone); the exception to raise instead."""
    print(f"voidrl: rank {rank()}: another process of the data-parallel group failed ({failure_summary(error)}); "
          "torchrun's report names it; continue from the last checkpoint with --resume", file=sys.stderr, flush=True)
    return GroupFailed(failure_summary(error))


def barrier() -> None:
    if is_distributed():
        dist.barrier()


def destroy() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
