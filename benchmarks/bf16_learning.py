"""Issue 65: does PPO learn as well with its network's bodies in bfloat16 (the ``bfloat16`` option) as in float32?

The same PPO runs (``voidrl train ppo --env ENV --steps STEPS --seed K --torch-threads 1``) with and without
``--bfloat16``, the same seeds, then every measure of ``voidrl.io.report.run_measures`` (final return, AUC, ...)
of the two groups side by side with 95% intervals (``compare_runs``: bfloat16 minus float32):

    python benchmarks/bf16_learning.py --out RUNS --env MinAtar/Breakout-v1 --steps 300000 --seeds 0 1 2 3 --parallel 2
    python benchmarks/bf16_learning.py --out RUNS --env MinAtar/Breakout-v1 --steps 300000 --seeds 0 1 2 3 --table DIR

``--table DIR`` copies each run's gzipped episodes into ``DIR/ARM/seedK/`` and writes ``DIR/bfloat16-against-float32
.md`` and ``.png`` from them. A run with a checkpoint is resumed (``--resume``), and a finished one ends at once.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pool import gzip_copy, run_commands  # noqa: E402
from voidrl.io.report import compare_runs  # noqa: E402

ARMS = {"bfloat16": ["--bfloat16"], "float32": []}


def command(env: str, steps: int, seed: int, arm: str, run_dir: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "voidrl", "train", "ppo", "--env", env, "--steps", str(steps), "--seed", str(seed),
            "--torch-threads", "1", "--no-progress", "--run-dir", str(run_dir), *ARMS[arm], *extra,
            *(["--resume"] if (run_dir / "checkpoint.pt").exists() else [])]


def collect(out: Path, table: Path, seeds: list[int]) -> dict[str, list[Path]]:
    """Each run's config and gzipped episodes under ``table/ARM/seedK``, with the commit that ran them."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    groups: dict[str, list[Path]] = {}
    for arm in ARMS:
        for seed in seeds:
            source, target = out / arm / f"seed{seed}", table / arm / f"seed{seed}"
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(source / "config.json", target / "config.json")
            gzip_copy(source / "episodes.csv", target / "episodes.csv.gz")
            (target / "COMMIT").write_text(commit + "\n")
            groups.setdefault(arm, []).append(target)
    return groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the runs' directories: OUT/ARM/seedK")
    parser.add_argument("--env", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--seeds", type=int, nargs="+", required=True)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--table", type=Path, help="collect the runs here and write the comparison")
    args, extra = parser.parse_known_args()
    commands = [command(args.env, args.steps, seed, arm, args.out / arm / f"seed{seed}", extra)
                for seed in args.seeds for arm in ARMS]
    run_commands(commands, args.parallel, cwd=ROOT)
    if args.table is not None:
        groups = collect(args.out, args.table, args.seeds)
        print(compare_runs(groups, args.steps, args.table / "bfloat16-against-float32"))


if __name__ == "__main__":
    main()
