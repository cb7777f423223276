"""The one training loop: collect, update, log, checkpoint.

``Trainer(config)`` builds every part of a run and checks every input (options,
their fit to the environment, the run directory, the checkpoints named) without
writing anything; ``Trainer.train()`` runs it. So a bad combination of options
fails before any work, and a run directory is only touched by a run that can start.
"""

from __future__ import annotations

import copy
import dataclasses
import resource
import signal
import sys
import time
from collections import deque
from pathlib import Path
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import torch
from tqdm import tqdm

from voidrl.algos.algorithm import Algorithm, KeepsReplay
from voidrl.callbacks import Callback
from voidrl.config import TrainConfig, progress_shown
from voidrl import collective
from voidrl.envs import make_env
from voidrl.envs.base import VecEnv
from voidrl.envs.failure import EnvironmentFailure
from voidrl.envs.snapshot import NotSaveable
from voidrl.envs.suites import suite_of
from voidrl.intrinsic.base import RewardSource, build_reward_source
from voidrl.io.checkpoint import CheckpointError, load_checkpoint, load_run_checkpoint, save_checkpoint
from voidrl.io.logger import RunLogger
from voidrl.io.run_dir import RunDirError, RunDirLock, check_writable_dir, remove_stale_temporaries
from voidrl.nets.parts import fine_tuning_weights, load_parts, rescale_policy_logits, warn_if_other_environment
from voidrl.nets.persistence import PersistentUniforms
from voidrl.registry import ALGORITHMS, REWARD_SOURCES
from voidrl.replay.store import ReplayStore
from voidrl.rollout import Collector
from voidrl.rollout.collector import RolloutStats
from voidrl.rollout.diagnostics import identical_action_fraction
from voidrl.seeding import env_seed, rank_seed, rng_state, seed_everything, set_rng_state, use_deterministic_kernels
from voidrl.training.agent import Agent, resolve_device
from voidrl.training.evaluation import PeriodicEvaluator
from voidrl.training.hooks import (CallbackHook, CheckpointHook, CollapseGuard, EvaluationHook, Hook, LogHook, ProgressHook, ProgressLines,
                                 UpdateReport)
from voidrl.training.preflight import preflight
from voidrl.training.signals import GracefulStop, RunAborted, RunStopped
from voidrl.training.threads import busy_cpus_warning, check_thread_count, default_threads, torch_threads

CHECKPOINT_NAME = "checkpoint.pt"
HEALTHY_NAME = "healthy.pt"
KEPT_WEIGHTS_DIR = "weights"
"""With keep_weights: the folder of the networks kept at each checkpoint, step-<step>.pt."""
"""With the collapse guard on: the last checkpoint written while the policy entropy was healthy."""
REPLAY_DIR = "replay"
"""Where a replay learner keeps its replay beside the checkpoints (``--save-replay``)."""
RUN_FILES = ("episodes.csv", "metrics.csv", "config.json", "tensorboard")
"""What a started run leaves in its directory before its first checkpoint."""
LEARNING_STATE = ("algorithm", "env", "intrinsic", "action_noise")
"""The parts of a checkpoint that make up what the agent has learned and how it acts. The collapse
guard restores these; a resume restores them and also the counters, RNGs and evaluation record."""
COLLECTION_STATE = ("env", "intrinsic", "action_noise")
"""The parts a collection changes (normaliser statistics, a plug-in's memory and networks, the persistent noise)."""
RECENT_EPISODES = 20
"""Episodes in ``rollout/recent_return_mean``."""


def check_data_parallel(config: TrainConfig) -> None:
    """Refuse what a data-parallel run (several ``torchrun`` processes) cannot do, naming the option. The algorithms
    that can (their config's ``data_parallel``) have fixed-length rollouts and take every gradient step through
    ``TrainedParameters``, whose all-reduce averages it."""
    if not config.algo_config.data_parallel:
        able = ", ".join(name for name in ALGORITHMS if ALGORITHMS.config_class(name).data_parallel)
        raise ValueError(f"torchrun: {config.algo} cannot train data-parallel; choose one of {able}, or run a single process")
    if config.run.actors:
        raise ValueError("torchrun: --actors (Ray) and data-parallel processes do not combine; choose one")
    if config.run.collapse_entropy is not None:
        raise ValueError("torchrun: --collapse-entropy is not supported data-parallel (each process would judge its own "
                         "entropy); run a single process")


