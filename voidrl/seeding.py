"""Seeding and capturing every random number generator a run uses."""

from __future__ import annotations

import os
import random

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def use_deterministic_kernels(device: torch.device, enabled: bool) -> None:
    """On a CUDA ``device``, have torch choose deterministic kernels (``enabled``) or its fastest ones; nothing on the CPU.

    Process-wide, as torch's switches are. An operation without a deterministic kernel warns once and runs
    as before. cuBLAS reads its workspace setting when it starts, so this goes before the run's first CUDA work."""
    if device.type != "cuda":
        return
    if enabled:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(enabled, warn_only=True)
    torch.backends.cudnn.deterministic = enabled
    torch.backends.cudnn.benchmark = False


def env_seed(seed: int, update: int) -> int:
    """Environment reset seed; a resumed run reseeds so it does not replay the first episodes."""
    return (seed + 1_000_003 * update) % 2**31


def rank_seed(seed: int, rank: int) -> int:
    """The seed of process ``rank`` of a data-parallel run: the run's own on rank 0, distinct streams on the others."""
    return seed if rank == 0 else (seed + 100_000_007 * rank) % 2**31


def rng_state() -> dict:
    """States of the python, numpy and torch generators as checkpoint-safe values."""
    version, python_state, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {
        "python": {"version": version, "state": list(python_state), "gauss": gauss},
        "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "cached": float(cached)},
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    python = state["python"]
    random.setstate((python["version"], tuple(python["state"]), python["gauss"]))
    n = state["numpy"]
    np.random.set_state((n["kind"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"], n["cached"]))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
