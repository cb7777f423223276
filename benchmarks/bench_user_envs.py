"""Environments this project never saw, written by others, trained with two families each: do they reach their
solved scores?

- ``popgym-repeat-previous``: POPGym's RepeatPreviousEasy (Morad et al. 2023, the ``popgym`` package, registered on
  import), named as a user names a third-party id: ``popgym:popgym-RepeatPreviousEasy-v0``. A memory task (repeat the
  card seen 4 steps ago): recurrent PPO and recurrent A2C (``--memory lstm``). Returns lie in [-1, 1]; "solved" here is
  a greedy mean of at least 0.9 (POPGym defines no threshold).
- ``taxi-class``: gymnasium's ``TaxiEnv`` class, passed to ``voidrl.train`` as a class (``env=TaxiEnv``) with a time
  limit of 200 steps; PPO and A2C. Solved: gymnasium's own threshold for Taxi, 8.0.

Each run is a subprocess of this script (``--one TASK ALGO SEED``) that trains through the Python API into
``OUT/TASK/ALGO/seedS`` (resuming a run that was stopped) and writes ``result.json`` with the greedy evaluation of
the final agent (``--eval-episodes`` episodes). A finished run is skipped when the command is run again.

    pip install -e ".[bench]"            # popgym
    python benchmarks/bench_user_envs.py --out RUNS --seeds 0 1 2 --parallel 2
    python benchmarks/bench_user_envs.py --out RUNS --collect DIR   # gz episodes, configs and results into DIR
    python benchmarks/bench_user_envs.py --table DIR                 # the table from committed files
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from gymnasium.envs.toy_text.taxi import TaxiEnv

TASKS = {
    # task: (env as the user gives it, solved score, budget, {algo: options of voidrl.train})
    "popgym-repeat-previous": ("popgym:popgym-RepeatPreviousEasy-v0", 0.9, 500_000, {
        "ppo": {"memory": "lstm", "num_envs": 16, "num_steps": 128, "sequence_length": 32, "learning_rate": 1e-3},
        "a2c": {"memory": "lstm", "num_envs": 16, "num_steps": 16, "learning_rate": 1e-3},
    }),
    "taxi-class": (TaxiEnv, 8.0, 500_000, {
        "ppo": {"num_envs": 16, "num_steps": 128, "max_episode_steps": 200, "learning_rate": 1e-3},
        "a2c": {"num_envs": 16, "num_steps": 16, "max_episode_steps": 200, "learning_rate": 1e-3},
    }),
}


def train_one(task: str, algo: str, seed: int, out: Path, eval_episodes: int, steps: int | None) -> None:
    import voidrl

    env, _, budget, algos = TASKS[task]
    run_dir = out / task / algo / f"seed{seed}"
    resume = (run_dir / "checkpoint.pt").exists()
    agent = voidrl.train(algo, env=env, steps=steps or budget, seed=seed, run_dir=str(run_dir), resume=resume,
                         progress=False, torch_threads=1, **({} if resume else algos[algo]))
    returns = agent.evaluate(episodes=eval_episodes, seed=10_000 + seed)
    (run_dir / "result.json").write_text(json.dumps({"task": task, "algo": algo, "seed": seed, "env": agent.config.run.env,
                                                      "steps": agent.step, "greedy_returns": returns}) + "\n")


def run_all(args: argparse.Namespace) -> None:
    pending = [(task, algo, seed) for task in args.tasks for algo in TASKS[task][3] for seed in args.seeds
               if not (args.out / task / algo / f"seed{seed}" / "result.json").exists()]
    running: list[subprocess.Popen] = []
    while pending or running:
        while pending and len(running) < args.parallel:
            task, algo, seed = pending.pop(0)
            running.append(subprocess.Popen([sys.executable, __file__, "--one", task, algo, str(seed), "--out", str(args.out),
                                             "--eval-episodes", str(args.eval_episodes),
                                             *(["--steps", str(args.steps)] if args.steps else [])]))
        finished = running.pop(0)
        if finished.wait() != 0:
            raise SystemExit(f"a run failed: {' '.join(finished.args)}")


def collect(out: Path, destination: Path) -> None:
    for result in sorted(out.glob("*/*/seed*/result.json")):
        run_dir = result.parent
        target = destination / run_dir.relative_to(out)
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(result, target / "result.json")
        shutil.copy(run_dir / "config.json", target / "config.json")
        with open(run_dir / "episodes.csv", "rb") as source, gzip.open(target / "episodes.csv.gz", "wb") as gz:
            shutil.copyfileobj(source, gz)


def table(folder: Path) -> None:
    print("| task | algorithm | solved at | greedy mean per seed | last 100 training episodes per seed | solved seeds |")
    print("|---|---|---:|---|---|---:|")
    for task, (_, solved, _, algos) in TASKS.items():
        for algo in algos:
            results = [json.loads(path.read_text()) for path in sorted((folder / task / algo).glob("seed*/result.json"))]
            if not results:
                continue
            greedy = [statistics.mean(result["greedy_returns"]) for result in results]
            training = []
            for result in results:
                with gzip.open(folder / task / algo / f"seed{result['seed']}" / "episodes.csv.gz", "rt") as rows:
                    returns = [float(row["return"]) for row in csv.DictReader(rows)]
                training.append(statistics.mean(returns[-100:]))
            print(f"| {task} | {algo} | {solved:g} | {', '.join(f'{g:.2f}' for g in greedy)} | "
                  f"{', '.join(f'{t:.2f}' for t in training)} | {sum(g >= solved for g in greedy)} of {len(greedy)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/user-envs"))
    parser.add_argument("--tasks", nargs="+", choices=sorted(TASKS), default=sorted(TASKS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--parallel", type=int, default=2, help="runs at a time, one torch thread each")
    parser.add_argument("--eval-episodes", type=int, default=30)
    parser.add_argument("--steps", type=int, default=None, help="every run's budget (default: the task's)")
    parser.add_argument("--one", nargs=3, metavar=("TASK", "ALGO", "SEED"), help=argparse.SUPPRESS)
    parser.add_argument("--collect", type=Path, metavar="DIR")
    parser.add_argument("--table", type=Path, metavar="DIR")
    args = parser.parse_args()
    if args.one:
        task, algo, seed = args.one
        train_one(task, algo, int(seed), args.out, args.eval_episodes, args.steps)
    elif args.collect:
        collect(args.out, args.collect)
    elif args.table:
        table(args.table)
    else:
        run_all(args)


if __name__ == "__main__":
    main()
