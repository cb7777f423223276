"""A trained policy with what it needs to act: its config and normaliser statistics."""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from typing import Any

import torch

from voidrl.algos import ALGORITHMS
from voidrl.algos.roles import Memory
from voidrl.config import TrainConfig
from voidrl.envs import VecEnv, make_env, set_training
from voidrl.io.checkpoint import CheckpointError, load_run_checkpoint, save_checkpoint
from voidrl.io.video import EpisodeRecorder
from voidrl.nets.actor_critic import ActorCritic


def resolve_device(name: str) -> torch.device:
    """``auto`` -> cuda when available; an unavailable or malformed device raises ValueError."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ValueError(f"device must be cpu, cuda, cuda:N or auto, got {name!r}") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} is not available here (torch.cuda.is_available() is False)")
    return device


class Agent:
    """Acts on observations of the environments returned by ``make_env``.

    ``best_member``: for a policy family trained with bandits (Agent57), the member j whose training
    episodes in the bandits' windows brought the highest mean task return; otherwise None.
    """

    def __init__(self, config: TrainConfig, policy: ActorCritic, env_state: dict[str, Any], step: int = 0,
                 best_member: int | None = None):
        self.config = config
        self.policy = policy
        self.env_state = env_state
        self.step = step
        self.best_member = best_member

    @classmethod
    def load(cls, path: str | os.PathLike, device: str = "cpu") -> Agent:
        """From a training checkpoint or a file written by ``save``."""
        payload = load_run_checkpoint(path)
        try:
            config = TrainConfig.from_dict(payload["config"])
            policy = build_policy_for(config, resolve_device(device))
            policy.load_state_dict(payload["algorithm"]["policy"])
            best_member = payload["algorithm"].get("best_member")  # a file written by save()
            if best_member is None:
                best_member = ALGORITHMS[config.algo].best_member(payload["algorithm"], policy)
        except (KeyError, TypeError, RuntimeError, AttributeError) as error:
            raise CheckpointError(f"checkpoint {str(path)!r} does not match its config ({type(error).__name__}: {error})") from None
        agent = cls(config, policy, payload["env"], payload.get("step", 0), best_member)
        if config.env.vision is not None:
            agent.make_env(1).close()  # the vision file must exist and be the run's own: say so now, not mid-evaluation
        return agent

    def save(self, path: str | os.PathLike) -> None:
        save_checkpoint(path, {
            "config": self.config.to_dict(),
            "algorithm": {"policy": self.policy.state_dict(), **({} if self.best_member is None else {"best_member": self.best_member})},
            "env": self.env_state,
            "step": self.step,
        })

    def make_env(self, num_envs: int | None = None, evaluation: bool = True, screens: bool = False) -> VecEnv:
        """The training environment's twin, normalisers loaded and frozen.

        With ``evaluation`` an Atari episode is a whole game (no life-loss episodes); with ``screens`` its steps
        carry what the environments' own renderers show (``Step.screens``).
        """
        env_config = dataclasses.replace(self.config.env, num_envs=num_envs or self.config.env.num_envs)
        if evaluation:
            env_config.episodic_life = False
        env = make_env(self.config.run.env, env_config, gamma=self.config.algo_config.gamma,
                       device=next(self.policy.parameters()).device, screens=screens)
        env.load_state_dict(self.env_state)
        set_training(env, False)
        return env

    def act(self, obs: torch.Tensor, deterministic: bool = True) -> torch.Tensor:
        device = next(self.policy.parameters()).device
        return self.policy.act(torch.as_tensor(obs).to(device), deterministic).cpu()

    def act_with(self, memory: Memory, obs: torch.Tensor) -> torch.Tensor:
        """A recurrent policy's actions, its state kept in ``memory``."""
        return memory.act(torch.as_tensor(obs).to(next(self.policy.parameters()).device)).cpu()

    def evaluation_member(self, choice: str | None) -> int | None:
        """The family member j that ``choice`` names: an integer, ``best`` (``best_member``), or None for
        ``best_member`` where there is one and 0 otherwise; None for an agent without a family."""
        family = ALGORITHMS[self.config.algo].family_size(self.policy)
        if family is None:
            if choice is not None:
                raise ValueError(f"--member applies to ngu and agent57, not to {self.config.algo}")
            return None
        if choice is None:
            return 0 if self.best_member is None else self.best_member
        if choice == "best":
            if self.best_member is None:
                raise ValueError(f"--member best needs the bandits of an agent57 run; this {self.config.algo} checkpoint "
                                 f"has none (give j in 0..{family - 1})")
            return self.best_member
        if not choice.isdigit() or int(choice) >= family:
            raise ValueError(f"--member must be best or an integer in 0..{family - 1}, got {choice!r}")
        return int(choice)

    def check_evaluation(self, deterministic: bool, member: int | None) -> None:
        """ValueError unless this agent can evaluate so: Q-network agents act greedily, and only a policy
        family has members."""
        algo = ALGORITHMS[self.config.algo]
        if not deterministic and algo.acts_greedily:
            raise ValueError(f"--sampled applies to policy-gradient agents; {self.config.algo} acts greedily on its Q-values")
        if member is not None and algo.family_size(self.policy) is None:
            raise ValueError(f"--member applies to ngu and agent57, not to {self.config.algo}")

    def evaluate(self, episodes: int = 10, deterministic: bool = True, num_envs: int | None = None, seed: int = 12345,
                 member: int | None = None, recorder: EpisodeRecorder | None = None) -> list[float]:
        """Returns of ``episodes`` whole episodes, split evenly over the environments.

        Each environment contributes a fixed quota, so short episodes are not over-represented.
        A Q-network agent acts greedily (``deterministic`` must be True); a policy family (NGU, Agent57)
        follows member j = ``member`` (default 0, beta = 0). With a ``recorder`` the episodes are played one
        after another in one environment (``num_envs`` None or 1), whose screen after each step goes to it: an
        episode of T steps is T screens.
        """
        if episodes < 1:
            raise ValueError(f"episodes must be a positive integer, got {episodes}")
        if recorder is not None and num_envs not in (None, 1):
            raise ValueError(f"a recorded evaluation plays one environment; num_envs must be 1 or None, got {num_envs}")
        self.check_evaluation(deterministic, member)
        recurrent = hasattr(self.policy, "initial_state")
        num_envs = 1 if recorder is not None else min(num_envs or self.config.env.num_envs, episodes)
        quota = [episodes // num_envs + (i < episodes % num_envs) for i in range(num_envs)]
        env = self.make_env(num_envs, screens=recorder is not None)
        if recorder is not None:
            recorder.start(env.screen_fps)
        returns: list[float] = []
        memory = None
        if recurrent:
            act = functools.partial(self.policy.act, member=member) if member is not None else self.policy.act
            if isinstance(self.policy, ActorCritic):  # a recurrent actor-critic: greedy or sampled
                act = functools.partial(act, deterministic=deterministic)
            memory = Memory(act, self.policy.initial_state(num_envs), num_envs)
        try:
            obs = env.reset(seed)
            while len(returns) < episodes:
                step = env.step(self.act(obs, deterministic) if memory is None else self.act_with(memory, obs))
                if memory is not None:
                    memory.after_step(step)
                if recorder is not None:
                    recorder.add(step.screens[0])
                for env_index, episode_return in zip(step.episode_envs.tolist(), step.episode_returns.tolist()):
                    if quota[env_index] > 0:
                        quota[env_index] -= 1
                        returns.append(episode_return)
                        if recorder is not None:
                            recorder.end(episode_return)
                obs = step.obs
        finally:
            env.close()
        return returns


def build_policy_for(config: TrainConfig, device: torch.device) -> ActorCritic:
    """The untrained policy network a config describes (shape from a throwaway 1-env instance)."""
    probe = make_env(config.run.env, dataclasses.replace(config.env, num_envs=1, normalize_observation=False))
    try:
        obs_shape, action_space = probe.single_observation_space.shape, probe.single_action_space
    finally:
        probe.close()
    return ALGORITHMS[config.algo].make_policy(config.algo_config, obs_shape, action_space, device)


def summarize(returns: list[float]) -> tuple[float, float]:
    mean = sum(returns) / len(returns)
    std = math.sqrt(sum((r - mean) ** 2 for r in returns) / len(returns))
    return mean, std
