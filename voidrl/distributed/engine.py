"""Many actors feeding one learner, on Ray.

``--actors N`` starts N Ray actors, each stepping ``num_envs`` environments with its own copy of
the acting network; the learner, in this process, takes what each sends as soon as it arrives and
hands that actor its latest weights with the request for its next chunk. What actors send is
the algorithm's ``remote_actors``, each with a feed on the learner's side:

- ``"sequences"`` (R2D2): actors write their sequences straight into a replay held by one more Ray
  actor (``ReplayServer``) and report how many; the learner samples the replay and trains. The next
  chunk is requested before the learner trains, so acting and learning overlap.
- ``"gradients"`` (A3C): actor-learners send the gradient of their own rollout's loss; the learner,
  the parameter holder, applies each as it arrives and sends back the parameters it leads to.

Ray restarts an actor that dies and reruns its chunk, so the run goes on. The loop that drives them is
``voidrl.train.ray_loop.DistributedTrainer``; nothing here imports the training loop.
"""

from __future__ import annotations

import os
import socket
import time
from abc import ABC, abstractmethod
from typing import Any

import torch

from voidrl.algos import ALGORITHMS
from voidrl.algos.learner import RecurrentActing
from voidrl.config import TrainConfig
from voidrl.envs import make_env
from voidrl.replay import SequenceReplay
from voidrl.rollout import Collector, RolloutStorage
from voidrl.seeding import env_seed, seed_everything


def import_ray() -> Any:
    # Ray's C++ failure-signal handler would take over SIGTERM once the driver connects, print a stack trace and abort
    # (exit -6) after voidrl's own handler has checkpointed; crashes still end the process, only without that trace.
    os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
    try:
        import ray
    except ImportError:
        raise ValueError("actors > 0 needs the ray package: pip install 'ray==2.60.0' (or voidrl[ray])") from None
    return ray


def check_ray_address(address: str, timeout: float = 3.0) -> None:
    """Refuse at once an address where no Ray head listens (``ray.init`` would wait minutes). Takes
    ``host:port``, ``ray://host:port`` or ``auto`` (the cluster this machine belongs to, found as Ray finds it)."""
    if address == "auto":
        from ray._private.services import canonicalize_bootstrap_address  # Ray's own lookup (ray is pinned)

        try:
            found = canonicalize_bootstrap_address("auto")
        except ConnectionError:
            found = None
        if found is None:
            raise ValueError("ray_address auto: no Ray cluster runs on this machine; start one with `ray start --head`, "
                             "or leave --ray-address out and this run starts its own")
        address = found
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"ray_address must be host:port, ray://host:port or auto, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        raise ValueError(f"ray_address {address!r}: no Ray head answers there ({error.strerror or error}); "
                         "start one with `ray start --head` and pass the address it prints") from None


class ReplayServer(SequenceReplay):
    """The replay as a Ray actor (Ray calls methods by name, so its size is a method)."""

    def size(self) -> int:
        return len(self)


class RemoteReplay:
    """The learner's handle on a ``ReplayServer``: the ``SequenceReplay`` methods, each a Ray call."""

    def __init__(self, server: Any, ray: Any):
        self.server, self.ray = server, ray

    def __len__(self) -> int:
        return self.ray.get(self.server.size.remote())

    def __getattr__(self, name: str) -> Any:
        if name not in ("add", "sample", "update_priorities", "snapshot", "state_dict", "load_state_dict"):
            raise AttributeError(name)
        method = getattr(self.server, name)
        return lambda *args: self.ray.get(method.remote(*args))


class ActorWorker(ABC):
    """One remote actor: its environments, a copy of the acting network, a collector; a subclass says
    how it acts (``make_acting``) and what it sends for each chunk (``deliver``).

    Args:
        config: the run's ``TrainConfig.to_dict()``; index: this actor's number among ``num_actors``;
        update: the run's update count when it started (a resumed run's environments are reset with new
        seeds, as in the one-process loop).
    """

    def __init__(self, config: dict[str, Any], index: int, num_actors: int, update: int = 0):
        torch.set_num_threads(1)
        self.config = TrainConfig.from_dict(config)
        run = self.config.run
        seed_everything(run.seed + 7919 * (index + 1))
        self.env = make_env(run.env, self.config.env, gamma=self.config.algo_config.gamma)
        space = self.env.single_action_space
        self.policy, acting = self.make_acting(ALGORITHMS[self.config.algo], index, num_actors)
        self.collector = Collector(self.env, acting)
        first = self.collector.reset(env_seed(run.seed + index + 1, update))
        self.storage = RolloutStorage(self.config.algo_config.num_steps, self.env.num_envs, first.shape[1:], first.dtype,
                                      space.shape, torch.long if not space.shape else torch.float32, "cpu")
        self.version = -1

    @abstractmethod
    def make_acting(self, algo: type, index: int, num_actors: int) -> tuple[torch.nn.Module, Any]:
        """The network whose weights the learner sends, and the collector's way of acting with it."""

    @abstractmethod
    def deliver(self, chunk: RolloutStorage) -> dict[str, Any]:
        """What goes to the learner for one filled chunk (besides its statistics)."""

    def run(self, version: int, weights: dict[str, torch.Tensor]) -> dict[str, Any]:
        """One chunk acted with the weights of ``version``: its statistics, timing and ``deliver``'s result."""
        if version != self.version:
            self.policy.load_state_dict(weights)
            self.version = version
        started = time.perf_counter()
        stats = self.collector.collect(self.storage, 0)
        delivered = self.deliver(self.storage)
        return {"stats": stats, "version": version, "seconds": time.perf_counter() - started, **delivered}


