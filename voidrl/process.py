"""Process-wide settings that decide how fast a run is on a CPU but not what it computes, made when voidrl is imported.

Two defaults of the C libraries under torch cost a training run much of its speed, and neither changes a result:

- **OpenMP's spinning.** torch's CPU build runs its intra-op threads on GNU OpenMP, whose idle threads spin for about
  300,000 iterations before they sleep. Alone on its CPUs a run loses nothing by that; beside other busy processes the
  spinning threads take the CPU time the working one needs, and every operation waits for its slowest thread.
  ``GOMP_SPINCOUNT`` at ``OPENMP_SPIN_COUNT`` keeps the speed alone and bounds the loss beside other work
  (``benchmarks/bench_beside_work.py``: about 2x, from up to 12x). It must be in the environment before torch loads
  OpenMP, so it is set only where torch is not yet imported and the user set neither ``OMP_WAIT_POLICY`` nor
  ``GOMP_SPINCOUNT``.
- **glibc's heap trimming.** A minibatch of Atari frames turned to float is about 30 MB; glibc hands blocks that large
  back to the kernel when they are freed and asks for them again (zeroed, page by page) at the next minibatch. That was
  more than a quarter of a pre-training's wall time as system time (12 s of 41 s). ``mallopt`` keeps freed memory in
  the heap (``HEAP_SETTINGS``) unless the user set glibc's ``MALLOC_*`` variables; a process keeps its peak heap
  instead.

Neither touches the order of any computation: a run gives the same bits with or without them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

OPENMP_SPIN_COUNT = "1000"
"""GNU OpenMP's spins before an idle thread sleeps (its default 300,000). Measured on 2 CPUs with a MinAtar
pre-training of 12,288 steps, seconds alone / beside two busy processes: 300,000 18.2 / 86.4, 1,000 18.6 / 41.6,
passive waiting (``OMP_WAIT_POLICY=PASSIVE``) 25.4 / 35.9 (benchmarks/RESULTS.md, "Speed as users get it")."""
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
"""glibc's ``mallopt`` parameters (malloc.h)."""
HEAP_SETTINGS = ((M_MMAP_THRESHOLD, 32 << 20), (M_TRIM_THRESHOLD, 1 << 30), (M_TOP_PAD, 64 << 20))
"""Blocks up to 32 MiB (glibc's largest threshold on 64 bits) come from the heap, not from their own mapping; up to
1 GiB of freed heap is kept rather than trimmed; the heap grows 64 MiB at a time."""


def openmp_environment(environ: dict[str, str] | os._Environ, torch_imported: bool) -> dict[str, str]:
    """The variables to add to ``environ`` for OpenMP before torch loads it: none where torch is already imported or
    the user chose a waiting policy."""
    if torch_imported or "OMP_WAIT_POLICY" in environ or "GOMP_SPINCOUNT" in environ:
        return {}
    return {"GOMP_SPINCOUNT": OPENMP_SPIN_COUNT}


def keep_freed_heap(environ: dict[str, str] | os._Environ) -> bool:
    """Apply ``HEAP_SETTINGS`` through glibc's ``mallopt``; False where the C library is not glibc or the user set
    glibc's own ``MALLOC_*`` variables."""
    if sys.platform != "linux" or any(name.startswith("MALLOC_") for name in environ):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return all(mallopt(parameter, value) == 1 for parameter, value in HEAP_SETTINGS)


def configure_process() -> None:
    """Both settings, for this process and the processes it starts (vector environments' workers, Ray's actors)."""
    os.environ.update(openmp_environment(os.environ, "torch" in sys.modules))
    keep_freed_heap(os.environ)
