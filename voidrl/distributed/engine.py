"""Many actors feeding one learner, on Ray.

``--actors N`` starts N Ray actors (``ActorWorker``), each stepping ``num_envs`` environments with
its own copy of the acting network, and one Ray actor holding the replay (``ReplayServer``). Actors
write their sequences straight into the replay; the learner, in this process, samples from it and
trains, and sends its latest weights with each actor's next request for a chunk (sent before it
trains on the chunk just received, so acting and learning overlap). Ray restarts an actor
that dies and reruns its chunk, so the run goes on. Everything else (run directory, logs, evaluation,
checkpoints, progress) is the ``Trainer``'s: ``DistributedTrainer`` replaces only its loop.
"""

from __future__ import annotations

import socket
import time
from collections import deque
from typing import Any

import torch

from voidrl.algos import ALGORITHMS
from voidrl.algos.learner import RecurrentActing
from voidrl.config import TrainConfig
from voidrl.envs import make_env
from voidrl.replay import SequenceReplay
from voidrl.rollout import Collector, RolloutStorage
from voidrl.rollout.collector import RolloutStats
from voidrl.train.loop import Trainer, env_seed, peak_rss_mb
from voidrl.train.seeding import seed_everything


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ValueError("actors > 0 needs the ray package: pip install 'ray==2.60.0' (or voidrl[ray])") from None
    return ray


def check_ray_address(address: str, timeout: float = 3.0) -> None:
    """Refuse at once an address where no Ray head listens (``ray.init`` would wait minutes). Takes
    ``host:port`` or ``ray://host:port``; ``auto`` (the cluster this machine belongs to) is Ray's to find."""
    if address == "auto":
        return
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
        if name not in ("add", "sample", "update_priorities", "state_dict", "load_state_dict"):
            raise AttributeError(name)
        method = getattr(self.server, name)
        return lambda *args: self.ray.get(method.remote(*args))


class ActorWorker:
    """One remote actor: its environments, a copy of the acting network, the learner's acting part.

    Args:
        config: the run's ``TrainConfig.to_dict()``; index: this actor's number among ``num_actors``;
        replay: the ``ReplayServer`` it writes to; update: the run's update count when it started (a resumed
        run's environments are reset with new seeds, as in the one-process loop).
    """

    def __init__(self, config: dict[str, Any], index: int, num_actors: int, replay: Any, update: int = 0):
        torch.set_num_threads(1)
        self.config = TrainConfig.from_dict(config)
        run, algo = self.config.run, ALGORITHMS[self.config.algo]
        seed_everything(run.seed + 7919 * (index + 1))
        self.env = make_env(run.env, self.config.env, gamma=getattr(self.config.algo_config, "gamma", 0.99))
        space = self.env.single_action_space
        self.policy = algo.make_policy(self.config.algo_config, self.env.single_observation_space.shape, space, "cpu")
        self.acting = algo.make_actor(self.config.algo_config, self.policy, index, num_actors, self.env.num_envs)
        self.collector = Collector(self.env, RecurrentActing(self.acting, self.env.num_envs))
        first = self.collector.reset(env_seed(run.seed + index + 1, update))
        self.storage = RolloutStorage(self.config.algo_config.num_steps, self.env.num_envs, first.shape[1:], first.dtype,
                                      space.shape, torch.long, "cpu")
        self.replay = replay
        self.version = -1

    def run(self, version: int, weights: dict[str, torch.Tensor]) -> dict[str, Any]:
        """One chunk with the weights of ``version``: its sequences go to the replay; returns its statistics."""
        import ray

        if version != self.version:
            self.policy.load_state_dict(weights)
            self.version = version
        started = time.perf_counter()
        stats = self.collector.collect(self.storage, 0)
        sequences = self.acting.sequences(self.storage)
        writing = time.perf_counter()
        ray.get(self.replay.add.remote(sequences))
        done = time.perf_counter()
        return {"stats": stats, "sequences": len(sequences), "seconds": done - started, "write_seconds": done - writing}


