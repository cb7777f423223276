#!/usr/bin/env python
"""The thesis's "Parallelism-Variance Dilemma", measured: does APT's representation suffer when more environments
fill its buffer?

The thesis (section 6.1) argues that pre-training cannot use more parallel environments: states from many
environments following one policy are too alike for the contrastive objective. This trains reward-free APT + PPG
on Ms. Pac-Man with ``--envs`` environments in total (16, 64, 256 by default) for the same number of environment
steps, each with the same rollout size (``--rollout-states`` states: num_steps = rollout_states / envs), the same
contrastive updates per environment step (one per ``--env-steps-per-update``) and the same buffer, and reports per
run:

- the representation at the end (from metrics.csv, mean of the last ``--last`` updates): contrastive loss against
  its chance level log(batch), top-1 accuracy, effective rank of the latent (of 15), dead units;
- the share of near-duplicates in a batch drawn from the run's final representation buffer (another state within
  an RMS pixel difference of 5/255): the thesis's "too alike", measured;
- the particle reward's relation to novelty: the Spearman correlation, on one fixed set of 4,096 states a random
  policy visits, between a state's particle reward under the run's final encoder and how many of those states lie
  within the same pixel radius (negative: often-visited states earn less).

    python benchmarks/bench_parallel_envs.py --steps 100000 --run-dir /work/runs/dilemma --torch-threads 1
    python benchmarks/bench_parallel_envs.py --report-only --run-dir benchmarks/results/pretrain-2026-11-25
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import torch
from scipy.stats import spearmanr

from representation_probe import collect_frames, near_duplicate_share, reward_against_visits
from voidrl.intrinsic.apt import APTConfig, APTReward
from voidrl.io.checkpoint import load_checkpoint
from voidrl.io.report import run_csv_rows

METRICS = ("apt/contrastive_loss", "apt/contrastive_accuracy", "apt/latent_effective_rank", "apt/dead_units",
           "apt/particle_reward", "apt/knn_distance_raw")


def run_dir_of(root: Path, envs: int) -> Path:
    return root / f"envs{envs}"


def train(args: argparse.Namespace, envs: int) -> Path:
    """Pre-train with ``envs`` environments (reused when finished, resumed when stopped)."""
    run_dir = run_dir_of(Path(args.run_dir), envs)
    checkpoint = run_dir / "checkpoint.pt"
    if checkpoint.exists() and load_checkpoint(checkpoint)["step"] >= args.steps:
        return run_dir
    command = [sys.executable, "-m", "voidrl", "pretrain", "ppg", "--env", "ALE/MsPacman-v5", "--preset", "pretrain-published",
               "--steps", str(args.steps), "--num-envs", str(envs), "--num-steps", str(args.rollout_states // envs),
               "--contrastive-updates-per-step", str(envs / args.env_steps_per_update),
               "--torch-threads", str(args.torch_threads), "--no-progress", "--run-dir", str(run_dir), "--resume"]
    subprocess.run(command, check=True, env={**os.environ, "OMP_NUM_THREADS": str(max(1, args.torch_threads))})
    return run_dir


def final_metrics(run_dir: Path, last: int) -> dict[str, float]:
    rows = [row for row in run_csv_rows(run_dir, "metrics.csv") if row.get("apt/contrastive_accuracy")][-last:]
    return {name: sum(float(row[name]) for row in rows) / len(rows) for name in METRICS} | {"step": float(rows[-1]["step"])}


def final_plugin(run_dir: Path) -> APTReward:
    payload = load_checkpoint(run_dir / "checkpoint.pt")
    config = APTConfig(**payload["config"]["intrinsic_config"])
    plugin = APTReward(config, (4, 84, 84))
    plugin.load_state_dict(payload["intrinsic"])
    return plugin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--rollout-states", type=int, default=8192, help="num_envs x num_steps of every run (default 16 x 512)")
    parser.add_argument("--env-steps-per-update", type=int, default=128, help="environment steps per contrastive update")
    parser.add_argument("--last", type=int, default=3, help="updates averaged for the final representation metrics")
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--run-dir", required=True, help="the runs go to RUN_DIR/envsN (finished runs are reused)")
    parser.add_argument("--report-only", action="store_true",
                        help="train nothing; the buffer and reward columns need the runs' checkpoints (not committed: the "
                             "gzipped logs under benchmarks/results/pretrain-2026-11-25 rebuild the other columns)")
    args = parser.parse_args()
    for envs in args.envs:
        if args.rollout_states % envs:
            sys.exit(f"--envs {envs} does not divide --rollout-states {args.rollout_states}")
    torch.set_num_threads(max(1, args.torch_threads))
    run_dirs = {envs: run_dir_of(Path(args.run_dir), envs) if args.report_only else train(args, envs) for envs in args.envs}
    with_checkpoints = all((run_dir / "checkpoint.pt").exists() for run_dir in run_dirs.values())
    frames = collect_frames("ALE/MsPacman-v5", 4096, 16, 1, None, seed=0).flatten(0, 1)[:4096] if with_checkpoints else None
    chance = torch.tensor(512.0).log().item()
    lines = ["| envs x steps per rollout | step | loss (chance) | top-1 | eff. rank (of 15) | dead | near-duplicates in a buffer batch "
             "| rho(reward, visits) on random-policy states |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for envs, run_dir in run_dirs.items():
        metrics = final_metrics(run_dir, args.last)
        duplicates = rho = "-"
        if with_checkpoints:
            plugin = final_plugin(run_dir)
            batch = plugin.buffer.sample(plugin.config.contrastive_batch_size, torch.Generator().manual_seed(0))
            duplicates = f"{near_duplicate_share(batch, 5.0):.2f}"
            rho = f"{spearmanr(*reward_against_visits(plugin, frames, 5.0)).statistic:.2f}"
        lines.append(f"| {envs} x {args.rollout_states // envs} | {int(metrics['step']):,} | {metrics['apt/contrastive_loss']:.3f} "
                     f"({chance:.3f}) | {metrics['apt/contrastive_accuracy']:.3f} | {metrics['apt/latent_effective_rank']:.2f} | "
                     f"{metrics['apt/dead_units']:.2f} | {duplicates} | {rho} |")
    print(f"Reward-free APT + PPG on Ms. Pac-Man, {args.steps:,} steps per run, one contrastive update per "
          f"{args.env_steps_per_update} environment steps, final metrics averaged over the last {args.last} updates\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
