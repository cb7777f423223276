"""Exploration measurements: the Atari RAM twin, Ms. Pac-Man's position addresses, coverage counting, ``voidrl explore``."""

import csv

import numpy as np
import pytest
import torch

from tests.cli_helpers import voidrl
from voidrl.config import TrainConfig
from voidrl.configs.env import EnvConfig
from voidrl.configs.run import RunConfig
from voidrl.envs import make_env
from voidrl.envs.atari import PLAYER_POSITION_RAM
from voidrl.envs.base import Step, VecEnv
from voidrl.training.agent import Agent, build_policy_for
from voidrl.training.exploration import Coverage, measure_exploration, random_actor, summarize_exploration

MS_PACMAN_COLOUR = (210, 164, 74)
"""Ms. Pac-Man's own colour on the emulator's screen (no ghost, wall or pellet has it)."""


def random_steps(env, steps: int, seed: int = 0):
    actions = random_actor(env.single_action_space, seed)
    obs = env.reset(seed)
    for _ in range(steps):
        step = env.step(actions(obs))
        obs = step.obs
        yield step


@pytest.mark.slow
def test_the_ram_twin_plays_the_vector_envs_games_screen_for_screen_through_game_overs():
    env = make_env("ALE/MsPacman-v5", EnvConfig(num_envs=2, episodic_life=False), screens=True, ram=True)
    try:
        compared = games_over = 0
        for step in random_steps(env, 1500):
            for index, emulator in enumerate(env.ram_twin.emulators):
                over = index in step.episode_envs.tolist()
                games_over += over
                if not over:  # after a game over the twin has already started the next game
                    assert np.array_equal(emulator.getScreenRGB(), step.screens[index])
                    assert np.array_equal(emulator.getRAM(), step.ram[index])
                    compared += 1
        assert games_over >= 2 and compared > 2500
    finally:
        env.close()


def test_the_twin_refuses_to_run_out_of_lockstep():
    env = make_env("ALE/MsPacman-v5", EnvConfig(num_envs=1), ram=True)
    try:
        env.reset(0)
        env.ram_twin.emulators[0].act(env.ram_twin.action_set[0])  # one frame more than the vector env's game
        with pytest.raises(RuntimeError, match="left lockstep"):
            env.step(torch.zeros(1, dtype=torch.long))
    finally:
        env.close()


def test_ms_pacmans_ram_position_follows_her_sprite_on_the_screen():
    x_address, y_address = PLAYER_POSITION_RAM["ms_pacman"]
    env = make_env("ALE/MsPacman-v5", EnvConfig(num_envs=2, episodic_life=False), screens=True, ram=True)
    ram_positions, sprite_centres = [], []
    try:
        for step in random_steps(env, 600, seed=3):
            for screen, ram in zip(step.screens, step.ram):
                rows, columns = np.nonzero((screen == MS_PACMAN_COLOUR).all(-1))
                if len(rows) >= 20:  # whole on the screen, not flickering or half through a side tunnel
                    ram_positions.append((ram[x_address], ram[y_address]))
                    sprite_centres.append((columns.mean(), rows.mean()))
    finally:
        env.close()
    ram_positions, sprite_centres = np.array(ram_positions, float), np.array(sprite_centres)
    assert len(ram_positions) > 500 and len(np.unique(ram_positions, axis=0)) > 50  # she moved around the maze
    offsets = sprite_centres - ram_positions
    # x on the screen is RAM x - 8, y is RAM y + 5; the sprite, drawn a frame behind or ahead of the RAM as she moves
    # about a pixel a frame, and its centre, which moves as her mouth opens, stray by up to 3.5 pixels (of 160 x 210)
    assert np.abs(np.median(offsets, axis=0) - [-8.4, 5.4]).max() < 1.0
    assert np.abs(offsets - np.median(offsets, axis=0)).max() < 4.0


HERO_BLUE = (84, 138, 210)
"""The H.E.R.O.'s suit: the playfield's only pixels of that colour (the lives shown below it are left out)."""
HERO_PLAYFIELD_ROWS = 140


