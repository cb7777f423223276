"""One owner per run directory, and what a killed owner left behind.

A run holds an exclusive ``flock`` on ``RUN_DIR/.lock`` (the file holds its PID) for as long as it trains. The
kernel drops the lock when its process ends, however it ends, so the lock of a run killed with SIGKILL is taken
over by the next run without any staleness test; a second process that wants the directory while its owner lives
is refused, naming the owner. The lock file itself stays (removing it would let two processes lock two files of
one name).
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path
from typing import IO

LOCK_NAME = ".lock"
TEMPORARY_PATTERNS = (".*.pt.*.tmp", "episodes.tmp", "metrics.tmp")
"""Files a writer interrupted mid-write leaves: a checkpoint's temporary (``save_checkpoint``), a log being rewritten
(``truncate_csv``, a widened metrics.csv)."""


class RunDirError(ValueError):
    pass


class RunDirInUse(RunDirError):
    pass


def check_writable_dir(directory: str | Path, option: str) -> Path:
    """``directory`` as a Path, if it exists as a writable directory or can be created; else ``RunDirError`` naming
    ``option``. Writes nothing that stays."""
    run_dir = Path(directory)
    existing = run_dir
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise RunDirError(f"{option} {str(run_dir)!r} cannot be created: {str(existing)!r} is a file")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise RunDirError(f"{option} {str(run_dir)!r} cannot be written ({error.strerror} in {str(existing)!r})") from None
    return run_dir


class RunDirLock:
    """``acquire()`` takes the directory (creating it) or raises ``RunDirInUse``; ``release()`` gives it back."""

    def __init__(self, run_dir: str | os.PathLike):
        self.run_dir = Path(run_dir)
        self.handle: IO[str] | None = None

    def acquire(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        handle = open(self.run_dir / LOCK_NAME, "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip() or "unknown"
            handle.close()
            raise RunDirInUse(f"run directory {str(self.run_dir)!r} is in use by process {owner}, which is training in it; "
                              "wait for it to end, or choose another run_dir") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self.handle = handle

    def release(self) -> None:
        if self.handle is not None:
            self.handle.close()  # closing the descriptor drops the flock
            self.handle = None


def remove_stale_temporaries(run_dir: str | os.PathLike) -> list[str]:
    """Delete the temporary files an interrupted writer left in ``run_dir`` (call it holding the lock, so no live
    writer's file goes); returns their names."""
    removed = sorted({path.name for pattern in TEMPORARY_PATTERNS for path in Path(run_dir).glob(pattern)})
    for name in removed:
        (Path(run_dir) / name).unlink(missing_ok=True)
    return removed
