#!/usr/bin/env python
"""Speed and memory of the thesis set-up: APT + PPG on Ms. Pac-Man, through the CLI.

Runs, as a user would,

1. ``voidrl pretrain ppg --env ALE/MsPacman-v5 --preset pretrain-published`` (16 envs x 512
   steps, one 512-sample two-view contrastive update per vector step), and
2. ``voidrl finetune ppg --from <that checkpoint>`` (``atari`` preset: 16 envs x 256 steps),

each in its own process, and reports from the runs' ``metrics.csv`` the steps/s, the
time split (environment, inference, contrastive updates, particle-reward computation,
policy / critic / auxiliary phases), the raw environment steps/s of the same run
(steps / seconds inside the vector env's ``step``) and the process's peak RSS. The
published thesis code manages about 7.5 steps/s pre-training and 13.5 fine-tuning on
this 2-core machine (issue 3); the ratios are against those.

The default budgets hold one auxiliary phase each: pre-training with N_pi = 2 (the
thesis's 32 would take ~2 h here; pass ``--pretrain-policy-iterations 32`` for it),
fine-tuning 131,072 steps = exactly N_pi = 32 rollouts. Not a test: run it by hand on
a quiet machine::

    python benchmarks/bench_thesis.py
    python benchmarks/bench_thesis.py --pretrain-steps 8192 --finetune-steps 32768 --finetune-policy-iterations 8
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_ppo import BackgroundLoad

from voidrl.io.report import run_csv_rows

THESIS_STEPS_PER_SECOND = {"pretrain": 7.5, "finetune": 13.5}
VOIDRL = [sys.executable, "-m", "voidrl"]
SPLIT = (
    ("env", "time/env_seconds"),
    ("inference", "time/inference_seconds"),
    ("contrastive updates", "time/on_step_seconds"),
    ("particle reward", None),  # time/intrinsic_seconds less the contrastive updates it includes
    ("policy phase", "time/policy_phase_seconds"),
    ("critic phase", "time/critic_phase_seconds"),
    ("aux phase", "time/aux_phase_seconds"),
)


def run_cli(args: list[str]) -> tuple[float, float, float]:
    """Run ``voidrl ARGS``; returns (wall seconds, peak RSS in GiB, CPU cores used by other processes)."""
    with BackgroundLoad() as load:
        started = time.perf_counter()
        process = subprocess.Popen(VOIDRL + args + ["--no-progress"])
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench_thesis: `voidrl {' '.join(args)}` failed")
    return wall, usage.ru_maxrss / 2**20, load.cores


def time_split(run_dir: Path) -> tuple[int, dict[str, float]]:
    """(steps, seconds per part of SPLIT summed over the run's updates) from its metrics.csv."""
    rows = run_csv_rows(run_dir, "metrics.csv")

    def total(column: str) -> float:
        return sum(float(row[column]) for row in rows if row.get(column) not in (None, ""))

    seconds = {name: total(column) for name, column in SPLIT if column is not None}
    seconds["particle reward"] = total("time/intrinsic_seconds") - seconds["contrastive updates"]
    return int(float(rows[-1]["step"])), seconds


def report(stage: str, run_dir: Path, wall: float, peak_gb: float, background: float) -> list[str]:
    steps, seconds = time_split(run_dir)
    measured = sum(seconds.values())
    speed = steps / measured
    lines = [
        f"### {stage}",
        "",
        f"- steps: {steps:,}; steps/s: **{speed:.1f}** (collection + reward + updates; {steps / wall:.1f} over the "
        f"whole process, start-up and checkpoints included) = **{speed / THESIS_STEPS_PER_SECOND[stage]:.1f}x** the "
        f"thesis code's {THESIS_STEPS_PER_SECOND[stage]}",
        f"- raw environment steps/s in the same run (steps / seconds in the vector env's step): "
        f"{steps / seconds['env']:,.0f}",
        f"- peak RSS of the process: {peak_gb:.2f} GiB; CPU cores used by other processes meanwhile: {background:.2f}",
        "",
        "| part | seconds | share |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {value:.1f} | {value / measured:.0%} |" for name, value in seconds.items()]
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pretrain-steps", type=int, default=16_384)
    parser.add_argument("--pretrain-policy-iterations", type=int, default=2)
    parser.add_argument("--finetune-steps", type=int, default=131_072)
    parser.add_argument("--finetune-policy-iterations", type=int, default=32)
    parser.add_argument("--run-dir", default=None, help="where the two runs go (default: a temporary directory)")
    args = parser.parse_args()

    root = Path(args.run_dir or tempfile.mkdtemp(prefix="bench_thesis_"))
    pre, fine = root / "pretrain", root / "finetune"
    commands = {
        "pretrain": ["pretrain", "ppg", "--env", "ALE/MsPacman-v5", "--preset", "pretrain-published", "--steps", str(args.pretrain_steps),
                     "--policy-iterations", str(args.pretrain_policy_iterations), "--run-dir", str(pre)],
        "finetune": ["finetune", "ppg", "--from", str(pre / "checkpoint.pt"), "--steps", str(args.finetune_steps),
                     "--policy-iterations", str(args.finetune_policy_iterations), "--run-dir", str(fine)],
    }
    lines = ["## APT + PPG on Ms. Pac-Man through the CLI (`python benchmarks/bench_thesis.py`)", ""]
    for stage, command in commands.items():
        wall, peak_gb, background = run_cli(command)
        lines += [f"`voidrl {' '.join(command)}`", ""] + report(stage, pre if stage == "pretrain" else fine,
                                                                wall, peak_gb, background)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