def test_the_heros_ram_position_follows_his_sprite_and_counts_rooms_apart():
    x_address, y_address, room_address = PLAYER_POSITION_RAM["hero"]
    env = make_env("ALE/Hero-v5", EnvConfig(num_envs=2, episodic_life=False), screens=True, ram=True)
    ram_positions, sprite_centres, rooms = [], [], set()
    try:
        for step in random_steps(env, 600, seed=3):
            for screen, ram in zip(step.screens, step.ram):
                rows, columns = np.nonzero((screen[:HERO_PLAYFIELD_ROWS] == HERO_BLUE).all(-1))
                if len(rows) >= 4:
                    ram_positions.append((ram[x_address], ram[y_address]))
                    sprite_centres.append((columns.mean(), rows.mean()))
                    rooms.add(int(ram[room_address]))
    finally:
        env.close()
    ram_positions, sprite_centres = np.array(ram_positions, float), np.array(sprite_centres)
    assert len(ram_positions) > 1000 and len(np.unique(ram_positions, axis=0)) > 100 and rooms == {0, 1}  # he fell a room down
    # x on the screen is RAM x + 3.5 and y is 145 - RAM y; a frame or two as he enters a room draw him where he was
    offsets = np.stack([sprite_centres[:, 0] - ram_positions[:, 0], sprite_centres[:, 1] + ram_positions[:, 1]], 1)
    assert np.abs(np.median(offsets, axis=0) - [3.5, 145.2]).max() < 1.0
    assert (np.abs(offsets - np.median(offsets, axis=0)).max(1) < 1.5).mean() > 0.99


class ScriptedRam(VecEnv):
    """One environment whose RAM shows a scripted position each step; an episode of 4 steps, then another."""

    num_envs = 1

    def __init__(self, positions):
        self.positions = positions
        self.t = 0

    def reset(self, seed):
        return torch.zeros(1, 1)

    def step(self, actions):
        ram = np.zeros((1, 128), dtype=np.uint8)
        ram[0, 10], ram[0, 16] = self.positions[self.t]
        self.t += 1
        over = self.t % 4 == 0
        return Step(obs=torch.zeros(1, 1), reward=torch.ones(1), terminated=torch.tensor([over]), truncated=torch.tensor([False]),
                    final_obs=torch.zeros(1, 1), episode_returns=torch.tensor([float(self.t)] if over else []),
                    episode_lengths=torch.tensor([4] if over else [], dtype=torch.long),
                    episode_envs=torch.tensor([0] if over else [], dtype=torch.long), ram=ram)


def test_coverage_counts_distinct_positions_per_game_and_starts_anew_at_each():
    # game 1 visits (1,1), (1,2), (1,1) again and (2,1): 3 positions; game 2 stands still at (1,1): 1
    positions = [(1, 1), (1, 2), (1, 1), (2, 1), (1, 1), (1, 1), (1, 1), (1, 1)]
    results = measure_exploration(ScriptedRam(positions), lambda obs: torch.zeros(1), episodes=2, seed=0,
                                  position_addresses=PLAYER_POSITION_RAM["ms_pacman"])
    assert [(r.score, r.length, r.positions) for r in results] == [(4.0, 4, 3), (8.0, 4, 1)]
    summary = summarize_exploration(results)
    assert summary["positions"] == 2.0 and summary["positions_sem"] == pytest.approx(1.0)  # std of (3, 1) is sqrt 2, / sqrt 2


def test_coverage_counts_the_same_place_in_two_rooms_twice():
    coverage = Coverage(1, (0, 1, 2))
    for room in (0, 1, 1):
        coverage.add(np.array([[5, 5, room]], dtype=np.uint8))
    assert coverage.close(0) == 2


def test_coverage_keeps_the_environments_apart():
    coverage = Coverage(2, (0, 1))
    coverage.add(np.array([[1, 1], [1, 1]], dtype=np.uint8))
    coverage.add(np.array([[1, 2], [1, 1]], dtype=np.uint8))
    assert coverage.close(1) == 1 and coverage.close(0) == 2 and coverage.close(0) == 0