def merge_episodes(gathered: list[tuple[list[int], list[float], list[int]]], start_step: int) -> tuple[list[int], list[float], list[int]]:
    """Every process's finished episodes ``(steps, returns, lengths)`` as one list in step order.

    Each process counts the steps of its own environments from ``start_step``; with W processes stepping
    in lockstep, its k-th local step after ``start_step`` is the run's (W k)-th.
    """
    world = len(gathered)
    episodes = sorted((start_step + (step - start_step) * world, rank, episode_return, length)
                      for rank, (steps, returns, lengths) in enumerate(gathered)
                      for step, episode_return, length in zip(steps, returns, lengths))
    return [e[0] for e in episodes], [e[2] for e in episodes], [e[3] for e in episodes]


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def has_run_files(run_dir: Path) -> bool:
    return any((run_dir / name).exists() for name in RUN_FILES)


TO_CONTINUE_IT = "pass resume=True (--resume) to continue it, or choose another run_dir"
"""What a refusal of a directory holding a run says to do. Messages name an option by its field (the argument of
``voidrl.train``, the flag with dashes), with the flag in parentheses where it is spelled otherwise."""


def check_run_dir(config: TrainConfig, resume: bool) -> Path:
    """Refuse a directory that cannot be written, or one that holds a checkpointed run unless resuming it (a run that
    stopped before its first checkpoint cannot be continued: the directory is taken over)."""
    run_dir = check_writable_dir(config.run_dir, "run_dir")
    if not resume and (run_dir / CHECKPOINT_NAME).exists():
        raise RunDirError(f"run directory {str(run_dir)!r} already holds a run; {TO_CONTINUE_IT}")
    return run_dir


def how_to_continue(run_dir: Path) -> str:
    """How to go on with the stopped run in ``run_dir``, from the command line and from Python."""
    return f"continue with --resume --run-dir {run_dir} (Python: resume=True, run_dir={str(run_dir)!r})"


class RunParts(NamedTuple):
    """What ``make_parts`` builds of a run; the ``Trainer`` keeps each as an attribute of its own name."""

    env: VecEnv
    algo: Algorithm
    plugin: RewardSource | None
    """The reward plug-in ``run.intrinsic`` names; None without one."""
    action_noise: PersistentUniforms | None
    evaluator: PeriodicEvaluator | None
    """None without ``eval_every``, and on every rank but 0."""
    replay_store: ReplayStore | None
    """Where a replay learner keeps its replay (``--save-replay``); None where the run keeps none."""
    threads: int
    """The intra-op threads of the run from start to end, its networks' initialisation included, recorded in
    config.json when it starts (the count changes the order of floating-point sums); a resumed run keeps its recorded
    count unless ``--torch-threads`` changes it."""


def check_parts(config: TrainConfig) -> None:
    """Refuse ``config`` as its run would, writing nothing: the preflight, then its parts built on trial and closed
    (``voidrl train --print-config``)."""
    preflight(config)
    make_parts(config, resolve_device(config.run.device), config.run.seed, rank=0).env.close()


def make_parts(config: TrainConfig, device: torch.device, seed: int, rank: int) -> RunParts:
    """The parts of the run ``config`` describes, on ``device``, its environments and action noise seeded by ``seed``
    (this process's, of rank ``rank``), with the checks that need them: the ``vision`` VAE file (read by ``make_env``),
    the networks' fit to the environment's spaces (the algorithm's and plug-in's constructors) and the options that
    cannot act on those spaces (``TrainConfig.refuse_inert_options``). Nothing is written, and the run directory is not
    touched (the evaluator and the replay store only name files in it); the environments are closed on a refusal."""
    env = make_env(config.run.env, config.env, gamma=config.algo_config.gamma, seed=seed, device=device)
    try:
        obs_shape, action_space = env.single_observation_space.shape, env.single_action_space
        if config.run.torch_threads:
            check_thread_count(config.run.torch_threads, "torch_threads")
        threads = config.run.torch_threads or default_threads(obs_shape)
        with torch_threads(threads):  # an orthogonal initialisation's QR gives other bits with another thread count
            algo = ALGORITHMS[config.algo](config.algo_config, obs_shape, action_space, device)
            plugin = None if config.run.intrinsic is None else build_reward_source(
                REWARD_SOURCES[config.run.intrinsic], config.intrinsic_config, obs_shape, device, action_space)
        config.refuse_inert_options(suite_of(config.run.env), action_space, obs_shape)
    except BaseException:
        env.close()
        raise
    run_dir = Path(config.run_dir)
    return RunParts(
        env, algo, plugin, algo.action_noise(env.num_envs, action_space, torch.Generator().manual_seed(seed)),
        None if config.run.eval_every is None or rank else PeriodicEvaluator(config, run_dir),
        algo.keep_replay_in(run_dir / REPLAY_DIR, env.single_observation_space) if isinstance(algo, KeepsReplay) else None,
        threads)


