"""Issue 63: do the fine-tuning runs' first games play as ``voidrl explore`` plays the same weights?

Each environment's first game is played twice per seed, with no update: once by a fine-tuning run's own collector
(``voidrl finetune ppg --from WEIGHTS --preset atari``'s trainer, its sampling from torch's generator seeded by the
run) and once by ``Agent.load(WEIGHTS)`` acting as ``voidrl explore`` does (sampled, its own seeded generator), the
games started with the same seed. It prints each path's mean score and its standard error over all games:

    python benchmarks/zero_shot_first_games.py --seeds 10 11 12 13 14 15 16 17 18 19
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from finetune_ablation import WEIGHTS  # noqa: E402
from voidrl.io.checkpoint import load_run_checkpoint  # noqa: E402
from voidrl.training.agent import Agent  # noqa: E402
from voidrl.training.presets import make_config  # noqa: E402
from voidrl.training.runs import make_trainer  # noqa: E402

ENV = "ALE/MsPacman-v5"


def record_first_games(step, first: dict[int, float]):
    """``step`` (a VecEnv's) that also keeps each sub-environment's first finished game's score in ``first``."""
    def recording(actions):
        outcome = step(actions)
        for index, score in zip(outcome.episode_envs.tolist(), outcome.episode_returns.tolist()):
            first.setdefault(index, score)
        return outcome
    return recording


def training_run_games(seed: int, source: dict) -> list[float]:
    """The first game of each environment of a fine-tuning run started with ``seed``, played by its collector."""
    config = make_config("ppg", "atari", env=ENV, init_from=str(ROOT / WEIGHTS), seed=seed, run_dir=tempfile.mkdtemp(),
                         torch_threads=1)
    trainer = make_trainer(config, init_checkpoint=source)
    first: dict[int, float] = {}
    trainer.env.step = record_first_games(trainer.env.step, first)
    try:
        trainer.collector.reset(trainer.seed)
        storage = trainer.collector.make_storage(config.algo_config.num_steps)
        while len(first) < trainer.env.num_envs:
            trainer.collector.collect(storage, 0)
    finally:
        trainer.close()
    return list(first.values())


def explore_games(seed: int, agent: Agent) -> list[float]:
    """The first game of each of as many environments, played by ``agent`` as ``voidrl explore --seed`` plays."""
    env = agent.make_env()
    memory = agent.memory(env.num_envs, False, agent.evaluation_member(None), torch.Generator().manual_seed(seed))
    first: dict[int, float] = {}
    try:
        obs = env.reset(seed)
        while len(first) < env.num_envs:
            step = env.step(agent.act_with(memory, obs))
            memory.after_step(step)
            for index, score in zip(step.episode_envs.tolist(), step.episode_returns.tolist()):
                first.setdefault(index, score)
            obs = step.obs
    finally:
        env.close()
    return list(first.values())


def mean_and_sem(values: list[float]) -> tuple[float, float]:
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((value - mean) ** 2 for value in values) / (len(values) - 1) / len(values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    source, agent = load_run_checkpoint(str(ROOT / WEIGHTS)), Agent.load(ROOT / WEIGHTS)
    scores: dict[str, list[float]] = {"fine-tuning run's collector": [], "voidrl explore's acting": []}
    for seed in args.seeds:
        scores["fine-tuning run's collector"] += training_run_games(seed, source)
        scores["voidrl explore's acting"] += explore_games(seed, agent)
    print(f"first game of each environment, seeds {' '.join(map(str, args.seeds))}, {WEIGHTS}:")
    for path, values in scores.items():
        mean, sem = mean_and_sem(values)
        print(f"  {path}: {mean:.1f} +- {sem:.1f} over {len(values)} games")


if __name__ == "__main__":
    main()
