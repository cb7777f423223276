#!/usr/bin/env python
"""Reward-free APT + PPG pre-training on Ms. Pac-Man: steps/s before and after, the representation's health, and
data-parallel scaling with torchrun, all through the CLI.

Three parts, each optional (``--parts``):

speed
    ``voidrl pretrain ppg --env ALE/MsPacman-v5`` for ``--speed-steps`` steps with ``--policy-iterations 1`` (so
    each rollout pays its share of an auxiliary phase, as in a long run), three ways: today's ``pretrain``
    preset; today's code with the previous preset's contrastive schedule (one update of 512 per vector step,
    back-propagated in chunks of 64); and, with ``--base COMMIT``, that commit's code with its own preset (a git
    worktree). Prints steps/s, the ratio and the time split of each.
health
    The representation at the end of a ``--health-steps`` pre-training with the default preset (contrastive
    top-1 accuracy and effective rank of the latent, as the representation probe defines them, from
    metrics.csv); ``--health-run DIR`` reads a finished run instead of training one.
scaling
    PPO (``atari`` preset) and PPG (``atari`` preset, an auxiliary phase every 2 rollouts) on Ms. Pac-Man in one
    process with 2 and with 1 torch threads, and as 2 torchrun processes with 1 thread each; steps/s and the
    scaling efficiency (2 processes against twice one 1-thread process).

APT + PPG's steps/s against plain PPG's with the same settings, and the split of APT's extra time:
``bench_pretrain_overhead.py``.

Run it alone on the machine::

    python benchmarks/bench_pretrain.py --base 4bf82e3
    python benchmarks/bench_pretrain.py --parts health --health-steps 100000
    python benchmarks/bench_pretrain.py --report-only --run-dir benchmarks/results/pretrain-2026-11-25
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_thesis import report

from voidrl.io.report import run_csv_rows

ROOT = Path(__file__).resolve().parent.parent
PREVIOUS_SCHEDULE = ["--contrastive-updates-per-step", "1", "--contrastive-chunk-size", "64"]
"""The ``pretrain`` preset's contrastive schedule before this benchmark's change."""
PUBLISHED_SCHEDULE = ["--preset", "pretrain-published"]
"""The preset these tables measured (named ``pretrain`` until the 1-2M-step schedule took that name)."""
HEALTHY = {"apt/contrastive_accuracy": 0.5, "apt/latent_effective_rank": 8.0}
"""The issue's bar: top-1 at least 0.5, effective rank (of 15) at least 8."""


def voidrl(args: list[str], tree: Path = ROOT, threads: int = 2, processes: int = 1) -> float:
    """Run ``voidrl ARGS`` from ``tree`` (with ``processes`` > 1 under torchrun); returns the wall seconds."""
    launcher = [sys.executable, "-m", "voidrl"] if processes == 1 else [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(processes), "-m", "voidrl"]
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": str(threads)}
    started = time.perf_counter()
    done = subprocess.run(launcher + args + ["--torch-threads", str(threads), "--no-progress"], cwd=tree, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_pretrain: `voidrl {' '.join(args)}` failed in {tree}:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return time.perf_counter() - started


def metric_rows(run_dir: Path) -> list[dict[str, str]]:
    return run_csv_rows(run_dir, "metrics.csv")


def steady_steps_per_second(run_dir: Path) -> float:
    """Steps over collection-plus-update seconds (``time/sps``) of every update after the first (start-up left out)."""
    rows = metric_rows(run_dir)
    steps = [0] + [int(float(row["step"])) for row in rows]
    updates = list(zip((b - a for a, b in zip(steps, steps[1:])), rows))
    updates = updates[1:] or updates
    return sum(n for n, _ in updates) / sum(n / float(row["time/sps"]) for n, row in updates)


def speed(args: argparse.Namespace, scratch: Path) -> list[str]:
    command = ["pretrain", "ppg", "--env", "ALE/MsPacman-v5", "--steps", str(args.speed_steps), "--policy-iterations", "1"]
    variants = {"pretrain preset (today)": (ROOT, PUBLISHED_SCHEDULE),
                "previous contrastive schedule, today's code": (ROOT, PUBLISHED_SCHEDULE + PREVIOUS_SCHEDULE)}
    lines = [f"## Pre-training speed: `voidrl {' '.join(command)}`, 2 torch threads", ""]
    worktree = None
    if args.report_only:
        variants.update({f"pretrain preset at {directory.name.removeprefix('speed-pretrain-preset-at-')}": (None, [])
                         for directory in sorted(scratch.glob("speed-pretrain-preset-at-*"))})
    elif args.base:
        worktree = scratch / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(worktree), args.base], cwd=ROOT, check=True, capture_output=True)
        variants[f"pretrain preset at {args.base}"] = (worktree, [])
    try:
        speeds = {}
        for name, (tree, extra) in variants.items():
            run_dir = scratch / ("speed-" + name.replace(" ", "-").translate(str.maketrans("", "", ",'()")))
            wall = float("nan") if args.report_only else voidrl(command + extra + ["--run-dir", str(run_dir)], tree)
            block = report("pretrain", run_dir, wall, float("nan"), float("nan"))
            speeds[name] = float(block[2].split("**")[1])
            lines += [f"### {name}{' (' + ' '.join(extra) + ')' if extra else ''}", ""] + block[2:4] + block[5:]
    finally:
        if worktree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
    today = speeds["pretrain preset (today)"]
    lines += ["| variant | steps/s | today's preset / it |", "|---|---:|---:|"]
    lines += [f"| {name} | {value:.1f} | {today / value:.2f}x |" for name, value in speeds.items()]
    return lines + [""]


