#!/usr/bin/env python
"""Issue 89, part 0: do PPO's defaults learn per step as fast as Stable-Baselines3's on a small environment without a
preset of its own?

Arms, each with its library's defaults and nothing else: SB3's PPO (``PPO("MlpPolicy", env)``: one environment x 2,048
steps an update), voidrl's PPO as it was (8 environments x 2,048 steps: 16,384 an update) and voidrl's PPO with
``--num-steps 256`` (8 x 256: SB3's 2,048 an update, its minibatches and epochs). Each run trains ``--steps`` steps on
an environment written by others (gymnasium's), then plays ``--episodes`` greedy episodes; the table gives each arm's
greedy returns per seed and their mean. One process per run (``--one``), two at a time, one torch thread each.

    python benchmarks/bench_defaults.py --out RUNS --seeds 100 101 102
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ENVS = {"Acrobot-v1": 100_000, "FrozenLake-v1": 50_000}
"""Environment -> training steps: gymnasium's, neither with a voidrl preset for PPO."""
ARMS = ("sb3", "voidrl-2048", "voidrl-256")


def train_one(arm: str, env_id: str, steps: int, seed: int, episodes: int, run_dir: Path) -> list[float]:
    """The greedy returns of ``episodes`` episodes after training ``arm`` on ``env_id``."""
    import torch

    torch.set_num_threads(1)
    if arm == "sb3":
        import gymnasium as gym
        from stable_baselines3 import PPO
        from stable_baselines3.common.evaluation import evaluate_policy

        model = PPO("MlpPolicy", gym.make(env_id), seed=seed, device="cpu")
        model.learn(steps)
        returns, _ = evaluate_policy(model, gym.make(env_id), n_eval_episodes=episodes, deterministic=True,
                                     return_episode_rewards=True)
        return [float(value) for value in returns]
    import voidrl

    num_steps = int(arm.split("-")[1])
    agent = voidrl.train("ppo", env=env_id, steps=steps, seed=seed, num_steps=num_steps, run_dir=str(run_dir),
                         progress=False, torch_threads=1)
    return agent.evaluate(episodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--one", nargs=3, metavar=("ARM", "ENV", "SEED"), help="train one run (the subprocess)")
    args = parser.parse_args()
    if args.one:
        arm, env_id, seed = args.one[0], args.one[1], int(args.one[2])
        folder = args.out / env_id.replace("/", "-") / arm / f"seed{seed}"
        folder.mkdir(parents=True, exist_ok=True)
        returns = train_one(arm, env_id, ENVS[env_id], seed, args.episodes, folder / "run")
        (folder / "result.json").write_text(json.dumps({"returns": returns}) + "\n")
        return
    pending = [(arm, env_id, seed) for env_id in ENVS for arm in ARMS for seed in args.seeds
               if not (args.out / env_id.replace("/", "-") / arm / f"seed{seed}" / "result.json").exists()]
    running: list[subprocess.Popen] = []
    while pending or running:
        while pending and len(running) < args.parallel:
            arm, env_id, seed = pending.pop(0)
            running.append(subprocess.Popen([sys.executable, __file__, "--out", str(args.out), "--episodes", str(args.episodes),
                                             "--one", arm, env_id, str(seed)]))
        running[0].wait()
        running = [process for process in running if process.poll() is None]
    print(f"| environment (steps) | {' | '.join(ARMS)} |\n|---|" + "---:|" * len(ARMS))
    for env_id, steps in ENVS.items():
        cells = []
        for arm in ARMS:
            means = [statistics.mean(json.loads((args.out / env_id.replace("/", "-") / arm / f"seed{seed}" / "result.json")
                                                .read_text())["returns"]) for seed in args.seeds]
            cells.append(f"{statistics.mean(means):.2f} ({', '.join(f'{mean:.2f}' for mean in means)})")
        print(f"| {env_id} ({steps:,}) | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
