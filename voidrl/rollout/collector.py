"""The collector: steps a ``VecEnv`` and fills a ``RolloutStorage``.

How actions are chosen is the ``Acting`` part: ``PolicySampling`` for the on-policy algorithms
(samples, records log-probabilities and values, carries the policy's state, bootstraps cut episodes),
the replay learners' own (``voidrl.algos.roles.RecurrentActing``) for the others; both keep a ``Memory``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import gymnasium as gym
import torch

from voidrl.envs.base import Step, VecEnv
from voidrl.envs.failure import EnvironmentFailure
from voidrl.nets.actor_critic import ActorCritic, LSTMState
from voidrl.nets.persistence import PersistentUniforms
from voidrl.rollout.memory import Memory
from voidrl.rollout.storage import RolloutStorage


@dataclass
class RolloutStats:
    """What happened during one rollout, besides the transitions themselves."""

    episode_steps: list[int] = field(default_factory=list)
    """Total environment steps (all envs, ``VecEnv.action_repeat`` per agent step) at which each finished episode ended."""
    episode_returns: list[float] = field(default_factory=list)
    episode_lengths: list[int] = field(default_factory=list)
    env_seconds: float = 0.0
    inference_seconds: float = 0.0
    """Policy inference and storage writes."""
    on_step_seconds: float = 0.0
    """Time in the ``on_step`` hook (e.g. contrastive updates)."""
    vector_steps: int = 0
    """Vector steps taken (each steps every environment once)."""
    env_steps: int = 0
    """Environment steps taken: vector steps x environments x ``VecEnv.action_repeat``."""
    stopped: bool = False
    """``should_stop`` ended the collection early; the storage holds a partial rollout to discard."""

    def add_episodes(self, episode_returns: torch.Tensor, episode_lengths: torch.Tensor, at_step: int) -> None:
        """The episodes one vector step finished (their returns and lengths ``[E]``), ended at environment step
        ``at_step``."""
        for episode_return, length in zip(episode_returns.tolist(), episode_lengths.tolist()):
            self.episode_steps.append(at_step)
            self.episode_returns.append(episode_return)
            self.episode_lengths.append(length)


@dataclass
class Transition:
    """One vector step as a reward plug-in sees it; row i is environment i."""

    obs: torch.Tensor
    """Observations acted on ``[N, ...]``."""
    actions: torch.Tensor
    """``[N, ...]``."""
    next_obs: torch.Tensor
    """True successors ``[N, ...]`` (the final observation where an episode ended)."""
    terminated: torch.Tensor
    """``[N]`` bool."""
    truncated: torch.Tensor
    """``[N]`` bool (time limits)."""


class Acting(Protocol):
    """How the collector chooses actions and what it records beside them."""

    state_shape: tuple[int, int]
    """Per environment, the shape of each tensor of the policy state each step's record keeps (``RolloutStorage``)."""
    value_heads: int
    """H, the value heads whose values each step's record keeps (``RolloutStorage``)."""

    def reset(self) -> None:
        """The environments were reset: every episode starts anew."""

    def act(self, obs: torch.Tensor, t: int, storage: RolloutStorage) -> torch.Tensor:
        """Actions ``[N, ...]`` for ``obs [N, ...]`` at rollout step ``t``."""

    def after_step(self, step: Step, t: int, storage: RolloutStorage) -> None:
        """See the outcome of the actions of step ``t``."""

    def finish(self, storage: RolloutStorage, last_obs: torch.Tensor) -> None:
        """Complete the filled rollout, ``last_obs [N, ...]`` the observation after its last step."""

    def state_dict(self) -> dict:
        """What it carries from one rollout to the next (the policy's state); raises ``NotSaveable`` where that cannot be saved."""

    def load_state_dict(self, state: dict) -> None: ...


