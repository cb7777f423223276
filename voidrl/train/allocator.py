"""Keep freed memory in the process instead of returning it to the OS after every step.

Training allocates and frees the same large buffers (minibatches of frames, conv
activations) every step; glibc's defaults hand big blocks straight back to the OS
and fault them in again, which on this project's Atari runs cost about 10-15% of the
wall time in page faults. Here blocks up to 32 MiB come from the heap and freed heap
memory is kept up to 256 MiB. Blocks above 32 MiB (an 8192-state rollout of frames,
PPG's per-rollout auxiliary frames) are mapped on their own: long-lived buffers in
the heap would pin the transient blocks freed around them, and APT + PPG's 32 stored
rollouts then grew memory by 35 MB per rollout beyond their own 58 MB.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 << 20
TRIM_THRESHOLD_BYTES = 256 << 20


def retain_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds as above; returns False (and changes nothing) without glibc."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
