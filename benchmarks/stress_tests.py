#!/usr/bin/env python
"""Run a test selection many times in a row on a loaded machine and count the runs that fail: the evidence that a
flaky test is fixed (issue 49: the data-parallel file 50 times beside two CPU-bound processes, 0 failures).

Each run is ``python -m pytest -q -p no:cacheprovider ARGS`` in its own process; ``--load N`` keeps N CPU-bound
processes busy for the whole time; ``--streams S`` runs S such series side by side (each run then shares the machine
with S - 1 others: for a machine with many cores); ``--deadline`` starts no run after that many seconds; while the file ``--pause-while`` names exists, no run starts
and the CPU-bound processes are stopped (to time something alone between two runs). The output
of every failing run is kept in ``--keep``. Prints one line per run and a summary::

    python benchmarks/stress_tests.py --times 50 --load 2 -- tests/test_data_parallel.py -n 0
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUSY = "while True: pass"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--times", type=int, default=50, help="runs of the selection")
    parser.add_argument("--load", type=int, default=2, help="CPU-bound processes beside the runs")
    parser.add_argument("--streams", type=int, default=1, help="series of runs side by side")
    parser.add_argument("--deadline", type=float, default=None, help="seconds after which no run is started")
    parser.add_argument("--pause-while", type=Path, default=None, help="no run starts while this file exists")
    parser.add_argument("--keep", type=Path, default=ROOT / "benchmarks/out/stress", help="where failing runs' output goes")
    parser.add_argument("pytest_args", nargs="+", help="after --: the files, options and -k of the selection")
    args = parser.parse_args()
    if args.times < 1 or args.load < 0 or args.streams < 1:
        parser.error("--times and --streams must be >= 1 and --load >= 0")
    args.keep.mkdir(parents=True, exist_ok=True)
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.load)]
    failures, finished, began = [], [], time.perf_counter()
    numbers, lock = itertools.count(1), threading.Lock()

    def one_run(index: int) -> None:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.pytest_args], cwd=ROOT,
                              capture_output=True, text=True)
        summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
        with lock:
            finished.append(index)
            if done.returncode != 0:
                failures.append(index)
                (args.keep / f"run{index}.log").write_text(done.stdout + "\n--- stderr ---\n" + done.stderr)
            print(f"run {index}/{args.times}: exit {done.returncode}, {time.perf_counter() - started:.0f} s: {summary}", flush=True)

    def wait_while_paused() -> None:
        if args.pause_while is None or not args.pause_while.exists():
            return
        for process in busy:
            os.kill(process.pid, signal.SIGSTOP)
        while args.pause_while.exists():
            time.sleep(2)
        for process in busy:
            os.kill(process.pid, signal.SIGCONT)

    def series() -> None:
        while args.deadline is None or time.perf_counter() - began < args.deadline:
            with lock:
                wait_while_paused()
                index = next(numbers)
            if index > args.times:
                return
            one_run(index)

    try:
        with ThreadPoolExecutor(args.streams) as pool:
            for result in [pool.submit(series) for _ in range(args.streams)]:
                result.result()
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print(f"{len(finished)} runs ({args.streams} at a time) of pytest {' '.join(args.pytest_args)} beside {args.load} CPU-bound processes in "
          f"{(time.perf_counter() - began) / 60:.1f} min: {len(failures)} failed" +
          (f" (runs {', '.join(map(str, sorted(failures)))}; output in {args.keep})" if failures else ""), flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
