"""The training loop with its experience from Ray actors (``--actors N``): ``DistributedTrainer``.

The actors and the hosted replay are in ``voidrl.distributed.engine``; this loop takes what each actor delivers
as soon as it arrives, hands it to the learner (``Algorithm.receive``) and that actor its latest weights with the
request for its next chunk. It replaces only the ``Trainer``'s ``train_updates``, the source of the updates that
the one loop counts and hands to its hooks (logs, evaluation, checkpoints, progress).
"""

from __future__ import annotations

import copy
import signal
import time
from collections.abc import Iterator
from typing import Any

from voidrl.config import TrainConfig
from voidrl.distributed.engine import ActorWorker, Hosted, HostedReplay, adopt_statistics, check_ray_address, import_ray, send_tensors_as_arrays, tensors
from voidrl.rollout.collector import RolloutStats
from voidrl.training.loop import Trainer, how_to_continue, peak_rss_mb
from voidrl.training.signals import GracefulStop, RunAborted, RunStopped


class DistributedTrainer(Trainer):
    """A ``Trainer`` whose experience comes from ``config.run.actors`` Ray actors."""

    def __init__(self, config: TrainConfig, resume: bool = False, init_checkpoint: dict[str, Any] | None = None):
        super().__init__(config, resume, init_checkpoint)
        try:
            self.ray = import_ray()
            if config.run.ray_address is not None:
                check_ray_address(config.run.ray_address)
        except BaseException:
            self.close()
            raise

    def make_collector(self) -> None:
        """None: the environments are the actors'; a resumed run's actors start new episodes."""
        self.episodes_unsaved = "the environments of Ray actors"
        return None

    def train_updates(self, stop: GracefulStop) -> Iterator[tuple[RolloutStats, int, dict[str, float]]]:
        """Each chunk a Ray actor delivers, learnt from as it arrives, while steps remain; Ray, the actors and the
        hosted replay started first and stopped after (also when the loop stops early)."""
        ray, config = self.ray, self.config
        started_ray = not ray.is_initialized()
        if started_ray:
            try:
                ray.init(address=config.run.ray_address, include_dashboard=False, log_to_driver=False,
                         logging_level="ERROR", configure_logging=False)
                stop.install()  # Ray's SIGTERM handler would end the run without a checkpoint
            except SystemExit as exit:  # that handler (sys.exit(15)), for a SIGTERM while Ray was starting
                ray.shutdown()
                if exit.code != signal.SIGTERM:
                    raise
                raise RunStopped(signal.SIGTERM) from None
        send_tensors_as_arrays(ray)
        algo = self.algo
        local_replay = algo.shared_replay()
        server = None
        workers: list[Any] = []
        self.pending: dict[Any, Any] = {}
        try:
            if local_replay is not None:
                server = ray.remote(Hosted).remote(local_replay)
                algo.use_replay(HostedReplay(server, ray))
            worker_class = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(ActorWorker)
            workers = [worker_class.remote(config, algo.builder_class, i, config.run.actors, self.update, server, algo.remote_actor_state(i))
                       for i in range(config.run.actors)]
            yield from self.learn_from(workers, stop)
        except ray.exceptions.RayError:
            if server is None or self.server_alive(server):
                raise
            self.replay_lost(local_replay)
        finally:
            ray.wait(list(self.pending), num_returns=len(self.pending), timeout=60)  # no chunk cut off mid-write
            if server is not None:
                self.take_back_replay(server, local_replay)
            for worker in workers:
                ray.kill(worker)
            if started_ray:
                ray.shutdown()

    def server_alive(self, server: Any) -> bool:
        try:
            self.ray.get(server.call.remote("__len__"), timeout=30)
            return True
        except self.ray.exceptions.RayError:
            return False

    def take_back_replay(self, server: Any, local_replay: Any) -> None:
        """The replay back in this process (the server's, whole, where checkpoints keep it); the server stopped. Once."""
        if self.algo.shared_replay() is local_replay:
            return
        keeps = self.replay_store is not None and self.server_alive(server)
        self.algo.use_replay(copy.deepcopy(self.ray.get(server.unwrap.remote())) if keeps else local_replay)  # writable arrays
        self.ray.kill(server)

    def replay_lost(self, local_replay: Any) -> None:
        """The replay server died (its contents with it): keep the learner's state and stop in one line. Without
        --save-replay the checkpoint gets the learner as it is now (it never held the replay); with it the last
        checkpoint, which holds the replay as it was then, is kept as it is."""
        self.algo.use_replay(local_replay)
        kept = "the last checkpoint, with its replay, is kept"
        if not self.config.algo_config.save_replay:
            self.save(healthy=False)
            kept = f"the learner's state at step {self.step} is checkpointed"
        raise RunAborted(f"the replay server died at step {self.step}; {kept}; {how_to_continue(self.run_dir)}")

    def learn_from(self, workers: list[Any], stop: GracefulStop) -> Iterator[tuple[RolloutStats, int, dict[str, float]]]:
        ray, config, algo = self.ray, self.config, self.algo
        acts_while_learning = not algo.builder_class.waits_for_weights
        version, weights = algo.updates, ray.put(tensors(algo.policy))

        def request(worker: Any) -> None:
            nonlocal version, weights
            if algo.updates != version:
                version, weights = algo.updates, ray.put(tensors(algo.policy))
            self.pending[worker.run.remote(version, weights)] = worker

        ray.get([worker.ready.remote() for worker in workers])  # none starts the run alone while another still starts
        for worker in workers:
            request(worker)
        last = time.perf_counter()
        while self.step < config.run.steps:
            (ready,), _ = ray.wait(list(self.pending), num_returns=1)
            worker = self.pending.pop(ready)
            result = ray.get(ready)
            stop.check()
            collected = time.perf_counter()
            if acts_while_learning:
                request(worker)
            updates_before = algo.updates
            chunk: RolloutStats = result["stats"]
            steps_taken = chunk.env_steps
            delivery = result["delivery"]
            adopt_statistics(algo.policy, delivery["statistics"])
            metrics = algo.receive(delivery, self.step / config.run.steps, self.step + steps_taken)
            if not acts_while_learning:
                request(worker)
            chunk.episode_steps = [self.step + offset for offset in chunk.episode_steps]
            now = time.perf_counter()
            metrics.update({
                "time/sps": steps_taken / (now - last),
                "time/actor_sps": steps_taken / result["seconds"],
                "time/actor_env_seconds": chunk.env_seconds,
                "time/update_seconds": now - collected,
                "time/learner_updates_per_second": (algo.updates - updates_before) / max(now - collected, 1e-9),
                "sys/peak_rss_mb": peak_rss_mb(),
            })
            last = now
            yield chunk, steps_taken, metrics
