"""Torch-side ``VecEnv`` wrappers that change what the learner sees.

They never touch ``Step.episode_returns``: reported returns are always the raw
task score. Their statistics are part of the checkpoint via ``state_dict``.
"""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import numpy as np
import torch

from voidrl.envs.base import Step, VecEnv
from voidrl.math.running_stats import RunningMeanStd, standardize
from voidrl.nets.bodies import KeyedShape


class VecEnvWrapper(VecEnv):
    def __init__(self, env: VecEnv):
        self.env = env
        self.num_envs = env.num_envs
        self.single_observation_space = env.single_observation_space
        self.single_action_space = env.single_action_space
        self.screen_fps = env.screen_fps
        self.action_repeat = env.action_repeat

    def reset(self, seed: int) -> torch.Tensor:
        return self.env.reset(seed)

    def step(self, actions: torch.Tensor) -> Step:
        return self.env.step(actions)

    def close(self) -> None:
        self.env.close()

    def own_state_dict(self) -> dict:
        return {}

    def load_own_state_dict(self, state: dict) -> None:
        pass

    def state_dict(self) -> dict:
        return {"own": self.own_state_dict(), "inner": self.env.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.load_own_state_dict(state["own"])
        self.env.load_state_dict(state["inner"])

    def own_episodes_state(self) -> dict:
        """This wrapper's part of ``episodes_state`` (what it keeps of the episodes in progress)."""
        return {}

    def load_own_episodes_state(self, state: dict) -> None:
        if state:
            raise ValueError(f"{type(self).__name__} keeps nothing of the episodes, got keys {sorted(state)}")

    def episodes_state(self) -> dict:
        inner = self.env.episodes_state()  # first: an environment that cannot be saved stops it before a copy of the stack
        return {"own": self.own_episodes_state(), "inner": inner}

    def load_episodes_state(self, state: dict) -> None:
        if not isinstance(state, dict) or set(state) != {"own", "inner"}:
            raise ValueError(f"{type(self).__name__}: not the state of its episodes")
        self.env.load_episodes_state(state["inner"])
        self.load_own_episodes_state(state["own"])


class NormalizeObservation(VecEnvWrapper):
    """(obs - mean) / sqrt(var + eps), clipped to [-clip, clip]; statistics updated while ``training``. The image
    parts of a Dict observation's vector (a ``KeyedShape``) pass unchanged: their CNN scales the pixels itself."""

    def __init__(self, env: VecEnv, clip: float = 10.0, epsilon: float = 1e-8):
        super().__init__(env)
        shape = env.single_observation_space.shape
        self.stats = RunningMeanStd(shape)
        self.clip = clip
        self.epsilon = epsilon
        self.training = True
        self.images = image_entries(shape)
        """``[D]``: True at the entries of a Dict observation's images, left as they are; None where there are none."""

    def normalize(self, obs: torch.Tensor) -> torch.Tensor:
        normalized = standardize(obs, self.stats.mean, self.stats.var, self.clip, self.epsilon)
        if self.images is None:
            return normalized
        if self.images.device != obs.device:  # moved once, not at every step
            self.images = self.images.to(obs.device)
        return torch.where(self.images, obs, normalized)

    def reset(self, seed: int) -> torch.Tensor:
        obs = self.env.reset(seed)
        if self.training:
            self.stats.update(obs)
        return self.normalize(obs)

    def step(self, actions: torch.Tensor) -> Step:
        step = self.env.step(actions)
        if self.training:
            self.stats.update(step.obs)
        obs = self.normalize(step.obs)
        final_obs = obs if step.final_obs is step.obs else self.normalize(step.final_obs)
        return replace(step, obs=obs, final_obs=final_obs)

    def own_state_dict(self) -> dict:
        return self.stats.state_dict()

    def load_own_state_dict(self, state: dict) -> None:
        self.stats.load_state_dict(state)


class NormalizeReward(VecEnvWrapper):
    """Divide rewards by the running std of the discounted return (as SB3's VecNormalize)."""

    def __init__(self, env: VecEnv, gamma: float, clip: float = 10.0, epsilon: float = 1e-8):
        super().__init__(env)
        self.stats = RunningMeanStd(())
        self.discounted = torch.zeros(env.num_envs, dtype=torch.float64)
        self.gamma = gamma
        self.clip = clip
        self.epsilon = epsilon
        self.training = True

    def reset(self, seed: int) -> torch.Tensor:
        self.discounted.zero_()
        return self.env.reset(seed)

    def step(self, actions: torch.Tensor) -> Step:
        step = self.env.step(actions)
        if self.training:
            self.discounted = self.discounted * self.gamma + step.reward.to(torch.float64)
            self.stats.update(self.discounted)
            self.discounted[step.terminated | step.truncated] = 0.0
        scaled = step.reward / (self.stats.var + self.epsilon).sqrt().to(torch.float32)
        return replace(step, reward=scaled.clamp(-self.clip, self.clip))

    def own_state_dict(self) -> dict:
        return {"stats": self.stats.state_dict(), "discounted": self.discounted.clone()}

    def load_own_state_dict(self, state: dict) -> None:
        self.stats.load_state_dict(state["stats"])
        self.discounted = state["discounted"].clone()


class TransformReward(VecEnvWrapper):
    """r -> scale * clamp(r, -clip, clip) (clip omitted when None); e.g. sign clipping for Atari."""

    def __init__(self, env: VecEnv, clip: float | None, scale: float):
        super().__init__(env)
        self.clip = clip
        self.scale = scale

    def step(self, actions: torch.Tensor) -> Step:
        step = self.env.step(actions)
        reward = step.reward if self.clip is None else step.reward.clamp(-self.clip, self.clip)
        return replace(step, reward=reward * self.scale)


class FallPenalty(VecEnvWrapper):
    """Training reward -1 on a termination (the pole fell), 0 on every other step.

    Leite's (2022) pendulum task: unlike +1 per step, it tells a fall at step 999 from
    the time limit at 1000, and its values stay O(1) instead of ~1 / (1 - gamma).
    """

    def step(self, actions: torch.Tensor) -> Step:
        step = self.env.step(actions)
        return replace(step, reward=-step.terminated.to(step.reward.dtype))


class KeepObservationEntries(VecEnvWrapper):
    """Observations reduced to the entries ``keep`` of a vector observation (the rest hidden), e.g.
    CartPole without its velocities: a partially observable task that needs a memory."""

    def __init__(self, env: VecEnv, keep: tuple[int, ...]):
        super().__init__(env)
        self.keep = torch.tensor(keep)
        space = env.single_observation_space
        self.single_observation_space = gym.spaces.Box(space.low[list(keep)], space.high[list(keep)], dtype=space.dtype)

    def reset(self, seed: int) -> torch.Tensor:
        return self.env.reset(seed)[:, self.keep]

    def step(self, actions: torch.Tensor) -> Step:
        step = self.env.step(actions)
        return replace(step, obs=step.obs[:, self.keep], final_obs=step.final_obs[:, self.keep])


class PreviousActionReward(VecEnvWrapper):
    """Each vector observation ``[N, D]`` followed by the action that led to it (one-hot ``[N, n]`` for ``Discrete(n)``,
    the action itself for a ``Box``) and the reward that came with it (``[N, 1]``, the wrapped environment's own):
    ``[N, D + A + 1]``, zeros where an episode begins. What R2D2 feeds its LSTM, for any policy; it keeps nothing
    between steps, so saved episodes need nothing of it."""

    def __init__(self, env: VecEnv):
        super().__init__(env)
        space, actions = env.single_observation_space, env.single_action_space
        if not isinstance(space, gym.spaces.Box) or len(space.shape) != 1:
            raise ValueError(f"previous_action_reward appends to vector observations; these are {space.shape}")
        if isinstance(actions, gym.spaces.Discrete):
            self.action_size, low, high = int(actions.n), np.zeros(int(actions.n)), np.ones(int(actions.n))
        elif isinstance(actions, gym.spaces.Box) and len(actions.shape) == 1:
            self.action_size, low, high = actions.shape[0], actions.low, actions.high
        else:
            raise ValueError(f"previous_action_reward encodes Discrete or one-dimensional Box actions, not {actions}")
        self.single_observation_space = gym.spaces.Box(
            np.concatenate([space.low, low, [-np.inf]]).astype(np.float32),
            np.concatenate([space.high, high, [np.inf]]).astype(np.float32), dtype=np.float32)

    def _encoded(self, actions: torch.Tensor) -> torch.Tensor:
        if isinstance(self.env.single_action_space, gym.spaces.Discrete):
            return torch.nn.functional.one_hot(actions.long().reshape(-1), self.action_size).float()
        return actions.float().reshape(-1, self.action_size)

    def reset(self, seed: int) -> torch.Tensor:
        obs = self.env.reset(seed).float()
        return torch.cat([obs, obs.new_zeros(self.num_envs, self.action_size + 1)], 1)

    def step(self, actions: torch.Tensor) -> Step:
        step = self.env.step(actions)
        outcome = torch.cat([self._encoded(actions), step.reward.float().reshape(-1, 1)], 1)
        final_obs = torch.cat([step.final_obs.float(), outcome], 1)
        begins = (step.terminated | step.truncated).unsqueeze(1)
        obs = torch.cat([step.obs.float(), outcome.masked_fill(begins, 0.0)], 1)
        return replace(step, obs=obs, final_obs=final_obs)


def set_training(env: VecEnv, training: bool) -> None:
    """Freeze (``False``) or resume (``True``) the statistics of every normaliser in the chain."""
    while isinstance(env, VecEnvWrapper):
        if hasattr(env, "training"):
            env.training = training
        env = env.env


def image_entries(shape: tuple[int, ...]) -> torch.Tensor | None:
    """A ``[D]`` mask of the entries of ``shape``'s image parts (a ``KeyedShape`` holding images), else None."""
    parts = [part for part in shape.parts if part.image] if isinstance(shape, KeyedShape) else []
    if not parts:
        return None
    mask = torch.zeros(shape, dtype=torch.bool)
    for part in parts:
        mask[part.offset : part.offset + part.size] = True
    return mask


def observation_normalizer(env: VecEnv) -> NormalizeObservation | None:
    """The chain's observation normaliser; None where the chain has none."""
    while isinstance(env, VecEnvWrapper):
        if isinstance(env, NormalizeObservation):
            return env
        env = env.env
    return None


class FrameStack(VecEnvWrapper):
    """The last ``depth`` observations concatenated along their first axis: frames ``[N, depth * C, H, W]``,
    vectors ``[N, depth * D]``, oldest first. An episode's first observation fills the whole stack, and
    ``final_obs`` is the stack that ends with the episode's true last observation."""

    def __init__(self, env: VecEnv, depth: int):
        super().__init__(env)
        space = env.single_observation_space
        self.depth = depth
        self.single_observation_space = gym.spaces.Box(
            np.concatenate([space.low] * depth), np.concatenate([space.high] * depth), dtype=space.dtype)
        self.stack: torch.Tensor | None = None
        """``[N, depth, *obs_shape]``: the current stacks."""

    def _flat(self, stack: torch.Tensor) -> torch.Tensor:
        return stack.flatten(1, 2)

    def own_episodes_state(self) -> dict:
        return {"stack": self.stack.clone()}

    def load_own_episodes_state(self, state: dict) -> None:
        stack = state.get("stack") if isinstance(state, dict) else None
        if not isinstance(stack, torch.Tensor) or stack.shape != self.stack.shape or stack.dtype != self.stack.dtype:
            raise ValueError(f"FrameStack: the saved stacks are not [{self.num_envs}, {self.depth}, ...] of {self.stack.dtype}")
        self.stack = stack.clone()

    def reset(self, seed: int) -> torch.Tensor:
        obs = self.env.reset(seed)
        self.stack = obs.unsqueeze(1).repeat_interleave(self.depth, 1)
        return self._flat(self.stack)

    def step(self, actions: torch.Tensor) -> Step:
        step = self.env.step(actions)
        advanced = torch.cat([self.stack[:, 1:], step.obs.unsqueeze(1)], 1)
        ended = step.terminated | step.truncated
        final_obs = None
        if ended.any():
            final_obs = self._flat(torch.cat([self.stack[:, 1:], step.final_obs.unsqueeze(1)], 1))
            advanced[ended] = step.obs[ended].unsqueeze(1).repeat_interleave(self.depth, 1)
        self.stack = advanced
        obs = self._flat(advanced)
        return replace(step, obs=obs, final_obs=obs if final_obs is None else final_obs)
