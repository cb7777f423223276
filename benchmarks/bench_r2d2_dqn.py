"""R2D2 against a standard DQN on MinAtar, side by side at equal environment steps.

The peer is Stable-Baselines3's DQN with the MinAtar paper's network and settings (Young & Tian, 2019): one
3 x 3 convolution of 16 channels, 128 hidden units, a replay of 100k transitions, one update of 32 per step
after 5,000 steps, a target copy every 1,000 steps, epsilon from 1 to 0.1 over the first 100k steps, RMSprop
(lr 2.5e-4, squared-gradient momentum 0.95, centred, eps 0.01), Huber loss, gamma 0.99. voidrl's R2D2 trains
through its command line with ``--preset minatar`` (options after ``--r2d2-options`` are added).

Every run writes ``episodes.csv`` (step, return, length) and, at its end, ``greedy.json`` (the greedy policy's
returns over ``--eval-episodes`` episodes). Both kinds of run checkpoint as they go and continue where they stopped
when the command is run again (R2D2 with ``--resume --save-replay``; DQN with its model and replay buffer every 50k
steps); finished runs are skipped. ``--table`` prints the table from run directories, or from the gzipped copies
under ``benchmarks/results/`` (``--collect`` copies them there).

    pip install -e ".[bench]"
    python benchmarks/bench_r2d2_dqn.py --out RUNS --agents r2d2 --games Breakout --seeds 0 1 2   # one slot
    python benchmarks/bench_r2d2_dqn.py --out RUNS --agents dqn --games Breakout --seeds 0 1 2    # another
    python benchmarks/bench_r2d2_dqn.py --out RUNS --table
    python benchmarks/bench_r2d2_dqn.py --out RUNS --collect      # then, from the committed copies:
    python benchmarks/bench_r2d2_dqn.py --table
    python benchmarks/bench_r2d2_dqn.py --out RUNS/memory-none --agents r2d2 --games SpaceInvaders --seeds 0 --steps 300000 \
        --r2d2-options --memory none        # an ablation arm: its own --out, collected to its own --results
    python benchmarks/bench_r2d2_dqn.py --out RUNS/memory-none --collect --results benchmarks/results/r2d2-ablation/memory-none
    voidrl plot benchmarks/results/r2d2-dqn/*-breakout-s* --label 'r2d2=*/r2d2-breakout-*' --label 'dqn=*/dqn-breakout-*' \
        --table 300000 --out FIGS/breakout      # the curves and the compare table (the folder's name holds r2d2 too)
"""

from __future__ import annotations

import argparse
import csv
import gzip
import importlib.util
import json
import math
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
from pool import gzip_copy

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "r2d2-dqn"
DQN_CHECKPOINT_EVERY = 50_000


def run_name(agent: str, game: str, seed: int) -> str:
    return f"{agent}-{game.lower()}-s{seed}"


def greedy_returns_r2d2(run_dir: Path, episodes: int, seed: int) -> list[float]:
    from voidrl.training.agent import Agent

    agent = Agent.load(run_dir / "checkpoint.pt", "cpu")
    return [float(value) for value in agent.evaluate(episodes, deterministic=True, seed=10_000 + seed)]


def train_r2d2(game: str, seed: int, args: argparse.Namespace, run_dir: Path) -> None:
    command = [sys.executable, "-m", "voidrl", "train", "r2d2", "--env", f"MinAtar/{game}-v1", "--preset", "minatar",
               "--steps", str(args.steps), "--seed", str(seed), "--torch-threads", "1", "--no-progress", "--save-replay",
               "--checkpoint-every", "50", "--run-dir", str(run_dir), "--resume", *args.r2d2_options]
    done = subprocess.run(command, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"r2d2 {game} seed {seed} exited {done.returncode}")


class MinAtarTorso:
    """The MinAtar paper's network before the Q layer, as an SB3 features extractor (built lazily: SB3 is optional)."""

    @staticmethod
    def make(observation_space, features_dim: int = 128):
        import torch
        from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
        from torch import nn

        class Torso(BaseFeaturesExtractor):
            def __init__(self, observation_space, features_dim: int = 128):
                super().__init__(observation_space, features_dim)
                channels, height, width = observation_space.shape
                self.net = nn.Sequential(nn.Conv2d(channels, 16, 3, 1), nn.ReLU(), nn.Flatten(),
                                         nn.Linear(16 * (height - 2) * (width - 2), features_dim), nn.ReLU())

            def forward(self, observations: torch.Tensor) -> torch.Tensor:
                return self.net(observations)

        return Torso


def make_dqn_env(game: str, seed: int):
    import gymnasium as gym
    from stable_baselines3.common.monitor import Monitor

    from voidrl.envs.factory import suite_of
    from voidrl.envs.gym_backend import MinAtarPixels

    env_id = f"MinAtar/{game}-v1"
    suite_of(env_id)  # registers MinAtar's ids
    env = Monitor(MinAtarPixels(gym.make(env_id, max_episode_steps=27_000)))
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return env


