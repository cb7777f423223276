"""``voidrl check-env ID``: what a run on an environment will meet, checked before it starts.

gymnasium's own checker (``gymnasium.utils.env_checker.check_env``: the API, seeding, spaces, determinism of reset) runs
first; voidrl then steps the environments as a run builds them (``make_env``, with the checks every run of the
generic suite makes at each step: ``CheckedSteps``) and says what it will build for them: the observation the agent
sees, the network ``--network auto`` picks, and which algorithms and reward plug-ins can act there.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import gymnasium as gym
import numpy as np
import torch
from gymnasium.utils.env_checker import check_env

from voidrl.configs.env import EnvConfig
from voidrl.envs.factory import make_env
from voidrl.envs.suites import registered_spec, suite_of
from voidrl.intrinsic.base import build_reward_source
from voidrl.nets.bodies import auto_network
from voidrl.registry import ALGORITHMS, REWARD_SOURCES


ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
"""gymnasium colours its warnings for a terminal."""


@dataclass
class EnvReport:
    """What ``check_environment`` found; ``lines`` says it for a person."""

    env_id: str
    suite: str
    passed: bool = True
    lines: list[str] = field(default_factory=list)
    applicable: list[str] = field(default_factory=list)
    """The algorithms and reward plug-ins that can act on the environment's spaces."""

    def say(self, line: str) -> None:
        self.lines.append(line)

    def fail(self, line: str) -> None:
        self.passed = False
        self.lines.append(f"FAILED: {line}")


def gymnasium_checks(env_id: str, report: EnvReport) -> None:
    """gymnasium's checker on one environment of ``env_id`` (its warnings reported, not raised)."""
    spec = registered_spec(env_id)
    if spec is None:  # an Atari game named by its ROM: built by ALE's vector environment, not by gymnasium
        report.say("gymnasium's checker: not run (an Atari game built by ALE's own vector environment)")
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            env = gym.make(spec, disable_env_checker=True)
        except Exception as error:
            report.fail(f"gymnasium.make: {type(error).__name__}: {error}")
            return
        try:
            check_env(env.unwrapped, skip_render_check=True)
        except Exception as error:
            report.fail(f"gymnasium's checker: {type(error).__name__}: {error}")
        else:
            report.say("gymnasium's checker: passed")
        finally:
            env.close()
    for warning in sorted({ANSI_COLOUR.sub("", str(w.message)).strip() for w in caught if issubclass(w.category, UserWarning)}):
        report.say(f"  warning: {warning}")


def stepped_checks(env_id: str, steps: int, seed: int, report: EnvReport) -> tuple[gym.Space, gym.Space] | None:
    """Two environments as a run builds them, stepped ``steps`` times with uniform random actions; their spaces as the
    agent sees them, or None where they cannot be built or stepped."""
    try:
        env = make_env(env_id, EnvConfig(num_envs=2))
    except Exception as error:
        report.fail(f"building the run's environments: {type(error).__name__}: {error}")
        return None
    spaces = env.single_observation_space, env.single_action_space
    rewards, episodes = [], 0
    try:
        env.reset(seed)
        env.single_action_space.seed(seed)
        for _ in range(steps):
            actions = np.stack([env.single_action_space.sample() for _ in range(env.num_envs)])
            step = env.step(torch.as_tensor(actions))
            rewards.append(step.reward)
            episodes += len(step.episode_returns)
    except Exception as error:
        report.fail(f"stepping: {error}")
        return None
    finally:
        env.close()
    rewards = torch.cat(rewards)
    report.say(f"voidrl's checks: passed ({env.num_envs} environments x {steps} random steps, {episodes} episodes ended; "
               f"rewards in [{rewards.min().item():.4g}, {rewards.max().item():.4g}], observations in their space and finite)")
    return spaces


def applicable_parts(obs_space: gym.Space, action_space: gym.Space, report: EnvReport) -> None:
    """Which algorithms and reward plug-ins can be built for these spaces (each built once, its refusal reported)."""
    obs_shape = obs_space.shape
    refused = []
    for name in sorted(ALGORITHMS):
        try:
            ALGORITHMS[name](ALGORITHMS.config_class(name)(), obs_shape, action_space, "cpu")
        except ValueError as error:
            refused.append(f"{name} ({error})")
        else:
            report.applicable.append(name)
    for name in sorted(REWARD_SOURCES):
        try:
            build_reward_source(REWARD_SOURCES[name], REWARD_SOURCES.config_class(name)(), obs_shape, "cpu", action_space)
        except ValueError as error:
            refused.append(f"--intrinsic {name} ({error})")
        else:
            report.applicable.append(f"--intrinsic {name}")
    report.say(f"can train here: {', '.join(report.applicable) or 'nothing'}")
    for line in refused:
        report.say(f"  not here: {line}")


def check_environment(env_id: str, steps: int = 200, seed: int = 0) -> EnvReport:
    """Every check of ``voidrl check-env``; an ``UnknownEnvironment`` for an id that names none."""
    report = EnvReport(env_id, suite_of(env_id))
    report.say(f"{env_id}: suite {report.suite}")
    gymnasium_checks(env_id, report)
    spaces = stepped_checks(env_id, steps, seed, report)
    if spaces is None:
        return report
    obs_space, action_space = spaces
    report.say(f"the agent sees: observations {obs_space}; actions {action_space}")
    try:
        network = auto_network(obs_space.shape)
        report.say(f"--network auto: {obs_space.shape.describe() if network == 'multi-input' else network}")
    except ValueError as error:
        report.fail(str(error))
        return report
    applicable_parts(obs_space, action_space, report)
    return report
