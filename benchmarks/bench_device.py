#!/usr/bin/env python
"""Ms. Pac-Man on one device (a lent GPU): speed of pre-training and of PPO, the zero-shot games of both
pre-training presets at one budget, and whether the same command gives the same run there.

Parts, in the order ``--parts`` gives them, each skipped once ``--deadline`` seconds would be passed (the device
time is short):

pretrain
    ``voidrl pretrain ppg --env ALE/MsPacman-v5 --preset P --steps N --device D`` for P in ``pretrain`` (the 1-2M-step
    preset) and ``pretrain-published``; then ``voidrl explore`` on each final checkpoint (30 sampled games: score,
    length, distinct positions). Prints steps/s and the exploration means.
ppo
    ``voidrl train ppo --env ALE/MsPacman-v5 --preset atari`` on D, and on the CPU (all its cores) for the same
    machine's baseline.
determinism
    A short PPO and a short pre-training run twice on D, the two runs at once (half the threads each), with the
    default ``--deterministic-kernels`` and with ``--no-deterministic-kernels``; their episodes.csv and metrics.csv
    compared, the timing columns left out (as tests/test_reproducibility.py does on the CPU), and torch's warnings
    about operations without a deterministic kernel printed.

Steps/s are "wall" (all steps over the command's whole time, start-up included) and "steady" (the median of
metrics.csv's ``time/sps`` after the first update). Run it alone::

    python benchmarks/bench_device.py --device cuda --out OUT_DIR
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ENV = "ALE/MsPacman-v5"
MACHINE_COLUMNS = ("time/", "sys/")


def launch(args: list[str], threads: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "voidrl", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "OMP_NUM_THREADS": str(threads)})


def finish(process: subprocess.Popen) -> tuple[str, str]:
    """Wait for a ``launch``; returns its stdout and stderr (raises on failure)."""
    stdout, stderr = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(process.args[2:])} failed:\n{stderr[-3000:]}")
    return stdout, stderr


def voidrl(args: list[str], threads: int) -> tuple[float, str]:
    """Run ``voidrl ARGS``; returns the wall seconds and the output's last lines (raises on failure)."""
    started = time.perf_counter()
    stdout, _ = finish(launch(args, threads))
    return time.perf_counter() - started, stdout.strip().splitlines()[-3:]


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def speed(run_dir: Path, wall: float) -> str:
    metrics = rows(run_dir / "metrics.csv")
    steps = int(float(metrics[-1]["step"]))
    steady = np.median([float(row["time/sps"]) for row in metrics[1:]]) if len(metrics) > 1 else float("nan")
    split = {name: sum(float(row.get(f"time/{name}_seconds") or 0) for row in metrics) for name in ("env", "inference", "update")}
    return (f"{steps:,} steps in {wall:.0f} s: wall {steps / wall:,.0f} steps/s, steady {steady:,.0f} steps/s "
            f"(env {split['env']:.0f} s, inference {split['inference']:.0f} s, update {split['update']:.0f} s)")