def train_dqn(game: str, seed: int, args: argparse.Namespace, run_dir: Path) -> None:
    import torch
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(1)
    run_dir.mkdir(parents=True, exist_ok=True)
    model_path, buffer_path, episodes_path = run_dir / "model.zip", run_dir / "replay.pkl", run_dir / "episodes.csv"
    env = make_dqn_env(game, seed)
    if model_path.exists():
        model = DQN.load(model_path, env=env, device="cpu")
        model.load_replay_buffer(buffer_path)
        kept = [row for row in read_episodes(episodes_path) if row[0] <= model.num_timesteps]  # rows past the checkpoint go
        print(f"dqn {game} seed {seed}: resuming at step {model.num_timesteps}", file=sys.stderr)
    else:
        torso = MinAtarTorso.make(env.observation_space)
        model = DQN("CnnPolicy", env, learning_rate=2.5e-4, buffer_size=100_000, learning_starts=5_000, batch_size=32,
                    gamma=0.99, train_freq=1, gradient_steps=1, target_update_interval=1_000,
                    exploration_fraction=min(1.0, 100_000 / args.steps), exploration_initial_eps=1.0, exploration_final_eps=0.1,
                    max_grad_norm=math.inf,
                    policy_kwargs=dict(features_extractor_class=torso, net_arch=[], optimizer_class=torch.optim.RMSprop,
                                       optimizer_kwargs=dict(alpha=0.95, centered=True, eps=0.01)),
                    seed=seed, device="cpu", verbose=0)
        kept = []
    write_episodes(episodes_path, kept)

    class Recorder(BaseCallback):
        """Appends each finished episode to episodes.csv; saves model and replay every DQN_CHECKPOINT_EVERY steps."""

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    with episodes_path.open("a", newline="") as handle:
                        csv.writer(handle).writerow([self.num_timesteps, info["episode"]["r"], info["episode"]["l"]])
            if self.num_timesteps % DQN_CHECKPOINT_EVERY == 0:
                self.model.save(model_path)
                self.model.save_replay_buffer(buffer_path)
            return True

    remaining = args.steps - model.num_timesteps
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=Recorder(), reset_num_timesteps=False)
    model.save(model_path)
    model.save_replay_buffer(buffer_path)


def greedy_returns_dqn(run_dir: Path, game: str, episodes: int, seed: int) -> list[float]:
    from stable_baselines3 import DQN

    env = make_dqn_env(game, 10_000 + seed)
    model = DQN.load(run_dir / "model.zip", env=env, device="cpu")
    returns = []
    for _ in range(episodes):
        obs, _ = env.reset()
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return returns


