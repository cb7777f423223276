"""Recurrent PPO on a MiniGrid memory task: voidrl with an LSTM, voidrl feed-forward, sb3-contrib's RecurrentPPO.

MiniGrid-MemoryS7-v0: the agent sees an object in a small room, walks down a corridor and must step next to the
matching one of two objects at its end. A policy without memory can only guess once the cue is out of view.

Every arm sees the same observation (voidrl's ``MiniGridPlanes``: the 7 x 7 egocentric view as 20 one-hot planes),
uses the same network (the MinAtar CNN, 16@3x3 then fc 128, one body and, for the recurrent arms, one LSTM of 128
shared by the policy and value heads) and the `minigrid` preset's schedule: 16 envs x 128 steps, 4 epochs of
minibatches of 256 steps, lr 1e-3, entropy 0.01, gamma 0.99, lambda 0.95, clip 0.2, value coefficient 0.5,
gradient norm 0.5.
- voidrl lstm: ``voidrl train ppo --preset minigrid --memory lstm --sequence-length 16`` (the default length when
  the runs were made: 16 sequences per minibatch);
- voidrl lstm 128: the same with ``--sequence-length 128`` (the preset's since): each environment's whole rollout one
  sequence, 2 per minibatch, as sb3-contrib and CleanRL's ppo_atari_lstm cut them (back-propagation through all 128
  steps);
- voidrl feed-forward: the same with ``--memory none``;
- sb3-contrib 2.9.2 ``RecurrentPPO`` with ``shared_lstm=True, enable_critic_lstm=False`` (it cuts minibatches
  into per-episode sequences padded to equal length).

Runs go one after the other, each alone with one torch thread: seed by seed, the three arms in turn. Steps/s is
environment steps over training wall time (voidrl's collection, updates, logging and checkpoints, until 2026-11-28
collection and updates only; sb3-contrib's ``learn`` with the callback that records its episodes; set-up and
evaluation excluded). The greedy return
is the mean over ``--eval-episodes`` episodes of the final policy (LSTM state carried, reset at episode starts);
the training return is the mean of the last 100 training episodes (sampled actions). A finished run is skipped
when the command is run again.

    pip install -e ".[bench]"
    python benchmarks/bench_recurrent_memory.py --out RUNS --steps 500000 --seeds 0 1 2
    python benchmarks/bench_recurrent_memory.py --out RUNS --collect   # gz episodes + results into benchmarks/results/
    python benchmarks/bench_recurrent_memory.py --table                # the table from the committed files
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_r2d2_dqn import MinAtarTorso, collect_runs, read_episodes, write_episodes
from bench_recurrent import training_seconds

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "recurrent-memory"
ENV_ID = "MiniGrid-MemoryS7-v0"
ARMS = {
    # arm: the options of `voidrl train ppo --preset minigrid` beyond --env, --steps, --seed (None: sb3-contrib's RecurrentPPO)
    "voidrl-lstm": ["--memory", "lstm", "--sequence-length", "16"],
    "voidrl-lstm-128": ["--memory", "lstm", "--sequence-length", "128"],
    "voidrl-ff": ["--memory", "none"],
    "sb3contrib": None,
}


def train_voidrl(options: list[str], seed: int, args: argparse.Namespace, run_dir: Path) -> dict[str, float]:
    from voidrl.training.agent import Agent

    command = [sys.executable, "-m", "voidrl", "train", "ppo", "--env", ENV_ID, "--preset", "minigrid", *options,
               "--steps", str(args.steps), "--seed", str(seed), "--torch-threads", "1", "--no-progress", "--run-dir", str(run_dir)]
    if (run_dir / "checkpoint.pt").exists():
        command.append("--resume")
    finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if finished.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{finished.stderr[-2000:]}")
    steps, seconds = training_seconds(run_dir / "metrics.csv")
    returns = Agent.load(run_dir / "checkpoint.pt").evaluate(args.eval_episodes, deterministic=True, num_envs=1, seed=10_000 + seed)
    return {"steps": steps, "training_seconds": seconds, "greedy_returns": returns}


def planes_env(seed: int):
    import gymnasium as gym
    import numpy as np
    from stable_baselines3.common.monitor import Monitor

    from voidrl.envs.factory import suite_of
    from voidrl.envs.gym_backend import MiniGridPlanes

    suite_of(ENV_ID)  # registers MiniGrid's ids
    planes = MiniGridPlanes(gym.make(ENV_ID))
    # as floats in {0, 1} (what voidrl's body makes of the uint8 planes): SB3 would take uint8 [20, 7, 7] for a
    # channels-last image and transpose it
    unit = gym.spaces.Box(0.0, 1.0, planes.observation_space.shape, np.float32)
    env = Monitor(gym.wrappers.TransformObservation(planes, lambda obs: obs.astype(np.float32) / 255.0, unit))
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return env


def train_sb3_contrib(seed: int, args: argparse.Namespace, run_dir: Path) -> dict[str, float]:
    import numpy as np
    import torch
    from sb3_contrib import RecurrentPPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    run_dir.mkdir(parents=True, exist_ok=True)
    episodes_path = run_dir / "episodes.csv"
    write_episodes(episodes_path, [])
    env = DummyVecEnv([lambda index=index: planes_env(seed * 1000 + index) for index in range(16)])
    model = RecurrentPPO("CnnLstmPolicy", env, n_steps=128, batch_size=256, n_epochs=4, learning_rate=1e-3, ent_coef=0.01,
                         gamma=0.99, gae_lambda=0.95, clip_range=0.2, vf_coef=0.5, max_grad_norm=0.5, seed=seed, device="cpu",
                         policy_kwargs={"features_extractor_class": MinAtarTorso.make(env.observation_space), "net_arch": [],
                                        "lstm_hidden_size": 128, "shared_lstm": True, "enable_critic_lstm": False})

    class Recorder(BaseCallback):
        def _on_step(self) -> bool:
            finished = [[self.num_timesteps, info["episode"]["r"], info["episode"]["l"]] for info in self.locals["infos"] if "episode" in info]
            if finished:
                with episodes_path.open("a", newline="") as handle:
                    csv.writer(handle).writerows(finished)
            return True

    started = time.perf_counter()
    model.learn(args.steps, callback=Recorder())
    seconds = time.perf_counter() - started
    evaluation = planes_env(10_000 + seed)
    returns = []
    for _ in range(args.eval_episodes):
        obs, _ = evaluation.reset()
        state, start, total, done = None, np.ones((1,), dtype=bool), 0.0, False
        while not done:
            action, state = model.predict(obs, state=state, episode_start=start, deterministic=True)
            obs, reward, terminated, truncated, _ = evaluation.step(int(action))
            total, start, done = total + float(reward), np.zeros((1,), dtype=bool), terminated or truncated
        returns.append(total)
    return {"steps": model.num_timesteps, "training_seconds": seconds, "greedy_returns": returns}


def run(args: argparse.Namespace) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        for arm in args.arms:
            run_dir = args.out / f"{arm}-s{seed}"
            if (run_dir / "result.json").exists():
                continue
            if ARMS[arm] is None:
                result = train_sb3_contrib(seed, args, run_dir)
            else:
                result = train_voidrl(ARMS[arm], seed, args, run_dir)
            (run_dir / "result.json").write_text(json.dumps(result) + "\n")
            print(f"{arm} seed {seed}: {result['steps'] / result['training_seconds']:,.0f} steps/s, "
                  f"greedy {statistics.mean(result['greedy_returns']):.3f}", flush=True)


def collect(args: argparse.Namespace) -> None:
    """Each finished run's result.json, config.json and gzipped episodes.csv into benchmarks/results/recurrent-memory/."""
    collect_runs(args.out, RESULTS, "result.json")