def learning_rows(path: Path) -> list[dict[str, str]]:
    return [{k: v for k, v in row.items() if not k.startswith(MACHINE_COLUMNS)} for row in rows(path)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", type=Path, required=True, help="where the runs and the exploration CSVs go")
    parser.add_argument("--pretrain-steps", type=int, default=98_304, help="steps of each preset's pre-training")
    parser.add_argument("--ppo-steps", type=int, default=65_536)
    parser.add_argument("--repeat-steps", type=int, default=16_384, help="steps of each run of the determinism part")
    parser.add_argument("--episodes", type=int, default=30, help="zero-shot games per pre-trained policy")
    parser.add_argument("--deadline", type=float, default=480.0, help="skip a part that starts after this many seconds")
    parser.add_argument("--parts", nargs="+", choices=("pretrain", "ppo", "determinism"), default=["pretrain", "ppo", "determinism"])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads of every run")
    parser.add_argument("--repeat", nargs="+", choices=("ppo", "pretrain"), default=["ppo", "pretrain"], help="the determinism part's runs")
    parser.add_argument("--presets", nargs="+", default=["pretrain", "pretrain-published"], help="the pretrain part's presets")
    args = parser.parse_args()
    began = time.perf_counter()
    runs = args.out / "runs"
    common = ["--env", ENV, "--seed", "0", "--torch-threads", str(args.threads), "--no-progress"]

    def in_time(part: str) -> bool:
        if part.split()[0] not in args.parts:
            return False
        if time.perf_counter() - began < args.deadline:
            return True
        print(f"{part}: skipped, past the {args.deadline:.0f} s deadline", flush=True)
        return False

    for part in [{"pretrain": pretrain_part, "ppo": ppo_part, "determinism": determinism_part}[name] for name in args.parts]:
        try:
            part(args, runs, common, in_time)
        except RuntimeError as error:  # one part's failure is printed; the others still run
            print(error, flush=True)
    print(f"total {time.perf_counter() - began:.0f} s", flush=True)


def pretrain_part(args, runs: Path, common: list[str], in_time) -> None:

    for preset in args.presets:
        if not in_time(f"pretrain {preset}"):
            continue
        run_dir = runs / preset
        wall, _ = voidrl(["pretrain", "ppg", "--preset", preset, "--steps", str(args.pretrain_steps), "--device", args.device,
                          "--run-dir", str(run_dir), *common], args.threads)
        print(f"pretrain --preset {preset} on {args.device}: {speed(run_dir, wall)}", flush=True)
        final = rows(run_dir / "metrics.csv")[-1]
        print(f"  at step {final['step']}: entropy {float(final['train/entropy']):.3f}, top-1 "
              f"{final.get('apt/contrastive_accuracy', '')}, effective rank {final.get('apt/latent_effective_rank', '')}", flush=True)
        out = args.out / f"explore-{preset}.csv"
        wall, printed = voidrl(["explore", "--checkpoint", str(run_dir / "checkpoint.pt"), "--episodes", str(args.episodes),
                                "--device", args.device, "--out", str(out)], args.threads)
        games = rows(out)
        print(f"  zero-shot ({len(games)} sampled games, {wall:.0f} s): score {np.mean([float(g['score']) for g in games]):.1f}, "
              f"length {np.mean([float(g['length']) for g in games]):.0f}, positions {np.mean([float(g['positions']) for g in games]):.1f}",
              flush=True)


def ppo_part(args, runs: Path, common: list[str], in_time) -> None:
    for device in dict.fromkeys((args.device, "cpu")):
        if not in_time(f"ppo on {device}"):
            continue
        run_dir = runs / f"ppo-{device}"
        steps = args.ppo_steps if device == args.device else args.ppo_steps // 2
        wall, _ = voidrl(["train", "ppo", "--preset", "atari", "--steps", str(steps), "--device", device, "--run-dir", str(run_dir),
                          *common], args.threads)
        print(f"ppo --preset atari on {device} ({args.threads} threads): {speed(run_dir, wall)}", flush=True)


def determinism_part(args, runs: Path, common: list[str], in_time) -> None:
    half = max(1, args.threads // 2)
    threads_at = common.index("--torch-threads") + 1
    at_once = [*common[:threads_at], str(half), *common[threads_at + 1:]]
    for name, command in (("ppo", ["train", "ppo", "--preset", "atari"]), ("pretrain", ["pretrain", "ppg", "--preset", "pretrain"])):
        if name not in args.repeat:
            continue
        for kernels in ("--deterministic-kernels", "--no-deterministic-kernels"):
            if not in_time(f"determinism {name} {kernels}"):
                continue
            dirs = [runs / f"repeat-{name}{kernels}-{k}" for k in (1, 2)]
            started = time.perf_counter()
            processes = [launch([*command, "--steps", str(args.repeat_steps), "--device", args.device, kernels, "--run-dir", str(run_dir),
                                 *at_once], half) for run_dir in dirs]
            outputs = [finish(process) for process in processes]
            wall = time.perf_counter() - started
            same_episodes = (dirs[0] / "episodes.csv").read_text() == (dirs[1] / "episodes.csv").read_text()
            same_metrics = learning_rows(dirs[0] / "metrics.csv") == learning_rows(dirs[1] / "metrics.csv")
            print(f"determinism, {name} twice at once on {args.device} {kernels} ({args.repeat_steps:,} steps, {half} threads each): "
                  f"episodes.csv {'identical' if same_episodes else 'different'}, metrics.csv (learning columns) "
                  f"{'identical' if same_metrics else 'different'} ({len(rows(dirs[0] / 'episodes.csv'))} episodes, "
                  f"{len(rows(dirs[0] / 'metrics.csv'))} updates); both in {wall:.0f} s, {speed(dirs[0], wall)}", flush=True)
            warned = sorted({line.strip() for _, stderr in outputs for line in stderr.splitlines() if "deterministic" in line})
            for line in warned:
                print(f"  {line}", flush=True)
            for run_dir in dirs:
                shutil.rmtree(run_dir / "tensorboard", ignore_errors=True)


if __name__ == "__main__":
    main()
