#!/usr/bin/env python
"""Run a test selection many times in a row on a loaded machine and count the runs that fail: the evidence that a
flaky test is fixed (issue 49: the data-parallel file 50 times beside two CPU-bound processes, 0 failures).

Each run is ``python -m pytest -q -p no:cacheprovider ARGS`` in its own process; ``--load N`` keeps N CPU-bound
processes busy for the whole time. The output of every failing run is kept in ``--keep``. Prints one line per run and
a summary::

    python benchmarks/stress_tests.py --times 50 --load 2 -- tests/test_data_parallel.py -n 0
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUSY = "while True: pass"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--times", type=int, default=50, help="runs of the selection")
    parser.add_argument("--load", type=int, default=2, help="CPU-bound processes beside the runs")
    parser.add_argument("--keep", type=Path, default=ROOT / "benchmarks/out/stress", help="where failing runs' output goes")
    parser.add_argument("pytest_args", nargs="+", help="after --: the files, options and -k of the selection")
    args = parser.parse_args()
    if args.times < 1 or args.load < 0:
        parser.error("--times must be >= 1 and --load >= 0")
    args.keep.mkdir(parents=True, exist_ok=True)
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.load)]
    failures, began = [], time.perf_counter()
    try:
        for index in range(1, args.times + 1):
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.pytest_args], cwd=ROOT,
                                  capture_output=True, text=True)
            summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
            if done.returncode != 0:
                failures.append(index)
                (args.keep / f"run{index}.log").write_text(done.stdout + "\n--- stderr ---\n" + done.stderr)
            print(f"run {index}/{args.times}: exit {done.returncode}, {time.perf_counter() - started:.0f} s: {summary}", flush=True)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print(f"{args.times} runs of pytest {' '.join(args.pytest_args)} beside {args.load} CPU-bound processes in "
          f"{(time.perf_counter() - began) / 60:.1f} min: {len(failures)} failed" +
          (f" (runs {', '.join(map(str, failures))}; output in {args.keep})" if failures else ""), flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
