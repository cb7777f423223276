"""One torch thread or more: how fast each shipped network trains alone, and niced beside a busy process.

For each scenario (PPO with its preset's network on its usual environment) and each thread count (1, 2 and every CPU
this process may use, when that is more), it trains through the command line (``voidrl train ppo ... --torch-threads
N``) twice: alone, and under ``nice -n 19`` beside ``--busy`` CPU-bound processes (a python spin loop each, at normal
priority). It prints a markdown table of steady steps/s and the niced/alone ratio. The question it answers (issue 65):
does a run whose thread is starved by another process slow in proportion to the CPU it gets, or stall (PPO on MinAtar
Breakout niced beside one busy process on 2 CPUs took 146 s with two threads, 6.2 s with one)? Run it alone on the
machine::

    python benchmarks/bench_threads.py                            # every scenario, about 5 min on 2 idle CPUs
    python benchmarks/bench_threads.py --scenario minatar --threads 1 2 --steps 131072
    python benchmarks/bench_threads.py --out benchmarks/results/threads.md

Steady steps/s: from the run's metrics.csv, the steps of updates 2..n over their ``time/elapsed_seconds`` (start-up
and the first update, the warm-up, left out; checkpoints only at the end). A niced run that stalls is stopped after
``--niced-seconds``; where it finished fewer than two updates by then, its cell is an upper bound ("< N"): the update
under way had not finished in the seconds since the previous one (or since metrics.csv appeared, at the loop's start).
The children get no ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS``, so only ``--torch-threads`` sets their count.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

import voidrl
from bench_ppo import emit
from voidrl.training.threads import available_cpus, other_processes_cpus

REPO = Path(__file__).resolve().parent.parent
POLL_SECONDS = 0.1
"""How often a run's metrics.csv is looked at for new rows, in seconds."""
BUSY_OTHERS = 0.2
"""Other processes keeping more CPUs busy than this before the measurements earn a warning in the report."""


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    env: str
    preset: str
    steps: int
    """Default steps per run: enough steady updates for a stable rate, small enough for about 5 minutes in all."""


SCENARIOS = {s.name: s for s in (
    Scenario("cartpole", "CartPole-v1, MLP 64-64 (cartpole preset: 8 envs x 32 steps, 20 epochs of one 256 minibatch)",
             "CartPole-v1", "cartpole", 65_536),
    Scenario("minatar", "MinAtar/Breakout-v1, MinAtar CNN (minatar preset: 8 envs x 128 steps, 4 epochs x 4 minibatches)",
             "MinAtar/Breakout-v1", "minatar", 65_536),
    Scenario("atari", "ALE/MsPacman-v5, Nature CNN (atari preset: 8 envs x 128 steps, 4 epochs x 4 minibatches)",
             "ALE/MsPacman-v5", "atari", 8_192),
)}


@dataclass(frozen=True)
class Speed:
    """A run's steady steps/s, or, for a run stopped before its second update ended, an upper bound on it."""

    steps_per_second: float | None
    """None for a run stopped before its training loop began."""
    bound: bool
    warned: bool
    """Whether the run said other processes keep its CPUs busy (``voidrl.training.threads.busy_cpus_warning``)."""

    def __str__(self) -> str:
        if self.steps_per_second is None:
            return "stopped before its loop"
        return ("< " if self.bound else "") + f"{self.steps_per_second:,.0f}"


def train_command(scenario: Scenario, steps: int, threads: int, run_dir: Path) -> list[str]:
    return [sys.executable, "-m", "voidrl", "train", "ppo", "--env", scenario.env, "--preset", scenario.preset,
            "--steps", str(steps), "--seed", "0", "--torch-threads", str(threads), "--no-progress",
            "--checkpoint-every", "1000000", "--run-dir", str(run_dir)]


def metrics_rows(run_dir: Path) -> list[dict[str, str]]:
    try:
        with (run_dir / "metrics.csv").open(newline="") as handle:
            return list(csv.DictReader(handle))
    except FileNotFoundError:
        return []


def rows_written(run_dir: Path) -> int | None:
    """Rows in the run's metrics.csv so far (one per update), without parsing them; None before the file exists."""
    try:
        return max(0, (run_dir / "metrics.csv").read_bytes().count(b"\n") - 1)
    except FileNotFoundError:
        return None


def timed_run(scenario: Scenario, steps: int, threads: int, niced: bool, stop_after: float | None) -> Speed:
    """Train once in a child process (under ``nice -n 19`` when ``niced``), stopped after ``stop_after`` seconds."""
    child_env = {name: value for name, value in os.environ.items() if name not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    with tempfile.TemporaryDirectory(prefix="bench_threads_") as scratch:
        run_dir, stderr_path = Path(scratch) / "run", Path(scratch) / "stderr.txt"
        command = train_command(scenario, steps, threads, run_dir)
        with stderr_path.open("w") as stderr:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=child_env,
                                       preexec_fn=(lambda: os.nice(19)) if niced else None)
            killed, unfinished_seconds = watch(process, run_dir, stop_after)
        error = stderr_path.read_text()
        if not killed and process.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{error}")
        rows = metrics_rows(run_dir)
    warned = "other processes keep about" in error
    if len(rows) >= 2:
        steady_steps = float(rows[-1]["step"]) - float(rows[0]["step"])
        steady_seconds = float(rows[-1]["time/elapsed_seconds"]) - float(rows[0]["time/elapsed_seconds"])
        return Speed(steady_steps / steady_seconds, False, warned)
    if not killed:
        raise SystemExit(f"{' '.join(command)} trained fewer than 2 updates: give --steps enough for a steady rate")
    if unfinished_seconds is None:
        return Speed(None, True, warned)
    steps_per_update = voidrl.make_config("ppo", preset=scenario.preset, env=scenario.env).steps_per_update
    return Speed(steps_per_update / unfinished_seconds, True, warned)


