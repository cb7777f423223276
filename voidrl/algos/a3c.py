"""Asynchronous advantage actor-critic (Mnih et al. 2016).

Each actor-learner acts with its own copy of the parameters for ``num_steps`` steps and computes the
gradient of the A2C loss on that rollout; one parameter holder applies the gradients as they arrive,
whichever actor-learner sent them and however many steps other gradients have moved the parameters
since it copied them, with one optimiser whose statistics all of them share (the paper's shared
RMSprop). The actor-learner then copies the new parameters and acts again; none waits for another.

With ``--actors N`` the actor-learners are Ray actors and the holder is the learner process
(``voidrl.distributed``); with ``--actors 0`` the one actor-learner is this process, and its gradient
is applied at once: A2C's step.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch

from voidrl.algos.a2c import A2C
from voidrl.algos.algorithm import RemoteActors
from voidrl.algos.roles import Builder
from voidrl.configs.a3c import A3CConfig
from voidrl.rollout.storage import RolloutStorage


class ActorLearner:
    """A Ray actor of A3C: its own copy of the algorithm samples actions and turns each rollout into a gradient."""

    def __init__(self, learner: A3C):
        self.learner, self.policy = learner, learner.policy

    def acting(self, num_envs: int) -> Any:
        return self.learner.acting(num_envs)

    def deliver(self, chunk: RolloutStorage) -> dict[str, Any]:
        gradient, metrics = self.learner.actor_gradient(chunk)
        return {"gradient": gradient, "metrics": metrics}

    def state_dict(self) -> dict[str, Any]:
        """Nothing of its own to resume."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Nothing of its own to resume."""


class A3CBuilder(Builder):
    """Actor-learners, each with an ``A3C`` of its own; no replay. Each waits for the parameters its gradient leads to."""

    waits_for_weights = True

    def make_actor(self, index: int, num_actors: int, num_envs: int, replay: None) -> ActorLearner:
        return ActorLearner(A3C(self.config, self.obs_shape, self.action_space, "cpu"))


class A3C(A2C, RemoteActors):
    """A2C's loss, split into the actor-learner's ``actor_gradient`` and the holder's ``apply_gradient``."""

    config_class = A3CConfig
    builder_class = A3CBuilder

    def __init__(self, config: A3CConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device="cpu"):
        super().__init__(config, obs_shape, action_space, device)
        self.updates = 0
        """Gradients applied by this holder since it was built: the version of the parameters it hands out."""

    def actor_gradient(self, rollout: RolloutStorage) -> tuple[torch.Tensor, dict[str, float]]:
        """The actor-learner's half: the loss's gradient ``[P]`` on its rollout (``rollout_gradient``), at its own copy
        of the parameters (flat, in ``policy.parameters()`` order), and the loss's metrics."""
        gradient, metrics = self.rollout_gradient(rollout)
        return gradient.clone(), metrics

    def apply_gradient(self, gradient: torch.Tensor, progress: float) -> dict[str, float]:
        """The holder's half: one step of the shared optimiser along ``gradient [P]``, computed by any
        actor-learner at any earlier version of the parameters; clipped to ``max_grad_norm`` first, at the learning
        rate of ``progress`` (the fraction of the step budget spent)."""
        self.parameters.set_learning_rate(self.advance(progress).learning_rate)
        norm = self.parameters.descend(gradient, self.config.max_grad_norm)
        self.updates += 1
        return {"train/grad_norm": norm.item(), "train/updates": float(self.updates)} | self.config.schedule_metrics(self.now)

    def receive(self, delivery: dict[str, Any], progress: float, steps: int) -> dict[str, float]:
        """An actor-learner's gradient, applied as it comes, however many steps others have moved the parameters
        since its copy (``train/gradient_staleness``)."""
        staleness = self.updates - delivery["version"]
        return delivery["metrics"] | self.apply_gradient(delivery["gradient"], progress) | {"train/gradient_staleness": float(staleness)}

    def update(self, rollout: RolloutStorage, progress: float) -> dict[str, float]:
        """One actor-learner in this process: its gradient, applied at once."""
        gradient, metrics = self.actor_gradient(rollout)
        return metrics | self.apply_gradient(gradient, progress)