class PolicySampling:
    """On-policy acting: samples from an ``ActorCritic``, carrying its state (``LSTMState``, empty for a feed-forward
    network) across steps and rollouts, reset where an episode begins. Records each step's log-probability,
    values (one per value head), starting state and episode start (what the update unrolls from).

    A time-limit cut is bootstrapped with V(final observation) one step on from the state after the cut step (the
    episode's own memory, not a reset one); the rollout's end with V(``last_obs``) from the state after its last
    step (``fill_next_values``). ``action_noise`` supplies the uniforms a mixture policy samples from (Leite's (2022)
    action persistence).
    """

    def __init__(self, policy: ActorCritic, num_envs: int, action_noise: PersistentUniforms | None = None):
        self.policy = policy
        self.num_envs = num_envs
        self.action_noise = action_noise
        self.state_shape = policy.state_shape
        self.value_heads = policy.value_heads
        self.reset()

    def reset(self) -> None:
        self.memory = Memory(self.policy.initial_state(self.num_envs), self.num_envs)

    def state_dict(self) -> dict:
        return self.memory.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.memory.load_state_dict(_current_form(state, self.memory))

    def act(self, obs: torch.Tensor, t: int, storage: RolloutStorage) -> torch.Tensor:
        memory = self.memory
        storage.lstm_hidden[t], storage.lstm_cell[t] = memory.state
        episode_starts = storage.episode_starts[t]
        episode_starts.copy_(memory.episode_starts)
        dist, storage.values[t], memory.state = self.policy.forward_heads(obs, memory.state, episode_starts)
        action = dist.sample() if self.action_noise is None else dist.sample(self.action_noise.draw().to(obs.device))
        storage.log_probs[t] = dist.log_prob(action)
        return action

    def after_step(self, step: Step, t: int, storage: RolloutStorage) -> None:
        device = storage.values.device
        cut = step.truncated & ~step.terminated
        if cut.any():
            cut_here = cut.to(device)
            state = self.memory.state
            storage.next_values[t, cut_here] = self.policy.bootstrap_values(step.final_obs[cut].to(device),
                                                                            LSTMState(state.hidden[cut_here], state.cell[cut_here]))
        self.memory.after_step(step)

    def finish(self, storage: RolloutStorage, last_obs: torch.Tensor) -> None:
        """``next_values [T, N, H]`` (``fill_next_values``). A rollout whose actions had a non-finite log-probability
        (a policy with NaN parameters or logits) is refused here, before any update."""
        finite = torch.isfinite(storage.log_probs[:storage.length])
        if not bool(finite.all()):
            steps, envs = (~finite).nonzero(as_tuple=True)
            raise FloatingPointError(f"the policy gave its actions non-finite log-probabilities (first at rollout step {int(steps[0])}, "
                                     f"environment {int(envs[0])}): its parameters or inputs hold NaN or inf")
        fill_next_values(storage, self.policy.bootstrap_values(last_obs, self.memory.state))


def _current_form(state: dict, memory: Memory) -> dict:
    """A ``PolicySampling`` state as ``Memory.state_dict`` writes it, from the forms written before 2026-11-28: none
    (``{}``, feed-forward acting) or ``hidden``, ``cell``, ``episode_start`` (an LSTM's)."""
    if state == {} and not any(part.numel() for part in memory.state):
        return memory.state_dict()
    if isinstance(state, dict) and set(state) == {"hidden", "cell", "episode_start"}:
        return {"state": [state["hidden"], state["cell"]], "episode_start": state["episode_start"],
                "previous_reward": torch.zeros_like(memory.previous_reward)}
    return state


def fill_next_values(storage: RolloutStorage, last_values: torch.Tensor) -> None:
    """``storage.next_values [T, N, H]`` of a filled rollout: ``values[t + 1]`` where the episode goes on, the
    stored bootstrap where a time limit cut it, 0 after a termination, ``last_values [N, H]`` (V of the
    observation after the rollout) after the last step; a head that is not one of the ``episodic_heads`` sees no
    episode end (``values[t + 1]`` is then the next episode's first state)."""
    filled = storage.length
    values, next_values = storage.values[:filled], storage.next_values[:filled]
    episodic = torch.tensor(storage.episodic_heads, device=values.device)
    terminated = storage.terminated[:filled].unsqueeze(-1) & episodic
    ended = (storage.terminated[:filled] | storage.truncated[:filled]).unsqueeze(-1) & episodic
    next_values[:-1] = torch.where(ended[:-1], next_values[:-1], values[1:])
    next_values[-1] = torch.where(ended[-1], next_values[-1], last_values)
    next_values.masked_fill_(terminated, 0.0)


class HostToDevice:
    """Moves each vector step's observations ``[N, ...]`` from the environments (CPU) to the device once.

    On CUDA through one reused page-locked (pinned) buffer and a non-blocking copy: the buffer is refilled only
    at the next step, after that step's actions came back to the CPU, which waits for every copy queued before
    them. Elsewhere a plain ``.to``.
    """

    def __init__(self, device: torch.device):
        self.device = device
        self.pinned: torch.Tensor | None = None

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        if self.device.type != "cuda":
            return obs.to(self.device)
        if self.pinned is None or self.pinned.shape != obs.shape or self.pinned.dtype != obs.dtype:
            self.pinned = torch.empty(obs.shape, dtype=obs.dtype, pin_memory=True)
        self.pinned.copy_(obs)
        return self.pinned.to(self.device, non_blocking=True)


