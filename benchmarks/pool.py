"""Commands of a benchmark, a few at a time: each run a process of its own, as two 1-thread runs share this project's
2-core machines; and their logs gzipped for committing."""

from __future__ import annotations

import gzip
import platform
import shutil
import subprocess
import time
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name as /proc/cpuinfo gives it (elsewhere what ``platform`` knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gzip_copy(source: Path, target: Path) -> None:
    """``source`` gzipped into ``target``, with no time stamp in the header: the same file gives the same bytes."""
    with source.open("rb") as plain, target.open("wb") as file, gzip.GzipFile(fileobj=file, mode="wb", mtime=0) as packed:
        shutil.copyfileobj(plain, packed)


POLL_SECONDS = 0.1
"""How often the running commands are checked for one that ended."""


def run_commands(commands: list[list[str]], parallel: int, cwd: Path | None = None) -> None:
    """Run ``commands`` in order, at most ``parallel`` at once, each next one as soon as any running one ends; at the
    first that fails start no more, and stop with its command line (the others still running go on to their end)."""
    pending = list(commands)
    running: list[subprocess.Popen] = []
    while pending or running:
        while pending and len(running) < parallel:
            running.append(subprocess.Popen(pending.pop(0), cwd=cwd))
        finished = next((process for process in running if process.poll() is not None), None)
        if finished is None:
            time.sleep(POLL_SECONDS)
            continue
        running.remove(finished)
        if finished.returncode != 0:
            raise SystemExit(f"a run failed: {' '.join(map(str, finished.args))}")