class Trainer:
    """One training run: ``Trainer(config, resume)`` prepares it (nothing written), ``train()`` runs it.

    With ``resume`` the run continues from ``run_dir/checkpoint.pt``; a run directory without a
    checkpoint (a run killed before its first one, or none at all) starts over from step 0.
    ``init_checkpoint`` is the payload of ``config.run.init_from`` when the caller has already loaded it.
    """

    def __init__(self, config: TrainConfig, resume: bool = False, init_checkpoint: dict[str, Any] | None = None):
        preflight(config)
        self.config = config
        self.device = collective.local_device(resolve_device(config.run.device))
        use_deterministic_kernels(self.device, config.run.deterministic_kernels)
        self.rank, self.world_size = collective.rank(), collective.world_size()
        """This process's place in a data-parallel run (``torchrun``); 0 of 1 otherwise."""
        if self.world_size > 1:
            check_data_parallel(config)
        self.seed = rank_seed(config.run.seed, self.rank)
        """The seed of this process's environments and sampling (the run's seed on rank 0)."""
        seed_everything(config.run.seed)  # every rank builds the same networks
        self.env, self.algo, self.plugin, self.action_noise, self.evaluator, self.replay_store, self.threads = make_parts(
            config, self.device, self.seed, self.rank)
        self.collapse_guard = None if config.run.collapse_entropy is None else CollapseGuard(config.run, self.restore_healthy)
        self.resume = resume
        self.step = self.update = 0
        self.recent_returns: deque[float] = deque(maxlen=RECENT_EPISODES)
        """The returns of the last episodes, whose mean each update logs."""
        self.collector: Collector | None = None
        self.saved_episodes: dict[str, Any] | None = None
        """The episodes in progress that a resumed run goes on with (``Collector.state_dict``); None: new ones start."""
        self.episodes_unsaved = "the run has not started"
        """Why the checkpoint's episodes are None, said when the run resumes."""
        self.rollback: dict[str, Any] | None = None
        """The state before an unfinished collection, written instead when a signal stops the run during one."""
        try:
            self.run_dir = check_run_dir(config, resume)
            self.restore(resume, init_checkpoint)
        except BaseException:
            self.env.close()
            raise
        collective.barrier()  # every rank has checked the run directory before rank 0 writes to it

    def restore(self, resume: bool, init_checkpoint: dict[str, Any] | None) -> None:
        """Where the run starts: with ``resume``, the state of ``run_dir``'s checkpoint (and the episodes it was in);
        otherwise the new run's networks from ``init_from`` (``start_from_sources``). Then the collector."""
        checkpoint_path = self.run_dir / CHECKPOINT_NAME
        payload = load_checkpoint(checkpoint_path) if resume and checkpoint_path.is_file() else None
        self.starts_over = payload is None and has_run_files(self.run_dir)
        """A directory holding a run that never wrote a checkpoint (resumed or not): its rows are dropped."""
        if self.world_size > 1:
            seed_everything(self.seed)
        if payload is not None:
            self.load_state(self.own_state(payload))
        else:
            self.start_from_sources(init_checkpoint)
        self.collector = self.make_collector()
        if self.collector is not None and self.saved_episodes is not None:
            try:
                self.collector.load_state_dict(self.saved_episodes)
            except ValueError as error:
                raise CheckpointError(f"checkpoint {str(checkpoint_path)!r}: its episodes in progress are damaged ({error})") from None

    def start_from_sources(self, init_checkpoint: dict[str, Any] | None) -> None:
        """A new run: the parts of ``init_from`` loaded (``init_checkpoint``: its payload, if already read), with a
        warning for it, or for a checkpoint an algorithm's option names (``checkpoint_options``: R2D2's guide and
        prior), saved from another environment than this run's (from rank 0 alone: every rank loads the same files)."""
        config = self.config
        warn = self.rank == 0
        if config.run.init_from is not None:
            source = load_run_checkpoint(config.run.init_from) if init_checkpoint is None else init_checkpoint
            if warn:
                warn_if_other_environment("init_from", config.run.init_from, source, config.run.env)
            loaded = load_parts(self.algo.policy, config.run.init_from, config.run.init_parts, source)
            rescale_policy_logits(self.algo.policy, config.run.init_temperature, loaded)
        for field in config.algo_config.checkpoint_options:
            path = getattr(config.algo_config, field)
            if path is not None and warn:
                warn_if_other_environment(field, path, load_run_checkpoint(path), config.run.env)

    def make_collector(self) -> Collector | None:
        """The collector of this process's environments (None where experience comes from elsewhere)."""
        return Collector(self.env, self.algo.acting(self.env.num_envs, self.action_noise), self.device,
                         on_step=None if self.plugin is None else self.plugin.on_step)

    def close(self) -> None:
        """Release the environments of a run that will not be trained (``train`` closes them itself)."""
        self.env.close()

    def parts(self) -> dict[str, Any]:
        """Every stateful part of the run by checkpoint key (absent parts left out)."""
        parts = {"algorithm": self.algo, "env": self.env, "intrinsic": self.plugin, "action_noise": self.action_noise,
                 "evaluation": self.evaluator, "collapse_guard": self.collapse_guard}
        return {name: part for name, part in parts.items() if part is not None}

    def state_dict(self) -> dict[str, Any]:
        state = {"config": self.config.to_dict(), "rng": rng_state(), "step": self.step, "update": self.update,
                 "recent_returns": list(self.recent_returns), **self.episodes_in_progress(),
                 **{name: part.state_dict() for name, part in self.parts().items()}}
        return state | (self.rollback or {})

    def episodes_in_progress(self) -> dict[str, Any]:
        """``episodes``: the collector's state (``Collector.state_dict``), or None with the reason in ``episodes_unsaved``."""
        if self.collector is None or self.collector.obs is None:
            return {"episodes": None, "episodes_unsaved": self.episodes_unsaved}
        try:
            return {"episodes": self.collector.state_dict(), "episodes_unsaved": ""}
        except NotSaveable as reason:
            return {"episodes": None, "episodes_unsaved": str(reason)}

    def collection_start(self) -> dict[str, Any] | None:
        """A copy of what a collection changes (the RNGs, the episodes, the environments' and plug-ins' states) as it
        stands before one: what a signal during the collection checkpoints, so that the run resumes at this rollout.
        None where the episodes cannot be saved: the resumed run starts new ones anyway, and a plug-in's state (APT's
        frames on Atari) is not copied at every rollout for nothing."""
        episodes = self.episodes_in_progress()
        if episodes["episodes"] is None:
            return None
        point = {"rng": rng_state(), **episodes}
        point |= {name: part.state_dict() for name, part in self.parts().items() if name in COLLECTION_STATE}
        return copy.deepcopy(point)

    def load_state(self, payload: dict[str, Any], names: tuple[str, ...] | None = None) -> None:
        """Restore the parts ``names`` (default: everything, counters and RNGs included) from ``payload``.

        A part the payload lacks (e.g. the evaluation record of a run that had none) keeps its state.
        """
        for name, part in self.parts().items():
            if (names is None or name in names) and name in payload:
                part.load_state_dict(payload[name])
        if names is None:
            set_rng_state(payload["rng"])
            self.step, self.update = payload["step"], payload["update"]
            self.recent_returns.extend(payload.get("recent_returns", []))
            self.saved_episodes = payload.get("episodes")
            self.episodes_unsaved = payload.get("episodes_unsaved", "its checkpoint was written by a voidrl that saved none")

    def own_state(self, payload: dict[str, Any]) -> dict[str, Any]:
        """This process's state in a checkpoint: the payload itself on rank 0, its ``rank_states`` entry on
        another rank; a checkpoint of another number of processes is refused."""
        stored = int(payload.get("world_size", 1))
        if stored != self.world_size:
            raise ValueError(f"resume: the run in {str(self.run_dir)!r} was trained by {stored} process(es); resume it "
                             f"with as many (torchrun --nproc-per-node {stored}), not {self.world_size}")
        return payload if self.rank == 0 else payload["rank_states"][self.rank - 1]

    def save(self, healthy: bool) -> None:
        """Write the checkpoint (rank 0); in a data-parallel run every rank calls this at the same point and
        the other ranks' states (their RNGs, environments' seeds, buffers of their own data) go into it."""
        payload = self.state_dict()
        if self.world_size > 1:
            others = collective.gather_to_main(None if self.rank == 0 else payload)
            if self.rank != 0:
                return
            payload |= {"world_size": self.world_size, "rank_states": others[1:]}
        save_checkpoint(self.run_dir / CHECKPOINT_NAME, payload)
        if self.config.run.keep_weights:
            save_checkpoint(self.run_dir / KEPT_WEIGHTS_DIR / f"step-{self.step}.pt", fine_tuning_weights(payload))
        if healthy and self.config.run.collapse_entropy is not None:
            save_checkpoint(self.run_dir / HEALTHY_NAME, payload)

    def train(self, callbacks: Sequence[Callback] = ()) -> Agent:
        """Run until ``config.run.steps``, calling ``callbacks`` after each update; on SIGINT/SIGTERM write a checkpoint
        and raise ``RunStopped``; when a callback asks to stop, write a checkpoint and return the agent."""
        env, run_dir = self.env, self.run_dir
        writes = self.rank == 0  # in a data-parallel run, rank 0 alone writes the run directory
        lock = RunDirLock(run_dir) if writes else None
        try:
            calls = CallbackHook(callbacks, self.config, self.current_agent)  # checked before anything is written
            if lock is not None:
                self.claim(lock)
            return self._train(writes, calls)
        finally:
            if lock is not None:
                lock.release()
            env.close()

    def claim(self, lock: RunDirLock) -> None:
        """Own the run directory for the run's life; refuse it when another live process trains there, or when another
        run wrote it since this one was checked; remove the temporary files a killed run left."""
        lock.acquire()
        if not self.resume and ((self.run_dir / CHECKPOINT_NAME).exists() or (has_run_files(self.run_dir) and not self.starts_over)):
            lock.release()
            raise RunDirError(f"run directory {str(self.run_dir)!r} already holds a run (written since this one was checked); "
                              + TO_CONTINUE_IT)
        removed = remove_stale_temporaries(self.run_dir)
        if removed:
            print(f"voidrl: removed {', '.join(removed)} from {self.run_dir} (left by a run stopped while writing)", file=sys.stderr)

    def _train(self, writes: bool, calls: CallbackHook) -> Agent:
        config, run_dir = self.config, self.run_dir
        if (self.resume or self.starts_over) and self.step == 0 and writes:
            print(f"voidrl: {run_dir} has no checkpoint"
                  + (" (its run stopped before the first one); starting the run over" if self.starts_over else " yet; starting the run"),
                  file=sys.stderr)
        if self.replay_store is not None and writes:
            print(f"voidrl: {self.replay_store.describe()}", file=sys.stderr)
        logger = None
        config.run.torch_threads = self.threads
        if writes:
            (run_dir / "config.json").write_text(config.to_json() + "\n")
            logger = RunLogger(run_dir, config.to_dict(), resume_step=self.step if self.resume or self.starts_over else None, wandb=config.run.wandb)
        if self.evaluator is not None and self.resume:
            self.evaluator.resume_at(self.step)
        if self.resume and self.step > 0 and self.saved_episodes is None and self.algo.whole_episodes is None and writes:
            print(f"voidrl: resuming at step {self.step}: the environments start new episodes "
                  f"(their state could not be saved: {self.episodes_unsaved})", file=sys.stderr)
        warning = busy_cpus_warning(self.threads) if writes else None
        if warning is not None:
            print(warning, file=sys.stderr)
        bar = tqdm(total=config.run.steps, initial=min(self.step, config.run.steps), unit="step",
                   disable=not (progress_shown(config.run.progress) and writes), dynamic_ncols=True, mininterval=1.0, file=sys.stderr)
        try:
            with torch_threads(self.threads), GracefulStop() as stop:
                try:
                    self._loop(logger, bar, stop, calls)
                except RuntimeError as error:  # reported while the stop handlers still hold off torchrun's SIGTERM
                    if not collective.is_group_failure(error):
                        raise
                    raise collective.report_group_failure(error) from None
        except EnvironmentFailure as failure:
            if (run_dir / CHECKPOINT_NAME).exists():
                raise RunAborted(f"{failure}; the run stopped there with its last checkpoint kept; once the environment is mended, "
                                 f"{how_to_continue(run_dir)}") from failure.error
            raise RunAborted(f"{failure}; the run stopped before its first checkpoint; once the environment is mended, run the "
                             "same command again (it takes the directory over)") from failure.error
        except RunStopped as stopped:
            if not stopped.forced:
                self.save(healthy=False)
            if writes:
                bar.write(f"voidrl: stopped by {stopped.signal_name} at step {self.step}; "
                          + ("no new checkpoint (second signal); " if stopped.forced else "checkpoint written; ")
                          + how_to_continue(run_dir), file=sys.stderr)
            raise
        except CallbackStop as stopped:
            self.save(healthy=False)
            if writes:
                bar.write(f"voidrl: {stopped} asked to stop at step {self.step}; checkpoint written; {how_to_continue(run_dir)}",
                          file=sys.stderr)
        finally:
            bar.close()
            if logger is not None:
                logger.close()
        return self.current_agent()

    def current_agent(self) -> Agent:
        """The run's agent as it stands: the policy being trained, the normaliser statistics and step of now."""
        return Agent(self.config, self.algo.policy, self.env.state_dict(), self.step)

    def _loop(self, logger: RunLogger | None, bar: tqdm, stop: GracefulStop, calls: CallbackHook) -> None:
        """Each update of ``train_updates`` counted and handed to the hooks (log, evaluation, checkpoint, callbacks,
        progress), until the step budget is spent or a signal or callback stops the run."""
        hooks = self._hooks(logger, bar, calls)
        updates = self.train_updates(stop)
        try:
            for stats, steps_taken, metrics in updates:
                self._close_update(stats, steps_taken, metrics, hooks)
                stop_everywhere(stop, calls.stop_reason)  # a signal during the update, or a callback: stop now
        finally:
            updates.close()

    def train_updates(self, stop: GracefulStop) -> Iterator[tuple[RolloutStats, int, dict[str, float]]]:
        """Collect -> plug-in rewards -> update, while steps remain: each update's rollout statistics, environment
        steps and metrics (``DistributedTrainer`` takes its experience from Ray actors instead)."""
        config, env, algo, plugin = self.config, self.env, self.algo, self.plugin
        collector = self.collector
        if collector.obs is None:  # no episodes in progress were loaded
            if self.step == 0 and hasattr(plugin, "warm_up"):
                plugin.warm_up(env, env_seed(self.seed, self.update) + 1)
            collector.reset(env_seed(self.seed, self.update))
        storage = collector.make_storage(algo.num_steps)
        storage.reward_coefs = None if plugin is None else plugin.reward_coefs

        def between_steps() -> bool:
            """Asked before every vector step: whether a signal asks to stop."""
            return collective.any_process(stop.requested)

        loop_started = time.perf_counter()
        while self.step < config.run.steps:
            started = time.perf_counter()
            if algo.whole_episodes is not None and self.update > 0:  # every rollout starts from a reset
                collector.reset(env_seed(self.seed, self.update))
            before = self.collection_start()
            stats = collector.collect(storage, self.step, algo.whole_episodes, should_stop=between_steps)
            try:
                stop_everywhere(stop)
            except RunStopped:  # a signal during the collection: the checkpoint is of the state before it, where kept
                self.rollback = before
                raise
            intrinsic_metrics = {}
            if plugin is not None:
                intrinsic_rewards, intrinsic_metrics = plugin.intrinsic_rewards(storage)
                storage.intrinsic_rewards.copy_(intrinsic_rewards)
            collected = time.perf_counter()
            metrics = algo.update(storage, progress=self.step / config.run.steps) | intrinsic_metrics
            updated = time.perf_counter()
            steps_taken = stats.env_steps * self.world_size
            metrics.update({
                "time/sps": steps_taken / (updated - started),
                "time/env_seconds": stats.env_seconds,
                "time/inference_seconds": stats.inference_seconds,
                "time/on_step_seconds": stats.on_step_seconds,
                "time/update_seconds": updated - collected,
                # wall time so far, the previous updates' logging and checkpoints included (a resumed run counts anew)
                "time/elapsed_seconds": updated - loop_started,
                "sys/peak_rss_mb": peak_rss_mb(),
                "sys/torch_threads": torch.get_num_threads(),
            })
            if not env.single_action_space.shape:
                metrics["rollout/identical_action_fraction"] = identical_action_fraction(storage.actions)
            if self.world_size > 1:
                metrics["sys/processes"] = float(self.world_size)
                gathered = collective.gather_to_main((stats.episode_steps, stats.episode_returns, stats.episode_lengths))
                if gathered is not None:
                    stats = dataclasses.replace(stats, **dict(zip(("episode_steps", "episode_returns", "episode_lengths"),
                                                                  merge_episodes(gathered, self.step))))
            yield stats, steps_taken, metrics

    def _close_update(self, stats: RolloutStats, steps_taken: int, metrics: dict[str, float], hooks: list[Hook]) -> None:
        """Count the update's steps, add the mean of the recent returns to its metrics, hand its report to the hooks."""
        self.step += steps_taken
        self.update += 1
        recent_returns = self.recent_returns
        recent_returns.extend(stats.episode_returns)
        if recent_returns:
            metrics["rollout/recent_return_mean"] = sum(recent_returns) / len(recent_returns)
        report = UpdateReport(self.step, self.update, metrics, stats, final=self.step >= self.config.run.steps,
                              recent_episodes=len(recent_returns))
        for hook in hooks:
            hook.after_update(report)

    def _hooks(self, logger: RunLogger | None, bar: tqdm, calls: CallbackHook) -> list[Hook]:
        """The after-update hooks of this run, in order (a data-parallel rank other than 0 only takes part in
        the checkpoints)."""
        if logger is None:
            return [CheckpointHook(self.config.run.checkpoint_every, self.save)]
        hooks: list[Hook] = []
        if self.collapse_guard is not None:
            hooks.append(self.collapse_guard)
            self.collapse_guard.write = lambda message: bar.write(message, file=sys.stderr)
        if self.evaluator is not None:
            hooks.append(EvaluationHook(self.evaluator, self.current_agent))
        lines = self.config.run.progress is None and not progress_shown(None)  # no bar where stderr is no terminal
        progress = ProgressLines(self.config.run.steps, self.step) if lines else ProgressHook(bar, self.config.run.steps)
        return [*hooks, LogHook(logger), CheckpointHook(self.config.run.checkpoint_every, self.save), calls, progress]

    def restore_healthy(self) -> bool:
        """The collapse guard's restore: the learning state of ``healthy.pt``; the step goes on."""
        path = self.run_dir / HEALTHY_NAME
        if not path.exists():
            return False
        self.load_state(load_checkpoint(path), LEARNING_STATE)
        return True


class CallbackStop(Exception):
    """A callback asked the run to stop (one of its methods returned False); the message names the call."""


def stop_everywhere(stop: GracefulStop, callback_stop: str | None = None) -> None:
    """``stop.check()`` for every process at once: in a data-parallel run a signal to any rank stops all of
    them at the same point, so their checkpoint is of one state. A callback's request to stop (``callback_stop``,
    the call that made it, rank 0's) is shared the same way; the process that made it raises ``CallbackStop``
    unless a signal came too."""
    if collective.any_process(stop.requested or callback_stop is not None):
        if stop.signum is None and callback_stop is not None:
            raise CallbackStop(callback_stop)
        raise RunStopped(stop.signum or signal.SIGTERM)