class Collector:
    """Keeps the current observation between rollouts; ``collect`` fills one storage."""

    def __init__(
        self,
        env: VecEnv,
        acting: Acting,
        device: torch.device | str = "cpu",
        on_step: Callable[[Transition], None] | None = None,
    ):
        """``on_step``, if given, sees each vector step's ``Transition`` (a reward plug-in filling its
        memory and training its networks)."""
        self.env = env
        self.acting = acting
        self.device = torch.device(device)
        self.on_step = on_step
        self.obs: torch.Tensor | None = None
        self.to_device = HostToDevice(self.device)

    def reset(self, seed: int) -> torch.Tensor:
        self.obs = self.env.reset(seed)
        self.acting.reset()
        return self.obs

    def state_dict(self) -> dict:
        """Where the environments stand between two rollouts: the observations acted on next ``[N, ...]``, the acting
        state and the episodes in progress (``VecEnv.episodes_state``): raises ``NotSaveable`` where these cannot be saved."""
        if self.obs is None:
            raise RuntimeError("Collector.reset must be called before state_dict")
        return {"obs": self.obs.clone(), "acting": self.acting.state_dict(), "env": self.env.episodes_state()}

    def load_state_dict(self, state: dict) -> None:
        """Go on with the episodes of ``state`` (instead of ``reset``)."""
        if not isinstance(state, dict) or set(state) != {"obs", "acting", "env"}:
            raise ValueError("not the state of a collector (obs, acting, env)")
        obs, space = state["obs"], self.env.single_observation_space
        if not isinstance(obs, torch.Tensor) or tuple(obs.shape) != (self.env.num_envs, *space.shape):
            raise ValueError(f"the saved observations are not [{self.env.num_envs}, {', '.join(map(str, space.shape))}]")
        self.env.load_episodes_state(state["env"])
        self.acting.load_state_dict(state["acting"])
        self.obs = obs.to(self.device)

    def make_storage(self, num_steps: int) -> RolloutStorage:
        """An empty rollout of ``num_steps`` steps of the environments (after ``reset``), on the collector's device,
        with room for the states its way of acting records."""
        if self.obs is None:
            raise RuntimeError("Collector.reset must be called before make_storage")
        space = self.env.single_action_space
        return RolloutStorage(num_steps, self.env.num_envs, self.obs.shape[1:], self.obs.dtype, space.shape,
                              torch.float32 if isinstance(space, gym.spaces.Box) else torch.long, self.device,
                              state_shape=self.acting.state_shape, value_heads=self.acting.value_heads)

    def store_step(self, storage: RolloutStorage, t: int, step: Step) -> torch.Tensor:
        """Vector step ``step``'s rewards, ends and final observations at ``t`` of ``storage``, then the acting's
        own (``after_step``); returns where an episode ended ``[N]``."""
        storage.rewards[t] = step.reward
        storage.terminated[t] = step.terminated
        storage.truncated[t] = step.truncated
        done = step.terminated | step.truncated
        if done.any():
            ended = done.nonzero().squeeze(-1)
            storage.final_obs[t] = (ended.to(self.device), step.final_obs[ended].to(self.device))
        self.acting.after_step(step, t, storage)
        return done

    @torch.no_grad()
    def collect(self, storage: RolloutStorage, start_step: int, episodes_per_env: int | None = None,
                should_stop: Callable[[], bool] | None = None) -> RolloutStats:
        """Fill ``storage`` with ``T`` vector steps; ``start_step`` counts env steps before it.

        ``should_stop`` is asked before every vector step; when it answers True the collection
        ends there with ``stats.stopped`` set (a run stopping on a signal between two steps).

        With ``episodes_per_env`` (REINFORCE's whole episodes, the envs freshly reset) the
        collection stops as soon as every env has finished that many episodes, or at ``T``;
        ``storage.valid`` marks each env's steps up to the end of its last counted episode.
        """
        if self.obs is None:
            raise RuntimeError("Collector.reset must be called before collect")
        stats = RolloutStats()
        steps_per_vector_step = storage.num_envs * self.env.action_repeat
        storage.final_obs = {}
        storage.valid.fill_(True)
        finished = torch.zeros(storage.num_envs, dtype=torch.long, device=self.device)
        obs = self.obs.to(self.device)
        started = time.perf_counter()
        for t in range(storage.num_steps):
            if should_stop is not None and should_stop():
                stats.stopped = True
                return stats
            if episodes_per_env is not None:
                storage.valid[t] = finished < episodes_per_env
            action = self.acting.act(obs, t, storage)
            storage.obs[t] = obs
            storage.actions[t] = action
            action_cpu = action.cpu()
            env_started = time.perf_counter()
            try:
                step = self.env.step(action_cpu)
            except EnvironmentFailure as failure:
                raise failure.at_step(start_step + t * steps_per_vector_step) from failure.error
            stats.env_seconds += time.perf_counter() - env_started
            done = self.store_step(storage, t, step)
            if self.on_step is not None:
                hook_started = time.perf_counter()
                self.on_step(Transition(obs, action, step.final_obs, step.terminated, step.truncated))
                stats.on_step_seconds += time.perf_counter() - hook_started
            obs = self.to_device(step.obs)
            stats.add_episodes(step.episode_returns, step.episode_lengths, start_step + (t + 1) * steps_per_vector_step)
            if episodes_per_env is not None:
                finished += done.to(self.device)
                if bool((finished >= episodes_per_env).all()):
                    break
        storage.length = stats.vector_steps = t + 1
        stats.env_steps = stats.vector_steps * steps_per_vector_step
        self.acting.finish(storage, obs)
        stats.inference_seconds = time.perf_counter() - started - stats.env_seconds - stats.on_step_seconds
        storage.last_obs.copy_(obs)
        self.obs = obs
        return stats
