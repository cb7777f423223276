"""Checkpoints: written atomically, read without unpickling arbitrary objects.

A checkpoint is a nested dict of tensors, numbers, strings, lists and dicts,
saved with ``torch.save`` and loaded with ``torch.load(weights_only=True)``,
whose restricted unpickler refuses any other object (so a crafted file cannot
run code).
"""

from __future__ import annotations

import errno
import os
import pickle
import re
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any, BinaryIO, Callable

import torch

FORMAT = "voidrl-checkpoint-v1"
FULL_DISK_BYTES = 64 * 2**20
"""A write that fails with less than this free on its file system is reported as a full disk: torch's zip writer
reports the operating system's "no space left" as a position mismatch of its own."""


class CheckpointError(ValueError):
    pass


def save_checkpoint(path: str | os.PathLike, payload: dict[str, Any]) -> None:
    """Write ``payload`` to ``path`` atomically (``write_atomically``)."""
    write_atomically(path, lambda handle: torch.save({"format": FORMAT, **payload}, handle))


def process_umask() -> int:
    """The process's file-mode creation mask, read without changing it where Linux shows it (``/proc/self/status``)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomically(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> None:
    """``write`` the file at ``path`` (its folders made) via a temporary file, fsync and rename: never half-written.
    A write that fails on a full disk raises ``OSError`` (``ENOSPC``) saying so; the file at ``path`` is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~process_umask())  # mkstemp's file is the owner's alone; a written file reads as any other
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except Exception as error:
        written, free = Path(tmp).stat().st_size if Path(tmp).exists() else 0, shutil.disk_usage(path.parent).free
        Path(tmp).unlink(missing_ok=True)
        if free < FULL_DISK_BYTES:
            raise OSError(errno.ENOSPC, f"the disk holding {str(path.parent)!r} is full: {written / 2**20:.0f} MB of "
                                        f"{path.name} were written when the write failed, {free / 2**20:.0f} MB are free; "
                                        f"{path.name} is left as it was. Free some space and run it again (a training run goes on from "
                                        f"its last checkpoint with --resume, resume=True in Python)") from error
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """Read a checkpoint; ``CheckpointError`` with one clear line if missing, corrupt or unsafe."""
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"checkpoint {str(path)!r} is a directory; give the checkpoint file in it (RUN_DIR/checkpoint.pt)")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        unsafe = re.search(r"Unsupported global: GLOBAL (\S+)", str(error))
        if unsafe:
            raise CheckpointError(
                f"checkpoint {str(path)!r} was refused: it asks to build a {unsafe.group(1)} object, "
                "which no voidrl checkpoint contains; nothing in it was run"
            ) from None
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a checkpoint (unreadable pickle data)") from None
    except Exception as error:  # truncated zip, wrong file type, ...
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a checkpoint ({type(error).__name__})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {str(path)!r} is not a {FORMAT} file")
    return payload


def load_run_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """A training run's checkpoint (its config and agent): ``load_checkpoint``, and a one-line ``CheckpointError`` for
    another voidrl file, such as a VAE written by ``voidrl vae train``."""
    payload = load_checkpoint(path)
    if "algorithm" not in payload:
        kind = payload.get("kind", "unknown")
        raise CheckpointError(f"{str(path)!r} holds no training run (a voidrl file of kind {kind!r}; `voidrl vae train` writes "
                              "'voidrl-vae' files, for --vision vae:PATH); give a run's RUN_DIR/checkpoint.pt")
    return payload