class SequenceActor(ActorWorker):
    """R2D2's actor: epsilon-greedy on its slice of the ladder; writes its sequences into the replay."""

    def __init__(self, config: dict[str, Any], index: int, num_actors: int, update: int, replay: Any):
        self.replay = replay
        super().__init__(config, index, num_actors, update)

    def make_acting(self, algo: type, index: int, num_actors: int) -> tuple[torch.nn.Module, Any]:
        cfg, space = self.config.algo_config, self.env.single_action_space
        policy = algo.make_policy(cfg, self.env.single_observation_space.shape, space, "cpu")
        self.acting = algo.make_actor(cfg, policy, index, num_actors, self.env.num_envs)
        return policy, RecurrentActing(self.acting, self.env.num_envs)

    def deliver(self, chunk: RolloutStorage) -> dict[str, Any]:
        import ray

        sequences = self.acting.sequences(chunk)
        writing = time.perf_counter()
        ray.get(self.replay.add.remote(sequences))
        return {"sequences": len(sequences), "write_seconds": time.perf_counter() - writing}


class GradientActor(ActorWorker):
    """A3C's actor-learner: samples from its copy of the policy; sends the gradient of its rollout's loss."""

    def make_acting(self, algo: type, index: int, num_actors: int) -> tuple[torch.nn.Module, Any]:
        self.learner = algo(self.config.algo_config, self.env.single_observation_space.shape, self.env.single_action_space, "cpu")
        return self.learner.policy, self.learner.acting(self.env.num_envs)

    def deliver(self, chunk: RolloutStorage) -> dict[str, Any]:
        gradient, metrics = self.learner.gradient(chunk)
        return {"gradient": gradient, "metrics": metrics}


class SequenceFeed:
    """The learner's side of R2D2's actors: the replay moves to a Ray actor for the run, and each chunk's
    sequences earn the gradient steps they are worth. The learner trains while the actor acts again."""

    worker_class = SequenceActor
    acts_while_learning = True

    def __init__(self, algo: Any, ray: Any):
        self.algo, self.ray = algo, ray
        self.local_replay = replay = algo.replay
        self.server = ray.remote(ReplayServer).remote(replay.capacity, replay.priority_exponent, replay.importance_exponent,
                                                      int(torch.randint(2**31, ())))
        if len(replay):
            ray.get(self.server.load_state_dict.remote(replay.state_dict()))
        algo.replay = RemoteReplay(self.server, ray)

    def worker_args(self) -> tuple[Any, ...]:
        return (self.server,)

    def learn(self, result: dict[str, Any], progress: float, steps: int) -> dict[str, float]:
        """Train on what the replay now allows; ``steps``: environment steps so far, this chunk's included."""
        algo, cfg = self.algo, self.algo.config
        algo.credit(result["sequences"])
        metrics = algo.train_steps(progress)
        metrics["time/actor_write_seconds"] = result["write_seconds"]
        metrics["train/replay_ratio"] = algo.updates * cfg.batch_size * cfg.sequence_length / steps
        return metrics

    def close(self) -> None:
        """The replay back in this process (its contents when the checkpoint keeps them); the server stopped. Once."""
        if self.algo.replay is self.local_replay:
            return
        self.algo.replay = self.local_replay
        if self.algo.config.save_replay and self.server_alive():
            self.local_replay.load_state_dict(self.ray.get(self.server.state_dict.remote()))
        self.ray.kill(self.server)

    def server_alive(self) -> bool:
        try:
            self.ray.get(self.server.size.remote(), timeout=30)
            return True
        except self.ray.exceptions.RayError:
            return False


class GradientFeed:
    """The learner's side of A3C's actor-learners: the parameter holder applies each gradient as it comes,
    then hands that actor-learner the parameters it leads to."""

    worker_class = GradientActor
    acts_while_learning = False

    def __init__(self, algo: Any, ray: Any):
        self.algo = algo

    def worker_args(self) -> tuple[Any, ...]:
        return ()

    def learn(self, result: dict[str, Any], progress: float, steps: int) -> dict[str, float]:
        staleness = self.algo.updates - result["version"]
        metrics = result["metrics"] | self.algo.apply_gradient(result["gradient"])
        metrics["train/gradient_staleness"] = float(staleness)
        return metrics

    def close(self) -> None:
        pass


FEEDS = {"sequences": SequenceFeed, "gradients": GradientFeed}
