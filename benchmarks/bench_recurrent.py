"""Recurrent PPO against sb3-contrib's RecurrentPPO on CartPole without velocities: steps/s and greedy returns, side by side.

Each run trains alone with one torch thread, one after the other, the same seed and step budget:
- voidrl: ``voidrl train ppo --env voidrl/CartPoleNoVelocity-v1 --preset cartpole-memory`` (8 envs x 128 steps, an MLP
  body of 64-64 then an LSTM of 64 for the actor and one for the critic, sequences of 32, 4 epochs of minibatches of
  256 steps, lr 3e-4 annealed), and the same preset with ``--memory none`` (the feed-forward control);
- sb3-contrib: ``RecurrentPPO("MlpLstmPolicy")`` with those settings: 8 envs x 128 steps, LSTM 64 for actor and
  critic (its LSTM reads the observation, then an MLP of 64-64 per head), batch 256, 4 epochs, lr 3e-4 annealed,
  gamma 0.99, lambda 0.95, clip 0.2, on CartPole-v1 with the velocities removed as voidrl removes them (entries 0
  and 2 of the observation kept).

Steps/s is the run's environment steps over its training wall time (voidrl's ``time/elapsed_seconds`` at the last
update: collection, updates, logging and checkpoints; until 2026-11-28 collection and updates only, the per-update
``time/sps``; sb3-contrib's ``learn``; set-up and evaluation excluded); the
greedy return is the mean over ``--eval-episodes`` episodes of the final policy, its LSTM state carried and reset
at each episode's start.

    pip install -e ".[bench]"
    python benchmarks/bench_recurrent.py --steps 200000 --out RUNS
    python benchmarks/bench_recurrent.py --table      # the table of the committed run (benchmarks/results/recurrent-2026-11-26)
    python benchmarks/bench_recurrent.py --episodes benchmarks/results/recurrent-2026-11-25-single-seed/*   # first runs
    python benchmarks/bench_recurrent.py --episodes benchmarks/results/recurrent-ppg-2026-11-26/*   # recurrent PPG, 3 seeds
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "recurrent-2026-11-26"
KEPT = (0, 2)
"""CartPole's position and angle: voidrl/CartPoleNoVelocity-v1's observation."""


def train_voidrl(memory: str, args: argparse.Namespace) -> dict[str, float]:
    from voidrl.training.agent import Agent

    run_dir = args.out / f"voidrl-{memory}-s{args.seed}"
    command = [sys.executable, "-m", "voidrl", "train", "ppo", "--env", "voidrl/CartPoleNoVelocity-v1", "--preset", "cartpole-memory",
               "--memory", memory, "--steps", str(args.steps), "--seed", str(args.seed), "--torch-threads", "1", "--no-progress",
               "--run-dir", str(run_dir)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    steps, seconds = training_seconds(run_dir / "metrics.csv")
    returns = Agent.load(run_dir / "checkpoint.pt").evaluate(args.eval_episodes, deterministic=True, seed=10_000 + args.seed)
    return {"steps": steps, "steps_per_second": steps / seconds, "training_seconds": seconds,
            "greedy_return": sum(returns) / len(returns)}


def training_seconds(metrics: Path) -> tuple[int, float]:
    """A voidrl run's last step and its training wall time from its ``metrics.csv``: ``time/elapsed_seconds`` at the
    last update (collection, updates, and every earlier update's logging and checkpoints), the stretches of a
    resumed run added up."""
    with metrics.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    elapsed = [float(row["time/elapsed_seconds"]) for row in rows]
    stretches = [now - before if now > before else now for before, now in zip([0.0, *elapsed], elapsed)]
    return int(rows[-1]["step"]), sum(stretches)


def no_velocity_env(num_envs: int, seed: int):
    import gymnasium as gym
    import numpy as np
    from stable_baselines3.common.env_util import make_vec_env

    def keep_position_and_angle(env: gym.Env) -> gym.Env:
        space = env.observation_space
        observed = gym.spaces.Box(space.low[list(KEPT)], space.high[list(KEPT)], dtype=np.float32)
        return gym.wrappers.TransformObservation(env, lambda obs: obs[list(KEPT)].astype(np.float32), observed)

    return make_vec_env("CartPole-v1", n_envs=num_envs, seed=seed, wrapper_class=keep_position_and_angle)


def train_sb3_contrib(args: argparse.Namespace) -> dict[str, float]:
    import numpy as np
    import torch
    from sb3_contrib import RecurrentPPO

    torch.set_num_threads(1)
    env = no_velocity_env(8, args.seed)
    model = RecurrentPPO("MlpLstmPolicy", env, n_steps=128, batch_size=256, n_epochs=4, learning_rate=lambda left: 3e-4 * left,
                         gamma=0.99, gae_lambda=0.95, clip_range=0.2, seed=args.seed, device="cpu",
                         policy_kwargs={"lstm_hidden_size": 64, "net_arch": {"pi": [64, 64], "vf": [64, 64]}})
    started = time.perf_counter()
    model.learn(args.steps)
    seconds = time.perf_counter() - started
    evaluation = no_velocity_env(1, 10_000 + args.seed)
    returns, state, start, total = [], None, np.ones((1,), dtype=bool), 0.0
    obs = evaluation.reset()
    while len(returns) < args.eval_episodes:
        action, state = model.predict(obs, state=state, episode_start=start, deterministic=True)
        obs, reward, done, _ = evaluation.step(action)
        total += float(reward[0])
        start = done
        if done[0]:
            returns.append(total)
            total = 0.0
    return {"steps": model.num_timesteps, "steps_per_second": model.num_timesteps / seconds, "training_seconds": seconds,
            "greedy_return": sum(returns) / len(returns)}


def table(results: dict[str, dict[str, float]], steps: int, seed: int) -> str:
    lines = [f"CartPole without velocities, {steps:,} steps, seed {seed}, one torch thread, runs one after the other\n",
             "| run | steps/s (training) | training s | greedy return |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {result['steps_per_second']:,.0f} | {result['training_seconds']:.0f} | {result['greedy_return']:.1f} |"
              for name, result in results.items()]
    return "\n".join(lines)


def episode_means(run_dirs: list[Path]) -> str:
    """Per run: its steps, the mean of its last 20 training episodes, the mean return per 20k steps, and the greedy
    evaluation written beside the episodes (greedy.json), where there is one."""
    from voidrl.io.report import read_episodes

    lines = []
    for run_dir in run_dirs:
        steps, returns = read_episodes(run_dir)
        windows = [returns[(steps > low) & (steps <= low + 20_000)].mean() for low in range(0, int(steps[-1]), 20_000)]
        greedy = json.loads((run_dir / "greedy.json").read_text()) if (run_dir / "greedy.json").exists() else None
        lines.append(f"{run_dir.name}: {int(steps[-1]):,} steps, last 20 episodes {returns[-20:].mean():.1f}, "
                     f"per 20k steps {', '.join(f'{mean:.0f}' for mean in windows)}"
                     + ("" if greedy is None else f"; greedy {greedy['mean_return']:.1f} over {greedy['episodes']} episodes"))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="directory of the runs and of results.json (--table: default the committed one)")
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-episodes", type=int, default=20)
    parser.add_argument("--table", action="store_true", help="print the table of --out's results.json (default: the committed one)")
    parser.add_argument("--episodes", type=Path, nargs="+", metavar="RUN_DIR",
                        help="print each run's last-20 and per-20k training returns (episodes.csv or .csv.gz)")
    args = parser.parse_args()
    if args.episodes:
        print(episode_means(args.episodes))
        return
    if args.table:
        results = json.loads(((args.out or RESULTS) / "results.json").read_text())
        print(table(results, next(iter(results.values()))["steps"], args.seed))
        return
    if args.out is None:
        parser.error("--out DIR is needed to train (the runs' directories and checkpoints go there)")
    args.out.mkdir(parents=True, exist_ok=True)
    results = {"voidrl lstm": train_voidrl("lstm", args), "voidrl feed-forward": train_voidrl("none", args),
               "sb3-contrib RecurrentPPO": train_sb3_contrib(args)}
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(table(results, args.steps, args.seed))


if __name__ == "__main__":
    main()