def read_episodes(path: Path) -> list[tuple[int, float, int]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as handle:
        return [(int(row["step"]), float(row["return"]), int(row["length"])) for row in csv.DictReader(handle)]


def write_episodes(path: Path, rows: list[tuple[int, float, int]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["step", "return", "length"])
        writer.writerows(rows)


def run(args: argparse.Namespace) -> None:
    for game in args.games:
        for seed in args.seeds:
            for agent in args.agents:
                run_dir = args.out / run_name(agent, game, seed)
                if (run_dir / "greedy.json").exists():
                    continue
                if agent == "r2d2":
                    train_r2d2(game, seed, args, run_dir)
                    returns = greedy_returns_r2d2(run_dir, args.eval_episodes, seed)
                else:
                    train_dqn(game, seed, args, run_dir)
                    returns = greedy_returns_dqn(run_dir, game, args.eval_episodes, seed)
                (run_dir / "greedy.json").write_text(json.dumps({"steps": args.steps, "greedy_returns": returns}) + "\n")
                print(f"{agent} {game} seed {seed}: greedy {statistics.mean(returns):.2f} over {len(returns)} episodes", flush=True)


def collect(args: argparse.Namespace) -> None:
    """Gzipped episodes and greedy returns of every finished run into ``--results`` (benchmarks/results/r2d2-dqn/)."""
    collect_runs(args.out, args.results, "greedy.json")


def collect_runs(out: Path, results: Path, marker: str) -> None:
    """Every finished run under ``out`` (one holding ``marker``) into ``results/NAME/``: its episodes.csv gzipped,
    ``marker`` and config.json where there is one."""
    for run_dir in sorted(out.iterdir()):
        if not (run_dir / marker).exists():
            continue
        target = results / run_dir.name
        target.mkdir(parents=True, exist_ok=True)
        gzip_copy(run_dir / "episodes.csv", target / "episodes.csv.gz")
        shutil.copy(run_dir / marker, target / marker)
        if (run_dir / "config.json").exists():
            shutil.copy(run_dir / "config.json", target / "config.json")
        print(f"collected {target}")


def finished_runs(*sources: Path, last: int = 100) -> dict[tuple[str, str], list[tuple[int, float, float]]]:
    """(game, agent) -> ``(seed, mean greedy return, mean of the last ``last`` training episodes)`` of each finished run
    in ``sources`` (one holding greedy.json; a source is such a run or a folder of them), in seed order."""
    found: dict[tuple[str, str], list[tuple[int, float, float]]] = {}
    runs = (run for source in sources for run in ([source] if (source / "greedy.json").exists() else source.iterdir()))
    for run_dir in sorted(runs):
        if not (run_dir / "greedy.json").exists():
            continue
        agent, game, seed = run_dir.name.split("-")
        episodes = run_dir / "episodes.csv.gz" if (run_dir / "episodes.csv.gz").exists() else run_dir / "episodes.csv"
        training = [value for _, value, _ in read_episodes(episodes)][-last:]
        greedy = json.loads((run_dir / "greedy.json").read_text())["greedy_returns"]
        found.setdefault((game, agent), []).append((int(seed[1:]), statistics.mean(greedy), statistics.mean(training)))
    return {key: sorted(runs) for key, runs in found.items()}


def table(*sources: Path, last: int = 100) -> str:
    """Per game and agent, over the runs of ``sources``: greedy return (mean and interquartile mean over seeds of
    each seed's mean), its per-seed values, and the mean of the last ``last`` training episodes."""
    from voidrl.math.intervals import iqm

    lines = [f"| game | agent | seeds | greedy return, mean of seeds | IQM of seeds | per seed | last {last} training episodes |",
             "|---|---|---:|---:|---:|---|---:|"]
    for (game, agent), runs in sorted(finished_runs(*sources, last=last).items()):
        lines.append(f"| {game} | {agent} | {len(runs)} | {statistics.mean(g for _, g, _ in runs):.2f} | "
                     f"{iqm(np.array([g for _, g, _ in runs])):.2f} | "
                     f"{', '.join(f'{g:.2f}' for _, g, _ in runs)} | {statistics.mean(t for _, _, t in runs):.2f} |")
    return "\n".join(lines)


def greedy_differences(arm: Path, against: Path) -> str:
    """Per game, each agent of ``arm`` against each agent of ``against`` on the mean greedy return: the difference of
    the means over seeds with Welch's 95% interval (``voidrl.math.intervals.welch_difference``)."""
    from voidrl.math.intervals import welch_difference

    ours, theirs = ({key: [greedy for _, greedy, _ in runs] for key, runs in finished_runs(source).items()}
                    for source in (arm, against))
    lines = ["| game | arm | against | seeds | difference of greedy means [95% interval] |", "|---|---|---|---:|---:|"]
    for (game, agent), means in sorted(ours.items()):
        for (other_game, other), other_means in sorted(theirs.items()):
            if other_game == game:
                d = welch_difference(np.array(means), np.array(other_means))
                lines.append(f"| {game} | {arm.name}/{agent} | {against.name}/{other} | {len(means)} vs {len(other_means)} | "
                             f"{d.estimate:.2f} [{d.low:.2f}, {d.high:.2f}] |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="directory of the runs")
    parser.add_argument("--agents", nargs="+", default=["r2d2", "dqn"], choices=("r2d2", "dqn"))
    parser.add_argument("--games", nargs="+", default=["Breakout", "SpaceInvaders"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=500_000)
    parser.add_argument("--eval-episodes", type=int, default=30)
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="where --collect copies the runs and --table reads them without --out (an ablation's own folder)")
    parser.add_argument("--collect", action="store_true", help="copy finished runs (gzipped) to --results")
    parser.add_argument("--table", action="store_true", help="print the table of --out, or of --results")
    parser.add_argument("--also", type=Path, nargs="+", default=[],
                        help="with --table: more runs, or folders of runs, that join the table's (more seeds of the same agents)")
    parser.add_argument("--greedy-against", type=Path, default=None,
                        help="with --table: the greedy differences of --results's runs against this folder's")
    parser.add_argument("--r2d2-options", nargs=argparse.REMAINDER, default=[], help="more options of voidrl train r2d2")
    args = parser.parse_args()
    if args.table:
        print(table(args.out or args.results, *args.also))
        if args.greedy_against is not None:
            print(greedy_differences(args.out or args.results, args.greedy_against))
        return
    if args.out is None:
        parser.error("--out is required to train or collect")
    if args.collect:
        collect(args)
        return
    if "dqn" in args.agents and importlib.util.find_spec("stable_baselines3") is None:
        parser.error("the dqn runs need stable-baselines3: pip install -e '.[bench]'")
    run(args)


if __name__ == "__main__":
    main()