def table(source: Path, last: int = 100) -> str:
    """Per arm: seeds, steps/s, greedy return (mean over seeds, and per seed) and the last ``last`` training episodes."""
    found: dict[str, list[tuple[int, float, float, float]]] = {}
    for run_dir in sorted(source.iterdir()):
        if not (run_dir / "result.json").exists():
            continue
        arm, seed = run_dir.name.rsplit("-s", 1)
        result = json.loads((run_dir / "result.json").read_text())
        episodes = run_dir / "episodes.csv.gz" if (run_dir / "episodes.csv.gz").exists() else run_dir / "episodes.csv"
        training = statistics.mean(value for _, value, _ in read_episodes(episodes)[-last:])
        found.setdefault(arm, []).append((int(seed), result["steps"] / result["training_seconds"],
                                          statistics.mean(result["greedy_returns"]), training))
    lines = [f"| arm | seeds | steps/s (training) | greedy return, mean of seeds | per seed | last {last} training episodes |",
             "|---|---:|---:|---:|---|---:|"]
    for arm in [arm for arm in ARMS if arm in found]:
        runs = sorted(found[arm])
        lines.append(f"| {arm} | {len(runs)} | {statistics.mean(r[1] for r in runs):,.0f} | {statistics.mean(r[2] for r in runs):.3f} | "
                     f"{', '.join(f'{r[2]:.3f}' for r in runs)} | {statistics.mean(r[3] for r in runs):.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="directory of the runs")
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    parser.add_argument("--steps", type=int, default=500_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--eval-episodes", type=int, default=50)
    parser.add_argument("--collect", action="store_true", help="copy --out's finished runs into benchmarks/results/recurrent-memory/")
    parser.add_argument("--table", action="store_true", help="print the table of --out (default: the committed results)")
    args = parser.parse_args()
    if args.table:
        print(table(args.out or RESULTS))
        return
    if args.out is None:
        parser.error("--out DIR is needed to train or --collect")
    collect(args) if args.collect else run(args)


if __name__ == "__main__":
    main()