def health(args: argparse.Namespace, scratch: Path) -> list[str]:
    run_dir = Path(args.health_run) if args.health_run else scratch / "envs16"
    if not (args.health_run or args.report_only):
        voidrl(["pretrain", "ppg", "--env", "ALE/MsPacman-v5", "--steps", str(args.health_steps), *PUBLISHED_SCHEDULE,
                "--run-dir", str(run_dir)])
    rows = [row for row in metric_rows(run_dir) if row.get("apt/contrastive_accuracy")]
    lines = [f"## The representation during pre-training ({run_dir})", "",
             "| step | contrastive loss | top-1 | effective rank (of 15) | dead units | particle reward | k-NN distance (raw) |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {int(float(row['step'])):,} | {float(row['apt/contrastive_loss']):.3f} | "
                     f"{float(row['apt/contrastive_accuracy']):.3f} | {float(row['apt/latent_effective_rank']):.2f} | "
                     f"{float(row['apt/dead_units']):.2f} | {float(row['apt/particle_reward']):.3f} | "
                     f"{float(row['apt/knn_distance_raw']):.3f} |")
    last = rows[-1]
    verdict = all(float(last[name]) >= bar for name, bar in HEALTHY.items())
    lines += ["", f"At the end: top-1 {float(last['apt/contrastive_accuracy']):.3f} (bar 0.5), effective rank "
                  f"{float(last['apt/latent_effective_rank']):.2f} (bar 8): **{'healthy' if verdict else 'NOT healthy'}**", ""]
    return lines


SCALING = {
    "ppo": ["train", "ppo", "--env", "ALE/MsPacman-v5", "--preset", "atari"],
    "ppg": ["train", "ppg", "--env", "ALE/MsPacman-v5", "--preset", "atari", "--policy-iterations", "2"],
}


def scaling(args: argparse.Namespace, scratch: Path) -> list[str]:
    lines = [f"## Data-parallel scaling with torchrun ({args.scaling_steps:,} steps per run)", "",
             "| algorithm | 1 process, 2 threads | 1 process, 1 thread | 2 processes, 1 thread each | efficiency (2 processes / 2 x 1 thread) |",
             "|---|---:|---:|---:|---:|"]
    for algo, command in SCALING.items():
        measured = []
        for processes, threads in ((1, 2), (1, 1), (2, 1)):
            run_dir = scratch / f"scaling-{algo}-{processes}x{threads}"
            if not args.report_only:
                voidrl(command + ["--steps", str(args.scaling_steps), "--run-dir", str(run_dir)], threads=threads, processes=processes)
            measured.append(steady_steps_per_second(run_dir))
        lines.append(f"| {algo} | {measured[0]:,.0f} | {measured[1]:,.0f} | {measured[2]:,.0f} | {measured[2] / (2 * measured[1]):.0%} |")
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", nargs="+", choices=("speed", "health", "scaling"), default=["speed", "health", "scaling"])
    parser.add_argument("--speed-steps", type=int, default=8192, help="steps of each speed run (one rollout: 8,192)")
    parser.add_argument("--base", default=None, metavar="COMMIT", help="also time the pretrain preset of this earlier commit")
    parser.add_argument("--health-steps", type=int, default=100_000)
    parser.add_argument("--health-run", default=None, metavar="DIR", help="read this finished pre-training run instead")
    parser.add_argument("--scaling-steps", type=int, default=24_576)
    parser.add_argument("--run-dir", default=None, help="where the runs go (default: a temporary directory)")
    parser.add_argument("--report-only", action="store_true",
                        help="train nothing: rebuild the tables from the runs in --run-dir (e.g. the gzipped logs committed "
                             "under benchmarks/results/pretrain-2026-11-25)")
    args = parser.parse_args()
    if args.report_only and not args.run_dir:
        parser.error("--report-only needs --run-dir")
    scratch = Path(args.run_dir or tempfile.mkdtemp(prefix="bench_pretrain_"))
    parts = {"speed": speed, "health": health, "scaling": scaling}
    for name in args.parts:
        print("\n".join(parts[name](args, scratch)), flush=True)


if __name__ == "__main__":
    main()
