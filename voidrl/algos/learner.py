"""Learners that own their data: replay-based agents (R2D2 and its family) beside the on-policy ones.

The loop is the same for both: it steps the environments for ``num_steps`` vector steps, lets
the reward plug-in add its rewards, and calls ``update``. An on-policy algorithm learns from
that rollout and forgets it; a ``ReplayLearner`` acts through ``act`` with a recurrent state of
its own, keeps what it wants of each chunk in ``observe`` (a replay memory) and takes the
gradient steps the experience so far allows in ``train_steps``. A ``SequenceAgent`` does this with
the roles of ``voidrl.algos.roles``: its builder's networks, actor, adder, rate-limited replay, dataset and learner.
"""

from __future__ import annotations

import warnings
from abc import abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import torch
from torch import nn

from voidrl.algos.algorithm import Algorithm, KeepsReplay, RemoteActors
from voidrl.algos.roles import Actor, Learner, RecurrentActing, SequenceBuilder
from voidrl.envs.base import Step
from voidrl.nets.persistence import PersistentUniforms
from voidrl.replay import Replay
from voidrl.replay.store import ReplayStore, observation_bytes_per_sequence
from voidrl.rollout.storage import RolloutStorage


class ReplayLearner(Algorithm):
    """A learner that decides what to remember and when to train.

    ``policy`` is what a saved agent acts with (evaluation, ``voidrl eval``, ``Agent.predict``): a module with
    ``initial_state(N)`` (a tuple of tensors, empty ones where it remembers nothing) and greedy
    ``act(obs, state, episode_starts, previous_reward) -> (actions, state)``, the interface every voidrl policy
    has; rebuilt by ``make_policy`` and restored from ``state_dict()["policy"]``.
    """


    def initial_state(self, num_envs: int) -> Any:
        """The recurrent state of ``num_envs`` fresh episodes (None: a feed-forward learner)."""
        return None

    @abstractmethod
    def act(self, obs: torch.Tensor, state: Any, episode_starts: torch.Tensor, previous_reward: torch.Tensor) -> tuple[torch.Tensor, Any]:
        """Actions ``[N, ...]`` for ``obs [N, ...]`` and the next recurrent state; ``episode_starts [N]``
        (bool) marks the environments whose episode begins at ``obs`` (their state must be reset);
        ``previous_reward [N]`` is each environment's last reward (0 where an episode begins)."""

    def after_step(self, step: Step) -> None:
        """Each vector step's outcome as the acting side sees it (NGU's bandits read finished episodes'
        returns here); nothing by default."""

    @abstractmethod
    def observe(self, chunk: RolloutStorage) -> None:
        """Take in one chunk of experience: ``obs``, ``actions``, ``training_rewards()``, ``terminated``,
        ``truncated`` ``[T, N, ...]``, ``final_obs`` where episodes ended and ``last_obs``. The storage
        is reused for the next chunk, so keep copies."""

    @abstractmethod
    def train_steps(self, progress: float) -> dict[str, float]:
        """The gradient steps due after the experience observed so far; ``progress`` in [0, 1) is the
        fraction of the step budget spent. Returns metrics named ``train/...``."""

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """The loop's call after each chunk: observe it, then train."""
        self.observe(rollout)
        return self.train_steps(progress)

    def acting(self, num_envs: int, action_noise: PersistentUniforms | None = None) -> RecurrentActing:
        """How the collector acts for this learner (``action_noise`` is always None: see ``Algorithm.action_noise``)."""
        return RecurrentActing(self, num_envs)


