"""A trained policy with what it needs to act: its config and normaliser statistics."""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from pathlib import Path
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
import torch

from voidrl.algos.algorithm import PolicyFamily
from voidrl.config import TrainConfig
from voidrl.envs import VecEnv, make_env, observation_normalizer, set_training
from voidrl.envs.base import actions_to_numpy
from voidrl.envs.gym_backend import UserSpaces
from voidrl.envs.suites import GENERIC_SUITE, python_env_id, suite_of
from voidrl.envs.wrappers import NormalizeObservation
from voidrl.io.checkpoint import CheckpointError, load_run_checkpoint, save_checkpoint
from voidrl.io.run_dir import check_writable_dir
from voidrl.io.video import EpisodeRecorder
from voidrl.nets.actor_critic import ActorCritic
from voidrl.registry import ALGORITHMS
from voidrl.rollout.memory import Memory


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


class PolicyInterface(NamedTuple):
    """What a policy is given and gives back in its run's environments."""

    observation_space: gym.Space
    """One environment's observations, before observation normalisation."""
    action_space: gym.Space
    normalizer: NormalizeObservation | None
    """The run's observation normaliser, its statistics frozen; None where the run did not normalise observations."""
    user_spaces: UserSpaces | None
    """For an environment of the generic suite: how its own observations and actions map to the policy's."""


