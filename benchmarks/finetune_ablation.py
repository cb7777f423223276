"""Issue 63, part 1: why fine-tuning Ms. Pac-Man from the committed reward-free weights adds nothing at 100k steps.
Each arm changes one thing against ``baseline`` (the committed 100k arm's command, rerun at this commit) and runs the
same seeds:

    python benchmarks/finetune_ablation.py --out RUNS --arms baseline critic-warmup --seeds 0 1 2 --parallel 2
    python benchmarks/finetune_ablation.py --out RUNS --collect DIR     # config, COMMIT, gz episodes and metrics, evaluations
    python benchmarks/finetune_ablation.py --table DIR                   # every arm against baseline, from committed files

A run is ``voidrl finetune ppg --from WEIGHTS --env ALE/MsPacman-v5 --preset atari --steps 100000 --seed K
--eval-every 100000 --eval-episodes 30 --torch-threads 1`` plus its arm's options, in ``OUT/ARM/seedK`` (resumed
where stopped; a finished run, one with ``evaluations.csv``, is skipped). ``seedK.COMMIT`` beside a run names the commit
that last started it.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pool import run_commands  # noqa: E402
from voidrl.io.report import compare_runs, run_csv_rows  # noqa: E402

WEIGHTS = "benchmarks/results/mspacman-2026-11-28-knn-scope/pretrain/pretrained-weights.pt"
BUDGET = 100_000
ARMS = {
    "baseline": [],
    # the fresh task critic's first advantages move the loaded policy: train the critic alone for 4 rollouts (16k steps)
    "critic-warmup": ["--critic-warmup-rollouts", "4"],
    # the atari preset's auxiliary phase comes every 32 rollouts of 4,096 steps (131k): never within 100k
    "aux-every-8": ["--policy-iterations", "8"],
}
FIRST_GAMES = 20
"""The first games of fine-tuning, against the pre-trained policy's own score: does fine-tuning first lose it?"""


def command(arm: str, seed: int, run_dir: Path) -> list[str]:
    return [sys.executable, "-m", "voidrl", "finetune", "ppg", "--from", WEIGHTS, "--env", "ALE/MsPacman-v5", "--preset", "atari",
            "--steps", str(BUDGET), "--seed", str(seed), "--eval-every", str(BUDGET), "--eval-episodes", "30",
            "--torch-threads", "1", "--no-progress", "--run-dir", str(run_dir), *ARMS[arm],
            *(["--resume"] if (run_dir / "checkpoint.pt").exists() else [])]


def run_all(out: Path, arms: list[str], seeds: list[int], parallel: int) -> None:
    pending = [out / arm / f"seed{seed}" for seed in seeds for arm in arms if not (out / arm / f"seed{seed}" / "evaluations.csv").exists()]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    for run_dir in pending:
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        (run_dir.parent / f"{run_dir.name}.COMMIT").write_text(commit)
    run_commands([command(run_dir.parent.name, int(run_dir.name.removeprefix("seed")), run_dir) for run_dir in pending], parallel, ROOT)


def collect(out: Path, destination: Path) -> None:
    for evaluations in sorted(out.glob("*/seed*/evaluations.csv")):
        run_dir = evaluations.parent
        target = destination / run_dir.relative_to(out)
        target.mkdir(parents=True, exist_ok=True)
        for name in ("config.json", "evaluations.csv"):
            shutil.copy(run_dir / name, target / name)
        shutil.copy(run_dir.parent / f"{run_dir.name}.COMMIT", target / "COMMIT")
        for name in ("episodes.csv", "metrics.csv"):
            with open(run_dir / name, "rb") as source, gzip.open(target / f"{name}.gz", "wb") as gz:
                shutil.copyfileobj(source, gz)


def table(folder: Path) -> None:
    baseline = sorted((folder / "baseline").glob("seed*"))
    print("| arm | seeds | first 20 games per seed | greedy (30 games) per seed | last 100 training games per seed |")
    print("|---|---:|---|---|---|")
    for arm_dir in sorted(path for path in folder.iterdir() if path.is_dir()):
        runs = sorted(arm_dir.glob("seed*"))
        first, greedy, last = [], [], []
        for run_dir in runs:
            returns = [float(row["return"]) for row in run_csv_rows(run_dir, "episodes.csv")]
            first.append(np.mean(returns[:FIRST_GAMES]))
            last.append(np.mean(returns[-100:]))
            greedy.append(float(run_csv_rows(run_dir, "evaluations.csv")[-1]["return_mean"]))
        print(f"| {arm_dir.name} | {len(runs)} | {', '.join(f'{v:.0f}' for v in first)} | {', '.join(f'{v:.0f}' for v in greedy)} | "
              f"{', '.join(f'{v:.0f}' for v in last)} |")
    for arm_dir in sorted(path for path in folder.iterdir() if path.is_dir() and path.name != "baseline"):
        print(f"\n{arm_dir.name} against baseline:\n")
        print(compare_runs({arm_dir.name: sorted(arm_dir.glob("seed*")), "baseline": baseline}, BUDGET,
                           folder / f"{arm_dir.name}-against-baseline"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/finetune-ablation"))
    parser.add_argument("--arms", nargs="+", choices=sorted(ARMS), default=list(ARMS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--parallel", type=int, default=2, help="runs at a time, one torch thread each")
    parser.add_argument("--collect", type=Path, metavar="DIR")
    parser.add_argument("--table", type=Path, metavar="DIR")
    args = parser.parse_args()
    if args.collect:
        collect(args.out, args.collect)
    elif args.table:
        table(args.table)
    else:
        run_all(args.out, args.arms, args.seeds, args.parallel)


if __name__ == "__main__":
    main()
