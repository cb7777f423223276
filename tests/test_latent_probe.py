"""benchmarks/latent_probe.py: the score read from Ms. Pac-Man's RAM, and the novelty correlations of issue 86."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from voidrl.config import TrainConfig
from voidrl.configs.env import EnvConfig
from voidrl.configs.run import RunConfig
from voidrl.training.agent import Agent, build_policy_for
from voidrl.training.exploration import explore_agent

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from latent_probe import decimal_score, novelty_correlations, quantities  # noqa: E402


def test_the_score_is_read_as_packed_bcd_lowest_digits_first():
    ram = np.zeros((2, 128), dtype=np.uint8)
    ram[0, 120:123] = (0x50, 0x12, 0x00)  # 1,250
    ram[1, 120:123] = (0x90, 0x99, 0x01)  # 19,990
    assert decimal_score(ram).tolist() == [1250.0, 19990.0]


def spaces_of(positions: np.ndarray, ghosts: np.ndarray, score: np.ndarray) -> dict[str, np.ndarray]:
    return {"player x": positions[..., :1], "player y": positions[..., 1:], "ghosts": ghosts, "score": score}


def test_a_latent_that_is_her_position_follows_its_novelty_and_not_the_others():
    generator = np.random.default_rng(0)
    steps, envs = 64, 2
    positions = generator.integers(0, 100, (steps, envs, 2)).astype(np.float64)
    ghosts = generator.normal(size=(steps, envs, 8))
    score = generator.normal(size=(steps, envs, 1))
    correlations = novelty_correlations(torch.as_tensor(positions), spaces_of(positions, ghosts, score), window=32, k=3)
    assert correlations["novelty position"] == pytest.approx(1.0)
    assert abs(correlations["novelty ghosts"]) < 0.5 and abs(correlations["novelty score"]) < 0.5


def test_quantities_name_her_position_the_ghosts_and_the_score():
    ram = np.arange(128, dtype=np.uint8)[None, None].repeat(3, 0).repeat(2, 1)
    named = quantities(ram)
    assert named["player x"][0, 0].tolist() == [10.0] and named["player y"][0, 0].tolist() == [16.0]
    assert named["ghosts"][0, 0].tolist() == [6.0, 7.0, 8.0, 9.0, 12.0, 13.0, 14.0, 15.0]
    assert named["score"].shape == (3, 2, 1)


@pytest.mark.slow
def test_explore_agent_shows_every_step_to_an_observer():
    config = TrainConfig("ppo", run=RunConfig(env="ALE/MsPacman-v5"), env=EnvConfig(num_envs=2))
    agent = Agent(config, build_policy_for(config, torch.device("cpu")), {})
    seen = []
    games = explore_agent(agent, 2, 2, 0, deterministic=False, observe=lambda step: seen.append(step.ram.copy()))
    assert len(seen) >= max(game.length for game in games) and seen[0].shape == (2, 128)