class Agent:
    """Acts on observations of the environments returned by ``make_env`` (``act``, ``act_with``), or on raw
    observations, one or a batch (``predict``).

    ``best_member``: for a policy family trained with bandits (Agent57), the member j whose training
    episodes in the bandits' windows brought the highest mean task return; otherwise None.

    Sampled actions (``deterministic=False``) never draw from torch's global generator: ``evaluate`` draws from a
    generator of its own seeded with its ``seed``, ``predict``, ``act`` and ``memory`` from ``action_generator``.
    """

    def __init__(self, config: TrainConfig, policy: ActorCritic, env_state: dict[str, Any], step: int = 0,
                 best_member: int | None = None):
        self.config = config
        self.policy = policy
        self.env_state = env_state
        self.step = step
        self.best_member = best_member
        self.action_generator = torch.Generator().manual_seed(config.run.seed)
        """The CPU generator that ``predict``, ``act`` and ``memory`` draw sampled actions from, its stream going on
        from call to call: seeded with the run's seed (``config.run.seed``) when the agent is made or loaded, so a
        loaded agent's sampled actions repeat; ``set_random_seed`` reseeds it."""

    def set_random_seed(self, seed: int) -> None:
        """Reseed ``action_generator``, as Stable-Baselines3's ``set_random_seed`` seeds what its ``predict`` samples
        from: the sampled actions of ``predict``, ``act`` and ``memory`` that follow repeat for the same ``seed`` and the
        same observations (torch's global generator is left alone)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        self.action_generator.manual_seed(int(seed))

    @classmethod
    def load(cls, path: str | os.PathLike, device: str = "cpu", env: Any = None) -> Agent:
        """From a training checkpoint or a file written by ``save``; ``env``: the environment class or function of a run
        on one given from Python, where this process cannot import it by the name the run kept."""
        payload = load_run_checkpoint(path)
        mismatch = (KeyError, TypeError, RuntimeError, AttributeError)
        try:
            config = TrainConfig.from_dict(payload["config"])
        except mismatch as error:
            raise CheckpointError(f"checkpoint {str(path)!r} holds no readable config ({type(error).__name__}: {error})") from None
        if env is not None:
            python_env_id(env, config.run.env)
        policy = build_policy_for(config, resolve_device(device))  # the environment's own errors (MUJOCO_GL...) say what is wrong
        try:
            policy.load_state_dict(payload["algorithm"]["policy"])
            best_member = payload["algorithm"].get("best_member")  # a file written by save()
            if best_member is None and issubclass(algo := ALGORITHMS[config.algo], PolicyFamily):
                best_member = algo.best_member(payload["algorithm"], policy)
        except mismatch as error:
            raise CheckpointError(f"checkpoint {str(path)!r} does not match its config ({type(error).__name__}: {error})") from None
        agent = cls(config, policy, payload["env"], payload.get("step", 0), best_member)
        if config.env.vision is not None:
            agent.make_env(1).close()  # the vision file must exist and be the run's own: say so now, not mid-evaluation
        return agent

    def save(self, path: str | os.PathLike) -> None:
        """Write the agent to ``path`` (``load`` reads it); a ValueError naming the path where it is a directory or
        its folder cannot be written, before anything is written."""
        path = Path(path)
        if path.is_dir():
            raise ValueError(f"Agent.save: {str(path)!r} is a directory; give the file to write")
        check_writable_dir(path.parent, "Agent.save's folder")
        save_checkpoint(path, {
            "config": self.config.to_dict(),
            "algorithm": {"policy": self.policy.state_dict(), **({} if self.best_member is None else {"best_member": self.best_member})},
            "env": self.env_state,
            "step": self.step,
        })

    def make_env(self, num_envs: int | None = None, evaluation: bool = True, screens: bool = False, ram: bool = False) -> VecEnv:
        """The training environment's twin, normalisers loaded and frozen.

        With ``evaluation`` an Atari episode is a whole game (no life-loss episodes); with ``screens`` its steps
        carry what the environments' own renderers show (``Step.screens``), with ``ram`` an Atari game's RAM.
        """
        env_config = dataclasses.replace(self.config.env, num_envs=num_envs or self.config.env.num_envs)
        if evaluation:
            env_config.episodic_life = False
        env = make_env(self.config.run.env, env_config, gamma=self.config.algo_config.gamma,
                       device=next(self.policy.parameters()).device, screens=screens, ram=ram)
        env.load_state_dict(self.env_state)
        set_training(env, False)
        return env

    @functools.cached_property
    def interface(self) -> PolicyInterface:
        """The spaces and the frozen observation normaliser of the run's environments (read once, from one)."""
        env = self.make_env(1)
        try:
            user_spaces = UserSpaces(self.config.run.env) if suite_of(self.config.run.env) == GENERIC_SUITE else None
            return PolicyInterface(env.single_observation_space, env.single_action_space, observation_normalizer(env), user_spaces)
        finally:
            env.close()

    @property
    def carries_state(self) -> bool:
        """The policy remembers from step to step (its state is not empty): it acts with ``act_with`` or ``predict``,
        not ``act``."""
        return any(part.numel() for part in self.policy.initial_state(1) if isinstance(part, torch.Tensor))

    def memory(self, num_envs: int, deterministic: bool = True, member: int | None = None,
               generator: torch.Generator | None = None) -> Memory:
        """The policy's state for ``num_envs`` environments at their episodes' start, to act with (``act_with``):
        greedy or sampled (an actor-critic), following family member j = ``member`` (NGU, Agent57). Sampled actions
        are drawn from ``generator`` (default: the agent's ``action_generator``)."""
        act = functools.partial(self.policy.act, member=member) if member is not None else self.policy.act
        if isinstance(self.policy, ActorCritic):
            act = functools.partial(act, deterministic=deterministic,
                                    generator=self.action_generator if generator is None else generator)
        return Memory(self.policy.initial_state(num_envs), num_envs, act)

    def predict(self, obs: np.ndarray | torch.Tensor, state: Any = None, episode_start: Any = None, deterministic: bool = True,
                previous_reward: Any = None) -> tuple[np.ndarray, Any]:
        """Acting on raw observations, as Stable-Baselines3's ``predict``: ``obs`` one observation ``[*obs_shape]`` or a
        batch ``[B, *obs_shape]``, numpy or torch -> (numpy actions: one action, or ``[B]`` / ``[B, A]``; the policy's
        state after the step, an empty ``LSTMState`` for a feed-forward policy).

        ``obs`` is what the run's environments observe before observation normalisation, which ``predict`` applies with
        the run's frozen statistics. ``obs_shape`` (``interface.observation_space``), per suite: classic control and
        MuJoCo: gymnasium's observation vector (voidrl/CartPoleNoVelocity-v1: its entries 0 and 2); Atari: ALE's
        preprocessed stack, uint8 ``[4, 84, 84]`` (grayscale 84x84, 4 frames, frame skip 4), not ``ALE/...-v5``'s RGB
        frame; MinAtar: uint8 ``[C, 10, 10]`` in {0, 255} (gymnasium's ``[10, 10, C]`` bool grid, channels first);
        MiniGrid: the egocentric view's one-hot planes (object, colour, state), uint8 ``[20, 7, 7]`` in {0, 255}, not the
        dict observation; ``pixels S``: uint8 frames ``[3, S, S]``; ``vision``: the VAE's latent ``[Z]``; ``frame_stack
        k``: k of these concatenated along the first axis, oldest first. ``make_env``'s environments give them
        normalised already: act on those with ``act`` or ``act_with``.

        Box actions come clipped to the action space, as voidrl's environments apply them. The policy starts from its
        initial state where ``state`` is None; ``episode_start`` (bool, a scalar or ``[B]``; default: True where
        ``state`` is None, else False) resets it where an episode begins; pass the state returned with the next
        observation. ``previous_reward`` (a scalar or ``[B]``; default 0) is the reward each environment received last,
        0 where an episode begins: the R2D2 family's networks read it, the others ignore it. A policy family (NGU,
        Agent57) follows the member ``voidrl eval`` plays by default (``best_member``, else j = 0).

        ``deterministic`` (the default) acts on the distribution's mode. With ``deterministic=False`` the actions are
        sampled from the agent's own ``action_generator``, not from torch's global generator (which Stable-Baselines3's
        ``predict`` draws from and its ``set_random_seed`` seeds): the generator is seeded with the run's seed when the
        agent is made or loaded, its stream goes on from call to call, and ``set_random_seed(seed)`` reseeds it, after
        which the same calls give the same actions.
        """
        require_flag("deterministic", deterministic)
        self.check_evaluation(deterministic, None)
        batch, single = self.observation_batch(obs)
        if episode_start is not None:
            starts = torch.as_tensor(episode_start)
            if starts.dtype != torch.bool and not ((starts == 0) | (starts == 1)).all():
                raise ValueError(f"episode_start must be True/False (or 1/0) per observation, got {episode_start!r}")
        size = batch.shape[0]
        memory = self.memory(size, deterministic, self.evaluation_member(None))
        if state is not None:
            memory.state = self.given_state(state, size)
        memory.episode_starts = per_environment("episode_start", state is None if episode_start is None else episode_start,
                                                size, torch.bool)
        memory.previous_reward = per_environment("previous_reward", 0.0 if previous_reward is None else previous_reward,
                                                 size, torch.float32)
        actions, state = self.act_with(memory, batch), memory.state
        actions = actions_to_numpy(actions, self.interface.action_space)
        if self.interface.user_spaces is not None:
            actions = np.stack([self.interface.user_spaces.action(action) for action in actions])
        return (actions[0, ...] if single else actions), state

    def observation_batch(self, obs: Any) -> tuple[torch.Tensor, bool]:
        """``predict``'s ``obs`` as the policy's normalised batch ``[B, *obs_shape]`` on the CPU, and whether it was one
        observation: the environment's own observations turned into the agent's (a user's environment), checked
        for shape and finite values, normalised with the run's frozen statistics."""
        obs_shape = tuple(self.interface.observation_space.shape)
        user_spaces = self.interface.user_spaces
        if user_spaces is not None and not (isinstance(obs, (np.ndarray, torch.Tensor)) and tuple(obs.shape[-len(obs_shape):]) == obs_shape):
            try:
                obs, single = user_spaces.observations(obs)
                obs = obs[0] if single else obs
            except (TypeError, ValueError, KeyError, IndexError) as error:
                raise ValueError(f"obs must be observations of {self.config.run.env} ({user_spaces.observation_space}), one or a "
                                 f"list, or the agent's [B, {', '.join(map(str, obs_shape))}]; got {type(obs).__name__} "
                                 f"({type(error).__name__}: {error})") from None
        try:
            obs = torch.as_tensor(obs).cpu()  # where the normaliser keeps its statistics; act moves it to the policy
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(f"obs must be an array or tensor of shape {list(obs_shape)} or [B, {', '.join(map(str, obs_shape))}], "
                             f"got {type(obs).__name__}") from None
        single = tuple(obs.shape) == obs_shape
        if not single and (obs.dim() != len(obs_shape) + 1 or tuple(obs.shape[1:]) != obs_shape):
            raise ValueError(f"obs must be one observation of shape {list(obs_shape)} or a batch of shape "
                             f"[B, {', '.join(map(str, obs_shape))}], got shape {list(obs.shape)}")
        batch = obs.unsqueeze(0) if single else obs
        if batch.is_floating_point() and not torch.isfinite(batch).all():
            rows = torch.nonzero(~torch.isfinite(batch.flatten(1)).all(1)).flatten().tolist()
            raise ValueError(f"obs holds NaN or infinite values (in observation{'s' if len(rows) > 1 else ''} {rows[:5]} of the batch)")
        if self.interface.normalizer is not None:
            batch = self.interface.normalizer.normalize(batch)
        return batch, single

    def given_state(self, state: Any, batch: int) -> Any:
        """A ``state`` given to ``predict`` for ``batch`` observations, as the policy's own state type: the
        state ``predict`` returned, or its fields as a tuple of tensors or arrays (``(h, c)`` for an actor-critic's
        LSTM); a ValueError naming the field where it does not fit."""
        template = self.policy.initial_state(batch)
        kind = f"{type(template).__name__}({', '.join(template._fields)})"
        if not isinstance(state, (tuple, list)) or len(state) != len(template):
            raise ValueError(f"state must be the state predict returned, a {kind} for {batch} observation(s), or None to start "
                             f"episodes; got {type(state).__name__}")
        fields = []
        for name, expected, given in zip(template._fields, template, state):
            if not isinstance(expected, torch.Tensor):
                if not isinstance(given, type(expected)):
                    raise ValueError(f"state.{name} must be the {type(expected).__name__} predict returned, got {type(given).__name__}")
                fields.append(given)
                continue
            try:
                tensor = torch.as_tensor(given)
            except (TypeError, ValueError, RuntimeError):
                raise ValueError(f"state.{name} must be an array or tensor of shape {list(expected.shape)}, got "
                                 f"{type(given).__name__}") from None
            if tuple(tensor.shape) != tuple(expected.shape):
                raise ValueError(f"state.{name} must have shape {list(expected.shape)} for {batch} observation(s), got "
                                 f"{list(tensor.shape)}")
            fields.append(tensor.to(expected.device, expected.dtype))
        return type(template)(*fields)

    def act(self, obs: torch.Tensor, deterministic: bool = True) -> torch.Tensor:
        """A feed-forward policy's actions ``[B]`` or ``[B, A]`` (on the CPU) for a batch ``obs [B, *obs_shape]`` (a
        tensor or an array) as ``make_env``'s environments give it, normalised where the run normalised observations:
        the distribution's mode with ``deterministic``, else a sample drawn from ``action_generator``. A policy that
        carries a state acts with ``act_with``."""
        if self.carries_state:
            raise ValueError(f"act takes no state; this {self.config.algo} policy carries one from step to step: act with "
                             "act_with(agent.memory(B), obs) or predict(obs, state)")
        obs = torch.as_tensor(obs)
        obs_shape = tuple(self.interface.observation_space.shape)
        if obs.dim() != len(obs_shape) + 1 or tuple(obs.shape[1:]) != obs_shape:
            raise ValueError(f"act takes a batch of shape [B, {', '.join(map(str, obs_shape))}], got shape {list(obs.shape)}; "
                             "predict(obs) takes one raw observation or a batch")
        return self.act_with(self.memory(obs.shape[0], deterministic), obs)

    def act_with(self, memory: Memory, obs: torch.Tensor) -> torch.Tensor:
        """Actions ``[B]`` or ``[B, A]`` (on the CPU) for a batch ``obs`` as ``act`` takes it, the policy's state kept in
        ``memory`` (``memory``'s), whose ``after_step`` must see each step."""
        return memory.act(torch.as_tensor(obs).to(next(self.policy.parameters()).device)).cpu()

    def evaluation_member(self, choice: str | None) -> int | None:
        """The family member j that ``choice`` names: an integer, ``best`` (``best_member``), or None for
        ``best_member`` where there is one and 0 otherwise; None for an agent without a family."""
        algo = ALGORITHMS[self.config.algo]
        family = algo.family_size(self.policy) if issubclass(algo, PolicyFamily) else None
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
        if not deterministic and ALGORITHMS.config_class(self.config.algo).acts_greedily:
            raise ValueError(f"--sampled applies to policy-gradient agents; {self.config.algo} acts greedily on its Q-values "
                             "(in Python: deterministic must be True)")
        if member is not None and not issubclass(algo, PolicyFamily):
            raise ValueError(f"--member applies to ngu and agent57, not to {self.config.algo}")

    def evaluate(self, episodes: int = 10, deterministic: bool = True, num_envs: int | None = None, seed: int = 12345,
                 member: int | None = None, recorder: EpisodeRecorder | None = None) -> list[float]:
        """Returns of ``episodes`` whole episodes, split evenly over the environments.

        Each environment contributes a fixed quota, so short episodes are not over-represented.
        ``seed`` seeds the environments (environment i with ``seed + i``) and, with ``deterministic=False``, a CPU
        generator of this call's own that the sampled actions are drawn from, so the same call gives the same
        returns whatever torch's global generator holds (``action_generator`` is left alone).
        A Q-network agent acts greedily (``deterministic`` must be True); a policy family (NGU, Agent57)
        follows member j = ``member`` (default 0, beta = 0). With a ``recorder`` the episodes are played one
        after another in one environment (``num_envs`` None or 1), whose screen after each step goes to it: an
        episode of T steps is T screens.
        """
        if isinstance(episodes, (gym.Env, gym.vector.VectorEnv)):
            raise ValueError(f"episodes must be a positive integer, got the environment {episodes!r}; to evaluate on an "
                             "environment you hold, as Stable-Baselines3 does: voidrl.evaluate_policy(agent, env, episodes)")
        if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
            raise ValueError(f"episodes must be a positive integer, got {episodes!r}")
        if num_envs is not None and (isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1):
            raise ValueError(f"num_envs must be a positive integer or None, got {num_envs!r}")
        require_flag("deterministic", deterministic)
        if recorder is not None and num_envs not in (None, 1):
            raise ValueError(f"a recorded evaluation plays one environment; num_envs must be 1 or None, got {num_envs}")
        self.check_evaluation(deterministic, member)
        num_envs = 1 if recorder is not None else min(num_envs or self.config.env.num_envs, episodes)
        quota = [episodes // num_envs + (i < episodes % num_envs) for i in range(num_envs)]
        action_draws = torch.Generator().manual_seed(seed)
        env = self.make_env(num_envs, screens=recorder is not None)
        if recorder is not None:
            recorder.start(env.screen_fps)
        returns: list[float] = []
        memory = self.memory(num_envs, deterministic, member, action_draws)
        try:
            obs = env.reset(seed)
            while len(returns) < episodes:
                step = env.step(self.act_with(memory, obs))
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


def require_flag(name: str, value: Any) -> None:
    """ValueError unless ``value`` is a bool (numpy's included): a string such as "no" would read as True."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")


def per_environment(name: str, value: Any, batch: int, dtype: torch.dtype) -> torch.Tensor:
    """``value``, a scalar or ``[batch]``, as a ``[batch]`` tensor of ``dtype``; a ValueError naming ``name`` otherwise."""
    tensor = torch.as_tensor(value, dtype=dtype)
    if tensor.dim() == 0:
        return tensor.expand(batch)
    if tuple(tensor.shape) != (batch,):
        raise ValueError(f"{name} must be a scalar or one value per observation, shape [{batch}]; got shape {list(tensor.shape)}")
    return tensor


def evaluate_policy(agent: Agent, env: Any, n_eval_episodes: int = 10, deterministic: bool = True) -> tuple[float, float]:
    """Stable-Baselines3's ``evaluate_policy`` for a voidrl ``agent``: the mean and the standard deviation of the returns
    of ``n_eval_episodes`` whole episodes (``agent.evaluate`` gives the returns themselves).

    ``env``: the agent's own environment, as an id, a class, a function or an instance made by ``gymnasium.make``
    (``voidrl.envs.suites.env_id_of``); the episodes are played in environments the agent makes from it, seeded as
    ``Agent.evaluate`` seeds them."""
    from voidrl.envs.suites import env_id_of

    env_id = env_id_of(env)
    if env_id != agent.config.run.env:
        raise ValueError(f"env: this agent was trained on {agent.config.run.env}; evaluate it there, not on {env_id}")
    return summarize(agent.evaluate(n_eval_episodes, deterministic=deterministic))


def summarize(returns: list[float]) -> tuple[float, float]:
    mean = sum(returns) / len(returns)
    std = math.sqrt(sum((r - mean) ** 2 for r in returns) / len(returns))
    return mean, std