def watch(process: subprocess.Popen, run_dir: Path, stop_after: float | None) -> tuple[bool, float | None]:
    """Wait for ``process`` (a training run into ``run_dir``) to end, killing it after ``stop_after`` seconds. Whether
    it was killed, and then the seconds it had spent on an update it did not finish: since its last metrics row, or
    since metrics.csv appeared (the logger opens it just before the loop; tensorboard's import and the busy check,
    about a second, come between, so a bound from no row at all is a little low); None before that."""
    started = time.monotonic()
    update_started, rows_seen = None, 0
    while process.poll() is None:
        if stop_after is not None and time.monotonic() - started > stop_after:
            process.kill()
            process.wait()
            return True, None if update_started is None else time.monotonic() - update_started
        rows = rows_written(run_dir)
        if rows is not None and (update_started is None or rows > rows_seen):
            update_started, rows_seen = time.monotonic(), rows
        time.sleep(POLL_SECONDS)
    return False, None


def start_busy_processes(count: int) -> list[subprocess.Popen]:
    """``count`` python spin loops at normal priority, each keeping one CPU busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.kill()
        process.wait()


def machine_line() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"commit {commit}; torch {torch.__version__}, python {platform.python_version()}; {cpu}, "
            f"{available_cpus()} CPUs this process may use")


def render(table: list[tuple[Scenario, int, int, Speed, Speed]], busy: int, niced_seconds: float,
           others_before: float | None) -> str:
    lines = [f"### Torch threads alone and niced beside {busy} busy process(es) ({datetime.date.today().isoformat()})",
             "", machine_line(), ""]
    if others_before is not None and others_before > BUSY_OTHERS:
        lines += [f"**Warning: other processes kept {others_before:.2f} CPUs busy just before the measurements; "
                  "these numbers are not the machine's.**", ""]
    lines += ["| scenario | threads | steps/s alone | steps/s niced beside a busy process | niced / alone | "
              "said busy (alone, niced) |", "|---|---:|---:|---:|---:|---|"]
    for scenario, steps, threads, alone, niced in table:
        ratio = "-" if niced.steps_per_second is None else (
            f"{'< ' if niced.bound else ''}{niced.steps_per_second / alone.steps_per_second:.2f}")
        lines.append(f"| {scenario.name} ({steps:,} steps) | {threads} | {alone} | {niced} | {ratio} | "
                     f"{'yes' if alone.warned else 'no'}, "
                     f"{'yes' if niced.warned else 'no'} |")
    lines += ["", "Notes:", ""]
    lines += [f"- {scenario.name}: {scenario.title}." for scenario in dict.fromkeys(s for s, *_ in table)]
    lines += [f"- Niced: `nice -n 19` beside {busy} python spin loop(s) at normal priority, started before the run; "
              f"stopped after {niced_seconds:.0f} s. Steady steps/s: updates 2..n from metrics.csv; '< N': an upper "
              "bound, the run's update under way unfinished when it was stopped.",
              "- Said busy: the run's own line that other processes keep its CPUs busy (measured over 0.25 s before "
              "a run of more than one thread)."]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", nargs="+", choices=list(SCENARIOS), default=list(SCENARIOS))
    parser.add_argument("--steps", type=int, default=None,
                        help="steps per run; default per scenario: "
                             + ", ".join(f"{s.name} {s.steps:,}" for s in SCENARIOS.values()))
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="thread counts to compare; default 1, 2 and every CPU this process may use")
    parser.add_argument("--busy", type=int, default=1, help="CPU-bound processes beside the niced run (default 1)")
    parser.add_argument("--niced-seconds", type=float, default=40.0,
                        help="stop a niced run after this many seconds, finished or not (default 40)")
    parser.add_argument("--out", type=Path, default=None, help="append the markdown report to this file")
    args = parser.parse_args(argv)
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be positive")
    if args.threads is not None and min(args.threads) < 1:
        parser.error("--threads must be positive")
    if args.busy < 1:
        parser.error("--busy must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    measured = other_processes_cpus(1.0)
    others_before = None if measured is None else measured[0]
    if others_before is not None and others_before > BUSY_OTHERS:
        print(f"warning: other processes keep {others_before:.2f} CPUs busy; these timings are not the machine's",
              file=sys.stderr)
    thread_counts = args.threads or sorted({1, 2, available_cpus()})
    table = []
    for name in args.scenario:
        scenario = SCENARIOS[name]
        steps = args.steps or scenario.steps
        for threads in thread_counts:
            print(f"[{name}] {threads} thread(s), {steps:,} steps: alone", file=sys.stderr, flush=True)
            alone = timed_run(scenario, steps, threads, niced=False, stop_after=None)
            print(f"  steps/s: {alone}; niced beside {args.busy} busy process(es)", file=sys.stderr, flush=True)
            busy = start_busy_processes(args.busy)
            try:
                niced = timed_run(scenario, steps, threads, niced=True, stop_after=args.niced_seconds)
            finally:
                stop(busy)
            print(f"  steps/s: {niced}", file=sys.stderr, flush=True)
            table.append((scenario, steps, threads, alone, niced))
    emit(render(table, args.busy, args.niced_seconds, others_before), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
