"""The training loop with its experience from Ray actors (``--actors N``): ``DistributedTrainer``.

The actors, the replay server and the learner's side of each kind of actor (its feed) are in
``voidrl.distributed.engine``; this loop takes what each actor sends as soon as it arrives, hands that
actor its latest weights with the request for its next chunk, and keeps everything else of the
``Trainer``'s (run directory, logs, evaluation, checkpoints, progress).
"""

from __future__ import annotations

import signal
import time
from collections import deque
from typing import Any

from voidrl.config import TrainConfig
from voidrl.distributed.engine import FEEDS, GradientFeed, SequenceFeed, check_ray_address, import_ray
from voidrl.rollout.collector import RolloutStats
from voidrl.train.loop import Trainer, peak_rss_mb
from voidrl.train.signals import RunAborted, RunStopped


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

    def _loop(self, logger, bar, stop, governor) -> None:
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
        feed = None
        workers: list[Any] = []
        self.pending: dict[Any, Any] = {}
        try:
            feed = FEEDS[self.algo.remote_actors](self.algo, ray)
            worker_class = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(feed.worker_class)
            workers = [worker_class.remote(config.to_dict(), i, config.run.actors, self.update, *feed.worker_args())
                       for i in range(config.run.actors)]
            self._train_with(feed, workers, logger, bar, stop)
        except ray.exceptions.RayError:
            if not isinstance(feed, SequenceFeed) or feed.server_alive():
                raise
            self.replay_lost(feed)
        finally:
            ray.wait(list(self.pending), num_returns=len(self.pending), timeout=60)  # no chunk cut off mid-write
            if feed is not None:
                feed.close()
            for worker in workers:
                ray.kill(worker)
            if started_ray:
                ray.shutdown()

    def replay_lost(self, feed: SequenceFeed) -> None:
        """The replay server died (its contents with it): keep the learner's state and stop in one line. Without
        --save-replay the checkpoint gets the learner as it is now (it never held the replay); with it the last
        checkpoint, which holds the replay as it was then, is kept as it is."""
        feed.close()
        kept = "the last checkpoint, with its replay, is kept"
        if not self.config.algo_config.save_replay:
            self.save(healthy=False)
            kept = f"the learner's state at step {self.step} is checkpointed"
        raise RunAborted(f"the replay server died at step {self.step}; {kept}; continue with --resume --run-dir {self.run_dir}")

    def _train_with(self, feed: SequenceFeed | GradientFeed, workers: list[Any], logger, bar, stop) -> None:
        ray, config, algo = self.ray, self.config, self.algo
        publish = lambda: ray.put({name: value.detach().cpu() for name, value in algo.policy.state_dict().items()})  # noqa: E731
        version, weights = algo.updates, publish()

        def request(worker: Any) -> None:
            nonlocal version, weights
            if algo.updates != version:
                version, weights = algo.updates, publish()
            self.pending[worker.run.remote(version, weights)] = worker

        for worker in workers:
            request(worker)
        hooks = self._hooks(logger, bar)
        recent_returns: deque[float] = deque(maxlen=20)
        last = time.perf_counter()
        while self.step < config.run.steps:
            (ready,), _ = ray.wait(list(self.pending), num_returns=1)
            worker = self.pending.pop(ready)
            result = ray.get(ready)
            stop.check()
            collected = time.perf_counter()
            if feed.acts_while_learning:
                request(worker)
            updates_before = algo.updates
            chunk: RolloutStats = result["stats"]
            steps_taken = chunk.vector_steps * config.env.num_envs
            metrics = feed.learn(result, self.step / config.run.steps, self.step + steps_taken)
            if not feed.acts_while_learning:
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
            self._close_update(chunk, steps_taken, metrics, recent_returns, hooks)
            stop.check()
