"""How far a policy explores a game whose score it never saw: the score, the episode length and the coverage of
each whole game, for a trained agent or a uniform-random policy on the same seeds and settings.

Coverage is read from the emulator's RAM (``Step.ram``): the distinct positions of the player, where the game's
addresses are known (``PLAYER_POSITION_RAM``). Distinct RAM contents are no measure of it: the RAM holds frame
counters, so every step's differs (in Ms. Pac-Man their count is the episode length).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from dataclasses import astuple, dataclass, fields
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from voidrl.configs.env import EnvConfig
from voidrl.envs import make_env
from voidrl.envs.atari import PLAYER_POSITION_RAM
from voidrl.envs.roms import rom_name
from voidrl.envs.base import Step, VecEnv
from voidrl.envs.suites import suite_of
from voidrl.registry import ALGORITHMS
from voidrl.training.agent import Agent


@dataclass(frozen=True)
class EpisodeExploration:
    """One whole game."""

    env: int
    """The sub-environment it ran in."""
    score: float
    """The game's raw score (the task return the policy never trained on, for a reward-free one)."""
    length: int
    """Agent steps (each 4 emulator frames)."""
    positions: int | None
    """Distinct positions of the player ((x, y), or (x, y, room) where the game has rooms); None where the game's RAM
    addresses are not known."""


EXPLORATION_COLUMNS = [field.name for field in fields(EpisodeExploration)]


class Coverage:
    """The player positions each sub-environment's current game has visited."""

    def __init__(self, num_envs: int, position_addresses: tuple[int, ...]):
        self.position_addresses = list(position_addresses)
        self.positions: list[set[tuple[int, ...]]] = [set() for _ in range(num_envs)]

    def add(self, ram: np.ndarray) -> None:
        """Record the RAM ``[N, 128]`` of one vector step."""
        for index, position in enumerate(ram[:, self.position_addresses].tolist()):
            self.positions[index].add(tuple(position))

    def close(self, index: int) -> int:
        """Sub-environment ``index``'s game ended: its distinct positions; the next game counts anew."""
        count = len(self.positions[index])
        self.positions[index] = set()
        return count


def measure_exploration(env: VecEnv, act: Callable[[torch.Tensor], torch.Tensor], episodes: int, seed: int,
                        position_addresses: tuple[int, ...] | None, after_step: Callable[[Step], None] | None = None,
                        ) -> list[EpisodeExploration]:
    """Play ``episodes`` whole games of ``env`` (made with ``ram``, whole-game episodes), split evenly over its
    sub-environments as ``Agent.evaluate`` does, choosing actions ``act(obs [N, ...]) -> [N]``.

    Sub-environment i is seeded ``seed + i``. ``after_step`` sees every step (the memory of the policy acting).
    """
    quota = [episodes // env.num_envs + (i < episodes % env.num_envs) for i in range(env.num_envs)]
    coverage = None if position_addresses is None else Coverage(env.num_envs, position_addresses)
    results: list[EpisodeExploration] = []
    obs = env.reset(seed)
    while len(results) < episodes:
        step = env.step(act(obs))
        if after_step is not None:
            after_step(step)
        if coverage is not None:
            coverage.add(step.ram)
        for index, score, length in zip(step.episode_envs.tolist(), step.episode_returns.tolist(), step.episode_lengths.tolist()):
            positions = None if coverage is None else coverage.close(index)
            if quota[index] > 0:
                quota[index] -= 1
                results.append(EpisodeExploration(index, score, length, positions))
        obs = step.obs
    return results


def random_actor(action_space: gym.spaces.Discrete, seed: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """A uniform-random policy over ``action_space``, its draws seeded."""
    generator = torch.Generator().manual_seed(seed)
    return lambda obs: torch.randint(int(action_space.n), (obs.shape[0],), generator=generator)


def explore_random(env_id: str, episodes: int, num_envs: int, seed: int, max_episode_steps: int | None = None) -> list[EpisodeExploration]:
    """``measure_exploration`` of a uniform-random policy on ``env_id`` with its default settings (whole games)."""
    check_atari(env_id)
    config = EnvConfig(num_envs=min(num_envs, episodes), episodic_life=False, max_episode_steps=max_episode_steps)
    env = make_env(env_id, config, ram=True)
    try:
        return measure_exploration(env, random_actor(env.single_action_space, seed), episodes, seed, position_addresses(env_id))
    finally:
        env.close()


def explore_agent(agent: Agent, episodes: int, num_envs: int | None, seed: int, deterministic: bool,
                  observe: Callable[[Step], None] | None = None) -> list[EpisodeExploration]:
    """``measure_exploration`` of a trained ``agent`` on its own environment's settings (whole games); sampled
    actions unless ``deterministic`` (a Q-network agent acts greedily either way), drawn from a generator seeded
    with ``seed``, as ``random_actor``'s, so that the same call gives the same games. ``observe`` sees every step
    after the policy's memory has."""
    check_atari(agent.config.run.env)
    deterministic = deterministic or ALGORITHMS.config_class(agent.config.algo).acts_greedily
    num_envs = min(num_envs or agent.config.env.num_envs, episodes)
    env = agent.make_env(num_envs, ram=True)
    try:
        memory = agent.memory(num_envs, deterministic, agent.evaluation_member(None), torch.Generator().manual_seed(seed))
        after_step = memory.after_step if observe is None else lambda step: (memory.after_step(step), observe(step))
        return measure_exploration(env, lambda obs: agent.act_with(memory, obs), episodes, seed,
                                   position_addresses(agent.config.run.env), after_step)
    finally:
        env.close()


def check_atari(env_id: str) -> None:
    if suite_of(env_id) != "atari":
        raise ValueError(f"exploration is measured on Atari games, from the emulator's RAM; {env_id} is a {suite_of(env_id)} environment")


def position_addresses(env_id: str) -> tuple[int, ...] | None:
    return PLAYER_POSITION_RAM.get(rom_name(env_id))


def summarize_exploration(results: list[EpisodeExploration]) -> dict[str, float]:
    """The mean and the standard error of the mean of each measure over the games."""
    summary: dict[str, float] = {"episodes": float(len(results))}
    for name in ("score", "length", "positions"):
        values = [float(getattr(result, name)) for result in results if getattr(result, name) is not None]
        if not values:
            continue
        mean = sum(values) / len(values)
        variance = sum((value - mean) ** 2 for value in values) / max(len(values) - 1, 1)
        summary[name] = mean
        summary[f"{name}_sem"] = math.sqrt(variance / len(values))
    return summary


def write_exploration(path: Path, results: list[EpisodeExploration]) -> None:
    """One row per game, in the order the games ended."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(EXPLORATION_COLUMNS)
        writer.writerows(["" if value is None else value for value in astuple(result)] for result in results)
