"""The next plug-ins fit without touching the loop, the config or the CLI: a toy reward source written
here, registered, and run, resumed and refused through the command line."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Any

import pytest
import torch

from voidrl.cli import main
from voidrl.io.checkpoint import load_checkpoint
from voidrl.registry import REWARD_SOURCES


@dataclass
class VisitCountConfig:
    """Options of the toy plug-in."""

    bonus_scale: float = 1.0
    """Reward = bonus_scale / sqrt(visits of the state's cell)."""
    cell_size: float = 0.5
    """Width of the grid cells states are counted in."""

    def validate(self) -> None:
        if self.cell_size <= 0:
            raise ValueError(f"cell_size must be positive, got {self.cell_size}")


class VisitCountBonus:
    """Count-based exploration on a grid over vector observations: the reward of a transition is
    bonus_scale / sqrt(n), n the visits of its next state's cell so far (counted at every step)."""

    config_class = VisitCountConfig

    def __init__(self, config: VisitCountConfig, obs_shape: tuple[int, ...], device: Any = "cpu"):
        config.validate()
        self.config, self.counts, self.rewards = config, {}, []
        self.reward_coefs = (1.0, 1.0)

    def on_step(self, transition) -> None:
        cells = torch.floor(transition.next_obs / self.config.cell_size).long().tolist()
        for cell in map(tuple, cells):
            self.counts[cell] = self.counts.get(cell, 0) + 1
        self.rewards.append(torch.tensor([self.config.bonus_scale / self.counts[c] ** 0.5 for c in map(tuple, cells)]))

    def intrinsic_rewards(self, rollout) -> tuple[torch.Tensor, dict[str, float]]:
        rewards, self.rewards = torch.stack(self.rewards), []
        return rewards, {"count/bonus": rewards.mean().item(), "count/cells": float(len(self.counts))}

    def state_dict(self) -> dict[str, Any]:
        return {"cells": [list(cell) for cell in self.counts], "visits": list(self.counts.values())}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.counts = {tuple(cell): visits for cell, visits in zip(state["cells"], state["visits"])}


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(REWARD_SOURCES, "count", VisitCountBonus)


def train(run_dir, *extra):
    return main(["train", "ppo", "--env", "CartPole-v1", "--steps", "1024", "--num-envs", "4", "--num-steps", "64",
                 "--intrinsic", "count", "--torch-threads", "1", "--no-progress", "--run-dir", str(run_dir), *extra])


def test_a_registered_reward_source_trains_logs_checkpoints_and_resumes(registered, tmp_path):
    assert train(tmp_path / "run", "--bonus-scale", "0.5", "--checkpoint-every", "1") == 0
    rows = list(csv.DictReader((tmp_path / "run" / "metrics.csv").open()))
    assert len(rows) == 4 and all(0.0 < float(row["count/bonus"]) <= 0.5 for row in rows)
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert saved["config"]["intrinsic_config"] == {"bonus_scale": 0.5, "cell_size": 0.5}
    assert sum(saved["intrinsic"]["visits"]) == 1024  # every next state counted once
    assert train(tmp_path / "run", "--bonus-scale", "0.5", "--steps", "2048", "--resume") == 0
    assert sum(load_checkpoint(tmp_path / "run" / "checkpoint.pt")["intrinsic"]["visits"]) == 2048


def test_a_registered_sources_options_are_checked_and_refused_without_it(registered, tmp_path, capsys):
    assert train(tmp_path / "a", "--cell-size", "0") == 2
    assert "cell_size must be positive, got 0" in capsys.readouterr().err
    code = main(["train", "ppo", "--env", "CartPole-v1", "--bonus-scale", "2", "--run-dir", str(tmp_path / "b")])
    assert code == 2 and "bonus_scale: count option, used only with intrinsic count" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
