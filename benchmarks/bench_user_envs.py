"""Environments this project never saw, written by others, trained with two families each: do they reach their
solved scores?

- ``popgym-repeat-previous``: POPGym's RepeatPreviousEasy (Morad et al. 2023, the ``popgym`` package, registered on
  import), named as a user names a third-party id: ``popgym:popgym-RepeatPreviousEasy-v0``. A memory task (repeat the
  card seen 4 steps ago): recurrent PPO and recurrent A2C (``--memory lstm``). Returns lie in [-1, 1]; "solved" here is
  a greedy mean of at least 0.9 (POPGym defines no threshold).
- ``bitflip-dict``: Stable-Baselines3's ``BitFlippingEnv`` (its test environment for goal-conditioned agents), passed
  as a class with its defaults: Dict observations (``observation``, ``achieved_goal``, ``desired_goal``: MultiBinary(10)
  each), 10 actions (the bit to flip), -1 a step until every bit is 1, at most 10 steps. PPO and A2C. Solved: greedy
  play within 0.1 flips an episode of the fewest flips, on the same starting states (the environment defines no
  threshold; its optimum is known exactly).
- ``frozenlake-class``: gymnasium's ``FrozenLakeEnv`` class (4x4, slippery) with a time limit of 100 steps, as
  gymnasium registers it; PPO and A2C. Solved: gymnasium's threshold for FrozenLake-v1, 0.70 (1,000 greedy episodes:
  the slippery ice makes one episode's outcome a coin flip).
- ``taxi-class``: gymnasium's ``TaxiEnv`` class with a time limit of 200 steps; PPO and A2C. Solved: gymnasium's own
  threshold for Taxi, 8.0.

Each run is a subprocess of this script (``--one TASK ALGO SEED``) that trains through the Python API into
``OUT/TASK/ALGO/seedS`` (resuming a run that was stopped) and writes ``result.json`` with the greedy evaluation of
the final agent (the task's ``episodes``). A finished run is skipped when the command is run again.

    pip install -e ".[bench]"            # popgym, stable-baselines3
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
import sys
from pathlib import Path
from typing import Any, Callable, NamedTuple

from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv
from pool import gzip_copy, run_commands
from gymnasium.envs.toy_text.taxi import TaxiEnv
from stable_baselines3.common.envs import BitFlippingEnv


def greedy_returns(agent: Any, seed: int, episodes: int) -> dict[str, list[float]]:
    """The final agent's greedy returns through ``Agent.evaluate`` (voidrl's own evaluation environments)."""
    return {"greedy_returns": agent.evaluate(episodes=episodes, seed=10_000 + seed)}


def greedy_and_fewest_flips(agent: Any, seed: int, episodes: int) -> dict[str, list[float]]:
    """Greedy returns on BitFlippingEnv played by ``Agent.predict`` on the environment's own Dict observations, and the
    return of the fewest flips from each of the same starting states: -(zeros - 1), or -1 (away and back) with none."""
    returns, fewest = [], []
    env = BitFlippingEnv()
    for episode in range(episodes):
        obs, _ = env.reset(seed=10_000 + 1_000 * seed + episode)
        zeros = int((obs["observation"] == 0).sum())
        fewest.append(float(-(zeros - 1) if zeros else -1))
        total, done = 0.0, False
        while not done:
            action, _ = agent.predict(obs)
            obs, reward, terminated, truncated, _ = env.step(int(action))
            total += reward
            done = terminated or truncated
        returns.append(total)
    return {"greedy_returns": returns, "fewest_flips_returns": fewest}


def above_threshold(threshold: float) -> Callable[[dict], bool]:
    return lambda result: statistics.mean(result["greedy_returns"]) >= threshold


def near_fewest_flips(result: dict) -> bool:
    return statistics.mean(result["greedy_returns"]) >= statistics.mean(result["fewest_flips_returns"]) - 0.1


class Task(NamedTuple):
    env: Any
    """The environment as the user gives it to ``voidrl.train``."""
    solved_at: str
    """The solved score, in words, for the table."""
    solved: Callable[[dict], bool]
    """Whether a ``result.json`` reaches it."""
    algos: dict[str, dict[str, Any]]
    """Algorithm -> options of ``voidrl.train``, its budget (``steps``) among them."""
    episodes: int = 100
    """Greedy episodes of the final agent."""
    evaluate: Callable[[Any, int, int], dict[str, list[float]]] = greedy_returns
    """(agent, seed, episodes) -> the lists ``result.json`` keeps."""


TASKS = {
    "popgym-repeat-previous": Task("popgym:popgym-RepeatPreviousEasy-v0", "0.9", above_threshold(0.9), {
        "ppo": {"steps": 500_000, "memory": "lstm", "num_envs": 16, "num_steps": 128, "sequence_length": 32,
                "learning_rate": 1e-3},
        "a2c": {"steps": 2_000_000, "memory": "lstm", "num_envs": 16, "num_steps": 32, "optimizer": "adam",
                "learning_rate": 1e-3, "entropy_coef": 0.01},
    }),
    "bitflip-dict": Task(BitFlippingEnv, "fewest flips - 0.1", near_fewest_flips, {
        "ppo": {"steps": 300_000, "num_envs": 16, "num_steps": 128, "learning_rate": 1e-3},
        "a2c": {"steps": 500_000, "num_envs": 16, "num_steps": 16, "optimizer": "adam", "learning_rate": 1e-3,
                "entropy_coef": 0.01},
    }, evaluate=greedy_and_fewest_flips),
    "frozenlake-class": Task(FrozenLakeEnv, "0.7", above_threshold(0.7), {
        "ppo": {"steps": 300_000, "num_envs": 16, "num_steps": 128, "max_episode_steps": 100, "learning_rate": 1e-3,
                "entropy_coef": 0.01},
        "a2c": {"steps": 300_000, "num_envs": 16, "num_steps": 16, "max_episode_steps": 100, "optimizer": "adam",
                "learning_rate": 1e-3, "entropy_coef": 0.01},
    }, episodes=1000),
    # Taxi's -10 for a wrong pick-up or drop-off beside -1 a step: without reward normalisation the value loss swamps
    # the clipped gradient and the policy settles on wandering to the time limit.
    "taxi-class": Task(TaxiEnv, "8", above_threshold(8.0), {
        "ppo": {"steps": 1_000_000, "num_envs": 16, "num_steps": 128, "max_episode_steps": 200, "learning_rate": 1e-3,
                "entropy_coef": 0.01, "normalize_reward": True},
        "a2c": {"steps": 1_000_000, "num_envs": 16, "num_steps": 32, "max_episode_steps": 200, "optimizer": "adam",
                "learning_rate": 1e-3, "entropy_coef": 0.05, "normalize_reward": True},
    }),
}


def train_one(task_name: str, algo: str, seed: int, out: Path, eval_episodes: int | None, steps: int | None) -> None:
    import voidrl

    task = TASKS[task_name]
    run_dir = out / task_name / algo / f"seed{seed}"
    resume = (run_dir / "checkpoint.pt").exists()
    options = dict(task.algos[algo])
    budget = options.pop("steps")
    agent = voidrl.train(algo, env=task.env, steps=steps or budget, seed=seed, run_dir=str(run_dir), resume=resume, progress=False,
                         torch_threads=1, **({} if resume else options))
    result = {"task": task_name, "algo": algo, "seed": seed, "env": agent.config.run.env, "steps": agent.step}
    (run_dir / "result.json").write_text(json.dumps(result | task.evaluate(agent, seed, eval_episodes or task.episodes)) + "\n")


def run_all(args: argparse.Namespace) -> None:
    pending = [(task, algo, seed) for task in args.tasks for algo in TASKS[task].algos for seed in args.seeds
               if not (args.out / task / algo / f"seed{seed}" / "result.json").exists()]
    run_commands([[sys.executable, __file__, "--one", task, algo, str(seed), "--out", str(args.out),
                   *(["--eval-episodes", str(args.eval_episodes)] if args.eval_episodes else []),
                   *(["--steps", str(args.steps)] if args.steps else [])] for task, algo, seed in pending], args.parallel)


def collect(out: Path, destination: Path) -> None:
    for result in sorted(out.glob("*/*/seed*/result.json")):
        run_dir = result.parent
        target = destination / run_dir.relative_to(out)
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(result, target / "result.json")
        shutil.copy(run_dir / "config.json", target / "config.json")
        gzip_copy(run_dir / "episodes.csv", target / "episodes.csv.gz")


def table(folder: Path) -> None:
    print("| task | algorithm | solved at | greedy mean per seed | last 100 training episodes per seed | solved seeds |")
    print("|---|---|---:|---|---|---:|")
    for task_name, task in TASKS.items():
        for algo in task.algos:
            results = [json.loads(path.read_text()) for path in sorted((folder / task_name / algo).glob("seed*/result.json"))]
            if not results:
                continue
            greedy = [statistics.mean(result["greedy_returns"]) for result in results]
            training = []
            for result in results:
                with gzip.open(folder / task_name / algo / f"seed{result['seed']}" / "episodes.csv.gz", "rt") as rows:
                    returns = [float(row["return"]) for row in csv.DictReader(rows)]
                training.append(statistics.mean(returns[-100:]))
            print(f"| {task_name} | {algo} | {task.solved_at} | {', '.join(f'{g:.2f}' for g in greedy)} | "
                  f"{', '.join(f'{t:.2f}' for t in training)} | {sum(map(task.solved, results))} of {len(results)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/user-envs"))
    parser.add_argument("--tasks", nargs="+", choices=sorted(TASKS), default=sorted(TASKS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--parallel", type=int, default=2, help="runs at a time, one torch thread each")
    parser.add_argument("--eval-episodes", type=int, default=None, help="every run's greedy episodes (default: its task's)")
    parser.add_argument("--steps", type=int, default=None, help="every run's budget (default: its algorithm's in TASKS)")
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
