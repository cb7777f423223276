"""Periodic greedy evaluation during training: ``evaluations.csv`` and the best weights so far (``best.pt``)."""

from __future__ import annotations

import contextlib
import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch

from voidrl.config import TrainConfig
from voidrl.io.logger import truncate_csv
from voidrl.io.video import EpisodeScreens, Video
from voidrl.training.agent import Agent, build_policy_for, summarize
from voidrl.seeding import rng_state, set_rng_state

EVALUATIONS_NAME = "evaluations.csv"
EVALUATION_COLUMNS = ["step", "return_mean", "return_std", "episodes"]
BEST_NAME = "best.pt"
"""The agent of the best evaluation so far, loadable with ``Agent.load`` (``voidrl eval --checkpoint``)."""
EVALUATION_STREAM = 0xE7A1
"""Third word of the evaluation seed's entropy, separating it from every other seed derived from the run seed."""


def evaluation_seed(seed: int, step: int) -> int:
    """Reset seed of the evaluation at ``step``: reproducible, and hashed from ``(seed, step)`` rather than
    training's ``seed + 1_000_003 * update``, so evaluation episodes do not replay training ones."""
    return int(np.random.SeedSequence([seed, step, EVALUATION_STREAM]).generate_state(1)[0]) % 2**31


@contextlib.contextmanager
def training_rng_kept():
    """Leaves the python, numpy and torch generators as they were before the block."""
    state = rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


class PeriodicEvaluator:
    """Greedy whole-episode evaluation every ``config.run.eval_every`` environment steps, and at the end.

    Each evaluation runs ``config.run.eval_episodes`` episodes on a fresh environment with the training
    normalisers frozen (``Agent.evaluate``), appends ``step,return_mean,return_std,episodes`` to
    ``evaluations.csv``, and when its mean beats every earlier one writes the agent to ``best.pt``; with
    ``config.run.eval_video`` one more episode is recorded (``record``).
    The random generators of training are left as they were, so evaluating does not change training.
    """

    def __init__(self, config: TrainConfig, run_dir: Path):
        self.config = config
        self.every = config.run.eval_every
        self.episodes = config.run.eval_episodes
        self.records_video = config.run.eval_video
        self.path = run_dir / EVALUATIONS_NAME
        self.best_path = run_dir / BEST_NAME
        self.last_step = 0
        self.best_return = -math.inf
        self.best: dict[str, Any] | None = None
        """Policy weights, normaliser statistics and step of the best evaluation (copies, on the cpu)."""

    def resume_at(self, step: int) -> None:
        """Continue a run from a checkpoint at ``step`` (0: start a killed run over): drop the rows after it and
        make ``best.pt`` the best agent of the state loaded (after a kill it may hold a later evaluation's)."""
        self.last_step = step
        truncate_csv(self.path, step, EVALUATION_COLUMNS)
        if self.best is None:
            self.best_path.unlink(missing_ok=True)
            return
        policy = build_policy_for(self.config, torch.device("cpu"))
        policy.load_state_dict(self.best["policy"])
        Agent(self.config, policy, self.best["env"], self.best["step"]).save(self.best_path)

    def due(self, step: int, final: bool) -> bool:
        """Whether training at ``step`` crossed a multiple of ``eval_every`` since the last evaluation, or ends."""
        return final or step // self.every > self.last_step // self.every

    def evaluate(self, agent: Agent) -> dict[str, float]:
        """Evaluate ``agent`` (at step ``agent.step``); returns the ``eval/...`` metrics to log at that step."""
        with training_rng_kept():
            returns = agent.evaluate(self.episodes, deterministic=True, seed=evaluation_seed(self.config.run.seed, agent.step))
        mean, std = summarize(returns)
        new_file = not self.path.exists() or self.path.stat().st_size == 0
        with self.path.open("a", newline="") as handle:
            writer = csv.writer(handle)
            if new_file:
                writer.writerow(EVALUATION_COLUMNS)
            writer.writerow([agent.step, mean, std, len(returns)])
        self.last_step = agent.step
        if mean > self.best_return:
            self.best_return = mean
            self.best = {
                "policy": {name: value.detach().to("cpu", copy=True) for name, value in agent.policy.state_dict().items()},
                "env": agent.env_state,
                "step": agent.step,
            }
            agent.save(self.best_path)
        return {"eval/return_mean": mean, "eval/return_std": std}

    def record(self, agent: Agent) -> Video:
        """One more greedy episode of ``agent``, in one environment seeded as the evaluation's first, with the
        screens its renderer drew."""
        recorder = EpisodeScreens()
        with training_rng_kept():
            agent.evaluate(1, deterministic=True, seed=evaluation_seed(self.config.run.seed, agent.step), recorder=recorder)
        return recorder.videos[0]

    def state_dict(self) -> dict[str, Any]:
        return {"best_return": self.best_return, **({} if self.best is None else {"best": self.best})}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best_return = state["best_return"]
        self.best = state.get("best")
