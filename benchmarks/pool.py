"""Commands of a benchmark, a few at a time: each run a process of its own, as two 1-thread runs share this project's
2-core machines."""

from __future__ import annotations

import subprocess
from pathlib import Path


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
