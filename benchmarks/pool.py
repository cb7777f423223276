"""Commands of a benchmark, a few at a time: each run a process of its own, as two 1-thread runs share this project's
2-core machines; and their logs gzipped for committing."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path


def gzip_copy(source: Path, target: Path) -> None:
    """``source`` gzipped into ``target``, with no time stamp in the header: the same file gives the same bytes."""
    with source.open("rb") as plain, target.open("wb") as file, gzip.GzipFile(fileobj=file, mode="wb", mtime=0) as packed:
        shutil.copyfileobj(plain, packed)


def run_commands(commands: list[list[str]], parallel: int, cwd: Path | None = None) -> None:
    """Run ``commands`` in order, at most ``parallel`` at once; stop with the command line of the first that fails."""
    pending = list(commands)
    running: list[subprocess.Popen] = []
    while pending or running:
        while pending and len(running) < parallel:
            running.append(subprocess.Popen(pending.pop(0), cwd=cwd))
        finished = running.pop(0)
        if finished.wait() != 0:
            raise SystemExit(f"a run failed: {' '.join(map(str, finished.args))}")