@pytest.mark.slow
def test_voidrl_explore_measures_a_random_policy_and_a_checkpoint_on_the_same_games(tmp_path):
    config = TrainConfig("ppo", run=RunConfig(env="ALE/MsPacman-v5"), env=EnvConfig(num_envs=2))
    Agent(config, build_policy_for(config, torch.device("cpu")), {}).save(tmp_path / "agent.pt")
    outputs, printed = {}, {}
    for name, source in (("random", ["--random", "ALE/MsPacman-v5"]), ("random-again", ["--random", "ALE/MsPacman-v5"]),
                         ("agent", ["--checkpoint", "agent.pt"]), ("agent-again", ["--checkpoint", "agent.pt", "--torch-threads", "1"])):
        result = voidrl("explore", *source, "--episodes", "2", "--num-envs", "2", "--out", f"{name}.csv", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "distinct positions" in result.stdout
        printed[name] = result.stdout.replace(f"{name}.csv", "")
        with open(tmp_path / f"{name}.csv") as handle:
            outputs[name] = list(csv.DictReader(handle))
    assert len(outputs["random"]) == 2 and all(int(row["positions"]) > 10 for row in outputs["random"])
    assert outputs["random"] == outputs["random-again"]  # same seed, same games
    assert len(outputs["agent"]) == 2 and all(int(row["length"]) > 0 for row in outputs["agent"])
    # the checkpoint's sampled actions are drawn from a generator the same --seed seeds: the same numbers again, on one thread too
    assert outputs["agent"] == outputs["agent-again"] and printed["agent"] == printed["agent-again"]


@pytest.mark.slow
def test_voidrl_explore_at_a_small_temperature_plays_the_greedy_games(tmp_path):
    config = TrainConfig("ppo", run=RunConfig(env="ALE/MsPacman-v5"), env=EnvConfig(num_envs=2))
    policy = build_policy_for(config, torch.device("cpu"))
    # logits far apart (a fresh head's are near 0), from a seeded generator: the global one's state depends on which
    # tests ran before in this worker, and at temperature 1 such a head can play its greedy games
    torch.nn.init.normal_(policy.policy_head.weight, generator=torch.Generator().manual_seed(0))
    Agent(config, policy, {}).save(tmp_path / "agent.pt")
    games, printed = {}, {}
    for name, options in (("greedy", ["--greedy"]), ("cold", ["--temperature", "1e-6"]),
                          ("hot", ["--temperature", "1000"])):
        result = voidrl("explore", "--checkpoint", "agent.pt", *options, "--episodes", "2", "--num-envs", "2",
                        "--out", f"{name}.csv", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        printed[name] = result.stdout
        with open(tmp_path / f"{name}.csv") as handle:
            games[name] = list(csv.DictReader(handle))
    assert "sampled (temperature 1e-06) actions of agent.pt" in printed["cold"]
    assert games["cold"] == games["greedy"] != games["hot"]


@pytest.mark.parametrize("args,message", [
    (["--checkpoint", "agent.pt", "--temperature", "0"], "--temperature must be a positive number, got 0.0"),
    (["--checkpoint", "agent.pt", "--greedy", "--temperature", "0.5"], "--greedy play is the same at any temperature"),
    (["--random", "ALE/MsPacman-v5", "--temperature", "0.5"], "a uniform-random policy is the same at any temperature"),
    (["--random", "CartPole-v1"], "measured on Atari games"),
    (["--random", "ALE/NoSuchGame-v5"], "NoSuchGame"),
    (["--random", "ALE/MsPacman-v5", "--episodes", "0"], "--episodes must be a positive integer"),
    (["--checkpoint", "agent.pt", "--torch-threads", "0"], "--torch-threads must be from 1 to"),
    (["--random", "ALE/MsPacman-v5", "--seed", "2147483648"], "argument --seed: the seed must be from 0 to 2147483647"),
    (["--random", "ALE/MsPacman-v5", "--out", "."], "is a directory"),
    (["--checkpoint", "missing.pt"], "missing.pt"),
    ([], "one of the arguments --checkpoint --random is required"),
])
def test_voidrl_explore_refuses_bad_input_in_one_line(tmp_path, args, message):
    result = voidrl("explore", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