class SequenceAgent(ReplayLearner, RemoteActors, KeepsReplay):
    """What the training loop holds of the roles its ``builder_class`` makes (``SequenceBuilder.make_learner_roles``):
    acting, ``update``, ``receive`` and the checkpoint, around the builder's ``Learner`` (``learner``), which holds the
    math. In this process one ``Actor`` (``actor``) writes into the replay; with Ray actors each writes into the same
    replay, served to them, and sends what else it has in ``deliver``'s result (``receive``). ``train_steps`` takes the
    learner's ``step`` while its dataset has a batch the replay's rate limiter allows. Its config has ``num_steps``,
    ``min_replay``, ``sequence_length``, ``batch_size``, ``replay_capacity`` and ``save_replay``.

    Args:
        config: the agent's config; obs_shape, action_space: one environment's; device: where the learner trains.
    """

    builder_class: ClassVar[type[SequenceBuilder]]
    builder: SequenceBuilder
    actor: Actor
    learner: Learner

    def __init__(self, config: Any, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str = "cpu"):
        self.config, self.num_steps, self.device = config, config.num_steps, torch.device(device)
        self.builder = self.builder_class(config, obs_shape, action_space)
        roles = self.builder.make_learner_roles(device)
        self.policy, self.actor, self.learner = roles.networks.policy, roles.actor, roles.learner
        self.replay_lost = False
        """Loaded from a checkpoint without its replay into an empty one; warned about once new data arrives."""
        self.replay_store: ReplayStore | None = None
        """Where ``save_replay`` keeps the replay's sequences (``keep_replay_in``); the checkpoint keeps its index."""
        self.actor_states: dict[int, dict[str, Any]] = {}
        """The latest state each Ray actor delivered (its bandits), by index: checkpointed, handed back on resume."""
        self.actor_metrics: dict[str, float] = {}

    @property
    def replay(self) -> Replay:
        """The replay, or a Ray actor's handle on it while actors write into it."""
        return self.learner.replay

    @property
    def updates(self) -> int:
        return self.learner.updates

    @classmethod
    def make_policy(cls, config: Any, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str) -> nn.Module:
        return cls.builder_class(config, obs_shape, action_space).make_policy(device)

    def initial_state(self, num_envs: int) -> Any:
        return self.actor.core.initial_state(num_envs)

    def act(self, obs: torch.Tensor, state: Any, episode_starts: torch.Tensor, previous_reward: torch.Tensor) -> tuple[torch.Tensor, Any]:
        return self.actor.core.act(obs, state, episode_starts, previous_reward)

    def after_step(self, step: Step) -> None:
        self.actor.core.after_step(step)

    def acting(self, num_envs: int, action_noise: PersistentUniforms | None = None) -> RecurrentActing:
        return self.actor.acting(num_envs)

    def observe(self, chunk: RolloutStorage) -> None:
        self.actor_metrics = self.actor.deliver(chunk)["metrics"]

    def train_steps(self, progress: float) -> dict[str, float]:
        if self.replay_lost and len(self.replay):
            self.replay_lost = False
            warnings.warn(f"this run resumed from a checkpoint without its replay (written without --save-replay): learning "
                          f"pauses until {self.config.min_replay} new sequences (--min-replay) are stored, and what was replayed "
                          f"before is lost; resume is exact only with --save-replay", stacklevel=2)
        schedules = self.learner.advance(progress)
        totals: dict[str, float] = {}
        count = 0
        while self.learner.dataset.ready():
            for name, value in self.learner.step().items():
                totals[name] = totals.get(name, 0.0) + value
            count += 1
        metrics = {name: value / count for name, value in totals.items()}
        metrics.update({"train/replay_size": float(len(self.replay)), "train/updates": float(self.updates)})
        return metrics | self.actor_metrics | schedules

    def receive(self, delivery: dict[str, Any], progress: float, steps: int) -> dict[str, float]:
        """What Ray actor ``delivery["index"]`` delivered for a chunk (its sequences already in the replay): train on what
        the replay now allows. ``steps``: environment steps so far, the chunk's included."""
        self.actor_metrics = delivery["metrics"]
        self.actor_states[delivery["index"]] = delivery["state"]
        cfg = self.config
        return self.train_steps(progress) | {"time/actor_write_seconds": delivery["write_seconds"],
                                             "train/replay_ratio": self.updates * cfg.batch_size * cfg.sequence_length / steps}

    def remote_actor_state(self, index: int) -> dict[str, Any] | None:
        """The state Ray actor ``index`` resumes from: its own last one, or (a run that had no Ray actors) this process's
        actor's for actor 0; None: a fresh actor."""
        if self.actor_states:
            return self.actor_states.get(index)
        return self.actor.core.state_dict() if index == 0 else None

    def shared_replay(self) -> Replay:
        return self.replay

    def use_replay(self, replay: Replay) -> None:
        self.learner.replay = self.actor.replay = replay
        self.learner.dataset = self.builder.make_dataset(replay)

    def keep_replay_in(self, directory: Path, observation_space: gym.Space) -> ReplayStore | None:
        """With ``save_replay``: keep the replay in ``directory`` (the run's), beside the checkpoints; the store, or None."""
        if self.config.save_replay:
            self.replay_store = ReplayStore(directory, observation_bytes_per_sequence(observation_space, self.config.sequence_length),
                                            self.config.replay_capacity)
        return self.replay_store

    def state_dict(self) -> dict[str, Any]:
        """The learner's state, the rate limiter's credit, the actors' states and the replay's index (with
        ``save_replay``)."""
        actors = self.actor_states or {0: self.actor.core.state_dict()}
        return {**self.learner.state_dict(), "update_credit": self.replay.due_credit(),
                "actors": [actors.get(i, {}) for i in range(max(actors) + 1)],
                **({"replay": self.replay_store.save(self.replay)} if self.replay_store is not None else {})}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.learner.load_state_dict(state)
        self.replay.set_due_credit(state["update_credit"])
        actors = state["actors"] if "actors" in state else [state.get("actor", {})]  # "actor": written before Ray actors
        self.actor.core.load_state_dict(actors[0])
        self.actor_states = dict(enumerate(actors)) if len(actors) > 1 else {}
        if "replay" in state and "items" in state["replay"]:  # written before the replay moved beside the checkpoint
            self.replay.load_state_dict(state["replay"])
        elif "replay" in state and self.replay_store is not None:
            self.replay_store.load(self.replay, state["replay"])
        else:
            self.replay_lost = not len(self.replay)