class DistributedTrainer(Trainer):
    """A ``Trainer`` whose experience comes from ``config.run.actors`` Ray actors."""

    def __init__(self, config: TrainConfig, resume: bool = False, init_checkpoint: dict[str, Any] | None = None):
        super().__init__(config, resume, init_checkpoint)
        try:
            if not hasattr(self.algo, "make_actor"):
                raise ValueError(f"actors > 0 needs a learner with remote actors (r2d2), not {config.algo}")
            self.ray = import_ray()
            if config.run.ray_address is not None:
                check_ray_address(config.run.ray_address)
        except BaseException:
            self.close()
            raise

    def _loop(self, logger, bar, stop, governor) -> None:
        ray, config, algo = self.ray, self.config, self.algo
        started_ray = not ray.is_initialized()
        if started_ray:
            ray.init(address=config.run.ray_address, include_dashboard=False, log_to_driver=False,
                     logging_level="ERROR", configure_logging=False)
        local_replay = algo.replay
        server = ray.remote(ReplayServer).remote(local_replay.capacity, local_replay.priority_exponent,
                                                 local_replay.importance_exponent, int(torch.randint(2**31, ())))
        workers: list[Any] = []
        self.pending: dict[Any, Any] = {}
        try:
            if len(local_replay):
                ray.get(server.load_state_dict.remote(local_replay.state_dict()))
            algo.replay = RemoteReplay(server, ray)
            worker_class = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(ActorWorker)
            workers = [worker_class.remote(config.to_dict(), i, config.run.actors, server, self.update)
                       for i in range(config.run.actors)]
            self._train_with(workers, logger, bar, stop)
        finally:
            algo.replay = local_replay
            ray.wait(list(self.pending), num_returns=len(self.pending), timeout=60)  # no chunk cut off mid-write
            if config.algo_config.save_replay and workers:  # the checkpoint written after the loop needs it here
                local_replay.load_state_dict(ray.get(server.state_dict.remote()))
            for worker in workers:
                ray.kill(worker)
            ray.kill(server)
            if started_ray:
                ray.shutdown()

    def _train_with(self, workers: list[Any], logger, bar, stop) -> None:
        ray, config, algo = self.ray, self.config, self.algo
        publish = lambda: ray.put({name: value.detach().cpu() for name, value in algo.policy.state_dict().items()})  # noqa: E731
        version, weights = algo.updates, publish()
        pending = self.pending
        pending.update({worker.run.remote(version, weights): worker for worker in workers})
        hooks = self._hooks(logger, bar)
        recent_returns: deque[float] = deque(maxlen=20)
        last = time.perf_counter()
        while self.step < config.run.steps:
            (ready,), _ = ray.wait(list(pending), num_returns=1)
            worker = pending.pop(ready)
            result = ray.get(ready)
            stop.check()
            collected = time.perf_counter()
            if algo.updates != version:
                version, weights = algo.updates, publish()
            pending[worker.run.remote(version, weights)] = worker  # it acts while the learner trains
            updates_before = algo.updates
            algo.credit(result["sequences"])
            metrics = algo.train_steps(progress=self.step / config.run.steps)
            chunk: RolloutStats = result["stats"]
            steps_taken = chunk.vector_steps * config.env.num_envs
            chunk.episode_steps = [self.step + offset for offset in chunk.episode_steps]
            now = time.perf_counter()
            metrics.update({
                "time/sps": steps_taken / (now - last),
                "time/actor_sps": steps_taken / result["seconds"],
                "time/actor_write_seconds": result["write_seconds"],
                "time/actor_env_seconds": chunk.env_seconds,
                "time/update_seconds": now - collected,
                "time/learner_updates_per_second": (algo.updates - updates_before) / max(now - collected, 1e-9),
                "train/replay_ratio": algo.updates * config.algo_config.batch_size * config.algo_config.sequence_length
                                      / (self.step + steps_taken),
                "sys/peak_rss_mb": peak_rss_mb(),
            })
            last = now
            self._close_update(chunk, steps_taken, metrics, recent_returns, hooks)
            stop.check()
